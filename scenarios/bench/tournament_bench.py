"""``make bench-tournament``: ``ring tournament``'s pace, its own cost, and its ranking.

1. **The round robin.** The four Reversi built-in players (random, greedy,
   positional, deep at ``--depth``) play a round robin through the runner
   (``scenarios.tournament.runner.run``: worker processes, a server a game, a
   port a seat, limits, files), at concurrency 1 and then 2. Reported: games
   a minute, the scaling from 1 to 2, and the runner's own overhead per game:
   a game's share of the wall time (wall x concurrency / games) less the time
   its players and its server spent (``GameResult.played``: from the first
   program's start to the last one's end). Goal: that overhead at most 5 % of
   a ``deep`` game's wall time (its played time plus the overhead). Also: the
   ranking is the ladder's order, and the crosstable adds up (every game
   counted once).
2. **Against the bare games.** The same deep-against-deep games played two
   ways in the same run, alternately, ``--bare-runs`` times each: bare (a
   Reversi server of our own in this process and two ``ring bot`` processes
   a game, 2 at once) and through ``ring tournament`` (a process, as a user
   runs it). The figure: the tournament's wall time over the bare one's.

A measurement, not a test: it exits 0 whether goals are met or not, and 1
when a run fails (then the figures cannot be trusted).
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import trio

from scenarios.tournament import results
from scenarios.tournament.jobs import Entrant, Settings
from scenarios.tournament.runner import Tournament, run
from scenarios.tournament.schedule import two_player

LADDER = ("random", "greedy", "positional", "deep")
DEEP_ONLY = ("deep", "deep2", "deep3")
GOAL_OVERHEAD = 0.05
GOAL_RATIO = 1.05


def round_robin(
    levels: Sequence[str], games: int, depth: int, seed: int, concurrency: int
) -> tuple[float, list[results.GameResult]]:
    """The ladder's round robin through the runner; its wall time and its results."""
    entrants = tuple(Entrant(level, level=level) for level in levels)
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as folder:
        out = Path(folder) / "t"
        tournament = Tournament(
            "reversi", entrants, out, games=games, seed=seed, concurrency=concurrency,
            settings=Settings(depth=depth),
        )  # fmt: skip
        began = time.perf_counter()
        status = run(tournament, stream=io.StringIO(), progress_stream=io.StringIO())
        wall = time.perf_counter() - began
        if status != 0:
            raise RuntimeError(f"the round robin at concurrency {concurrency} exited {status}")
        return wall, list(results.load(out / "games").values())


def _bot(address: str, name: str, seed: int, depth: int) -> list[str]:
    return [sys.executable, "-m", "ring", "bot", "reversi", "--server", address,
            "--name", name, "--level", "deep", "--depth", str(depth), "--seed", str(seed),
            "--games", "1"]  # fmt: skip


async def _bare_game(players: tuple[str, ...], seed: int, depth: int) -> None:
    from services.reversi.server import ReversiConfig, serve_reversi

    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_reversi, ReversiConfig(port=0, seed=seed))
        address = "{}:{}".format(*server.address)
        with trio.fail_after(600):
            async with trio.open_nursery() as bots:
                for seat, name in enumerate(players):
                    argv = _bot(address, name, seed + seat, depth)
                    bots.start_soon(lambda a: trio.run_process(a, stdout=subprocess.DEVNULL), argv)
        nursery.cancel_scope.cancel()


async def bare(
    entrants: Sequence[str], games: int, seed: int, depth: int, concurrency: int
) -> float:
    limiter = trio.CapacityLimiter(concurrency)
    began = time.perf_counter()

    async def one(players: tuple[str, ...], game_seed: int) -> None:
        async with limiter:
            await _bare_game(players, game_seed % 2**63, depth)

    async with trio.open_nursery() as nursery:
        for game in two_player(list(entrants), games, seed):
            nursery.start_soon(one, game.players, game.seed)
    return time.perf_counter() - began


def tournament_process(
    entrants: Sequence[str], games: int, seed: int, depth: int, concurrency: int
) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as folder:
        command = [sys.executable, "-m", "ring", "tournament", "reversi"]
        command += ["--builtin", "deep"] * len(entrants)
        command += ["--depth", str(depth), "--games", str(games), "--seed", str(seed)]
        command += ["--concurrency", str(concurrency), "--out", str(Path(folder) / "t")]
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"ring tournament failed: {done.stderr.decode()[-500:]}")
        return time.perf_counter() - began


