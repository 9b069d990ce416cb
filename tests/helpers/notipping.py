"""No Tipping for the tests: a server, raw clients that read it through the sans-I/O
``ClientConnection``, and moves played and checked against ``rules.Game``.

Used by the No Tipping server's tests (``tests/services/notipping/``) and by the tests of
the move clocks every service shares (``tests/ring/games/test_move_clocks.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import trio
import trio.testing

from services.notipping.protocol import (
    Begin,
    ClientConnection,
    Closed,
    Granted,
    Invalid,
    Lose,
    Round,
    Win,
)
from services.notipping.rules import ADD, Add, Game, Move
from services.notipping.server import NoTippingConfig, NoTippingServer, serve_notipping
from tests.helpers import servers
from tests.helpers.raw_client import TIMEOUT, RawClient


class Client(RawClient):
    """One raw connection to the server."""

    def __init__(self, stream: trio.abc.Stream, handle: str = "x", seat: int = 0) -> None:
        super().__init__(stream, ClientConnection(handle, seat))

    @classmethod
    async def connect(cls, server: NoTippingServer, handle: str = "x", seat: int = 0) -> Client:
        with trio.fail_after(TIMEOUT):
            return cls(await trio.open_tcp_stream(*server.address), handle, seat)

    async def expect(self, *messages: object) -> None:
        """Exactly these messages next (``Closed()`` for the close)."""
        for message in messages:
            assert await self.message() == message

    async def round(self) -> Round:
        message = await self.message()
        assert isinstance(message, Round), message
        return message


def running(**settings: Any) -> AbstractAsyncContextManager[NoTippingServer]:
    """A No Tipping server on any free port, seed 3 unless ``settings`` say otherwise."""
    config = NoTippingConfig(**{"port": 0, "seed": 3, **settings})
    return servers.running(serve_notipping, config)


async def join(server: NoTippingServer, handle: str, seat: int) -> Client:
    client = await Client.connect(server, handle, seat)
    await client.send(client.protocol.start())
    await client.expect(Granted())
    return client


async def pair(server: NoTippingServer, a: str = "ann", b: str = "bob") -> list[Client]:
    """Two clients in seats 0 and 1 of a game that has begun."""
    clients = [await join(server, a, 0), await join(server, b, 1)]
    for client in clients:
        assert isinstance(await client.message(), Begin)
    return clients


async def until(condition: Callable[[], bool]) -> None:
    """Let the server run until ``condition`` holds (it reacts to bytes already sent)."""
    with trio.fail_after(TIMEOUT):
        while not condition():
            await trio.testing.wait_all_tasks_blocked()


def expected_round(game: Game) -> Round:
    seat = game.to_move
    if game.phase == ADD:
        mine, theirs = (tuple(sorted(game.hands[p])) for p in (seat, 1 - seat))
        return Round(game.round, seat, ADD, mine, theirs, game.weights)
    return Round(game.round, seat, "REMOVE", None, None, game.weights)


def encoded(move: Move) -> bytes:
    if isinstance(move, Add):
        return f"ADD:{move.weight}:{move.position};".encode()
    return f"REMOVE:{move.position};".encode()


async def play(clients: list[Client], game: Game, moves: list[Move]) -> Game:
    """Each move by the player to move, checking each ROUND against the rules."""
    for move in moves:
        assert await clients[game.to_move].round() == expected_round(game)
        await clients[game.to_move].send(encoded(move))
        game = game.play(move)
    return game


async def lost(loser: Client, winner: Client, *, invalid: bool) -> None:
    await loser.expect(*([Invalid()] if invalid else []), Lose(), Closed())
    await winner.expect(Win(), Closed())
