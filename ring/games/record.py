"""One game record for every service: the envelope, the in-process hub, one reader.

Every game of every service is recorded the same way (docs/logs.md, "Game
records (every service)", which each docs/protocols/*.md cites for its
transcripts): a ``start`` record (service, game number, players with their seats
or colours, seed, the options that decide the game), then the game's own
records in its own terms (plain JSON objects with an ``event`` or ``dir``
field), then an ``end`` record (winners and losers or a draw, the reason in
words, and for a forfeit the ``culprit`` by name). Every record has ``t``,
``time.monotonic()`` in seconds (one clock for every process on a Linux
machine, so logs of several processes merge by ``t``).

``Start`` and ``End`` are defined here once, as msgspec Structs; their JSON
Schema is published in docs/logs.md (``python -m ring.games.record`` prints it) and
carries ``version``: a reader refuses a record of a newer version rather than
misread it, and a new optional field does not change the version.

Writing goes through a ``RecordHub``: a service opens a ``GameRecorder`` per
game and records through it; the hub hands each record, synchronously and in
order, to every subscriber. Writing transcript files is one subscriber
(``ring.games.transcripts``); a live page is another. A
subscriber that raises is dropped with one line on stderr, so a full disk or
a slow page never stops a game.

Reading is ``read_games`` (or ``iter_records`` for every line): any tool that
reads games — the checker, the tournament, the page, a replay — reads them
here and needs no per-service adapter.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ring.version import VERSION

SCHEMA_VERSION = 1


class Player(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False):
    """One player of a game: its name, and its seat (0-based) or colour where the game has one."""

    name: str
    seat: int | None = None
    colour: str | None = None


class Start(msgspec.Struct, tag="start", tag_field="event"):
    """The first record of a game."""

    t: float
    version: int  # SCHEMA_VERSION of the writer
    service: str  # "oldmaid", "fishnet", "reversi", "notipping", ...
    game: int  # the game's number within its server, from 1
    players: list[Player]
    # replays the game: a number, or text where the game names its seed so ("7:1", or 32 hex
    # digits of a keyed seed: ring.games.seeds); None where nothing is random
    seed: int | str | None
    options: dict[str, Any]  # the server options that decide the game (max_weight, ...)
    cardring: str | None = None  # the version of the software that served it (ring.version)


class End(msgspec.Struct, tag="end", tag_field="event"):
    """The last record of a game.

    A decided game names its ``winners`` and ``losers``; a draw has ``draw``
    true (and both lists empty); a game that ended without a result (the
    server shut down, a game aborted) has neither, and its ``reason`` says
    why. ``culprit`` names the player at fault when one forfeited or broke
    the game (a crash, a timeout, garbage); it is also among the losers when
    the game still had a result.
    """

    t: float
    reason: str
    winners: list[str] = []
    losers: list[str] = []
    draw: bool = False
    culprit: str | None = None
    details: dict[str, Any] = {}  # the game's own figures: disc counts, places, books


class RecordError(ValueError):
    """A record that is not a valid envelope record, or is of a newer version."""


@dataclass(frozen=True)
class GameKey:
    service: str
    game: int


Subscriber = Callable[[GameKey, dict[str, Any]], None]
# A game that forms before its start (an Old Maid table's next game): who has joined so far
# and how many it wants. Not a record (nothing is in a game's record before its start);
# for watchers such as the live page's lobby.
FormingWatcher = Callable[[GameKey, list[str], int], None]


class RecordHub:
    """Hands every game record of this process to every subscriber, in order."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._forming_watchers: list[FormingWatcher] = []

    @property
    def listened(self) -> bool:
        """Whether anyone reads the records now: a line no one reads need not be made one."""
        return bool(self._subscribers)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it again."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def watch_forming(self, watcher: FormingWatcher) -> Callable[[], None]:
        """Add a watcher of forming games; returns the function that removes it again."""
        self._forming_watchers.append(watcher)
        return lambda: self._forming_watchers.remove(watcher)

    def forming(self, key: GameKey, joined: Iterable[str], wanted: int) -> None:
        """A game not started yet has these players (none: it is no longer forming)."""
        players = list(joined)
        for watcher in list(self._forming_watchers):
            try:
                watcher(key, players, wanted)
            except Exception as exc:  # as for subscribers: never stops a game
                self._forming_watchers.remove(watcher)
                print(f"game records: dropped a watcher that failed: {exc!r}", file=sys.stderr)

    def open_game(
        self,
        service: str,
        game: int,
        players: Iterable[Player],
        *,
        seed: int | str | None = None,
        options: dict[str, Any] | None = None,
    ) -> GameRecorder:
        """Publish a game's ``start`` record and return the recorder for the rest of it."""
        recorder = GameRecorder(self, GameKey(service, game))
        start = Start(
            t=time.monotonic(),
            version=SCHEMA_VERSION,
            service=service,
            game=game,
            players=list(players),
            seed=seed,
            options=dict(options or {}),
            cardring=VERSION,
        )
        self.publish(recorder.key, msgspec.to_builtins(start))
        return recorder

    def publish(self, key: GameKey, record: dict[str, Any]) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(key, record)
            except Exception as exc:  # one bad subscriber must not stop a game
                self._subscribers.remove(subscriber)
                print(f"game records: dropped a subscriber that failed: {exc!r}", file=sys.stderr)


