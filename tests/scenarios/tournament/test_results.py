"""Finished games on disk, written whole or not at all; the standings made of them."""

from __future__ import annotations

import json
from pathlib import Path

from scenarios.tournament.results import (
    GameResult,
    as_json,
    csv_rows,
    load,
    markdown,
    save,
    standings,
)


def game(number: int, first: str, second: str, score: float, **extra: object) -> GameResult:
    return GameResult(
        number, [first, second], str(number), "by the rules", [score, 1 - score], **extra
    )


def test_a_saved_game_loads_back_and_a_partial_file_is_not_a_game(tmp_path: Path) -> None:
    saved = game(3, "a", "b", 0.5, move_times={"a": [0.1, 0.2]})
    save(tmp_path, "00003", saved)
    (tmp_path / ".00004.json.123.partial").write_text('{"number": 4, "pla')  # a kill mid-write
    assert load(tmp_path) == {3: saved}
    assert load(tmp_path / "none") == {}
    save(tmp_path, "00003", game(3, "a", "b", 1.0))  # written again: replaced, not doubled
    assert load(tmp_path)[3].scores == [1.0, 0.0]


def test_standings_add_up_and_name_every_fault() -> None:
    results = [
        game(1, "a", "b", 1.0),
        game(2, "b", "a", 0.0, faults={"b": "crashed (exit status 1)"}),
        game(3, "a", "c", 0.5, move_times={"a": [0.25], "c": [0.5, 1.5]}),
        game(4, "c", "a", 0.0, faults={"c": "timed out"}),
        game(5, "b", "c", 1.0),
        game(6, "c", "b", 0.5),
    ]
    result = standings(["a", "b", "c"], results)
    assert [r.name for r in result.ratings] == ["a", "b", "c"]
    assert (result.records["a"].wins, result.records["a"].draws) == (3, 1)
    assert sum(record.score for record in result.records.values()) == len(results)
    assert result.figures["b"].faults == {"crashed": 1}
    assert result.figures["c"].slowest == 1.5 and result.figures["c"].median == 1.0
    text = markdown(result)
    assert "| 1 | a |" in text and "3-1-0" in text and "1 crashed" in text
    rows = csv_rows(result)
    assert rows[0][:2] == ["rank", "entrant"] and [row[1] for row in rows[1:]] == ["a", "b", "c"]
    document = json.loads(json.dumps(as_json(result)))
    assert document["crosstable"]["a"]["b"] == {"wins": 2, "draws": 0, "losses": 0}
    assert document["ranking"][0]["record"] == {"wins": 3, "draws": 1, "losses": 0}
