"""Run a game's cases against a program: one program run a case, each under a deadline.

For each case the runner listens on a fresh loopback port, starts the
program with the placeholders of docs/protocols/programs.md
(``scenarios.programs``), lets the case play the server's side
(``Case.play`` with a ``CaseContext``), stops the program whole when the
case is over, whatever happened, and judges how it ended
(``scenarios.check.exits``). A case ends in FAIL when it raises
``CaseFailed`` (the judge's ``fail``, naming the rule), when its deadline
passes, when its program cannot be started, or when the program crashed; in
WARN when it finished with warnings; else in PASS.

Independent cases run ``jobs`` at a time, and a case whose program has used
no CPU for a second gives its place to the next (``IDLE_RELEASE``): a
program that waits for ever waits in every case at once, so such a suite
takes about its longest wait, not that wait once a ``jobs``; a program that
thinks keeps its place, so its moves never compete with more cases than
``jobs``.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from scenarios.check import exits, obligations
from scenarios.check.manual import ManualProgram, ManualRun
from scenarios.check.obligations import Rule
from scenarios.check.verdicts import CaseFailed, CaseResult, Judge, Verdict
from scenarios.check.wire import Wire
from scenarios.programs import Program, ProgramError, RunningProgram

HOST = "127.0.0.1"
# How long a program has to connect once started (an interpreter or a JVM
# starting up is slow; a program that waits for nothing is not).
CONNECT_TIMEOUT = 10.0
# How long a program has to exit once its game is over (programs.md 3: "3 seconds").
EXIT_WITHIN = 3.0
# Between a game's next-to-last message and its last (W and G, INVALID; and LOSE;): time
# for a program that takes the first for the end to close, and be seen doing it.
END_PAUSE = 0.2
# A case whose program used no CPU for this long gives its place to the next case.
IDLE_RELEASE = 1.0
IDLE_SAMPLE = 0.25  # how often its CPU time is read
IDLE_CPU = 0.01  # seconds of CPU in IDLE_RELEASE that still count as idle
# After a case failed on what the program did (a close, say), how long to wait for it
# to exit, so that a crash is said as the cause.
CRASH_WAIT = 1.0


@dataclass(frozen=True)
class Case:
    """One conformance case: a stable id, a title, the doc section it checks, and its play."""

    case_id: str
    title: str
    section: str  # e.g. "reversi.md 6": where the rule is written
    play: Callable[[CaseContext], Awaitable[None]]
    # A backstop: every wait has its own limit, and this is longer than the slowest legal
    # program's whole game (each move just within the move time).
    deadline: float = 30.0
    name: str = "checker"  # the {name} the program is given
    seat: str | None = None  # the {seat} (No Tipping)
    exit_within: float = EXIT_WITHIN  # how long the program has to close and exit at the end
    # The case starts the program itself (context.start with its own values), once the
    # servers it needs are up: the Old Maid table and peers.
    starts_itself: bool = False
    # The rules this case is there to test (docs/check.md's obligations table); every
    # case also holds the program to programs.md's (obligations.PROGRAM_RULES).
    tests: tuple[Rule, ...] = ()


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
        # How the game went, for judging how the program ended (scenarios.check.exits):
        # whether it reached its last message, whether the server broke it off, the last
        # message sent, and how much stderr the program had written by then.
        self.game_over = False
        self.broken_off = False
        # Each message sent: when, what it was, and how much stderr the program had
        # written by then (which tells the message a crash's trace came after).
        self.sends: list[tuple[float, str, int]] = []

    def sent(self, what: str) -> None:
        """Note a message sent to the program: a crash after it is said to follow it."""
        size = self.running.stderr_size() if isinstance(self.running, RunningProgram) else 0
        self.sends.append((time.monotonic(), what, size))

    def heard(self) -> None:
        """Note that the program sent something: what we send after, it has not answered."""
        self.sends.append((time.monotonic(), "", -1))

    def last_sent_before(self, stderr_at: int | None) -> tuple[str, int]:
        """What was sent the program before its stderr reached ``stderr_at`` bytes (None:
        all of it) since it last sent anything, as text (the last three messages), and the
        size of its stderr at the last of them; ``("its start", 0)`` if nothing. A crash's
        trace is written after the message it crashed on and before any message sent
        once it was there, and a program crashes on something it has not answered."""
        before = [s for s in self.sends if stderr_at is None or s[2] <= stderr_at]
        unanswered: list[tuple[float, str, int]] = []
        for send in before:
            unanswered = [] if send[2] < 0 else [*unanswered, send]
        if not unanswered:
            sent = [send for send in before if send[2] >= 0]
            unanswered = sent[-1:] or [(0.0, "its start", 0)]
        shown = ", ".join(what for _, what, _ in unanswered[-3:])
        more = len(unanswered) - 3
        return (f"{more} messages, then " if more > 0 else "") + shown, unanswered[-1][2]

    def over(self) -> None:
        """The game's last message is sent: from here on, a crash is the ending's."""
        self.game_over = True

    def broke_off(self) -> None:
        """The server ends the game early (closes mid-game, the table dies or aborts): any
        ending of the program is accepted."""
        self.broken_off = True

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
            wire = Wire(accepted[0], self.started, on_send=self.sent, on_receive=self.heard)
            self.wires.append(wire)
            return wire
        if running.exited:
            raise self.judge.fail(
                obligations.CONNECT, f"the program {running.describe_exit()} before it connected"
            )
        raise self.judge.fail(
            obligations.CONNECT, f"the program did not connect within {timeout:g} s"
        )

    async def expect_exit(self, what: str) -> None:
        """FAIL unless the program exits within the case's ``exit_within`` of ``what``."""
        assert self.running is not None
        within = self.case.exit_within
        if not await self.running.wait(within):
            raise self.judge.fail(
                obligations.EXIT, f"the program did not exit within {within:g} s of {what}"
            )

    async def end_pause(self, wire: Wire, said: str, last: str) -> None:
        """Between a game's next-to-last message ``said`` and its ``last``: FAIL if the
        program closes its connection before ``last`` comes (it took ``said`` for the end)."""
        data = await wire.receive(END_PAUSE)
        if data == b"":
            raise self.judge.fail(
                obligations.READ_TO_END,
                f"it closed its connection after {said}, before {last} came",
            )
        if data:
            wire.unread(data)

    async def expect_close(
        self, wire: Wire, after: str, allowed: bytes = b"", quiet: Rule | None = None
    ) -> None:
        """FAIL unless the program closes ``wire`` within the case's ``exit_within`` of
        ``after``; what it sends meanwhile is a WARN (``quiet``, the rule), but for lines
        all ``allowed`` (a goodbye). A close with bytes unread (a reset) is a close: the
        unread bytes may be the newline after the last message, which a program that
        finds a message's end by its length rightly leaves."""
        within = self.case.exit_within
        deadline = trio.current_time() + within
        while True:
            data = await wire.receive(max(deadline - trio.current_time(), 0.0))
            if data == b"":
                return
            if data is None:
                raise self.judge.fail(
                    obligations.EXIT,
                    f"it did not close its connection within {within:g} s of {after}",
                )
            if not allowed or any(line.strip() not in (allowed, b"") for line in data.split(b"\n")):
                self.judge.warn(f"it sent {data!r} after {after}", quiet)

    def transcript(self) -> list[str]:
        lines = []
        for number, wire in enumerate(self.wires, start=1):
            if len(self.wires) > 1:
                lines.append(f"connection {number}:")
            lines += wire.tail()
        if self.evidence is not None:
            lines += self.evidence()
        return lines