class GameRecorder:
    """The records of one game after its ``start``: its own, then one ``end``."""

    def __init__(self, hub: RecordHub, key: GameKey) -> None:
        self._hub = hub
        self.key = key
        self.ended = False

    def record(self, **fields: Any) -> None:
        """One of the game's own records: ``t`` is now, unless given (a record kept from
        before the game started, such as a join, keeps its own time)."""
        if self.ended:
            return
        t = fields.pop("t") if "t" in fields else time.monotonic()
        self._hub.publish(self.key, {"t": t, **fields})

    def end(
        self,
        reason: str,
        *,
        winners: Iterable[str] = (),
        losers: Iterable[str] = (),
        draw: bool = False,
        culprit: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        """The game's last record; anything recorded after it is dropped."""
        if self.ended:
            return
        self.ended = True
        end = End(
            t=time.monotonic(),
            reason=reason,
            winners=list(winners),
            losers=list(losers),
            draw=draw,
            culprit=culprit,
            details=dict(details or {}),
        )
        self._hub.publish(self.key, msgspec.to_builtins(end))


# Records a game keeps before its start, by default: a client may send lines for
# minutes before its game begins, and each would be kept in memory until then.
KEEP = 256


class Held:
    """Records made before their game's ``start`` (whose players are not known yet),
    each with its own ``t``, published right after the start (``publish``).

    Bounded: at most ``limit`` records of each ``kind`` (a table keeps joins and
    other messages apart, so polling cannot crowd out the joins); the rest are
    counted in one ``{"event": "dropped", "count": n}`` record, placed where the
    first of them would have been. Records added with ``always`` are kept past
    the limit (a game's own few decisions).
    """

    def __init__(self, limit: int = KEEP) -> None:
        self.limit = limit
        self.records: list[dict[str, Any]] = []
        self._counts: dict[str, int] = {}
        self._dropped: dict[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.records)

    def add(
        self,
        fields: dict[str, Any],
        *,
        t: float | None = None,
        kind: str = "",
        always: bool = False,
    ) -> None:
        t = time.monotonic() if t is None else t
        count = self._counts.get(kind, 0)
        if always or count < self.limit:
            self._counts[kind] = count + 1
            self.records.append({"t": t, **fields})
        else:
            self._drop(t, 1)

    def take(self, other: Held, *, kind: str = "") -> None:
        """Add ``other``'s records (a connection's, as it joins a game) and empty it."""
        for record in other.records:
            if record is other._dropped:
                self._drop(record["t"], record["count"])
            else:
                fields = dict(record)
                self.add(fields, t=fields.pop("t"), kind=kind)
        other.records, other._dropped, other._counts = [], None, {}

    def _drop(self, t: float, count: int) -> None:
        if self._dropped is None:
            self._dropped = {"t": t, "event": "dropped", "count": 0}
            self.records.append(self._dropped)
        self._dropped["count"] += count

    def publish(self, recorder: GameRecorder) -> None:
        """Record everything held, in the order it happened, and empty this."""
        records, self.records, self._dropped, self._counts = self.records, [], None, {}
        for record in sorted(records, key=lambda record: record["t"]):
            recorder.record(**record)


# -- reading ---------------------------------------------------------------------


@dataclass
class GameRecord:
    """One game as read back: its start, its own records in order, its end (None if cut off)."""

    start: Start
    records: list[dict[str, Any]] = field(default_factory=list)
    end: End | None = None

    @property
    def players(self) -> list[str]:
        return [player.name for player in self.start.players]

    def events(self, name: str) -> list[dict[str, Any]]:
        """The game's own records with this ``event``."""
        return [record for record in self.records if record.get("event") == name]


def iter_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every record of a JSON-lines file; a torn last line (the writer was killed) ends it."""
    for line in Path(path).read_bytes().splitlines():
        try:
            record = msgspec.json.decode(line)
        except msgspec.DecodeError:
            return
        if isinstance(record, dict):
            yield record


def parse_start(record: dict[str, Any]) -> Start:
    version = record.get("version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise RecordError(
            f"a start record of version {version!r}: this reader knows versions up to "
            f"{SCHEMA_VERSION} (a newer cardring wrote it)"
        )
    try:
        return msgspec.convert(record, Start)
    except msgspec.ValidationError as exc:
        raise RecordError(f"not a valid start record: {exc}") from None


def parse_end(record: dict[str, Any]) -> End:
    try:
        return msgspec.convert(record, End)
    except msgspec.ValidationError as exc:
        raise RecordError(f"not a valid end record: {exc}") from None


def games_of(records: Iterable[dict[str, Any]]) -> list[GameRecord]:
    """The games in a stream of records; records outside any start..end are not part of a game."""
    games: list[GameRecord] = []
    current: GameRecord | None = None
    for record in records:
        event = record.get("event")
        if event == "start":
            current = GameRecord(parse_start(record))
            games.append(current)
        elif current is None:
            continue
        elif event == "end":
            current.end = parse_end(record)
            current = None
        else:
            current.records.append(record)
    return games


def read_games(path: str | Path) -> list[GameRecord]:
    """Every game in a transcript file (one for a per-game file, several for a shared one)."""
    return games_of(iter_records(path))


def read_game(path: str | Path) -> GameRecord:
    """The one game of a per-game transcript file."""
    games = read_games(path)
    if len(games) != 1:
        raise RecordError(f"{path}: {len(games)} games, expected one")
    return games[0]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the envelope records, as published in docs/logs.md."""
    (start, end), components = msgspec.json.schema_components((Start, End))
    # msgspec 0.23 dedents a docstring where 0.22 kept it as written: clean it here, so
    # the schema is the same whichever a fresh install brings.
    for component in components.values():
        if "description" in component:
            component["description"] = inspect.cleandoc(component["description"])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"cardring game record envelope, version {SCHEMA_VERSION}",
        "anyOf": [start, end],
        "$defs": components,
    }


def main() -> None:
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(json_schema()), indent=2).decode())
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
