"""A tiny game for testing ring.games.match and ring.games.lobby: the race to ten, over a line wire.

Players take turns adding 1, 2 or 3 to a total (``ADD k``); whoever takes it
past 10 wins, exactly 10 is a draw. Anything else is refused (the prompt
again), ``QUIT`` forfeits. Its wire is one line a message, both ways.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import trio

from ring.games.match import AGAIN, Again, Fault, Moved, Terms, Verdict
from ring.games.record import Player
from ring.wire.sansio import NEED_DATA, Closed

State = tuple[int, int]  # the total, the seat to move


class LineWire:
    """A line a message, both ways."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._closed = False

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def send(self, message: str) -> bytes:
        return message.encode() + b"\n"

    def receive_data(self, data: bytes) -> None:
        self._closed = self._closed or not data
        self._buffer += data

    def next_event(self) -> Any:
        line, newline, rest = self._buffer.partition(b"\n")
        if newline:
            self._buffer = bytearray(rest)
            return line.decode()
        return Closed() if self._closed else NEED_DATA


def shown(event: Any) -> dict[str, Any] | None:
    return {"closed": True} if isinstance(event, Closed) else {"line": event}


@dataclass
class Race:
    terms: Terms = field(default_factory=Terms)
    service: str = "race"

    def options(self, state: State) -> dict[str, Any]:
        return {"goal": 10}

    def who(self, seat: int, name: str) -> Player:
        return Player(name, seat=seat)

    def tags(self, seat: int, name: str) -> dict[str, Any]:
        return {"seat": seat, "nick": name}

    def opening(self, state: State, number: int) -> list[tuple[int, str]]:
        return [(0, f"GAME {number} FIRST"), (1, f"GAME {number} SECOND")]

    def verdict(self, state: State) -> Verdict | None:
        total, to_move = state
        if total < 10:
            return None
        return Verdict(None if total == 10 else 1 - to_move, "counted")

    def to_move(self, state: State) -> int:
        return state[1]

    def prompt(self, state: State, seat: int) -> str:
        return f"TOTAL {state[0]}"

    def judge(self, state: State, seat: int, event: Any) -> Moved[State] | Again | Verdict:
        if event == "QUIT":
            return Verdict.forfeit(seat, "gave up")
        if event in ("ADD 1", "ADD 2", "ADD 3"):
            add = int(event[-1])
            return Moved((state[0] + add, 1 - seat), {"seat": seat, "add": add})
        return AGAIN

    def forfeit(self, seat: int, fault: Fault) -> Verdict:
        return Verdict.forfeit(seat, fault.value, invalid=fault is not Fault.LEFT)

    def farewell(self, verdict: Verdict) -> Iterator[tuple[int, str]]:
        if verdict.invalid:
            assert verdict.culprit is not None
            yield verdict.culprit, "FOUL"
        for seat in (0, 1):
            result = "WIN" if verdict.winner == seat else "LOSE"
            yield seat, "DRAW" if verdict.winner is None else result

    def details(self, state: State, verdict: Verdict) -> dict[str, Any]:
        return {"total": state[0]}

    def report(self, number: int, names: tuple[str, str], state: State, verdict: Verdict) -> Any:
        return (number, names, verdict)


class Client:
    """The player's end of an in-memory connection."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = b""

    async def line(self) -> str | None:
        """The next line, or None once the stream ended."""
        while b"\n" not in self.buffer:
            data = await self.stream.receive_some(4096)
            if not data:
                return None
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    async def expect(self, *lines: str) -> None:
        for line in lines:
            assert await self.line() == line

    async def send(self, *lines: str) -> None:
        await self.stream.send_all(b"".join(line.encode() + b"\n" for line in lines))
