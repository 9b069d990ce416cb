"""Real games: a table and eight peers as OS processes on loopback, verified end to end."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ring.games.events import read_events
from scenarios import processes
from scenarios.oldmaid import game as oldmaid_game
from scenarios.oldmaid.verifier import verify

pytestmark = pytest.mark.scenario

# Generous: a game takes about a second, but CI machines can be slow and
# loaded. The runner kills everything at this deadline, so a hung game fails
# the test instead of hanging it.
TIMEOUT = 60.0


def _assert_passed(result: oldmaid_game.ScenarioResult) -> None:
    assert result.ok, oldmaid_game.format_result(result)


@pytest.fixture(scope="module")
def default_game(tmp_path_factory: pytest.TempPathFactory) -> oldmaid_game.ScenarioResult:
    """The game `ring scenario 8-players` plays, run once for the tests that inspect it."""
    workdir = tmp_path_factory.mktemp("default")
    return oldmaid_game.run_scenario(8, oldmaid_game.DEFAULT_SEED, workdir=workdir, timeout=TIMEOUT)


def test_eight_players_default_seed(default_game: oldmaid_game.ScenarioResult) -> None:
    _assert_passed(default_game)
    assert [c.name for c in default_game.findings] == list(verify.FINDING_NAMES)
    assert set(default_game.processes) == {"table", *(f"p{i}" for i in range(1, 9))}
    assert all(p.returncode == 0 for p in default_game.processes.values())
    assert default_game.summary is not None
    assert len(default_game.summary.out_order) == 7
    assert default_game.wall_time is not None and default_game.wall_time > 0


def test_default_seed_has_a_skip(default_game: oldmaid_game.ScenarioResult) -> None:
    # DEFAULT_SEED was chosen so that `ring scenario 8-players` shows the
    # ring skipping players who are out; this keeps it honest if the table's
    # shuffle or the peers' choices change.
    _assert_passed(default_game)
    assert default_game.summary is not None and default_game.summary.skips >= 1


def test_a_seat_known_to_be_out_is_not_asked_again(
    default_game: oldmaid_game.ScenarioResult,
) -> None:
    # Being out is final (protocol 7.7): each peer asks a seat that is out at most
    # once, and skips it without a word from then on: after it said so ("known"),
    # or once a status reply of the table listed it as out ("listed"; the peer
    # asks for one whenever a seat first answers it out).
    _assert_passed(default_game)
    asked: Counter[tuple[str, str]] = Counter()
    listed: Counter[tuple[str, str]] = Counter()
    known = 0
    for log in default_game.workdir.glob("p*.events.jsonl"):
        for event in read_events(log):
            if event.get("event") == "skip" and event.get("phase") == "offer":
                seat = (log.name, event["over"])
                if event.get("known"):
                    known += 1
                    assert asked[seat] == 1, event
                elif event.get("listed"):
                    listed[seat] += 1
                    assert asked[seat] == 0, event  # it said out to us: that is "known"
                else:
                    asked[seat] += 1
    assert max(asked.values()) == 1
    assert known >= 1
    assert sum(listed.values()) >= 1
    assert not set(asked) & set(listed)


def test_a_seed_replays_the_same_game(
    default_game: oldmaid_game.ScenarioResult, tmp_path: Path
) -> None:
    # The default seed's skip is only a promise if a seed fixes the game:
    # seating, deck and every pick. Played again, it is the same game.
    again = oldmaid_game.run_scenario(8, oldmaid_game.DEFAULT_SEED, workdir=tmp_path,
                                      timeout=TIMEOUT)  # fmt: skip
    games = []
    for result in (default_game, again):
        _assert_passed(result)
        assert result.summary is not None
        summary = result.summary
        games.append((summary.seats, summary.out_order, summary.loser, len(summary.handoffs)))
    assert games[0] == games[1]


@pytest.mark.parametrize("seed", [1])
def test_eight_players_other_seeds(tmp_path: Path, seed: int) -> None:
    _assert_passed(oldmaid_game.run_scenario(8, seed, workdir=tmp_path, timeout=TIMEOUT))


def test_two_players(tmp_path: Path) -> None:
    _assert_passed(oldmaid_game.run_scenario(2, 5, workdir=tmp_path, timeout=TIMEOUT))


def test_cli_eight_players(tmp_path: Path) -> None:
    keep = tmp_path / "logs"
    completed = subprocess.run(
        [*processes.ring_command(), "scenario", "8-players", "--keep", str(keep)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT + 30,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    assert f"seed {oldmaid_game.DEFAULT_SEED}" in out
    for label in ("handoffs", "skips", "out", "loser", "wall time"):
        assert label in out
    for name in verify.FINDING_NAMES:
        assert f"PASS  {name}:" in out
    assert "FAIL" not in out
    assert (keep / "table.jsonl").exists() and (keep / "p1.events.jsonl").exists()


def test_cli_rejects_unknown_scenarios() -> None:
    for name in ("9-players", "1-players", "eight-players"):
        completed = subprocess.run(
            [sys.executable, "-m", "ring", "scenario", name],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert completed.returncode == 2
        assert "expected N-players with N from 2 to 8" in completed.stderr


def test_a_peer_that_never_joins_times_out_and_leaves_nothing_behind(tmp_path: Path) -> None:
    # One seat goes to a process that just sleeps: the game cannot start, so
    # the runner must hit its deadline, name the stragglers and kill them all.
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    result = oldmaid_game.run_scenario(3, 1, workdir=tmp_path, timeout=3, extra_peers=[sleeper])
    assert not result.ok
    assert "x1" in result.still_running and "table" in result.still_running
    assert result.error is not None and "timed out" in result.error
    assert all(p.returncode is not None for p in result.processes.values())
    exits = {c.name: c for c in result.findings}[verify.EXITS]
    assert not exits.ok and "x1 did not exit (killed)" in exits.detail


def test_a_peer_without_an_event_log(tmp_path: Path) -> None:
    # Stands in for an independent interop peer: it plays but logs nothing,
    # so only the table-based checks and its neighbours' logs cover it.
    silent = [
        *processes.ring_command(), "peer", "--name", "silent", "--server", "{table}",
        "--host", "127.0.0.1", "--seed", "99",
    ]  # fmt: skip
    result = oldmaid_game.run_scenario(
        4, 3, workdir=tmp_path, timeout=TIMEOUT, extra_peers=[silent]
    )
    _assert_passed(result)
    assert result.records is not None and "silent" not in result.records.events
    assert "silent" in verify.seat_order(result.records)


def test_a_table_that_never_listens_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stand-in for a broken `ring`: it prints the wrong first line and exits.
    fake = [sys.executable, "-c", "print('hello')"]
    monkeypatch.setattr(oldmaid_game, "ring_command", lambda: fake)
    result = oldmaid_game.run_scenario(4, 1, workdir=tmp_path, timeout=TIMEOUT)
    assert not result.ok
    assert result.error == "the table printed 'hello' instead of 'table listening on HOST:PORT'"
    assert list(result.processes) == ["table"]
    assert "ERROR the table printed 'hello'" in oldmaid_game.format_result(result)
