"""The FishNet ladder: every pair of built-in players, through the real server.

Two ``ring serve --fishnet`` processes run on loopback, one where the
built-in player moves first (``--bot-moves first``) and one where it moves
second. For each pair, game i is played by a network client running one
player (``BotAgent``, as ``ring bot fishnet`` does) against the server's
built-in other player. Across each four games the stronger player is the
client twice and the server's player twice, and moves first twice, so
neither seat nor the first move favours anyone. Every game is seeded: the
server seed, the client's name (which names the game) and the client seed.

For each pair it reports wins, ties and losses of the stronger player, its
score ((W + T/2)/N) and its win rate (W/N), each with a 95 % Wilson
interval. The goals are the issue's: each player's score against the one
below it has its whole interval above 50 %; smarx's score against each
player is above every other player's against that player; and, a target
reported as measured, smarx scores at least 72 % against spot. A pair plays
``games`` (2,000) games; an adjacent pair whose interval still contains 50 %
plays ``games`` more at a time, up to ``MAX_GAMES`` (10,000). That stopping
rule looks at the data, so it is a little optimistic; each extra batch is
printed, so a reader sees where it was needed.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from scenarios.processes import ChildProcess
from services.fishnet.bots import COMPUTER_PLAYERS, make_player
from services.fishnet.client import BotAgent
from services.fishnet.conversation import ClientError, play_one_game
from services.fishnet.rules import Result

LEVELS = tuple(COMPUTER_PLAYERS)  # weakest first
GAMES = 2000
MAX_GAMES = 10_000
SEED = 2024
CONCURRENCY = 32
TARGET_TOP_OVER_BOTTOM = 0.72
Z95 = 1.959964


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (ties may count half)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@dataclass
class PairResult:
    strong: str
    weak: str
    wins: int = 0
    ties: int = 0
    losses: int = 0
    failed: int = 0
    strong_first: int = 0  # games the stronger player moved first in

    @property
    def games(self) -> int:
        return self.wins + self.ties + self.losses

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def score(self) -> float:
        return (self.wins + self.ties / 2) / self.games if self.games else 0.0

    def score_interval(self) -> tuple[float, float]:
        return wilson(self.wins + self.ties / 2, self.games)

    @property
    def is_step(self) -> bool:
        """Neighbours on the ladder: the pairs whose order is required."""
        return LEVELS.index(self.strong) - LEVELS.index(self.weak) == 1

    @property
    def is_top_over_bottom(self) -> bool:
        return (self.strong, self.weak) == (LEVELS[-1], LEVELS[0])

    def goal(self) -> str:
        if self.is_step:
            return "interval > 50%"
        if self.is_top_over_bottom:
            return f"target >= {TARGET_TOP_OVER_BOTTOM:.0%}"
        return "-"

    def met(self) -> bool | None:
        """Whether the pair's goal is met; None for a pair without one."""
        if self.is_step:
            return self.score_interval()[0] > 0.5
        if self.is_top_over_bottom:
            return self.score >= TARGET_TOP_OVER_BOTTOM
        return None

    def add(self, other: PairResult) -> None:
        self.wins += other.wins
        self.ties += other.ties
        self.losses += other.losses
        self.failed += other.failed
        self.strong_first += other.strong_first


def score_against(results: Sequence[PairResult], player: str, opponent: str) -> float:
    """``player``'s score against ``opponent``, from whichever side the pair was played."""
    for r in results:
        if (r.strong, r.weak) == (player, opponent):
            return r.score
        if (r.strong, r.weak) == (opponent, player):
            return 1.0 - r.score
    raise KeyError((player, opponent))


def top_is_above_every_other(results: Sequence[PairResult]) -> list[str]:
    """Where the top player's score against an opponent is not above another player's."""
    top = LEVELS[-1]
    shortfalls = []
    for opponent in LEVELS[:-1]:
        mine = score_against(results, top, opponent)
        for other in LEVELS[:-1]:
            if other != opponent and score_against(results, other, opponent) >= mine:
                shortfalls.append(f"{other} v {opponent}")
    return shortfalls


def pairs() -> list[tuple[str, str]]:
    """(stronger, weaker) for every pair, the adjacent ones first."""
    every = [(LEVELS[j], LEVELS[i]) for i, j in itertools.combinations(range(len(LEVELS)), 2)]
    return sorted(every, key=lambda pair: LEVELS.index(pair[0]) - LEVELS.index(pair[1]))


def start_server(bot_moves: str, seed: int, workdir: Path) -> tuple[ChildProcess, tuple[str, int]]:
    argv = [
        sys.executable, "-m", "ring", "serve", "--fishnet", "0", "--seed", str(seed),
        "--bot-moves", bot_moves, "--max-connections", str(4 * CONCURRENCY),
    ]  # fmt: skip
    child = ChildProcess(f"fishnet-{bot_moves}", argv, workdir)
    line = child.first_line(30)
    if line is None or not line.startswith("fishnet listening on "):
        child.popen.kill()
        raise RuntimeError(f"the FishNet server did not start: {child.stderr[-3:]}")
    host, _, port = line.removeprefix("fishnet listening on ").rpartition(":")
    return child, (host, int(port))


