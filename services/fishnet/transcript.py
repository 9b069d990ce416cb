"""One FishNet game's records, through the server's record hub (``ring.record``).

The envelope's ``start`` names both players, the game's seed and its
options, none of which is known until the opponent has come; so what a game
records before (its clients' ``play`` lines, the errors one is told while it
waits) is kept, with its own ``t``, and published right after ``start``.
A game that never starts (no opponent came, its client left, the server
stopped) still has a record: a ``start`` naming the one player who came, its
kept records, and an ``end`` without a result.

Kept records (``ring.record.Held``) are capped (``KEEP``) a connection and a game: a client may
send lines for minutes before its game starts, and each would be kept in
memory until then. The records past the cap are counted in one ``dropped``
record, in the place of the first of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ring.record import GameRecorder, Held, Player, RecordHub

SERVICE = "fishnet"


class GameTranscript:
    """One game's records: kept until ``start``, then straight to the hub, until ``end``."""

    def __init__(self, hub: RecordHub, number: int, options: dict[str, Any]) -> None:
        self._hub = hub
        self._number = number
        self._options = options
        self.kept = Held()
        self._game: GameRecorder | None = None
        self.names: list[str] = []  # the players, seat by seat, once started

    def record(self, **fields: Any) -> None:
        if self._game is None:
            self.kept.add(fields)
        else:
            self._game.record(**fields)

    def start(self, names: Sequence[str], *, seed: str | None) -> None:
        """Publish ``start`` (a player a seat, in seat order), then the kept records in
        the order they were made."""
        self.names = list(names)
        players = [Player(name, seat=seat) for seat, name in enumerate(names)]
        self._game = self._hub.open_game(
            SERVICE, self._number, players, seed=seed, options=self._options
        )
        self.kept.publish(self._game)

    def end(
        self,
        reason: str,
        *,
        came: Sequence[str],
        winner: int | None = None,
        draw: bool = False,
        culprit: int | None = None,
        books: Sequence[int] | None = None,
    ) -> None:
        """The last record (once only): the ``winner`` and ``culprit`` by seat, a
        ``draw``, or neither (no result); ``books`` each, seat by seat. A game that
        never started is started first, naming the players who ``came``, with no seed."""
        if self._game is None:
            self.start(came, seed=None)
        assert self._game is not None
        names = self.names
        self._game.end(
            reason,
            winners=[] if winner is None else [names[winner]],
            losers=[] if winner is None else [names[1 - winner]],
            draw=draw,
            culprit=None if culprit is None else names[culprit],
            details={} if books is None else {"books": list(books)},
        )
