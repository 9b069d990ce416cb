"""Watching games without slowing them: every game's records, fanned out to viewers.

A ``Spectators`` is one more subscriber of a process's ``ring.games.record.RecordHub``
(the hub every service of ``ring serve`` publishes its records to). It keeps,
for each game, a short summary (service, number, players, forming, playing
or over, how it ended) and its records so far, and hands each new record to
the viewers that watch: the lobby (every game's summary) or one game (its
records). A game that forms before it starts (an Old Maid table's next game)
has no records yet: the hub's forming announcements (who joined, how many it
waits for) put it in the lobby until its ``start`` record comes.

A game never waits for a viewer. The hub calls ``Spectators`` synchronously,
in the game's own task, so everything here is done at once: each viewer has
a bounded queue, a record goes in with ``send_nowait``, and a viewer whose
queue is full (a stalled browser, a slow network) is dropped there and then
(its queue closed; the page may reconnect and start again from a snapshot).
The number of viewers is capped; a game keeps at most ``max_records`` records
for late viewers (beyond, it says it was cut); finished games are forgotten,
oldest first, beyond ``max_games``.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import trio

from ring.games.record import GameKey, RecordHub

MAX_VIEWERS = 200
QUEUE_SIZE = 256  # messages a viewer may fall behind by before it is dropped
MAX_RECORDS = 20_000  # a game's records kept for a late viewer
MAX_GAMES = 500  # finished games remembered


class TooManyViewers(Exception):
    """The cap on viewers is reached."""


def game_id(key: GameKey) -> str:
    """A game's name on the page and in the API: ``<service>-<number>``."""
    return f"{key.service}-{key.game}"


@dataclass
class Game:
    """One game as the page sees it."""

    id: str
    service: str
    number: int
    players: list[str] = field(default_factory=list)
    # forming (players joining, no start yet), playing, over; "gone" in the one message
    # that says a forming game ended before its start
    state: str = "forming"
    reason: str | None = None  # how it ended
    winners: list[str] = field(default_factory=list)
    losers: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    cut: bool = False  # records past max_records were not kept
    wanted: int | None = None  # a forming game: how many players it waits for

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "service": self.service,
            "number": self.number,
            "players": self.players,
            "state": self.state,
            "reason": self.reason,
            "winners": self.winners,
            "losers": self.losers,
            "records": len(self.records),
            "cut": self.cut,
            "wanted": self.wanted,
        }


class Viewer:
    """One watcher: ``receive()`` its messages; ``dropped`` once it fell too far behind."""

    def __init__(self, watching: str | None, queue_size: int) -> None:
        self.watching = watching  # a game's id, or None for the lobby
        self._send, self._receive = trio.open_memory_channel[dict[str, Any]](queue_size)
        self.dropped = False

    def offer(self, message: dict[str, Any]) -> None:
        """Queue ``message`` now, or drop this viewer if its queue is full."""
        if self.dropped:
            return
        try:
            self._send.send_nowait(message)
        except trio.WouldBlock:
            self.dropped = True
            self._send.close()

    async def receive(self) -> dict[str, Any]:
        """The next message; ``trio.EndOfChannel`` once dropped and drained."""
        return await self._receive.receive()

    def close(self) -> None:
        self._send.close()


class Spectators:
    def __init__(
        self,
        hub: RecordHub,
        *,
        max_viewers: int = MAX_VIEWERS,
        queue_size: int = QUEUE_SIZE,
        max_records: int = MAX_RECORDS,
        max_games: int = MAX_GAMES,
    ) -> None:
        self.games: dict[str, Game] = {}
        self.viewers: set[Viewer] = set()
        self.max_viewers = max_viewers
        self.queue_size = queue_size
        self.max_records = max_records
        self.max_games = max_games
        self._finished: collections.deque[str] = collections.deque()
        unsubscribe = hub.subscribe(self._record)
        unwatch = hub.watch_forming(self._forming)
        self.unsubscribe = lambda: (unsubscribe(), unwatch())

    # -- from the hub -------------------------------------------------------------------

    def _record(self, key: GameKey, record: dict[str, Any]) -> None:
        ident = game_id(key)
        game = self.games.get(ident)
        # What the lobby shows changes with a new game, its start, its end, or its cut;
        # never with the record count alone (counting every record would flood the
        # lobby). Told so, not found by comparing summaries: every record of every game
        # passes here, in the game's own task.
        changed = game is None
        if game is None:
            game = self.games[ident] = Game(ident, key.service, key.game)
        if len(game.records) < self.max_records:
            game.records.append(record)
        elif not game.cut:
            game.cut = changed = True
        event = record.get("event")
        if event == "start":
            game.state, game.wanted = "playing", None
            game.players = [str(player.get("name")) for player in record.get("players", [])]
            changed = True
        elif event == "end":
            game.state = "over"
            game.reason = record.get("reason")
            game.winners = list(record.get("winners", []))
            game.losers = list(record.get("losers", []))
            changed = True
            self._finished.append(ident)
            self._forget_old()
        if not self.viewers:
            return
        summary: dict[str, Any] | None = None
        for viewer in self.viewers:
            if viewer.watching == ident:
                viewer.offer({"type": "record", "game": ident, "record": record})
            elif viewer.watching is None and changed:
                summary = summary or game.summary()
                viewer.offer({"type": "game", "game": summary})
        if any(viewer.dropped for viewer in self.viewers):
            self.viewers = {viewer for viewer in self.viewers if not viewer.dropped}

    def _forming(self, key: GameKey, joined: list[str], wanted: int) -> None:
        """A game forms (its players so far), or stopped forming with nobody in it."""
        ident = game_id(key)
        game = self.games.get(ident)
        if game is not None and game.state != "forming":
            return  # started: its records say the rest
        if game is None:
            if not joined:
                return
            game = self.games[ident] = Game(ident, key.service, key.game)
        game.players, game.wanted = list(joined), wanted
        if not joined:  # everyone left before it started: it is gone from the lobby
            del self.games[ident]
            game.state = "gone"
        for viewer in list(self.viewers):
            if viewer.watching in (None, ident):
                viewer.offer({"type": "game", "game": game.summary()})
        self.viewers = {viewer for viewer in self.viewers if not viewer.dropped}

    def _forget_old(self) -> None:
        while len(self._finished) > self.max_games:
            self.games.pop(self._finished.popleft(), None)

    # -- for the page ---------------------------------------------------------------------

    def lobby(self) -> list[dict[str, Any]]:
        """Every game's summary, the newest first."""
        return [game.summary() for game in reversed(self.games.values())]

    @contextmanager
    def watch(self, watching: str | None = None) -> Iterator[Viewer]:
        """A viewer of the lobby (None) or of one game, its snapshot first in its queue.

        Raises ``TooManyViewers`` at the cap, and ``KeyError`` for a game not known.
        """
        if len(self.viewers) >= self.max_viewers:
            raise TooManyViewers(f"at most {self.max_viewers} viewers at once")
        if watching is not None and watching not in self.games:
            raise KeyError(watching)
        viewer = Viewer(watching, self.queue_size)
        if watching is None:
            viewer.offer({"type": "lobby", "games": self.lobby()})
        else:
            game = self.games[watching]
            # "now" (the records' clock) lets the page run a live game's clock between records.
            # A copy: the records that come after it are sent after it, not in it too.
            snapshot = {"type": "snapshot", "game": game.summary(), "records": list(game.records)}
            viewer.offer({**snapshot, "now": time.monotonic()})
        self.viewers.add(viewer)
        try:
            yield viewer
        finally:
            self.viewers.discard(viewer)
            viewer.close()