async def play_pair(
    result: PairResult,
    games: range,
    seed: int,
    servers: dict[str, tuple[str, int]],
    limiter: trio.CapacityLimiter,
) -> None:
    async def one(i: int) -> None:
        strong_is_client = i % 4 < 2
        strong_moves_first = i % 2 == 0
        client_level, server_level = (
            (result.strong, result.weak) if strong_is_client else (result.weak, result.strong)
        )
        bot_first = strong_moves_first != strong_is_client  # the server's player starts
        address = servers["first" if bot_first else "second"]
        team = f"{client_level}-{result.strong}-{result.weak}-{i}"
        agent = BotAgent(make_player(client_level, f"{seed}:{team}"))
        async with limiter:
            try:
                end = await play_one_game(address, team, server_level, agent, timeout=30)
            except ClientError as exc:
                print(f"  game {team} failed: {exc}", file=sys.stderr)
                result.failed += 1
                return
        outcome = end.result
        if not strong_is_client and outcome is not Result.TIE:
            outcome = Result.LOSE if outcome is Result.WIN else Result.WIN
        result.wins += outcome is Result.WIN
        result.ties += outcome is Result.TIE
        result.losses += outcome is Result.LOSE
        result.strong_first += strong_moves_first

    async with trio.open_nursery() as nursery:
        for i in games:
            nursery.start_soon(one, i)


def _percent(value: float) -> str:
    return f"{100 * value:5.1f}%"


def format_figures(r: PairResult, name_width: int = 5) -> str:
    """The pair, its games, wins, ties and losses, score and win rate, each with its interval."""
    win_low, win_high = wilson(r.wins, r.games)
    score_low, score_high = r.score_interval()
    return (
        f"  {r.strong:>{name_width}} v {r.weak:<{name_width}} {r.games:>6} "
        f"{r.wins:>5} {r.ties:>5} {r.losses:>5}  "
        f"{_percent(r.score)} [{_percent(score_low)}, {_percent(score_high)}]  "
        f"{_percent(r.win_rate)} [{_percent(win_low)}, {_percent(win_high)}]"
    )


def format_row(r: PairResult) -> str:
    met = r.met()
    verdict = "" if met is None else "MET" if met else "NOT MET"
    return f"{format_figures(r)}  {r.goal()} {verdict}".rstrip()


HEADER = (
    "  pair            games  wins  ties losses  score (ties half) [95%]   win rate [95%]"
    "            goal"
)


async def run_ladder(
    games: int, seed: int, servers: dict[str, tuple[str, int]], max_games: int = MAX_GAMES
) -> list[PairResult]:
    limiter = trio.CapacityLimiter(CONCURRENCY)
    results = []
    for strong, weak in pairs():
        result = PairResult(strong, weak)
        started = time.monotonic()
        await play_pair(result, range(games), seed, servers, limiter)
        while result.is_step and not result.met() and result.games + games <= max_games:
            print(f"{format_figures(result)}   interval reaches 50%: {games} more", flush=True)
            batch = PairResult(strong, weak)
            more = range(result.games, result.games + games)
            await play_pair(batch, more, seed, servers, limiter)
            result.add(batch)
        elapsed = time.monotonic() - started
        results.append(result)
        print(f"{format_row(result)}   ({elapsed:.1f} s)", flush=True)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scenarios.bench.fishnet_ladder", description=__doc__
    )
    parser.add_argument("--games", type=int, default=GAMES, help="games per pair")
    parser.add_argument("--max-games", type=int, default=MAX_GAMES, help="games a step, at most")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    return ladder(args.games, args.seed, max(args.games, args.max_games))


def ladder(games: int, seed: int, max_games: int = MAX_GAMES) -> int:
    """Play and print the ladder; 1 if any game failed (then the figures are suspect)."""
    workdir = Path(tempfile.mkdtemp(prefix="fishnet-ladder-"))
    children = []
    try:
        servers = {}
        for bot_moves in ("first", "second"):
            child, address = start_server(bot_moves, seed, workdir)
            children.append(child)
            servers[bot_moves] = address
        print(
            f"FishNet ladder: {games} games a pair (a step up to {max_games}) "
            f"through two servers on loopback, seed {seed}"
        )
        print(HEADER, flush=True)
        started = time.monotonic()
        results = trio.run(run_ladder, games, seed, servers, max_games)
        elapsed = time.monotonic() - started
    finally:
        for child in children:
            child.popen.terminate()
            child.popen.wait(10)
    played = sum(r.games for r in results)
    failed = sum(r.failed for r in results)
    steps = [r for r in results if r.is_step]
    shortfalls = top_is_above_every_other(results)
    top = LEVELS[-1]
    rate = played / elapsed
    print(f"{played} games in {elapsed:.1f} s ({rate:.0f} games/s); failed games: {failed}")
    above = sum(bool(r.met()) for r in steps)
    print(f"steps with their score interval above 50%: {above} of {len(steps)}")
    if shortfalls:
        print(f"{top}'s score is not above {', '.join(shortfalls)}")
    else:
        print(f"{top}'s score against each player is above every other player's against it")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
