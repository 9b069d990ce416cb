"""A finished game is freed at once: ``ring serve`` leaves no cycles for the collector.

Python frees an object when its last reference goes, unless objects refer to
one another in a cycle; those wait for the cycle collector, which stops the
whole server while it walks them. On the capacity bench the FishNet games
that had ended (each game's client and match pointing at one another) made
its middle-generation collections find 80,000 objects at a time, in pauses of
over 200 ms that every other game waited out (docs/services.md, "Garbage
collection"). Here one game of each service, played by the reference clients
of ``ring bot`` and ``ring peer`` against the services as ``ring serve`` sets
them up, must leave none of our objects in a cycle; and so must the connections
a hostile machine opens, evicted at the per-address cap or closed for a flood
(on the bench they left 13,000 objects a phase: a seat's log and a table
client's observer pointed back at their owners).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import trio

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import chosen_services, seeded_settings, serve_all
from ring.oldmaid.peer import Peer, PeerConfig
from ring.wire.flood import BAD_IN_A_ROW
from ring.wire.net import DEFAULT_MAX_PER_ADDRESS
from services.fishnet import conversation as fishnet
from services.fishnet.bots import make_player as fishnet_player
from services.fishnet.client import BotAgent as FishNetBot
from services.notipping import conversation as notipping
from services.notipping.bots import make_player as notipping_player
from services.notipping.client import BotAgent as NoTippingBot
from services.reversi import conversation as reversi
from services.reversi.bots import make_player as reversi_player
from services.reversi.client import BotAgent as ReversiBot
from tests.helpers.cyclic_garbage import left_in_cycles

WAIT = 20.0
SERVICES = ("fishnet", "notipping", "oldmaid", "reversi")
HOSTILE = "127.0.0.2"  # not this machine's own 127.0.0.1: capped as a machine of its own
EVICTED = 3


async def play_one_of_each(addresses: dict[str, tuple[str, int]]) -> None:
    async def fishnet_game(opponent: str) -> None:
        agent = FishNetBot(fishnet_player("alice", 1))
        await fishnet.play_one_game(addresses["fishnet"], "ann", opponent, agent, timeout=WAIT)

    async def reversi_seat(name: str) -> None:
        agent = ReversiBot(reversi_player("random", name), None)
        await reversi.play_one_game(addresses["reversi"], name, agent, timeout=WAIT)

    async def notipping_seat(seat: int) -> None:
        agent = NoTippingBot(notipping_player("random", seat))
        await notipping.play_one_game(addresses["notipping"], f"n{seat}", seat, agent, timeout=WAIT)

    async def oldmaid_peer(number: int) -> None:
        config = PeerConfig(
            nick=f"p{number}", table=addresses["oldmaid"], seed=number, timeout=WAIT
        )
        peer = Peer(config)
        try:
            await peer.play()
        finally:
            peer.log.close()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fishnet_game, "smarx")
        nursery.start_soon(fishnet_game, "spot")
        for name in ("ann", "bob"):
            nursery.start_soon(reversi_seat, name)
        for seat in (0, 1):
            nursery.start_soon(notipping_seat, seat)
        for number in range(4):
            nursery.start_soon(oldmaid_peer, number)


Visit = Callable[[dict[str, tuple[str, int]]], Awaitable[None]]


async def left_by(visit: Visit) -> list[str]:
    """What ``visit`` of one ring serve's services, from its start to its stop, leaves
    in cycles (``left_in_cycles``)."""
    args = build_parser().parse_args(
        ["serve", "--host", "127.0.0.1", "--seed", "5", "--no-advertise"]
        + [f"--{name}=0" for name in SERVICES]
    )
    chosen = chosen_services(args, declared_services())
    with left_in_cycles() as cycles:
        async with trio.open_nursery() as nursery:
            addresses = await nursery.start(
                serve_all, list(zip(chosen, seeded_settings(args, chosen), strict=True))
            )
            with trio.fail_after(WAIT):
                await visit(addresses)
            nursery.cancel_scope.cancel()
    return cycles


async def test_a_game_of_each_service_leaves_nothing_in_cycles() -> None:
    cycles = await left_by(play_one_of_each)
    assert cycles == [], "\n".join(cycles)


async def read_to_the_end(stream: trio.SocketStream) -> None:
    while await stream.receive_some(65536):
        pass


async def hostile_connections(address: tuple[str, int]) -> None:
    """From 127.0.0.2, one machine of a class: more silent connections than the cap of
    one address (the first are evicted, closed by the server), and a flood of garbage
    that the server ends (the flood rule: docs/protocols/oldmaid.md 3, fishnet.md "Errors";
    or the protocol's own)."""
    host, port = address
    silent = [
        await trio.open_tcp_stream(host, port, local_address=HOSTILE)
        for _ in range(DEFAULT_MAX_PER_ADDRESS + EVICTED)
    ]
    for stream in silent[:EVICTED]:
        await read_to_the_end(stream)
    flood = await trio.open_tcp_stream(host, port, local_address=HOSTILE)
    with contextlib.suppress(trio.BrokenResourceError):
        await flood.send_all(b"garbage;\n" * (BAD_IN_A_ROW + 1))
    await read_to_the_end(flood)
    for stream in [*silent, flood]:
        await stream.aclose()


async def test_hostile_connections_leave_nothing_in_cycles() -> None:
    async def visit(addresses: dict[str, tuple[str, int]]) -> None:
        for name in SERVICES:
            await hostile_connections(addresses[name])

    cycles = await left_by(visit)
    assert cycles == [], "\n".join(cycles)