async def run_case(
    case: Case,
    program: Program | ManualProgram,
    logs: Path,
    place: trio.Semaphore | None = None,
) -> CaseResult:
    """One case, start to finish; the program is stopped whatever happens, then how it
    ended is judged. ``place``: the case's place among those running, released once the
    case is over or its program idle (``IDLE_RELEASE``)."""
    began = time.monotonic()
    # A case that starts its own servers (Old Maid's table) takes the fixed port itself.
    manual = isinstance(program, ManualProgram) and not case.starts_itself
    listener = (await trio.open_tcp_listeners(program.port if manual else 0, host=HOST))[0]
    context = CaseContext(case, program, logs, listener)
    released = trio.Event()
    if place is None:
        released.set()
    verdict, reason, rule = Verdict.ERROR, "the case was stopped", None  # until it has played
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_give_up_place_when_idle, context, place, released)
            verdict, reason, rule = await _played(case, context)
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            closed = any(wire.closed_by_client for wire in context.wires) or not context.wires
            if verdict is Verdict.FAIL and closed and isinstance(context.running, RunningProgram):
                await context.running.wait(CRASH_WAIT)  # a crash, if it is one, says why
            for wire in context.wires:
                await wire.close()
            await listener.aclose()
            if context.running is not None:
                await context.running.stop()
            if not released.is_set() and place is not None:
                place.release()
    if verdict in (Verdict.PASS, Verdict.FAIL) and isinstance(context.running, RunningProgram):
        crash = _how_it_ended(context, context.running)
        # A crash explains a FAIL that followed from it, but for one before the program
        # even connected: that one says how it exited already.
        explains = crash is not None and crash[0] is obligations.CRASH
        if crash is not None and (
            verdict is Verdict.PASS or (explains and rule is not obligations.CONNECT)
        ):
            was = f" (so {reason})" if verdict is Verdict.FAIL else ""
            rule, reason = crash[0], crash[1] + was
            verdict = Verdict.FAIL
    rules: list[Rule] = [rule] if rule is not None else []
    if verdict is Verdict.PASS and context.judge.warnings:
        verdict, reason = Verdict.WARN, "; ".join(context.judge.warnings)
        rules = list(context.judge.warned)
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
        rules=rules,
    )


