"""A seat of a two-player match (``ring.games.match``): who sits in it, and how a match talks to it.

A ``Match`` needs little of a seat's occupant (``Occupant``): its name, the
lines it logged before its game (``prelude``) and where its lines go once the
game has a record (``log``), a way to tell it a message (``send``), and its
next answer (``event``); ``send`` may hold messages until ``flush``, which the
match calls before it waits for a connection's answer and at the end (a FishNet
client's lines of one step go out in one write). Most occupants are a
connection: ``Seat``, its stream read through the game's sans-IO protocol
(``Wire``). A game may seat
others, as long as they keep that contract: a built-in player of the server's
own that decides in-process (not on the clock: ``clocked`` False), or a
connection whose reading the game does itself (FishNet's reader answers bad
lines while its player waits).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from typing import Any, Protocol

import trio

from ring.games import record
from ring.games.clock import TIMED_OUT
from ring.wire.sansio import NEED_DATA, Closed
from ring.wire.transport import SEND_FAILED, read_before, write

READ_SIZE = 4096


class Fault(enum.Enum):
    """Why a match itself ends a game against a player; the rules word it."""

    LEFT = "left"  # its connection closed, or could not take a write
    TIMED_OUT = "timed out"  # its turn's clock ran out
    FLOODED = "flooded"  # over max_unread bytes waited from it while the other moved
    REFUSED = "refused"  # Terms.attempts answers refused in a row


class Wire(Protocol):
    """A game's sans-IO protocol, the server's end of one connection."""

    @property
    def buffered(self) -> int:
        """Bytes received and not yet turned into events."""

    def send(self, message: Any) -> bytes: ...

    def receive_data(self, data: bytes) -> None:
        """Bytes from the player; ``b""`` once it closed its end."""

    def next_event(self) -> Any:
        """The next event, ``NEED_DATA``, or ``ring.wire.sansio.Closed()`` once closed."""


class Occupant(Protocol):
    """What a ``Match`` needs of whoever sits in a seat."""

    name: str
    prelude: record.Held  # its lines from before its game, with their times
    log: Callable[..., None]  # where its lines go: the match points it at the record
    clocked: bool  # its turns are on the clock (a built-in player's are not)

    async def send(self, message: Any, timeout: float) -> bool:
        """Tell it one message; False if it cannot be told (it has left). It may hold the
        message for its next ``flush``, which the match calls before it waits for a
        connection's answer and at the end."""

    async def flush(self, timeout: float) -> bool:
        """Write what ``send`` held, if anything; False if it cannot be told (it has left)."""

    async def event(self, deadline: float = math.inf) -> Any:
        """Its next answer, or ``TIMED_OUT`` at ``deadline``; ``Closed()`` once it left."""

    async def watch(self) -> Fault:
        """Only with ``Terms.watch_waiting``: wait while the other moves, until it loses."""


Shown = Callable[[Any], "dict[str, Any] | None"]


class Seat:
    """One player's connection, from its first byte to the end of its game."""

    clocked = True

    def __init__(
        self, stream: trio.abc.Stream, protocol: Wire, peer: str, *, max_unread: int, shown: Shown
    ) -> None:
        self.stream = stream
        self.protocol = protocol
        self.peer = peer
        self.max_unread = max_unread  # bytes that may wait unread, before its game or its turn
        self.shown = shown  # how an event in shows in the record (None: not at all)
        self.name = ""
        self.seat = -1  # its seat in the game forming (ring.games.lobby)
        # The seat it must take, when whoever accepted its connection knows (a tournament
        # listens on one port per seat); None: the game's introduction decides.
        self.assigned: int | None = None
        self.granted = False  # it holds that seat
        self.gone = False  # closed, or unable to take our writes
        self.begun = trio.Event()  # seated in a game that has begun
        self.game_over = trio.Event()  # its game is over: its connection may close
        self.waiting_scope = trio.CancelScope()  # its own task reads until the game begins
        self.stopped_waiting = trio.Event()  # that read has ended: the game may read now
        # Lines logged before its game has a record, kept with their times (bounded).
        self.prelude = prelude = record.Held()
        # Not a closure over self: the seat and its log would be a reference cycle.
        self.log: Callable[..., None] = lambda **line: prelude.add(line)

    @property
    def who(self) -> str:
        return f"{self.name} ({self.peer})" if self.name else self.peer

    async def send(self, message: Any, timeout: float) -> bool:
        """Write one message; False (and ``gone``) if the player cannot take it."""
        if self.gone:
            return False
        data = self.protocol.send(message)
        self.log(dir="out", line=data.decode().strip())
        try:
            await write(self.stream, data, timeout)
        except SEND_FAILED:
            self.gone = True
            return False
        return True

    async def flush(self, timeout: float) -> bool:
        """Nothing is held: ``send`` writes each message at once (a game's own line rules)."""
        return not self.gone

    async def event(self, deadline: float = math.inf) -> Any:
        """The next event (logged as ``shown``), or ``TIMED_OUT`` at ``deadline``."""
        while (event := self.protocol.next_event()) is NEED_DATA:
            try:
                data = await read_before(self.stream, deadline, READ_SIZE)
            except trio.TooSlowError:
                return TIMED_OUT
            self.protocol.receive_data(data)
        if isinstance(event, Closed):
            self.gone = True
        self.note(event)
        return event

    def note(self, event: Any) -> None:
        fields = self.shown(event)
        if fields is not None:
            self.log(dir="in", **fields)

    async def read(self) -> bytes:
        """The next bytes, or b"" once the stream has ended or broken; no deadline of its own."""
        return await read_before(self.stream, math.inf, READ_SIZE)

    def too_much_unread(self, data: bytes = b"") -> bool:
        return self.protocol.buffered + len(data) > self.max_unread

    async def watch(self) -> Fault:
        """Read the waiting player's bytes, unparsed, until it loses by them."""
        while not self.gone:
            if self.too_much_unread():
                return Fault.FLOODED
            data = await self.read()
            if self.too_much_unread(data):
                return Fault.FLOODED
            self.protocol.receive_data(data)
            if not data:
                self.note(Closed())
                self.gone = True
        return Fault.LEFT
