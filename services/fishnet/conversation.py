"""One FishNet game's conversation with a server over TCP, for any agent.

``play_one_game`` sends ``play``, hands every server line to an ``Agent`` and
sends the agent's answer to each ``yourturn``, until the result. The agent
is a built-in player (``services.fishnet.client.BotAgent``: ``ring bot
fishnet``) or a person (``services.fishnet.terminal``: ``ring play fishnet``).
Every wait on the server has a timeout; the server's lines are checked by the
sans-IO ``Link``, so a server that breaks the protocol ends the game with a
clear message.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Protocol

import trio

from ring.wire.net import dial
from ring.wire.sansio import Closed
from ring.wire.transport import Connection
from services.fishnet.protocol import (
    END_MESSAGES,
    Link,
    Play,
    ProtocolError,
    Quit,
    Role,
    TieGame,
    YouLose,
    YourTurn,
    YouWin,
    encode,
    parse_line,
)
from services.fishnet.rules import Result


class Agent(Protocol):
    async def hear(self, line: str) -> str | None:
        """One server line (without its newline); the answer line to ``yourturn``."""


class ClientError(Exception):
    """The game could not be played to its end: no server, a lost connection, a timeout."""


@dataclass(frozen=True)
class GameEnd:
    result: Result
    lines: int  # server lines heard


_GONE = (trio.BrokenResourceError, trio.ClosedResourceError)
_RESULTS = {YouWin: Result.WIN, YouLose: Result.LOSE, TieGame: Result.TIE}


async def play_one_game(
    address: tuple[str, int],
    team: str,
    opponent: str,
    agent: Agent,
    *,
    timeout: float,
    connect_timeout: float = 10.0,
    send_quit: bool = True,
) -> GameEnd:
    """Play one game to its result; ``ClientError`` if it cannot end normally."""
    host, port = address
    try:
        stream = await dial(host, port, timeout=connect_timeout)
    except (OSError, trio.TooSlowError) as exc:
        raise ClientError(f"cannot connect to {host}:{port}: {_why(exc)}") from None
    conn = Connection(stream, Link(Role.CLIENT), timeout=timeout)
    lines = 0
    try:
        await conn.send(Play(team, opponent))
        pending = None
        while True:
            event, pending = pending or await conn.receive(), None
            if isinstance(event, Closed):
                raise ClientError("the server closed the connection before the game ended")
            lines += 1
            line = encode(event).decode().rstrip("\n")
            if isinstance(event, YourTurn):
                answer, early = await _answer(conn, agent, line)
                if early is not None:  # the server moved on (a move timeout): hear that
                    pending = early
                    continue
                if answer is None:  # the person left the game
                    await conn.send(Quit())
                    raise ClientError("you left the game")
                await conn.send(parse_line(answer.encode(), Role.SERVER))
            else:
                await agent.hear(line)
            if isinstance(event, END_MESSAGES):
                if send_quit:
                    # The server may already have closed: the quit is a courtesy.
                    with trio.move_on_after(1), contextlib.suppress(*_GONE):
                        await conn.send(Quit())
                return GameEnd(_RESULTS[type(event)], lines)
    except trio.TooSlowError:
        raise ClientError(f"the server sent nothing for {timeout:g} s") from None
    except _GONE as exc:
        raise ClientError(f"the connection broke: {_why(exc)}") from None
    except ProtocolError as exc:
        raise ClientError(f"the server broke the protocol: {exc}") from None
    finally:
        await conn.aclose()


async def _answer(conn: Connection, agent: Agent, line: str) -> tuple[str | None, object]:
    """The agent's answer to ``yourturn``, or the server's next event if that comes first.

    A person may think past the server's move time limit; then the server's
    verdict must reach them instead of a prompt that waits forever.
    """
    outcome: dict[str, object] = {}
    async with trio.open_nursery() as nursery:

        async def think() -> None:
            outcome["answer"] = await agent.hear(line)
            nursery.cancel_scope.cancel()

        async def listen() -> None:
            outcome["event"] = await conn.receive()
            nursery.cancel_scope.cancel()

        nursery.start_soon(think)
        nursery.start_soon(listen)
    if "event" in outcome:  # even if an answer came at the same moment: too late for it
        return None, outcome["event"]
    return outcome["answer"], None  # type: ignore[return-value]


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    # trio's "all attempts to connect failed" keeps each attempt's error as its cause.
    cause = exc.__cause__
    while isinstance(cause, BaseExceptionGroup):
        cause = cause.exceptions[0]
    if isinstance(cause, OSError) and cause.errno:
        return os.strerror(cause.errno)
    if isinstance(exc, trio.TooSlowError):
        return "timed out"
    return str(exc) or type(exc).__name__
