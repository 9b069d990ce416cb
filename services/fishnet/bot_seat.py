"""A built-in player in a seat of a server game, and where its long searches run.

A ``BotSeat`` hears exactly the lines a client in its seat would be told,
but is never told ``yourturn``: the match asks it for its move instead
(``decide``), so that a long decision (smarx's endgame search) can run in a
worker process (``Searches``, over ``ring.workers``), never on the loop that
serves every game of every service. A search that takes over its deadline,
or whose worker fails, is given up, and the player decides by its quick
rules (the transcript records ``search_failed``); a replay may differ from
there on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import trio

from ring.workers import WorkerError, Workers
from services.fishnet.players import SEARCH_FAILED, Decision, Player


class Searches:
    """The built-in players' long searches: in worker processes, each under a deadline."""

    def __init__(self, workers: int | None, timeout: float) -> None:
        self.workers = Workers(workers)  # None: one a core but the server's
        self.timeout = timeout
        self.failed = 0  # searches given up

    async def aclose(self) -> None:
        await self.workers.aclose()


@dataclass(eq=False)
class BotSeat:
    name: str
    player: Player

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
