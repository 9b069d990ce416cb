"""The one game record: envelope, hub and the reader (its files: test_transcripts.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ring.games.record import (
    SCHEMA_VERSION,
    GameKey,
    Held,
    Player,
    RecordError,
    RecordHub,
    games_of,
    iter_records,
    json_schema,
    read_games,
)
from ring.games.transcripts import TranscriptFile

DOCS = Path(__file__).resolve().parents[3] / "docs" / "logs.md"


def _two_players() -> list[Player]:
    return [Player("ann", colour="black"), Player("bob", colour="white")]


def test_every_subscriber_gets_every_record_in_order() -> None:
    hub = RecordHub()
    first: list[tuple[GameKey, dict]] = []
    second: list[tuple[GameKey, dict]] = []
    hub.subscribe(lambda key, record: first.append((key, record)))
    hub.subscribe(lambda key, record: second.append((key, record)))
    game = hub.open_game("reversi", 7, _two_players(), seed=3, options={"move_time": 30.0})
    game.record(event="move", colour="black", x=2, y=3)
    game.end("board", winners=["ann"], losers=["bob"], details={"black": 40, "white": 24})
    assert first == second
    assert [key for key, _ in first] == [GameKey("reversi", 7)] * 3
    assert [record["event"] for _, record in first] == ["start", "move", "end"]
    start = first[0][1]
    assert start["version"] == SCHEMA_VERSION
    assert start["players"] == [
        {"name": "ann", "colour": "black"},
        {"name": "bob", "colour": "white"},
    ]
    times = [record["t"] for _, record in first]
    assert times == sorted(times)


def test_nothing_is_recorded_after_the_end() -> None:
    hub = RecordHub()
    seen: list[dict] = []
    hub.subscribe(lambda key, record: seen.append(record))
    game = hub.open_game("notipping", 1, _two_players())
    game.end("tipped", winners=["bob"], losers=["ann"])
    game.record(event="late")
    game.end("again")
    assert [record["event"] for record in seen] == ["start", "end"]


def test_a_failing_subscriber_is_dropped_and_the_others_go_on(capsys) -> None:
    hub = RecordHub()
    seen: list[dict] = []

    def broken(key: GameKey, record: dict) -> None:
        raise OSError("disk full")

    hub.subscribe(broken)
    hub.subscribe(lambda key, record: seen.append(record))
    game = hub.open_game("fishnet", 1, _two_players())
    game.record(event="turn")
    assert len(seen) == 2
    assert "disk full" in capsys.readouterr().err


def test_unsubscribe_stops_delivery() -> None:
    hub = RecordHub()
    seen: list[dict] = []
    unsubscribe = hub.subscribe(lambda key, record: seen.append(record))
    hub.open_game("fishnet", 1, _two_players())
    unsubscribe()
    unsubscribe()  # twice is harmless
    hub.open_game("fishnet", 2, _two_players())
    assert len(seen) == 1


def test_a_torn_last_line_ends_the_reading(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    lines = [
        {"event": "start", "t": 1.0, "version": 1, "service": "s", "game": 1, "players": [],
         "seed": None, "options": {}},
        {"t": 2.0, "event": "move"},
    ]  # fmt: skip
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines) + b'{"t": 3')
    assert list(iter_records(path)) == lines
    (game,) = read_games(path)
    assert game.end is None and game.records == [lines[1]]


def test_records_outside_a_game_belong_to_no_game() -> None:
    records = [
        {"t": 0.5, "event": "listening"},
        {"event": "start", "t": 1.0, "version": 1, "service": "s", "game": 1, "players": [],
         "seed": None, "options": {}},
        {"event": "end", "t": 2.0, "reason": "r", "winners": [], "losers": [], "draw": False,
         "culprit": None, "details": {}},
        {"t": 2.5, "event": "status"},
    ]  # fmt: skip
    (game,) = games_of(records)
    assert game.records == []


def test_a_newer_version_is_refused_not_misread() -> None:
    start = {"event": "start", "t": 1.0, "version": SCHEMA_VERSION + 1, "service": "s",
             "game": 1, "players": [], "seed": None, "options": {}}  # fmt: skip
    with pytest.raises(RecordError, match="newer cardring"):
        games_of([start])


def test_a_broken_envelope_record_is_named() -> None:
    start = {"event": "start", "t": 1.0, "version": 1, "service": "s", "game": "one",
             "players": [], "seed": None, "options": {}}  # fmt: skip
    with pytest.raises(RecordError, match="not a valid start record"):
        games_of([start])


def test_the_schema_published_in_the_docs_is_the_one_the_code_writes() -> None:
    text = DOCS.read_text()
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    published = [json.loads(block) for block in blocks if '"$defs"' in block]
    assert published == [json_schema()], "paste python -m ring.games.record into docs/logs.md"


_names = st.text("abcdefghij", min_size=1, max_size=5)
_values = st.one_of(st.integers(-5, 5), st.text("xyz", max_size=3), st.booleans(), st.none())


@settings(max_examples=50, deadline=None)
@given(
    games=st.lists(
        st.tuples(
            st.lists(_names, min_size=1, max_size=4),
            st.lists(st.dictionaries(st.sampled_from("abc"), _values, max_size=3), max_size=5),
            st.one_of(st.none(), st.tuples(_names, st.lists(_names, max_size=2), st.booleans())),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_what_is_recorded_is_what_is_read_back(games, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("records") / "games.jsonl"
    hub = RecordHub()
    writer = TranscriptFile(path, "svc")
    hub.subscribe(writer)
    for number, (names, records, end) in enumerate(games, start=1):
        game = hub.open_game("svc", number, [Player(name, seat=i) for i, name in enumerate(names)])
        for fields in records:
            game.record(event="own", **fields)
        if end is not None:
            reason, losers, draw = end
            game.end(reason, losers=losers, draw=draw, culprit=losers[0] if losers else None)
    writer.close()
    read = read_games(path)
    assert len(read) == len(games)
    for game, (names, records, end) in zip(read, games, strict=True):
        assert game.players == names
        assert [{k: v for k, v in r.items() if k not in ("t", "event")} for r in game.records] == [
            msgspec.json.decode(msgspec.json.encode(fields)) for fields in records
        ]
        if end is None:
            assert game.end is None
        else:
            assert (game.end.reason, game.end.losers, game.end.draw) == end


def test_held_records_are_bounded_by_kind_and_the_rest_counted_in_place() -> None:
    held = Held(limit=2)
    held.add({"dir": "in", "line": "status"}, t=1.0, kind="other")
    held.add({"dir": "in", "line": "status"}, t=2.0, kind="other")
    held.add({"dir": "in", "line": "status"}, t=3.0, kind="other")  # dropped: counted
    held.add({"dir": "in", "line": "join"}, t=4.0, kind="join")  # its own budget
    held.add({"event": "listening"}, t=5.0, kind="other", always=True)
    held.add({"dir": "in", "line": "status"}, t=6.0, kind="other")  # dropped: counted
    assert len(held) == 5
    hub = RecordHub()
    seen: list[dict] = []
    hub.subscribe(lambda key, record: seen.append(record))
    game = hub.open_game("oldmaid", 1, [Player("a", seat=0)])
    held.publish(game)
    assert len(held) == 0
    assert [(r["t"], r.get("line") or r["event"]) for r in seen[1:]] == [
        (1.0, "status"),
        (2.0, "status"),
        (3.0, "dropped"),
        (4.0, "join"),
        (5.0, "listening"),
    ]
    assert seen[3]["count"] == 2


def test_held_records_of_a_connection_move_into_its_game() -> None:
    connection = Held(limit=3)
    for t in range(5):
        connection.add({"line": f"early {t}"}, t=float(t))
    game = Held(limit=3)
    game.add({"line": "play"}, t=10.0)
    game.take(connection)
    assert len(connection) == 0
    assert [r.get("line") or (r["event"], r["count"]) for r in game.records] == [
        "play",
        "early 0",
        "early 1",
        ("dropped", 3),
    ]
