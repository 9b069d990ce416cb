"""The capacity bench's hostile clients: held, flooded and dribbled connections.

``python -m scenarios.bench.capacity_load hostile NAME=HOST:PORT,...`` runs
``hostile``: from 127.0.0.2, for the length of the run, it opens HOLD
connections to every service given that say nothing, floods the services
that answer garbage before seating anyone (FishNet, No Tipping, the Old Maid
table) with it without ever reading, and dribbles a message that never ends
into the same services a byte a second. Reversi gets only the held
connections: any name is a player there, so a dribbled name would take an
honest player's seat.

127.0.0.2 stands for one student's machine on a LAN: the servers' per-address
cap (16 by default, docs/services.md) holds for it, so most of its silent
connections are closed to make room for its later ones. ``crowd`` (not one of
the hostile KINDS) is the other case: HOLD silent connections to every
service, each from an address of its own (127.0.2.1, 127.0.2.2, ...), as a
class of that many machines would open, which no per-address cap bounds.

It times nothing: the honest loads beside it measure what it costs them. Its
figures count the connections opened and those the server closed.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable

import trio

from scenarios.bench.load_figures import LoadFigures

CONNECT_TIMEOUT = 60.0  # for one connection to open, as long as an honest client waits
ATTACKER = "127.0.0.2"
HOLD = 300
FLOODS = {
    "fishnet": b"hello\n",
    "notipping": b"JOINREQUEST:flood:7;",  # there is no seat 7
    "oldmaid": b'{"cmd":"status"}\n',
}
DRIBBLES = {
    "fishnet": b"play dribbler spot",
    "notipping": b"JOINREQUEST:dribbler:0",
    "oldmaid": b'{"cmd":"join","nick":"dribbler","port":1',
}
DRIBBLE_PAUSE = 1.0
KINDS = ("hold", "flood", "dribble")
CROWD = "crowd"


def crowd_address(number: int) -> str:
    """The ``number``th address of the crowd, from 127.0.2.1: 250 an octet, no .0 or .255."""
    return f"127.0.{2 + number // 250}.{1 + number % 250}"


async def hostile(
    addresses: dict[str, tuple[str, int]], duration: float, kinds: tuple[str, ...] = KINDS
) -> LoadFigures:
    """Holders, flooders and dribblers (those of ``kinds``) against every service until
    ``duration`` is over."""
    opened = closed = 0
    start = time.perf_counter()

    async def attack(
        address: tuple[str, int],
        behave: Callable[[trio.SocketStream], Awaitable[None]],
        source: str = ATTACKER,
    ) -> None:
        """One connection from ``source`` doing ``behave`` until the server ends it or time
        is up."""
        nonlocal opened, closed
        try:
            with trio.fail_after(CONNECT_TIMEOUT):
                stream = await trio.open_tcp_stream(*address, local_address=source)
        except (OSError, trio.TooSlowError):
            return
        opened += 1
        async with stream:
            with trio.move_on_after(duration):
                try:
                    await behave(stream)
                    closed += 1  # behave returns only at the end of the stream
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    closed += 1

    async def hold(stream: trio.SocketStream) -> None:
        while await stream.receive_some(65536):
            pass

    def flood(garbage: bytes) -> Callable[[trio.SocketStream], Awaitable[None]]:
        async def behave(stream: trio.SocketStream) -> None:
            while True:
                await stream.send_all(garbage * 64)

        return behave

    def dribble(message: bytes) -> Callable[[trio.SocketStream], Awaitable[None]]:
        async def behave(stream: trio.SocketStream) -> None:
            for byte in itertools.cycle(message):
                await stream.send_all(bytes([byte]))
                await trio.sleep(DRIBBLE_PAUSE)

        return behave

    async with trio.open_nursery() as nursery:
        for name, address in addresses.items():
            for _ in range(HOLD if "hold" in kinds else 0):
                nursery.start_soon(attack, address, hold)
            for number in range(HOLD if CROWD in kinds else 0):
                nursery.start_soon(attack, address, hold, crowd_address(number))
            if name in FLOODS and "flood" in kinds:
                nursery.start_soon(attack, address, flood(FLOODS[name]))
            if name in DRIBBLES and "dribble" in kinds:
                nursery.start_soon(attack, address, dribble(DRIBBLES[name]))
    found = LoadFigures("hostile", len(addresses), time.perf_counter() - start)
    found.games, found.failed = opened, closed  # connections opened, and closed by the server
    return found
