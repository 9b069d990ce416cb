"""Run a game's cases against a program: one program run a case, each under a deadline.

For each case the runner listens on a fresh loopback port, starts the
program with WIRE.md's placeholders (``scenarios.programs``), lets the case
play the server's side (``Case.play`` with a ``CaseContext``), and stops the
program whole when the case is over, whatever happened. Independent cases
run ``jobs`` at a time. A case ends in FAIL when it raises ``CaseFailed``
(the judge's ``fail``), when its deadline passes, or when its program cannot
be started; in WARN when it finished with warnings; else in PASS.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from scenarios.check.manual import ManualProgram, ManualRun
from scenarios.check.verdicts import CaseFailed, CaseResult, Judge, Verdict
from scenarios.check.wire import Wire
from scenarios.programs import Program, ProgramError, RunningProgram

HOST = "127.0.0.1"
# How long a program has to connect once started (an interpreter or a JVM
# starting up is slow; a program that waits for nothing is not).
CONNECT_TIMEOUT = 10.0
# How long a program has to exit once its game is over (the issue: "a few seconds").
EXIT_WITHIN = 3.0


@dataclass(frozen=True)
class Case:
    """One conformance case: a stable id, a title, the doc section it checks, and its play."""

    case_id: str
    title: str
    section: str  # e.g. "reversi.md 6": where the rule is written
    play: Callable[[CaseContext], Awaitable[None]]
    deadline: float = 30.0
    name: str = "checker"  # the {name} the program is given
    seat: str | None = None  # the {seat} (No Tipping)
    exit_within: float = EXIT_WITHIN  # how long the program has to close and exit at the end
    # The case starts the program itself (context.start with its own values), once the
    # servers it needs are up: the Old Maid table and peers.
    starts_itself: bool = False


def exits_as_fast_as_it_moves(cases: list[Case], move_limit: float) -> list[Case]:
    """``cases`` giving the program as long to exit as to move, and never over
    EXIT_WITHIN (a short --move-time, as in our tests, shortens every wait)."""
    within = min(EXIT_WITHIN, move_limit)
    return [dataclasses.replace(case, exit_within=within) for case in cases]


class CaseContext:
    """What a case plays with: the program, its connection(s), the judge."""

    def __init__(
        self,
        case: Case,
        program: Program | ManualProgram,
        logs: Path,
        listener: trio.SocketListener,
    ) -> None:
        self.case = case
        self.judge = Judge()
        self._program = program
        self._logs = logs
        self._listener = listener
        self.port = listener.socket.getsockname()[1]
        self.started = trio.current_time()
        self.running: RunningProgram | ManualRun | None = None
        self._values: dict[str, str] = {}
        self.wires: list[Wire] = []
        # Where a case's server side is more than wires (Old Maid's table and peers):
        # the lines it saw of the program, for the report.
        self.evidence: Callable[[], list[str]] | None = None

    @property
    def fixed_port(self) -> int:
        """The port a program started by hand dials (``--manual``); 0: any will do."""
        return self._program.port if isinstance(self._program, ManualProgram) else 0

    @property
    def values(self) -> dict[str, str]:
        values = {
            "host": HOST,
            "port": str(self.port),
            "address": f"{HOST}:{self.port}",
            "name": self.case.name,
        }
        if self.case.seat is not None:
            values["seat"] = self.case.seat
        return values | self._values

    async def start(self, values: Mapping[str, str] | None = None) -> RunningProgram | ManualRun:
        """Start the program; ``values`` replace or add placeholders (an Old Maid table's)."""
        self._values = dict(values or {})
        self.running = await self._program.start(self.values, self._logs, self.case.case_id)
        return self.running

    async def accept(self, timeout: float = CONNECT_TIMEOUT) -> Wire:
        """The program's next connection; FAIL if it exits or the time passes first."""
        assert self.running is not None
        running = self.running
        accepted: list[trio.SocketStream] = []
        async with trio.open_nursery() as nursery:

            async def take() -> None:
                accepted.append(await self._listener.accept())
                nursery.cancel_scope.cancel()

            async def watch_exit() -> None:
                assert running.process is not None
                await running.process.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(take)
            if running.process is not None:  # None: started by hand (scenarios.check.manual)
                nursery.start_soon(watch_exit)
            nursery.cancel_scope.deadline = trio.current_time() + timeout
        if accepted:
            wire = Wire(accepted[0], self.started)
            self.wires.append(wire)
            return wire
        if running.exited:
            raise self.judge.fail(f"the program {running.describe_exit()} before it connected")
        raise self.judge.fail(f"the program did not connect within {timeout:g} s")

    async def expect_exit(self, what: str) -> None:
        """FAIL unless the program exits within the case's ``exit_within`` of ``what``."""
        assert self.running is not None
        within = self.case.exit_within
        if not await self.running.wait(within):
            raise self.judge.fail(f"the program did not exit within {within:g} s of {what}")

    async def expect_close(self, wire: Wire, after: str, allowed: bytes = b"") -> None:
        """FAIL unless the program closes ``wire`` within the case's ``exit_within`` of
        ``after``; what it sends meanwhile is a WARN, but for lines all ``allowed`` (a goodbye)."""
        within = self.case.exit_within
        deadline = trio.current_time() + within
        while True:
            data = await wire.receive(max(deadline - trio.current_time(), 0.0))
            if data == b"":
                return
            if data is None:
                raise self.judge.fail(
                    f"it did not close its connection within {within:g} s of {after}"
                )
            if not allowed or any(line.strip() not in (allowed, b"") for line in data.split(b"\n")):
                self.judge.warn(f"it sent {data!r} after {after}")

    def transcript(self) -> list[str]:
        lines = []
        for number, wire in enumerate(self.wires, start=1):
            if len(self.wires) > 1:
                lines.append(f"connection {number}:")
            lines += wire.tail()
        if self.evidence is not None:
            lines += self.evidence()
        return lines


async def run_case(case: Case, program: Program | ManualProgram, logs: Path) -> CaseResult:
    """One case, start to finish; the program is stopped whatever happens."""
    began = time.monotonic()
    # A case that starts its own servers (Old Maid's table) takes the fixed port itself.
    manual = isinstance(program, ManualProgram) and not case.starts_itself
    listener = (await trio.open_tcp_listeners(program.port if manual else 0, host=HOST))[0]
    context = CaseContext(case, program, logs, listener)
    verdict, reason = Verdict.PASS, "as the protocol says"
    try:
        with trio.fail_after(case.deadline):
            if not case.starts_itself:
                await context.start()
            await case.play(context)
    except CaseFailed as failed:
        verdict, reason = Verdict.FAIL, str(failed)
    except trio.TooSlowError:
        verdict, reason = Verdict.FAIL, f"the case did not finish within {case.deadline:g} s"
    except ProgramError as exc:
        verdict, reason = Verdict.FAIL, str(exc)
    except Exception as exc:  # our bug: said as ours, never as the program's
        verdict = Verdict.ERROR
        reason = f"the checker itself failed ({type(exc).__name__}: {exc}); please report it"
    finally:
        with trio.CancelScope(shield=True):
            for wire in context.wires:
                await wire.close()
            await listener.aclose()
            if context.running is not None:
                await context.running.stop()
    if verdict is Verdict.PASS and context.judge.warnings:
        verdict, reason = Verdict.WARN, "; ".join(context.judge.warnings)
    stdout, stderr = context.running.output() if context.running else ([], [])
    return CaseResult(
        case.case_id,
        case.title,
        case.section,
        verdict,
        reason,
        time.monotonic() - began,
        transcript=context.transcript(),
        stdout=stdout,
        stderr=stderr,
        notes=context.judge.notes,
        figures=context.judge.figures,
    )


async def run_cases(
    cases: Sequence[Case],
    program: Program | ManualProgram,
    logs: Path,
    *,
    jobs: int = 4,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Every case, ``jobs`` at a time (one by one for a program started by hand); results in
    the cases' order."""
    results: dict[str, CaseResult] = {}
    limiter = trio.CapacityLimiter(max(1, jobs))

    async def one(case: Case) -> None:
        async with limiter:
            result = await run_case(case, program, logs)
        results[case.case_id] = result
        if on_result is not None:
            on_result(result)

    if isinstance(program, ManualProgram):  # a person starts each run: in order, one by one
        for case in cases:
            await one(case)
    else:
        async with trio.open_nursery() as nursery:
            for case in cases:
                nursery.start_soon(one, case)
    return [results[case.case_id] for case in cases]
