"""A FishNet game's records before it starts, through the server's hub (``ring.games.record``).

The envelope's ``start`` names both players, the game's seed and its
options, none of which is known until the opponent has come; so what a game
records before (its clients' ``play`` lines, the errors one is told while it
waits) is kept, with its own ``t``. Once the game starts, ``ring.games.match``
opens its record and publishes the kept records right after ``start``. A
game that never starts (no opponent came, its client left, the server
stopped) still has a record, made here: a ``start`` naming the one player
who came, its kept records, and an ``end`` without a result.

Kept records (``ring.games.record.Held``) are capped (``KEEP``) a connection and a game: a
client may
send lines for minutes before its game starts, and each would be kept in
memory until then. The records past the cap are counted in one ``dropped``
record, in the place of the first of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ring.games.record import GameRecorder, Held, Player, RecordHub

SERVICE = "fishnet"


class GameTranscript:
    """One game's records until it starts (kept), or the whole record of one that never does."""

    def __init__(self, hub: RecordHub, number: int, options: dict[str, Any]) -> None:
        self._hub = hub
        self._number = number
        self._options = options
        self.kept = Held()
        self._game: GameRecorder | None = None

    def record(self, **fields: Any) -> None:
        if self._game is None:
            self.kept.add(fields)
        else:
            self._game.record(**fields)

    def end(self, reason: str, *, came: Sequence[str]) -> None:
        """The record of a game that never started (once only): ``start`` naming the
        players who ``came``, with no seed, then the kept records, then ``end`` without
        a result."""
        if self._game is None:
            players = [Player(name, seat=seat) for seat, name in enumerate(came)]
            self._game = self._hub.open_game(
                SERVICE, self._number, players, seed=None, options=self._options
            )
            self.kept.publish(self._game)
        self._game.end(reason)
