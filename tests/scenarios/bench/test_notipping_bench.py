"""The No Tipping bench: seats, answer timing from transcripts, a short run through servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.bench import notipping_bench
from scenarios.bench.notipping_bench import GamePlan, answer_times, full_board
from scenarios.bench.service_pool import ServicePool
from services.notipping.rules import REMOVE


def test_the_solver_takes_each_seat_in_turn() -> None:
    plans = [GamePlan("random", i % 2, i, 1) for i in range(4)]
    assert [plan.level_of(0) for plan in plans] == ["solver", "random", "solver", "random"]
    assert [plan.level_of(1) for plan in plans] == ["random", "solver", "random", "solver"]
    assert len({plan.handle_of(seat) for plan in plans for seat in (0, 1)}) == 8


def test_answer_times_run_from_the_round_to_the_move(tmp_path: Path) -> None:
    records = [
        {"t": 1.0, "event": "start", "handles": ["ann", "bob"]},
        {"t": 1.1, "player": 0, "handle": "ann", "dir": "out", "line": "BEGIN:1:7;"},
        {"t": 1.2, "player": 0, "handle": "ann", "dir": "out", "line": "ROUND:1.0:ADD:..."},
        {"t": 1.5, "player": 0, "handle": "ann", "dir": "in", "line": "ADD:3:1;"},
        {"t": 1.5, "event": "move", "player": 0, "move": "ADD", "weight": 3, "position": 1},
        {"t": 1.6, "player": 1, "handle": "bob", "dir": "out", "line": "ROUND:1.1:ADD:..."},
        {"t": 2.6, "event": "move", "player": 1, "move": "ADD", "weight": 1, "position": -10},
        {"t": 3.0, "player": 0, "handle": "ann", "dir": "out", "line": "ROUND:2.0:ADD:..."},
        {"t": 3.25, "event": "move", "player": 0, "move": "ADD", "weight": 7, "position": 2},
    ]
    path = tmp_path / "game.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert answer_times(path, "ann") == pytest.approx([0.3, 0.25])
    assert answer_times(path, "bob") == pytest.approx([1.0])


def test_a_full_board_holds_every_weight() -> None:
    game = full_board(3, seed=1)
    assert game.phase == REMOVE and not game.over
    assert len(game.occupied()) == 2 * 3 + 1


def test_a_short_run_through_real_servers(capsys: pytest.CaptureFixture[str]) -> None:
    servers = ServicePool("notipping", 2, seed=5)
    try:
        failed = notipping_bench.strength(
            servers, games=2, seed=5, opponents=["greedy"], move_time=0.2
        )
        transcripts = servers.transcripts()
    finally:
        servers.close()
    assert failed == 0
    assert len(transcripts) == 2  # every game recorded by a server
    rows = [line for line in capsys.readouterr().out.splitlines() if "solver v" in line]
    assert len(rows) == 3  # seat 0, seat 1, both
    for row in rows:
        games, won, lost = (int(word) for word in row.split()[4:7])
        assert won + lost == games == (2 if " both " in row else 1)
