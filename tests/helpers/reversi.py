"""Reversi for the tests: a server, raw clients that read it through the sans-I/O
``ClientConnection``, and the protocol's two ends fed without sockets.

Used by the Reversi tests (``tests/services/reversi/``) and by the tests of the move
clocks every service shares (``tests/ring/games/test_move_clocks.py``).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any

import trio

from services.reversi.protocol import (
    BadName,
    Board,
    ClientConnection,
    Closed,
    Colour,
    GameOver,
    LineTooLong,
    Result,
)
from services.reversi.rules import BLACK, WHITE
from services.reversi.server import ReversiConfig, ReversiServer, serve_reversi
from tests.helpers import servers
from tests.helpers.feeding import events_until, feed_until
from tests.helpers.raw_client import TIMEOUT, RawClient


class Client(RawClient):
    """One raw connection to the server."""

    def __init__(self, stream: trio.abc.Stream, name: str = "x") -> None:
        super().__init__(stream, ClientConnection(name))

    @classmethod
    async def connect(cls, server: ReversiServer, name: str = "x") -> Client:
        with trio.fail_after(TIMEOUT):
            host, port = server.address
            return cls(await trio.open_tcp_stream(host, port), name)

    async def board(self) -> str:
        message = await self.message()
        assert isinstance(message, Board), message
        return message.digits

    async def end(self) -> tuple[int, bool]:
        """The result the server sends, then that G and the close follow."""
        result = await self.message()
        assert isinstance(result, Result), result
        assert isinstance(await self.message(), GameOver)
        assert isinstance(await self.message(), Closed)
        return result.result, True


def running(**settings: Any) -> AbstractAsyncContextManager[ReversiServer]:
    """A Reversi server on any free port, seed 3 unless ``settings`` say otherwise."""
    return servers.running(serve_reversi, ReversiConfig(**{"port": 0, "seed": 3, **settings}))


async def pair(server: ReversiServer, a: str = "ann", b: str = "bob") -> dict[int, Client]:
    """Two named clients; by colour, once the server has told them."""
    first = await Client.connect(server, a)
    await first.send(f"N{a}\n".encode())
    second = await Client.connect(server, b)
    await second.send(f"N{b}\n".encode())
    clients = {}
    for client in (first, second):
        colour = await client.message()
        assert isinstance(colour, Colour)
        clients[BLACK if colour.colour == 1 else WHITE] = client
    return clients


def square_of(x: int, y: int) -> int:
    return x * 8 + y


# -- the protocol without sockets: the server's end and a client's end -------------------

FINAL = (BadName, LineTooLong, Closed)


def board(**squares: int) -> Board:
    """A board from squares named like ``d34=2`` (x=3, y=4 black); the rest empty."""
    digits = ["0"] * 64
    for key, value in squares.items():
        x, y = int(key[1]), int(key[2])
        digits[x * 8 + y] = str(value)
    return Board("".join(digits))


# docs/protocols/reversi.md 4, "The start position"
START = board(d33=1, d44=1, d34=2, d43=2)
AFTER_23 = board(d23=2, d33=2, d43=2, d34=2, d44=1)  # black took (2, 3)
AFTER_24 = board(d23=2, d33=2, d43=2, d24=1, d34=1, d44=1)  # then white took (2, 4)


events = partial(events_until, final=FINAL)  # every event available now
feed = partial(feed_until, final=FINAL)  # the chunks one read at a time, events after each
