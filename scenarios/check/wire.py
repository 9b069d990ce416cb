"""The checker's end of one connection to the program under test, with a transcript.

Every byte each way is written down with its time from the case's start, so
a FAIL can quote the few lines around it. ``send`` writes a message whole,
or byte by byte with a pause between (``split``), each byte its own TCP
segment (Trio's sockets set TCP_NODELAY), the way a slow network or a
server that writes in pieces delivers it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import trio

from ring.wire.sansio import NEED_DATA
from scenarios.check.obligations import Rule
from scenarios.check.verdicts import Judge

# The pause between the bytes of a split message: enough for each to leave as
# its own segment and be read on its own, short enough for a whole game.
SPLIT_PAUSE = 0.0005
READ_SIZE = 65536
TRANSCRIPT_AROUND = 12  # lines a report quotes


class ClientGone(Exception):
    """The program closed its connection (or reset it) while we wrote."""


class CaseWire:
    def __init__(
        self,
        stream: trio.SocketStream,
        started: float,
        on_send: Callable[[str], None] | None = None,
        on_receive: Callable[[], None] | None = None,
    ) -> None:
        self._stream = stream
        self._started = started
        # Told of each message sent and each received (the context, for crash reports).
        self._on_send = on_send
        self._on_receive = on_receive
        self._unread = b""
        self.lines: list[str] = []
        self.closed_by_client = False

    def _log(self, arrow: str, data: bytes) -> None:
        t = trio.current_time() - self._started
        self.lines.append(f"{t:8.3f} {arrow} {data!r}"[:200])

    def note(self, text: str) -> None:
        t = trio.current_time() - self._started
        self.lines.append(f"{t:8.3f}   ({text})")

    async def send(self, data: bytes, *, split: bool = False) -> None:
        """Write ``data``: whole, or a byte at a time (``split``). ``ClientGone`` if closed."""
        chunks = [data[i : i + 1] for i in range(len(data))] if split else [data]
        if self._on_send is not None:
            self._on_send(repr(data))
        for i, chunk in enumerate(chunks):
            if i:
                await trio.sleep(SPLIT_PAUSE)
            self._log("->", chunk)
            try:
                await self._stream.send_all(chunk)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                self.closed_by_client = True
                raise ClientGone("the program closed its connection") from exc

    async def receive(self, timeout: float) -> bytes | None:
        """The next bytes the program sent; ``b""`` once it closed; None if ``timeout`` passed."""
        if self._unread:
            data, self._unread = self._unread, b""
            return data
        with trio.move_on_after(timeout):
            try:
                data = await self._stream.receive_some(READ_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if data:
                self._log("<-", data)
                if self._on_receive is not None:
                    self._on_receive()
            else:
                self.closed_by_client = True
                self.note("the program closed its connection")
            return data
        return None

    def unread(self, data: bytes) -> None:
        """Give ``data`` back: the next ``receive`` returns it first."""
        self._unread = data + self._unread

    async def close(self) -> None:
        self.note("the checker closes the connection")
        await self._stream.aclose()

    def tail(self, lines: int = TRANSCRIPT_AROUND) -> list[str]:
        return self.lines[-lines:]


class Outbox:
    """Messages on their way to the program: one write each, or kept to go with the next
    (``together``), written whole or a byte at a time (``split``)."""

    def __init__(
        self, wire: CaseWire, judge: Judge, *, split: bool, together: bool, stay: Rule
    ) -> None:
        self._wire = wire
        self._judge = judge
        self._split = split
        self._together = together
        self._stay = stay  # the game's rule that a client plays to the end
        self._queued: list[bytes] = []

    async def write(self, *messages: bytes, flush: bool = True) -> None:
        """Write ``messages`` (kept for the next write when ``together`` and not ``flush``)."""
        self._queued += messages
        if not flush and self._together:
            return
        data, self._queued = b"".join(self._queued), []
        try:
            await self._wire.send(data, split=self._split)
        except ClientGone:
            raise self._judge.fail(
                self._stay, "it closed its connection in the middle of the game"
            ) from None


class SansIOReader(Protocol):
    """The server end of a game's sans-IO protocol, as the cases read through it."""

    def receive_data(self, data: bytes) -> None: ...

    def next_event(self) -> object: ...


async def read_event(
    wire: CaseWire, reader: SansIOReader, judge: Judge, wait: float, waiting_for: str, rule: Rule
) -> object:
    """The program's next event as the server reads it; FAIL (``rule``) after ``wait``
    without one."""
    while True:
        event = reader.next_event()
        if event is not NEED_DATA:
            return event
        data = await wire.receive(wait)
        if data is None:
            raise judge.fail(rule, f"no {waiting_for} within {wait:g} s")
        reader.receive_data(data)

