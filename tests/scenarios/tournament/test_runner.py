"""``ring tournament`` end to end: real servers, real programs, real worker processes."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scenarios.programs import PROC, RUN_TAG
from scenarios.tournament import results
from scenarios.tournament.jobs import Entrant, Settings
from scenarios.tournament.runner import Tournament, TournamentError, run, run_prefix
from scenarios.tournament.schedule import Format
from scenarios.tournament.worker import check_commands
from tests.helpers.tournament import decided

ROUGH = Path(__file__).with_name("rough_reversi.py")


def rough(name: str, fault: str = "") -> Entrant:
    command = [sys.executable, str(ROUGH), "{host}", "{port}", "{name}"]
    return Entrant(name, tuple(command + (["--fault", fault] if fault else [])))


def alive(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` still runs ``within`` seconds from now. Killed, a process that is
    not our child lingers as a zombie until init reaps it, and so is watched for a
    bounded time rather than waited for."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


def tagged(prefix: str) -> list[int]:
    """The processes alive whose run token begins with ``prefix``."""
    entry = f"{RUN_TAG}={prefix}".encode()
    found = []
    for path in PROC.iterdir():
        if not path.name.isdigit():
            continue
        try:
            environ = (path / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(e.startswith(entry) for e in environ):
            found.append(int(path.name))
    return found


FAULTS = {
    "exits": "crashed (exited with status 3) before its game began",
    "nocon": "did not connect within 3 s",
    "crashes": "crashed (exited with status 1)",
    "leaves": "left (it closed its connection during its game)",
    "silent": "timed out",
    "garbage": "sent moves the server refused, too many in a row (illegal or garbled)",
}


def test_every_loss_is_explained_and_nothing_outlives_its_game(tmp_path: Path) -> None:
    faulty = [
        rough("exits", "exits"),
        rough("nocon", "never-connects"),
        rough("crashes", "crashes"),
        rough("leaves", "leaves"),
        rough("silent", "silent"),
        rough("garbage", "garbage"),
        rough("daemon", "daemon"),
    ]
    tournament = Tournament(
        game="reversi",
        entrants=(Entrant("random", level="random"), *faulty),
        out=tmp_path / "t",
        fmt=Format.GAUNTLET,
        games=2,
        seed=7,
        settings=Settings(move_time=1.0, connect_within=3.0, exit_within=1.0, memory_mb=512),
        concurrency=4,
    )
    with open(tmp_path / "tables.md", "w") as tables:
        assert run(tournament, stream=tables) == 0
    played = results.load(tmp_path / "t" / "games")
    assert len(played) == 14
    for result in played.values():
        loser = next(name for name in result.players if name != "random")
        if loser == "daemon":
            assert result.faults == {}, result.reason
            continue
        assert result.faults == {loser: FAULTS[loser]}, result.reason
        assert result.scores == [1.0 if name == "random" else 0.0 for name in result.players]
        assert result.reason == f"{loser} {FAULTS[loser]}; random wins"
    games = tmp_path / "t" / "games"
    # the evidence of a dispute: each program's own output, the server's transcript
    crash_game = next(n for n, r in played.items() if "crashes" in r.players)
    crash_files = games / f"{crash_game:05d}"
    assert "a student's bug" in (crash_files / "crashes.stderr").read_text()
    records = [json.loads(line) for line in (crash_files / "transcript.jsonl").open()]
    assert records[0]["event"] == "start" and records[-1]["event"] == "end"
    assert records[-1]["culprit"] == "crashes"
    # The daemon (setsid, so outside the program's group) died with its game.
    daemons = [
        int(line.split()[1])
        for number, result in played.items()
        if "daemon" in result.players
        for line in (games / f"{number:05d}" / "daemon.stdout").read_text().splitlines()
        if line.startswith("daemon ")
    ]
    assert len(daemons) == 2
    assert not [pid for pid in daemons if alive(pid)]
    # nor did anything else any program of this tournament started
    mark = json.loads((tmp_path / "t" / "tournament.json").read_text())["fingerprint"]
    assert tagged(run_prefix(mark, tmp_path / "t")) == []
    standings = (tmp_path / "t" / "standings.md").read_text()
    assert "| 2 crashed |" in standings and "| 2 timed out |" in standings


def test_a_folder_holding_another_tournament_is_refused(tmp_path: Path) -> None:
    def tournament(seed: int) -> Tournament:
        entrants = (Entrant("a", level="random"), Entrant("b", level="greedy"))
        return Tournament("reversi", entrants, tmp_path / "t", seed=seed, concurrency=1)

    assert run(tournament(1), stream=io.StringIO()) == 0
    with pytest.raises(TournamentError, match="holds another tournament"):
        run(tournament(2))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(TournamentError, match="not empty"):
        run(Tournament("reversi", tournament(1).entrants, tmp_path / "other"))


def test_a_command_that_cannot_start_is_named_before_any_game(tmp_path: Path) -> None:
    script = tmp_path / "client.sh"
    script.write_text("#!/bin/sh\n")
    entrants = [
        Entrant("a", ("./nowhere", "{host}")),
        Entrant("b", ("no-such-program-here",)),
        Entrant("c", ("./client.sh",), cwd=str(tmp_path)),
        Entrant("d", level="random"),
    ]
    assert check_commands(entrants) == [
        "cannot run a's command: no file ./nowhere",
        "cannot run b's command: no program 'no-such-program-here' on PATH",
        "cannot run c's command: ./client.sh is not executable",
    ]


@pytest.mark.parametrize(
    ("game", "levels", "settings"),
    [
        ("notipping", ("random", "greedy"), Settings(time_budget=20.0)),
        # FishNet seats by arrival: the server puts them back in the tournament's seats
        ("fishnet", ("spot", "bob"), Settings(move_time=5.0)),
    ],
)
def test_each_program_plays_in_the_seat_it_was_given(
    tmp_path: Path, game: str, levels: tuple[str, str], settings: Settings
) -> None:
    entrants = tuple(Entrant(level, level=level) for level in levels)
    out = tmp_path / "t"
    tournament = Tournament(game, entrants, out, games=4, seed=3, concurrency=3, settings=settings)
    assert run(tournament, stream=io.StringIO()) == 0
    played = results.load(out / "games")
    assert [r.players for r in played.values()] == [list(levels), list(levels[::-1])] * 2
    for number, result in played.items():
        with (out / "games" / f"{number:05d}" / "transcript.jsonl").open() as transcript:
            start = json.loads(transcript.readline())
        seats = sorted(start["players"], key=lambda player: player["seat"])
        assert [player["name"] for player in seats] == result.players
        assert result.faults == {} and result.scores in ([0.0, 1.0], [1.0, 0.0], [0.5, 0.5])


# -- stopped and resumed -------------------------------------------------------------------

BUILTINS = ["--builtin", "random", "--builtin", "greedy", "--builtin", "deep"]
GAMES = 6  # three entrants, two games a pair


def tournament_command(out: Path) -> list[str]:
    return [sys.executable, "-m", "ring", "tournament", "reversi", *BUILTINS, "--depth", "2",
            "--games", "2", "--seed", "11", "--concurrency", "2", "--out", str(out)]  # fmt: skip


def stop_after(command: list[str], games: int, how: signal.Signals) -> int:
    """Start the runner, and send it ``how`` once ``games`` games are reported; its status."""
    runner = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert runner.stderr is not None
    seen = 0
    try:
        for line in runner.stderr:
            seen += line.startswith(b"game ")
            if seen >= games:
                runner.send_signal(how)
                break
        return runner.wait(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(timeout=10)


def test_a_stopped_tournament_resumes_to_the_same_results(tmp_path: Path) -> None:
    """Killed (SIGKILL) after its first game, or stopped with Ctrl-C after its third: the
    same command goes on to the results of a run that was never stopped."""
    whole = tmp_path / "whole"
    done = subprocess.run(tournament_command(whole), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for games, how in ((1, signal.SIGKILL), (3, signal.SIGINT)):
        stopped = tmp_path / how.name
        status = stop_after(tournament_command(stopped), games, how)
        assert status == (-signal.SIGKILL if how is signal.SIGKILL else 130)
        kept = decided(stopped)
        assert games <= len(kept) < GAMES
        # Nothing of the stopped run lives on: its workers killed their programs (SIGTERM
        # from the runner, or from Linux when the runner died). Watched for a bounded
        # time: they are not our children, so their exits cannot be waited for.
        mark = json.loads((stopped / "tournament.json").read_text())["fingerprint"]
        prefix = run_prefix(mark, stopped)
        deadline = time.monotonic() + 10
        while tagged(prefix) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tagged(prefix) == []
        # the same command goes on, and plays only what is missing
        resumed = subprocess.run(tournament_command(stopped), capture_output=True, timeout=120)
        said = resumed.stderr.decode()
        assert resumed.returncode == 0, said
        assert f"resuming: {len(kept)} of {GAMES} games already played" in said
        assert sum(line.startswith("game ") for line in said.splitlines()) == GAMES - len(kept)
        assert decided(stopped) == decided(whole)
        assert ranking(stopped) == ranking(whole)


def ranking(folder: Path) -> object:
    """The standings without the move times."""
    table = json.loads((folder / "standings.json").read_text())
    for entry in table["ranking"]:
        del entry["median_move"], entry["slowest_move"]
    return table
