"""Bytes fed to a sans-I/O connection the way reads deliver them: in any pieces.

Shared by the protocol tests of the games (``tests/services/<game>/test_protocol.py``):
the same stream cut at any points must give the same events as the stream in one read.
"""

from __future__ import annotations

import itertools
from typing import Any, Protocol

from ring.wire.sansio import NEED_DATA


class Connection(Protocol):
    """A game's sans-I/O end: bytes in, events out (``NEED_DATA`` when it has none)."""

    def receive_data(self, data: bytes) -> Any: ...

    def next_event(self) -> Any: ...


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at every point of ``cuts`` (taken modulo its length + 1), no piece empty."""
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def splits(data: bytes) -> list[list[bytes]]:
    """The data in one read, in two reads at every point, and one byte per read."""
    two = [[data[:i], data[i:]] for i in range(1, len(data))]
    return [[data], *two, [data[i : i + 1] for i in range(len(data))]]


def events_until(conn: Connection, final: tuple[type, ...]) -> list[object]:
    """Every event available now, up to NEED_DATA or a final event (one of ``final``)."""
    found: list[object] = []
    while (event := conn.next_event()) is not NEED_DATA:
        found.append(event)
        if isinstance(event, final):
            break
    return found


def feed_until(
    conn: Connection, chunks: list[bytes], final: tuple[type, ...], *, eof: bool = True
) -> list[object]:
    """Feed the chunks one read at a time, taking the events after each read."""
    seen: list[object] = []
    chunks = [chunk for chunk in chunks if chunk]  # b"" would be the close
    for chunk in [*chunks, b""] if eof else chunks:
        if seen and isinstance(seen[-1], final):
            break
        conn.receive_data(chunk)
        seen += events_until(conn, final)
    return seen
