"""``make bench-notipping``: the No Tipping solver against the other players, and its clock.

1. **Strength.** ``solver`` against ``random`` and against ``greedy``, in
   each seat, ``--games`` games a pairing split evenly between the seats,
   through ``ring serve --notipping`` processes on loopback (one per worker
   process, games one after another, so each server seats exactly the two
   clients of one game) at the server's defaults: max weight 7, 120 s time
   budget a player. Wins and losses of the solver with 95 % Wilson intervals.
2. **The solver's clock.** Its longest answer to a ROUND in those games, as
   the server's transcripts time it (from the ROUND sent to the move read);
   and the time to solve the REMOVE phase exactly from a full board (every
   weight placed) at max weight 7 and at max weight 10, from a cold cache.

A measurement, not a test: exits 0 whether goals are met or not, 1 when a
game fails (then the figures cannot be trusted).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from ring.games.record import read_game
from scenarios.bench.fishnet_ladder import wilson
from scenarios.bench.service_pool import ServicePool
from services.notipping.bots import make_player
from services.notipping.client import BotAgent
from services.notipping.conversation import ClientError, GameEnd, play_one_game
from services.notipping.rules import ADD, REMOVE, Game
from services.notipping.solver import RemoveSolver, solve_remove

GAMES = 200
SEED = 2026
WORKERS = 2
OPPONENTS = ("random", "greedy")
GOAL_VS_RANDOM = 0.95  # in each seat
GOAL_VS_GREEDY = 0.80  # over both seats
GOAL_SOLVE_SECONDS = 120.0  # the time budget
CLIENT_TIMEOUT = 300.0


@dataclass(frozen=True)
class GamePlan:
    opponent: str
    solver_seat: int
    index: int
    seed: int
    # The solver's time a move (bots.make_player); None: its own budget, as the bench
    # measures it. Tests of the bench's plumbing give it less.
    move_time: float | None = None

    def level_of(self, seat: int) -> str:
        return "solver" if seat == self.solver_seat else self.opponent

    def handle_of(self, seat: int) -> str:
        return f"{self.level_of(seat)}{self.index}s{seat}"


@dataclass
class GameRecord:
    plan: GamePlan
    solver_won: bool | None = None  # None: the game failed
    error: str | None = None


async def _play(plan: GamePlan, address: tuple[str, int]) -> GameRecord:
    record = GameRecord(plan)
    ends: dict[int, GameEnd] = {}

    async def seat(number: int) -> None:
        level = plan.level_of(number)
        seed = f"{plan.seed}:{plan.opponent}:{plan.index}:{level}"
        agent = BotAgent(make_player(level, seed, move_time=plan.move_time))
        try:
            ends[number] = await play_one_game(
                address, plan.handle_of(number), number, agent, timeout=CLIENT_TIMEOUT
            )
        except ClientError as exc:
            record.error = f"seat {number} ({level}): {exc}"

    async with trio.open_nursery() as nursery:
        for number in (0, 1):
            nursery.start_soon(seat, number)
    if record.error is not None:
        return record
    if ends[0].won == ends[1].won:
        record.error = "both seats report the same result"
        return record
    record.solver_won = ends[plan.solver_seat].won
    return record


# -- strength --------------------------------------------------------------------------


def _rate(wins: int, games: int) -> str:
    low, high = wilson(wins, games)
    rate = wins / games if games else 0.0
    return f"{100 * rate:5.1f}% [{100 * low:5.1f}%, {100 * high:5.1f}%]"


def strength(
    servers: ServicePool,
    games: int,
    seed: int,
    opponents: Sequence[str] = OPPONENTS,
    move_time: float | None = None,
) -> int:
    print(
        f"No Tipping: solver against each player, {games} games a pairing (half in each seat), "
        f"through {len(servers.addresses)} ring serve --notipping processes on loopback, "
        f"seed {seed}"
    )
    print("  pairing                    seat  games  won lost  solver's win rate [95%]  goal")
    failed = 0
    for opponent in opponents:
        plans = [GamePlan(opponent, i % 2, i, seed, move_time) for i in range(games)]
        started = time.monotonic()
        records = servers.play(_play, plans)
        elapsed = time.monotonic() - started
        for record in records:
            if record.solver_won is None:
                failed += 1
                print(f"  game {record.plan.index} failed: {record.error}", file=sys.stderr)
        both = [r for r in records if r.solver_won is not None]
        for seat in (0, 1):
            played = [r for r in both if r.plan.solver_seat == seat]
            won = sum(r.solver_won is True for r in played)
            goal = ""
            if opponent == "random":
                met = played and won / len(played) >= GOAL_VS_RANDOM
                goal = f">= {GOAL_VS_RANDOM:.0%}: {'MET' if met else 'NOT MET'}"
            print(
                f"  solver v {opponent:<10}        {seat}  {len(played):>5} {won:>4} "
                f"{len(played) - won:>4}  {_rate(won, len(played))}  {goal}"
            )
        won = sum(r.solver_won is True for r in both)
        goal = ""
        if opponent == "greedy":
            met = both and won / len(both) >= GOAL_VS_GREEDY
            goal = f">= {GOAL_VS_GREEDY:.0%}: {'MET' if met else 'NOT MET'}"
        print(
            f"  solver v {opponent:<10}     both  {len(both):>5} {won:>4} {len(both) - won:>4}  "
            f"{_rate(won, len(both))}  {goal}   ({elapsed:.0f} s)",
            flush=True,
        )
    return failed


# -- the solver's clock ----------------------------------------------------------------


def answer_times(transcript: Path, handle: str) -> list[float]:
    """Seconds from each ROUND sent to ``handle`` to its move, as the server saw them."""
    times: list[float] = []
    asked: float | None = None
    seat = None
    for line in transcript.read_text().splitlines():
        record = json.loads(line)
        if record.get("handle") == handle and record.get("dir") == "out":
            seat = record.get("player")
            if str(record.get("line", "")).startswith("ROUND"):
                asked = record["t"]
        elif record.get("event") == "move" and record.get("player") == seat:
            if asked is not None:
                times.append(record["t"] - asked)
            asked = None
    return times


def full_board(max_weight: int, seed: int) -> Game:
    """A REMOVE-phase position with every weight on the board, reached by safe random play."""
    rng = random.Random(seed)
    while True:
        game = Game.start(max_weight)
        while not game.over and game.phase == ADD:
            safe = [m for m in game.legal_moves() if not game.tips_after(m)]
            if not safe:
                break
            game = game.play(rng.choice(safe))
        if not game.over and game.phase == REMOVE:
            return game


def clock(servers: ServicePool, seed: int) -> None:
    times = [
        t
        for path in servers.transcripts()
        for handle in read_game(path).players
        if handle.startswith("solver")
        for t in answer_times(path, handle)
    ]
    if times:
        print(
            f"  the solver's answers to a ROUND, {len(times)} timed at the server: "
            f"median {1e3 * statistics.median(times):.1f} ms, max {max(times):.3f} s"
        )
    else:  # the games ran: a transcript without answers means this reader is wrong
        print("  the solver's answers to a ROUND: NONE FOUND in the transcripts", flush=True)
    for max_weight in (7, 10):
        game = full_board(max_weight, seed)
        solver = RemoveSolver()
        began = time.perf_counter()
        wins = solve_remove(game, solver)
        seconds = time.perf_counter() - began
        verdict = "MET" if seconds <= GOAL_SOLVE_SECONDS else "NOT MET"
        blocks = len(game.occupied())
        print(
            f"  REMOVE phase solved exactly from a full board, max weight {max_weight} "
            f"({blocks} blocks): {seconds:.2f} s, player 0 {'wins' if wins else 'loses'}   "
            f"<= {GOAL_SOLVE_SECONDS:g} s: {verdict}"
        )


def bench(games: int, seed: int) -> int:
    servers = ServicePool("notipping", WORKERS, seed)
    try:
        failed = strength(servers, games, seed)
        print()
        print("the solver's clock:")
        clock(servers, seed)
    finally:
        servers.close()
    print(f"failed games: {failed}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scenarios.bench.notipping_bench", description=__doc__
    )
    parser.add_argument("--games", type=int, default=GAMES, help="games a pairing")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    return bench(args.games, args.seed)


if __name__ == "__main__":
    sys.exit(main())
