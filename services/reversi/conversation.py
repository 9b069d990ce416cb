"""One Reversi game as a client, for any agent: ``play_one_game``.

The sans-IO ``ClientConnection`` reads the server's messages (newline-ended,
as the course's server and ours send them, or bare), and an agent chooses
each move: a built-in player (``services.reversi.client``) or a person at the
terminal (``services.reversi.terminal``). While the agent thinks, the server
is still read, so its verdict (a move time exceeded, the opponent gone)
reaches a person who is still typing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Protocol

import trio

from ring.wire.client import ClientError, Conversation
from ring.wire.net import dial
from services.reversi.protocol import (
    Board,
    ClientConnection,
    Closed,
    Colour,
    GameOver,
    RemoteProtocolError,
    Result,
)
from services.reversi.rules import BLACK, WHITE, Position

RESULT_WORDS = {1: "won", 0: "lost", 2: "tied"}
COLOUR_WORDS = {BLACK: "black", WHITE: "white"}


class Agent(Protocol):
    async def started(self, colour: int) -> None: ...

    async def move(self, position: Position) -> tuple[int, int]: ...


@dataclass(frozen=True)
class GameEnd:
    colour: int  # ours: BLACK or WHITE
    result: int  # 1 won, 0 lost, 2 a draw (the server's W digit)
    last_seen: Position | None  # after our last move: the server never sends the final board

    @property
    def discs(self) -> tuple[int, int] | None:
        """Ours and theirs on the last board we know of."""
        if self.last_seen is None:
            return None
        theirs = WHITE if self.colour == BLACK else BLACK
        return self.last_seen.count(self.colour), self.last_seen.count(theirs)


async def play_one_game(
    server: tuple[str, int], name: str, agent: Agent, *, timeout: float
) -> GameEnd:
    """Name ourselves, play every board the server sends us, and return how it ended.

    ``timeout`` bounds every wait for the server (the opponent may be a person).
    """
    host, port = server
    try:
        stream = await dial(host, port, timeout=timeout)
    except (OSError, trio.TooSlowError) as exc:
        raise ClientError(f"cannot reach the server at {host}:{port}: {exc}") from None
    protocol = ClientConnection(name)
    conversation = Conversation(stream, protocol, timeout, RemoteProtocolError)
    async with stream:
        await conversation.send(protocol.start())
        colour: int | None = None
        result: int | None = None
        last_seen: Position | None = None
        while True:
            event = await conversation.next_event()
            if isinstance(event, Colour):
                colour = BLACK if event.colour == 1 else WHITE
                await agent.started(colour)
            elif isinstance(event, Board):
                if colour is None:
                    raise ClientError("the server sent a board before our colour")
                position = Position.from_digits(event.digits, colour)
                thinking = functools.partial(agent.move, position)
                verdict, choice = await conversation.while_thinking(thinking)
                if verdict is not None:
                    event = verdict  # the server spoke first: a result, or the close
                else:
                    assert choice is not None
                    x, y = choice
                    await conversation.send(protocol.move(x, y))
                    last_seen = _after(position, x, y)
                    continue
            if isinstance(event, Result):
                result = event.result
            elif isinstance(event, GameOver | Closed):
                if colour is None or result is None:
                    raise ClientError("the server closed the connection before the game ended")
                return GameEnd(colour, result, last_seen)


def _after(position: Position, x: int, y: int) -> Position | None:
    sq = x * 8 + y
    return position.play(sq) if position.is_legal(sq) else None
