"""``make bench-tournament``, the box's part: what boxing every program costs, and what a
program spinning on every core costs its opponent.

1. **The box's cost.** The Reversi ladder's round robin (random, greedy,
   positional, deep at ``--depth``), ``--games`` a pair, through ``ring
   tournament`` as a user runs it, boxed (the default) and ``--no-sandbox``,
   alternately, ``--runs`` times each, 2 games at once. Reported: each
   way's wall time; the box's cost a game (the difference of the medians,
   times 2 at once, over the games) as a share of a deep game's wall time
   (goal: at most 5 %); and each built-in player's median move time both
   ways (the server's clock of each move; goal: the same within noise).
2. **A spinner.** Deep plays two games against the random bot, then two
   against ``spinner.py`` (tests/scenarios/tournament/attackers: it starts
   twice the cores' number of spinning threads and processes, then plays as
   the random bot), one game at a time: boxed (its box's control group holds
   it to ``--cpus`` 1 core) and with ``--no-sandbox`` (nothing holds it).
   Reported: deep's median and slowest move each way, against the random
   bot's.

A measurement, not a test: it exits 0 whether goals are met or not, and 1
when a run fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

LADDER = ("random", "greedy", "positional", "deep")
GOAL_SHARE = 0.05
SPINNER = Path(__file__).resolve().parents[2] / "tests/scenarios/tournament/attackers/spinner.py"


def tournament(
    players: Sequence[str], out: Path, *, boxed: bool, games: int, depth: int, concurrency: int
) -> float:
    """``ring tournament reversi`` with these entrant options; its wall time."""
    command = [sys.executable, "-m", "ring", "tournament", "reversi", *players]
    command += ["--games", str(games), "--depth", str(depth), "--move-time", "30"]
    command += ["--concurrency", str(concurrency), "--out", str(out)]
    if not boxed:
        command.append("--no-sandbox")
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"ring tournament failed: {done.stderr[-500:]}")
    return time.perf_counter() - began


def played(out: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted((out / "games").glob("*.json"))]


def move_times(games: list[dict], name: str) -> list[float]:
    return [t for game in games for t in game.get("move_times", {}).get(name, [])]


def report_cost(args: argparse.Namespace, folder: Path) -> None:
    players = [option for level in LADDER for option in ("--builtin", level)]
    print(f"== the box's cost: the ladder's round robin ({', '.join(LADDER)}, deep at depth "
          f"{args.depth}), {args.games} games a pair, 2 at once, boxed and --no-sandbox "
          f"alternately, {args.runs} runs each")  # fmt: skip
    walls: dict[str, list[float]] = {"boxed": [], "unboxed": []}
    games: dict[str, list[dict]] = {"boxed": [], "unboxed": []}
    for run in range(args.runs):
        for way in ("unboxed", "boxed") if run % 2 == 0 else ("boxed", "unboxed"):
            out = folder / f"{way}{run}"
            wall = tournament(
                players, out, boxed=way == "boxed", games=args.games, depth=args.depth,
                concurrency=2,
            )
            walls[way].append(wall)
            games[way] += played(out)
    count = len(games["boxed"]) // args.runs
    for way, seconds in walls.items():
        print(f"{way}: {', '.join(f'{s:.2f}' for s in seconds)} s "
              f"(median {statistics.median(seconds):.2f} s, {count} games)")  # fmt: skip
    cost = (statistics.median(walls["boxed"]) - statistics.median(walls["unboxed"])) * 2 / count
    deep = [g["played"] for g in games["unboxed"] if "deep" in g["players"]]
    deep_game = statistics.mean(deep)
    share = cost / deep_game
    print(f"the box's cost a game: {cost * 1000:.0f} ms = {share:.1%} of a deep game "
          f"({deep_game:.2f} s) (goal <= {GOAL_SHARE:.0%}) "
          f"{'MET' if share <= GOAL_SHARE else 'NOT MET'}")  # fmt: skip
    for level in LADDER:
        medians = {way: statistics.median(move_times(games[way], level)) for way in games}
        print(f"{level}: median move {medians['unboxed'] * 1000:.2f} ms unboxed, "
              f"{medians['boxed'] * 1000:.2f} ms boxed "
              f"({medians['boxed'] / medians['unboxed']:.2f}x)")  # fmt: skip


def report_spinner(args: argparse.Namespace, folder: Path) -> None:
    print(f"== a spinner: deep (depth {args.depth}) against the random bot, then against "
          "spinner.py (random, while spinning on every core), 2 games each, one at a time")
    python = sys.executable
    spinner = f"spinner@{SPINNER.parent}={python} spinner.py {{host}} {{port}} {{name}}"
    cases = {
        "random, boxed": (["--builtin", "random"], True),
        "spinner, boxed": (["--player", spinner], True),
        "spinner, --no-sandbox": (["--player", spinner], False),
    }
    for label, (opponent, boxed) in cases.items():
        out = folder / label.replace(", ", "-").replace("--", "")
        tournament(["--builtin", "deep", *opponent], out, boxed=boxed, games=2,
                   depth=args.depth, concurrency=1)  # fmt: skip
        times = move_times(played(out), "deep")
        print(f"deep against {label}: median move {statistics.median(times) * 1000:.0f} ms, "
              f"slowest {max(times) * 1000:.0f} ms ({len(times)} moves)")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.box_bench")
    parser.add_argument("--games", type=int, default=2, help="the cost: games a pair")
    parser.add_argument("--runs", type=int, default=2, help="the cost: runs each way")
    parser.add_argument("--depth", type=int, default=5, help="deep's depth")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-box-") as temporary:
            report_cost(args, Path(temporary))
            print()
            report_spinner(args, Path(temporary))
    except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
        print(f"a run failed: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