async def _played(case: Case, context: CaseContext) -> tuple[Verdict, str, Rule | None]:
    """The case played to its verdict, as far as the game goes: what it raised, said."""
    try:
        with trio.fail_after(case.deadline):
            if not case.starts_itself:
                await context.start()
            await case.play(context)
    except CaseFailed as failed:
        return Verdict.FAIL, str(failed), failed.rule
    except trio.TooSlowError:
        # Every wait of a case has its own limit, each a rule's; the deadline is a backstop
        # sized for the slowest legal program, so passing it is the checker's failure.
        reason = (
            f"the case did not finish within {case.deadline:g} s, although each of its waits "
            "has a limit of its own; please report it"
        )
        return Verdict.ERROR, reason, None
    except ProgramError as exc:
        return Verdict.FAIL, str(exc), obligations.CONNECT
    except Exception as exc:  # our bug: said as ours, never as the program's
        reason = f"the checker itself failed ({type(exc).__name__}: {exc}); please report it"
        return Verdict.ERROR, reason, None
    return Verdict.PASS, "as the protocol says", None


def _how_it_ended(context: CaseContext, running: RunningProgram) -> tuple[Rule, str] | None:
    """The rule the program's ending breaks, and why (``scenarios.check.exits``). What it
    crashed on is the last message sent before it last wrote to stderr (a crash's trace),
    else the last message sent."""
    after, _ = context.last_sent_before(exits.trace_offset(running.stderr_path))
    # A trace counts as a crash only once the game's last message was sent (exits.py).
    sent = [size for _, _, size in context.sends if size >= 0]
    mark = sent[-1] if sent else 0
    ending = exits.Ending(
        returncode=running.returncode,
        killed_by_us=running.killed,
        stderr_after=running.stderr_since(mark),
        stderr_tail=running.stderr_since(0),
    )
    if not context.wires and context.evidence is not None:  # Old Maid: what our side saw last
        after = next(reversed(context.evidence()), after)
    return exits.judge(
        ending, game_over=context.game_over, broken_off=context.broken_off, after=after
    )


async def _give_up_place_when_idle(
    context: CaseContext, place: trio.Semaphore | None, released: trio.Event
) -> None:
    """Release ``place`` once the case's program has used no CPU for ``IDLE_RELEASE``:
    it waits (for a message it missed, say), and waiting takes no core from the others."""
    if place is None:
        return
    samples: collections.deque[tuple[float, float]] = collections.deque()
    while True:
        await trio.sleep(IDLE_SAMPLE)
        running = context.running
        if not isinstance(running, RunningProgram) or running.exited:
            samples.clear()
            continue
        now = trio.current_time()
        samples.append((now, running.cpu_seconds()))
        # Keep the newest sample at least IDLE_RELEASE old, and those since.
        while len(samples) > 1 and now - samples[1][0] >= IDLE_RELEASE:
            samples.popleft()
        window_old, window_now = samples[0], samples[-1]
        if now - window_old[0] >= IDLE_RELEASE and window_now[1] - window_old[1] < IDLE_CPU:
            released.set()
            place.release()
            return


async def run_cases(
    cases: Sequence[Case],
    program: Program | ManualProgram,
    logs: Path,
    *,
    jobs: int = 4,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Every case, ``jobs`` at a time but for those whose program is idle (one by one for
    a program started by hand); results in the cases' order."""
    results: dict[str, CaseResult] = {}
    places = trio.Semaphore(max(1, jobs))

    async def one(case: Case) -> None:  # holding a place, which run_case gives back
        result = await run_case(case, program, logs, places)
        results[case.case_id] = result
        if on_result is not None:
            on_result(result)

    if isinstance(program, ManualProgram):  # a person starts each run: in order, one by one
        for case in cases:
            results[case.case_id] = result = await run_case(case, program, logs)
            if on_result is not None:
                on_result(result)
    else:
        async with trio.open_nursery() as nursery:
            for case in cases:
                await places.acquire()  # in order, each as a place frees up
                nursery.start_soon(one, case)
    return [results[case.case_id] for case in cases]
