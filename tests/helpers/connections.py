"""Raw loopback TCP connections for the tests of limits: opened, read to their close,
checked still open, closed; every wait bounded. And a port where nothing listens, and a
port outside the range the kernel hands out.

Used by the tests of ``ring.wire.net``'s caps and of the limits of whole games
(``tests/ring/wire/``), and by the tests of a program that cannot reach its server.
"""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trio

BOUND = 5.0  # longest any single wait may take


@contextmanager
def refusing_port() -> Iterator[int]:
    """A loopback port where every connection is refused, for as long as the block runs.

    The port stays bound (never listening) until the block ends: a port merely
    closed could be given to another test's listener meanwhile, which would then
    answer a dial meant to fail.
    """
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


def fixed_port() -> int:
    """A free loopback port below the kernel's ephemeral range, as a port a student types in.

    A test that must close the port before something else binds it (a program told
    the number first) takes one from here: a listener bound to port 0 anywhere on
    the machine is never given it meanwhile.
    """
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    start = 10000 + os.getpid() % 10000  # parallel workers start apart
    for port in itertools.chain(range(start, low), range(10000, start)):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError("no free port below the ephemeral range")


async def connect(port: int, source: str | None = None) -> trio.SocketStream:
    """A connection to 127.0.0.1:port, from ``source`` (another loopback address) if given."""
    with trio.fail_after(BOUND):
        return await trio.open_tcp_stream("127.0.0.1", port, local_address=source)


async def closed_by_server(stream: trio.SocketStream) -> bool:
    """Read to the end: True if the other side closed within the bound."""
    with trio.move_on_after(BOUND):
        while True:
            try:
                data = await stream.receive_some(65536)
            except trio.BrokenResourceError:
                return True
            if not data:
                return True
    return False


async def still_open(stream: trio.SocketStream) -> bool:
    """True if nothing, not even an EOF, arrives at once (the server kept it)."""
    with trio.move_on_after(0.05):
        await stream.receive_some(1)
        return False
    return True


async def all_still_open(streams: list[trio.SocketStream]) -> bool:
    """``still_open`` for each, all at once (so 0.05 s in all)."""
    kept: list[bool] = []

    async def check(stream: trio.SocketStream) -> None:
        kept.append(await still_open(stream))

    async with trio.open_nursery() as nursery:
        for stream in streams:
            nursery.start_soon(check, stream)
    return all(kept) and len(kept) == len(streams)


async def close_all(streams: list[trio.SocketStream]) -> None:
    for stream in streams:
        with trio.move_on_after(1) as scope:
            scope.shield = True
            await stream.aclose()