def _verdict(met: bool) -> str:
    return "MET" if met else "NOT MET"


def report_round_robin(args: argparse.Namespace) -> None:
    ladder = args.levels
    print(f"== the ladder's round robin through the runner: {', '.join(ladder)} (deep at "
          f"depth {args.depth}), {args.games} games a pair")  # fmt: skip
    pace = {}
    for concurrency in (1, 2):
        wall, played = round_robin(ladder, args.games, args.depth, args.seed, concurrency)
        count = len(played)
        share = wall * concurrency / count
        overhead = share - statistics.mean(r.played for r in played)
        deep = [r.played for r in played if "deep" in r.players] or [r.played for r in played]
        deep_game = statistics.mean(deep) + overhead
        pace[concurrency] = count / wall * 60
        print(f"concurrency {concurrency}: {count} games in {wall:.1f} s, "
              f"{pace[concurrency]:.1f} games a minute; a game's share {share:.3f} s, "
              f"played {share - overhead:.3f} s, runner's overhead {overhead * 1000:.0f} ms "
              f"a game = {overhead / deep_game:.1%} of a deep game ({deep_game:.2f} s) "
              f"(goal <= {GOAL_OVERHEAD:.0%}) "
              f"{_verdict(overhead <= GOAL_OVERHEAD * deep_game)}")  # fmt: skip
        if concurrency == 1:
            _report_ranking(ladder, played)
    print(f"scaling from 1 to 2: {pace[2] / pace[1]:.2f}x games a minute (2 cores)")


def _report_ranking(ladder: Sequence[str], played: list[results.GameResult]) -> None:
    table = results.standings(list(ladder), played)
    order = [rating.name for rating in table.ratings]
    counted = sum(record.games for record in table.records.values())
    points = sum(record.score for record in table.records.values())
    adds_up = counted == 2 * len(played) and points == len(played)
    ranking = ", ".join(f"{r.name} {r.elo:+.0f} ({r.low:+.0f} .. {r.high:+.0f})"
                        for r in table.ratings)  # fmt: skip
    print(f"ranking: {ranking}; the ladder's order: "
          f"{_verdict(order == list(reversed(ladder)))}")  # fmt: skip
    print(f"crosstable: {counted} seats of {len(played)} games, {points:g} points: adds up "
          f"{_verdict(adds_up)}")  # fmt: skip


def report_bare(args: argparse.Namespace) -> None:
    entrants = DEEP_ONLY[: args.bare_entrants]
    count = len(two_player(list(entrants), args.bare_games, args.seed))
    print(f"== against the bare games: {count} games of deep against deep, 2 at once, "
          f"{args.bare_runs} runs each, alternating")  # fmt: skip
    walls: dict[str, list[float]] = {"bare": [], "tournament": []}
    for _ in range(args.bare_runs):
        walls["bare"].append(trio.run(bare, entrants, args.bare_games, args.seed, args.depth, 2))
        walls["tournament"].append(
            tournament_process(entrants, args.bare_games, args.seed, args.depth, 2)
        )
    for way, seconds in walls.items():
        print(f"{way}: {', '.join(f'{s:.2f}' for s in seconds)} s "
              f"(median {statistics.median(seconds):.2f} s)")  # fmt: skip
    ratio = statistics.median(walls["tournament"]) / statistics.median(walls["bare"])
    print(f"tournament / bare: {ratio:.3f} (goal <= {GOAL_RATIO}) {_verdict(ratio <= GOAL_RATIO)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench --part tournament")
    parser.add_argument("--games", type=int, default=6, help="round robin: games a pair plays")
    parser.add_argument("--levels", nargs="+", default=list(LADDER), help="the ladder, weakest "
                        "first (default: all four)")  # fmt: skip
    parser.add_argument("--depth", type=int, default=5, help="deep's depth")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--bare-games", type=int, default=4, help="against bare: games a pair")
    parser.add_argument("--bare-runs", type=int, default=2)
    parser.add_argument("--bare-entrants", type=int, default=len(DEEP_ONLY), choices=[2, 3])
    args = parser.parse_args(argv)
    try:
        report_round_robin(args)
        print()
        report_bare(args)
    except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
        print(f"a run failed: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
