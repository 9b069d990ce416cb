"""One Old Maid game's records at the table, through its record hub (``ring.games.record``).

The envelope's ``start`` names the players, who are known only when the game
starts; this keeps what the game records while it forms, bounded, and
publishes it right after ``start`` (docs/logs.md, "Table transcript").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ring.games.record import KEEP, GameKey, GameRecorder, Held, Player, RecordHub

# What a game records while it forms is kept until its start (the ``start``
# record names the players): at most this many join requests, and as many
# other messages (so that a client polling status while the game forms does
# not crowd out the joins); the rest are only counted, so a flood cannot grow
# the table's memory.
FORMING_RECORDS = KEEP


class Transcript:
    """One game's records (docs/logs.md), through the table's record hub (``ring.games.record``).

    The envelope's ``start`` names the players, so nothing is published until
    the game starts: what the game records while it forms (``listening``, the
    joins, status requests of connections that have not joined) is kept here
    and published right after ``start``, each record with its own earlier
    ``t``. Referee records are always kept (a forming game makes at most two);
    of the messages, ``limit`` join requests and ``limit`` others are kept, and
    the rest counted in one ``dropped`` record, kept where the first of them
    would have been. ``end`` closes the game's records.
    """

    def __init__(
        self,
        hub: RecordHub,
        number: int,
        *,
        seed: int,
        options: dict[str, Any],
        limit: int = FORMING_RECORDS,
    ) -> None:
        self._hub = hub
        self._number = number
        self._seed = seed
        self._options = options
        self._game: GameRecorder | None = None
        self._forming = Held(limit)

    @property
    def started(self) -> bool:
        """The ``start`` record is out: records now go straight to the hub."""
        return self._game is not None

    @property
    def ended(self) -> bool:
        return self._game is not None and self._game.ended

    @property
    def kept(self) -> int:
        """How many records the forming game keeps for its start (the ``dropped`` one too)."""
        return len(self._forming)

    def message(self, conn: int, peer: str, nick: str | None, direction: str, **body: Any) -> None:
        fields = {"conn": conn, "peer": peer, "nick": nick, "dir": direction, **body}
        if self._game is not None:
            self._game.record(**fields)
            return
        msg = body.get("msg")
        join = direction == "in" and isinstance(msg, dict) and msg.get("cmd") == "join"
        self._forming.add(fields, kind="join" if join else "other")

    def referee(self, event: str, **fields: Any) -> None:
        if self._game is not None:
            self._game.record(event=event, **fields)
        else:
            self._forming.add({"event": event, **fields}, always=True)

    def forming(self, joined: Iterable[str], wanted: int) -> None:
        """Who has joined the game while it forms (for watchers: not a record)."""
        if self._game is None:
            self._hub.forming(GameKey("oldmaid", self._number), joined, wanted)

    def start(self, players: Iterable[Player]) -> None:
        """Publish the ``start`` record, then what the game recorded while it formed."""
        if self._game is not None:
            return
        self._game = self._hub.open_game(
            "oldmaid", self._number, players, seed=self._seed, options=self._options
        )
        self._forming.publish(self._game)

    def end(self, reason: str, **result: Any) -> None:
        """The game's last record (``GameRecorder.end``): nothing is recorded after it."""
        assert self._game is not None, "end before start"
        self._game.end(reason, **result)
