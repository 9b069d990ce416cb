"""A case and what it plays with: the program, its connections, the judge, and what the
game told the program (for judging how it ended).

``scenarios.check.runner`` runs a ``Case`` with a ``CaseContext``; each game's cases
(``scenarios.check.reversi`` and the others) play through the context: ``accept`` the
program's connection, ``end_pause`` before a game's last message, ``expect_close`` and
``expect_exit`` at its end, ``broke_off`` where the server ends the game early.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import trio

from scenarios.check import obligations
from scenarios.check.manual import ManualProgram, ManualRun
from scenarios.check.obligations import Rule
from scenarios.check.verdicts import Judge
from scenarios.check.wire import CaseWire
from scenarios.programs import Program, RunningProgram

HOST = "127.0.0.1"
# How long a program has to connect once started (an interpreter or a JVM
# starting up is slow; a program that waits for nothing is not).
CONNECT_TIMEOUT = 10.0
# How long a program has to exit once its game is over (programs.md 3: "3 seconds").
EXIT_WITHIN = 3.0
# Between a game's next-to-last message and its last (W and G, INVALID; and LOSE;): time
# for a program that takes the first for the end to close, and be seen doing it.
END_PAUSE = 0.2
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
        self.wires: list[CaseWire] = []
        # Where a case's server side is more than wires (Old Maid's table and peers):
        # the lines it saw of the program, for the report.
        self.evidence: Callable[[], list[str]] | None = None
        # And the last of them that came before the program's own leaving (what a crash
        # came after), where the server saw its leaving too.
        self.last_seen: Callable[[], str | None] | None = None
        # How the game went, for judging how the program ended (scenarios.check.exits):
        # whether it reached its last message, whether the server broke it off, the last
        # message sent, and how much stderr the program had written by then.
        self.game_over = False
        self.broken_off = False
        # Each message sent, and how much stderr the program had written by then (which
        # tells the message a crash's trace came after); ("", -1) marks one it sent us.
        self.sends: list[tuple[str, int]] = []

    def sent(self, what: str) -> None:
        """Note a message sent to the program: a crash after it is said to follow it."""
        size = self.running.stderr_size() if isinstance(self.running, RunningProgram) else 0
        self.sends.append((what, size))

    def heard(self) -> None:
        """Note that the program sent something: what we send after, it has not answered."""
        self.sends.append(("", -1))

    def last_sent_before(self, stderr_at: int | None) -> tuple[str, int]:
        """What was sent the program before its stderr reached ``stderr_at`` bytes (None:
        all of it) since it last sent anything, as text (the last three messages), and the
        size of its stderr at the last of them; ``("its start", 0)`` if nothing. A crash's
        trace is written after the message it crashed on and before any message sent
        once it was there, and a program crashes on something it has not answered."""
        before = [s for s in self.sends if stderr_at is None or s[1] <= stderr_at]
        unanswered: list[tuple[str, int]] = []
        for send in before:
            unanswered = [] if send[1] < 0 else [*unanswered, send]
        if not unanswered:
            sent = [send for send in before if send[1] >= 0]
            unanswered = sent[-1:] or [("its start", 0)]
        shown = ", ".join(what for what, _ in unanswered[-3:])
        more = len(unanswered) - 3
        return (f"{more} messages, then " if more > 0 else "") + shown, unanswered[-1][1]

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

    async def accept(self, timeout: float = CONNECT_TIMEOUT) -> CaseWire:
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
            wire = CaseWire(accepted[0], self.started, on_send=self.sent, on_receive=self.heard)
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

    async def end_pause(self, wire: CaseWire, said: str, last: str) -> None:
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
        self, wire: CaseWire, after: str, allowed: bytes = b"", quiet: Rule | None = None
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
