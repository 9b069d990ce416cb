"""The Reversi bench: colour plans, move timing from transcripts, a short ladder through servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.bench import reversi_bench
from scenarios.bench.reversi_bench import GamePlan, move_times, reversi_servers
from services.reversi.rules import BLACK, WHITE


def test_the_stronger_player_is_black_in_every_other_game() -> None:
    plans = [GamePlan("greedy", "random", i, 1, None) for i in range(6)]
    blacks = [plan.level_for(BLACK) for plan in plans]
    whites = [plan.level_for(WHITE) for plan in plans]
    assert blacks == ["greedy", "random"] * 3
    assert whites == ["random", "greedy"] * 3


def test_move_times_run_from_the_turns_first_board_to_the_legal_move(tmp_path: Path) -> None:
    records = [
        {"t": 10.0, "event": "start"},
        {"t": 10.1, "colour": "black", "name": "ann", "dir": "out", "line": "U1"},
        {"t": 10.2, "colour": "black", "name": "ann", "dir": "out", "line": "B" + "0" * 64},
        {"t": 10.5, "colour": "black", "name": "ann", "dir": "in", "line": "M99"},
        # The board sent again after an illegal attempt does not restart the clock.
        {"t": 10.6, "colour": "black", "name": "ann", "dir": "out", "line": "B" + "0" * 64},
        {"t": 10.9, "colour": "black", "name": "ann", "dir": "in", "line": "M23"},
        {"t": 10.9, "event": "move", "colour": "black", "x": 2, "y": 3},
        {"t": 11.0, "colour": "white", "name": "bob", "dir": "out", "line": "B" + "0" * 64},
        {"t": 11.4, "event": "move", "colour": "white", "x": 2, "y": 2},
        {"t": 12.0, "colour": "black", "name": "ann", "dir": "out", "line": "B" + "0" * 64},
        {"t": 12.25, "event": "move", "colour": "black", "x": 4, "y": 5},
    ]
    path = tmp_path / "game.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert move_times(path, "ann") == pytest.approx([0.7, 0.25])
    assert move_times(path, "bob") == pytest.approx([0.4])


def test_a_short_ladder_through_real_servers(capsys: pytest.CaptureFixture[str]) -> None:
    servers = reversi_servers(2, seed=5)
    try:
        failed = reversi_bench.ladder(servers, games=4, seed=5, deep_budget=0.01)
        transcripts = servers.transcripts()
    finally:
        servers.close()
    assert failed == 0
    assert len(transcripts) == 3 * 4  # three pairs, every game recorded by a server
    rows = [line for line in capsys.readouterr().out.splitlines() if " v " in line]
    assert len(rows) == 3
    for row in rows:
        wins, draws, losses = (int(word) for word in row.split()[3:6])
        assert wins + draws + losses == 4
        assert " 2/4 " in row  # the stronger player was black in exactly half
