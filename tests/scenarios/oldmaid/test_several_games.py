"""Several games at once at one table: ``ring scenario GxN-players``, verified game by game."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scenarios import processes
from scenarios.oldmaid import several_games
from scenarios.oldmaid.game import TABLE
from scenarios.oldmaid.verifier import verify

# A run takes a few seconds; the runner kills everything at this deadline,
# so a hung run fails the test instead of hanging it.
TIMEOUT = 60.0


@pytest.mark.scenario
def test_cli_three_games_of_four(tmp_path: Path) -> None:
    keep = tmp_path / "logs"
    completed = subprocess.run(
        [*processes.ring_command(), "scenario", "3x4-players", "--seed", "7", "--keep", str(keep)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT + 30,
    )
    out = completed.stdout
    assert completed.returncode == 0, out + completed.stderr
    assert out.startswith("scenario 3x4-players, seed 7\n")
    assert "FAIL" not in out and "ERROR" not in out
    seated: list[str] = []
    for number in (1, 2, 3):
        assert f"game {number}: seed " in out
        for name in verify.FINDING_NAMES:
            assert f"game {number}: PASS  {name}:" in out
        assert f"game {number}: PASS  {verify.EXITS}: all 5 processes exited 0" in out
        line = next(x for x in out.splitlines() if x.startswith(f"game {number}:   players"))
        seated += line.split("seated ")[1].split()
        assert (keep / f"game-{number:06d}.jsonl").exists()
    assert "game 4" not in out
    # Twelve peers, each in exactly one of the three games.
    assert sorted(seated) == sorted(f"p{i}" for i in range(1, 13))


@pytest.mark.scenario
def test_run_games_groups_every_peer_into_its_game(tmp_path: Path) -> None:
    result = several_games.run_games(2, 3, 11, workdir=tmp_path, timeout=TIMEOUT)
    assert result.ok, several_games.format_games(result)
    assert result.results[0].seed == 11  # the first game keeps the table's seed
    peers = [set(game.processes) - {TABLE} for game in result.results]
    assert all(len(group) == 3 for group in peers)
    assert peers[0] | peers[1] == {f"p{i}" for i in range(1, 7)}
    for game, group in zip(result.results, peers, strict=True):
        assert game.records is not None and set(game.records.events) == group
        assert set(verify.seat_order(game.records)) == group
        assert [check.name for check in game.findings] == list(verify.FINDING_NAMES)


@pytest.mark.parametrize("name", ["3x9-players", "1x4-players", "5x4-players", "3x1-players"])
def test_cli_rejects_games_out_of_range(name: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "ring", "scenario", name],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.splitlines() == [
        f"ring scenario: unknown scenario {name!r}: expected GxN-players with G from 2 to 4 "
        "games and N from 2 to 8 players, e.g. 3x4-players"
    ]


# -- grouping, from records alone ------------------------------------------------------


def _transcript(players: list[str] | None) -> list[verify.Record]:
    records: list[verify.Record] = [{"t": 1.0, "event": "listening", "seed": 5}]
    if players is not None:
        records.append({"t": 2.0, "event": "started", "players": players, "addresses": []})
    return records


def _log(players: list[str] | None) -> list[verify.Record]:
    return [] if players is None else [{"t": 3.0, "event": "start", "players": players}]


def test_peers_are_grouped_by_their_own_seating() -> None:
    transcripts = {1: _transcript(["p2", "p3"]), 2: _transcript(["p4", "p1"])}
    seatings = {"p1": ["p4", "p1"], "p2": ["p2", "p3"], "p3": ["p2", "p3"], "p4": ["p4", "p1"]}
    events = {nick: _log(seats) for nick, seats in seatings.items()}
    groups, problems = several_games.group_peers(transcripts, events)
    assert groups == {1: ["p2", "p3"], 2: ["p1", "p4"]}
    assert problems == []


def test_peers_that_fit_no_game_are_named() -> None:
    transcripts = {1: _transcript(["p1", "p2"]), 2: _transcript(None)}
    events = {
        "p1": _log(["p1", "p2"]),
        "p2": [],  # no start logged: placed by the table's seating, so its game's checks see it
        "p3": _log(["p3", "p9"]),  # a seating no game has
        "p4": [],  # never seated
    }
    groups, problems = several_games.group_peers(transcripts, events)
    assert groups == {1: ["p1", "p2"], 2: []}
    assert problems == [
        "p3 logged the seating ['p3', 'p9'], which no game started with",
        "seated in no game: p3, p4",
    ]


def test_the_table_line_of_each_game() -> None:
    stdout = [
        "table listening on 127.0.0.1:1234",
        "game 1: game over: loser p2; out: p1",
        "game 2: game over: loser p3; out: p4",
    ]
    assert several_games.table_lines(stdout, 2) == ["game over: loser p3; out: p4"]
    assert several_games.table_lines(stdout, 3) == stdout  # says what was printed instead
    assert several_games.game_seed_of(_transcript(None), 1, 2) == 5
