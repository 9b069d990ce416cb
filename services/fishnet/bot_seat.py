"""A built-in player in a seat of a server game, and where its long searches run.

A ``BotSeat`` sits in a ``ring.games.match`` seat (a ``ring.games.seat.Occupant``). It
hears exactly the lines a client in its seat would be told, but is never
told ``yourturn``: the match asks it for its move instead (``event``, by
``decide``), off the clock (``clocked`` False), so that a long decision
(smarx's endgame search) can run in a worker process (``Searches``, over
``ring.games.workers``), never on the loop that serves every game of every
service. A search that takes over its deadline, or whose worker fails, is
given up, and the player decides by its quick rules (the transcript records
``search_failed``); a replay may differ from there on. Its lines, both ways,
and a search given up are in the game's record with its seat and name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import trio

from ring.games.record import Held
from ring.games.workers import WorkerError, Workers
from services.fishnet.bots import SEARCH_FAILED, Decision, Player
from services.fishnet.protocol import Pass, Request, Role, YourTurn, encode, parse_line


class Searches:
    """The built-in players' long searches: in worker processes, each under a deadline."""

    def __init__(self, workers: int | None, timeout: float) -> None:
        self.workers = Workers(workers)  # None: one a core but the server's
        self.timeout = timeout
        self.failed = 0  # searches given up

    async def aclose(self) -> None:
        await self.workers.aclose()


class BotSeat:
    """A built-in player in a seat of a game (seat 1: it never comes first)."""

    clocked = False  # its searches have their own deadline

    def __init__(self, name: str, player: Player, searches: Searches, seat: int = 1) -> None:
        self.name = name
        self.player = player
        self.searches = searches
        self.seat = seat
        self.prelude = Held()  # nothing: it is made as its game starts
        self.log: Callable[..., None] = lambda **line: self.prelude.add(line)

    async def send(self, message: Any, timeout: float) -> bool:
        if isinstance(message, YourTurn):
            return True  # the match asks for its move (event) instead
        line = encode(message).decode().rstrip("\n")
        self.log(seat=self.seat, name=self.name, dir="out", line=line)
        self.hear(line)
        return True

    async def flush(self, timeout: float) -> bool:
        return True  # it heard each line as it was sent

    async def event(self, deadline: float = math.inf) -> Request | Pass:
        """Its move, as the line a client would send (recorded as one)."""
        decision = await self.decide(
            self.searches,
            lambda why: self.log(seat=self.seat, name=self.name, search_failed=why),
        )
        reply = decision.line()
        move = parse_line(reply.encode(), Role.SERVER)
        assert isinstance(move, Request | Pass), reply
        self.log(seat=self.seat, name=self.name, dir="in", line=reply)
        return move

    def hear(self, line: str) -> None:
        self.player.hear(line)  # never yourturn: decide() is asked instead

    async def decide(self, searches: Searches, given_up: Callable[[str], object]) -> Decision:
        """The player's answer to ``yourturn``; ``given_up(why)`` if its search was."""
        search = self.player.search()
        if search is None:
            return self.player.choose()
        try:
            searched = await searches.workers.run(
                search.function, *search.args, timeout=searches.timeout
            )
        except (trio.TooSlowError, WorkerError) as exc:
            given_up("timed out" if isinstance(exc, trio.TooSlowError) else str(exc))
            searches.failed += 1
            searched = SEARCH_FAILED
        return self.player.choose(searched)
