"""``make bench-reversi``: the Reversi ladder, deep's clock, the rules' speed.

Three parts, each figure printed beside its goal with MET or NOT MET:

1. **The ladder.** Each player against the one below it (random < greedy <
   positional < deep), ``--games`` games a pair, through ``ring serve
   --reversi`` processes on loopback. Each worker process has a server of its
   own and plays its games one after another, so the two connections the
   server pairs are always the two seats of one game. The server tosses its
   seeded coin for the colours as it would in class; each seat then takes the
   player the game's plan gives that colour, so the stronger player is black
   in exactly half the games. ``deep`` plays the ladder at ``--deep-budget``
   seconds a move (default 0.05 s, so 200 games take minutes, not an hour):
   a weaker deep than the default, so its figure is a lower bound.
2. **deep's clock**, at its default budget (0.9 s, the server's move time
   30 s): ``--timing-games`` games against ``positional`` through the server,
   each move timed *by the server's transcript* (from the first board of the
   turn to the legal move), median and max; and the exact endgame solver
   timed offline on positions from seeded random games, empties growing
   until some position takes over a second.
3. **The rules' speed** against the plain reference implementation
   (``tests/helpers/reversi_reference.py``) measured in the same run: legal
   move generation per second over the positions of seeded random games, and
   perft to depth 6 from the start.

A measurement, not a test: exits 0 whether goals are met or not, 1 when a game
fails (then the figures cannot be trusted).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from scenarios.bench.fishnet_ladder import wilson
from scenarios.bench.service_pool import ServicePool
from services.reversi.bots import DEFAULT_BUDGET, LEVELS, Deep, make_player
from services.reversi.client import BotAgent
from services.reversi.conversation import ClientError, play_one_game
from services.reversi.rules import BLACK, Position, iter_squares, moves, perft
from services.reversi.search import solve

GAMES = 200
SEED = 2026
WORKERS = 2  # the machine's cores: one game at a time each
LADDER_DEEP_BUDGET = 0.05
TIMING_GAMES = 4
SERVER_MOVE_TIME = 30.0  # the server's default, which deep budgets against
GOAL_SCORE = 0.80
GOAL_LOW = 0.75
GOAL_MOVE_SECONDS = 1.0
GOAL_SOLVE_EMPTIES = 12
GOAL_SPEED = 20.0
CLIENT_TIMEOUT = 60.0


# -- one game between two planned players ------------------------------------------


@dataclass(frozen=True)
class GamePlan:
    """Game ``index`` of a pair: who is black, and each player's seed."""

    strong: str
    weak: str
    index: int
    seed: int
    deep_budget: float | None  # None: deep's default, budgeted against the server's move time

    @property
    def strong_black(self) -> bool:
        return self.index % 2 == 0

    def level_for(self, colour: int) -> str:
        return self.strong if (colour == BLACK) == self.strong_black else self.weak


@dataclass
class GameRecord:
    plan: GamePlan
    strong_result: int | None = None  # 1 won, 0 lost, 2 tied; None: failed
    strong_colour: int | None = None
    deep_name: str | None = None  # the seat deep played, to find its moves in the transcript
    deep_moves: list[dict[str, object]] = field(default_factory=list)  # Deep.last per move
    error: str | None = None


class _Seat:
    """One connection of a game; told its colour, it plays the player the plan gives it."""

    def __init__(self, plan: GamePlan, name: str, record: GameRecord) -> None:
        self.plan = plan
        self.name = name
        self.record = record
        self.agent: BotAgent | None = None
        self.level = ""

    async def started(self, colour: int) -> None:
        plan = self.plan
        self.level = plan.level_for(colour)
        seed = f"{plan.seed}:{plan.strong}-{plan.weak}-{plan.index}:{self.level}"
        if self.level == "deep":
            budget = plan.deep_budget
            player = (
                Deep(seed, budget=budget)
                if budget is not None
                else make_player("deep", seed, move_time=SERVER_MOVE_TIME)
            )
            self.record.deep_name = self.name
        else:
            player = make_player(self.level, seed)
        self.agent = BotAgent(player, SERVER_MOVE_TIME)

    async def move(self, position: Position) -> tuple[int, int]:
        assert self.agent is not None
        choice = await self.agent.move(position)
        if isinstance(self.agent.player, Deep):
            empties = 64 - (position.own() | position.opp()).bit_count()
            self.record.deep_moves.append({**self.agent.player.last, "empties": empties})
        return choice


async def _play(plan: GamePlan, address: tuple[str, int]) -> GameRecord:
    record = GameRecord(plan)
    seats = [_Seat(plan, f"s{plan.index}{side}", record) for side in "ab"]
    ends: dict[str, object] = {}

    async def one(seat: _Seat) -> None:
        try:
            ends[seat.name] = await play_one_game(address, seat.name, seat, timeout=CLIENT_TIMEOUT)
        except ClientError as exc:
            record.error = f"{seat.name}: {exc}"

    async with trio.open_nursery() as nursery:
        for seat in seats:
            nursery.start_soon(one, seat)
    if record.error is not None:
        return record
    strong = [s for s in seats if s.level == plan.strong]
    if len(strong) != 1:
        record.error = f"both seats played {seats[0].level}"
        return record
    weak = seats[1] if strong[0] is seats[0] else seats[0]
    strong_end, weak_end = ends[strong[0].name], ends[weak.name]
    # The two ends must agree, or the seats were not in the same game.
    agree = {(1, 0), (0, 1), (2, 2)}
    if (strong_end.result, weak_end.result) not in agree:  # type: ignore[attr-defined]
        record.error = "the two seats' results disagree"
        return record
    record.strong_result = strong_end.result  # type: ignore[attr-defined]
    record.strong_colour = strong_end.colour  # type: ignore[attr-defined]
    return record


# -- servers ---------------------------------------------------------------------------


def reversi_servers(count: int, seed: int) -> ServicePool:
    """One ``ring serve --reversi`` per worker, with transcripts, at the default move time."""
    return ServicePool("reversi", count, seed, ["--move-time", str(SERVER_MOVE_TIME)])


# -- part 1: the ladder --------------------------------------------------------------


@dataclass
class PairTally:
    strong: str
    weak: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    strong_black: int = 0
    failed: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, record: GameRecord) -> None:
        if record.strong_result is None:
            self.failed += 1
            print(f"  game {record.plan.index} failed: {record.error}", file=sys.stderr)
            return
        self.wins += record.strong_result == 1
        self.draws += record.strong_result == 2
        self.losses += record.strong_result == 0
        self.strong_black += record.strong_colour == BLACK

    def row(self) -> str:
        n = self.games
        score = (self.wins + self.draws / 2) / n if n else 0.0
        low, high = wilson(self.wins + self.draws / 2, n)
        met = score >= GOAL_SCORE and low > GOAL_LOW
        return (
            f"  {self.strong:>10} v {self.weak:<10} {self.wins:>4} {self.draws:>4} "
            f"{self.losses:>4}  {100 * score:5.1f}% [{100 * low:5.1f}%, {100 * high:5.1f}%]  "
            f"{self.strong_black:>3}/{n:<3}  "
            f">= {GOAL_SCORE:.0%}, low > {GOAL_LOW:.0%}: {'MET' if met else 'NOT MET'}"
        )


def ladder(servers: ServicePool, games: int, seed: int, deep_budget: float) -> int:
    print(
        f"Reversi ladder: {games} games a pair through {len(servers.addresses)} "
        f"ring serve --reversi processes on loopback, seed {seed}; "
        f"deep at {deep_budget:g} s a move"
    )
    print("  pair                       W    D    L  score (draws half) [95%]  black  goal")
    failed = 0
    for strong, weak in zip(LEVELS[1:], LEVELS, strict=False):
        plans = [
            GamePlan(strong, weak, i, seed, deep_budget if strong == "deep" else None)
            for i in range(games)
        ]
        started = time.monotonic()
        tally = PairTally(strong, weak)
        for record in servers.play(_play, plans):
            tally.add(record)
        failed += tally.failed
        print(f"{tally.row()}   ({time.monotonic() - started:.0f} s)", flush=True)
    return failed


# -- part 2: deep's clock ----------------------------------------------------------


def move_times(transcript: Path, name: str) -> list[float]:
    """Seconds from each turn's first board to ``name``'s legal move, as the server saw it."""
    times: list[float] = []
    turn_started: float | None = None
    colour = None
    for line in transcript.read_text().splitlines():
        record = json.loads(line)
        if record.get("name") == name and record.get("dir") == "out":
            colour = record["colour"]
            if record["line"].startswith("B") and turn_started is None:
                turn_started = record["t"]
        elif record.get("event") == "move" and record.get("colour") == colour:
            if turn_started is not None:
                times.append(record["t"] - turn_started)
            turn_started = None
    return times


def clock(servers: ServicePool, games: int, seed: int) -> int:
    print(
        f"deep's clock: {games} games against positional through the server "
        f"(move time {SERVER_MOVE_TIME:g} s, deep's budget {DEFAULT_BUDGET:g} s)"
    )
    before = set(servers.transcripts())
    plans = [GamePlan("deep", "positional", i, seed + 1, None) for i in range(games)]
    records = servers.play(_play, plans)
    failed = sum(r.strong_result is None for r in records)
    transcripts = [p for p in servers.transcripts() if p not in before]
    names = {r.deep_name for r in records if r.deep_name}
    times = [t for path in transcripts for name in names for t in move_times(path, name)]
    searched = [m for r in records for m in r.deep_moves]
    if not times:
        print("  no moves were timed")
        return failed + 1
    worst = max(times)
    verdict = "MET" if worst <= GOAL_MOVE_SECONDS else "NOT MET"
    print(
        f"  {len(times)} moves timed at the server: median {statistics.median(times):.3f} s, "
        f"max {worst:.3f} s   max <= {GOAL_MOVE_SECONDS:g} s: {verdict}"
    )
    exact = [m["empties"] for m in searched if m.get("exact")]
    depths = [m["depth"] for m in searched if not m.get("exact") and m.get("depth")]
    if depths:
        print(f"  mid-game search depth: median {statistics.median(depths):g}, max {max(depths)}")
    if exact:
        print(f"  exact solves in these games began at up to {max(exact)} empties")
    return failed


def _positions_with(empties: int, count: int, seed: int) -> list[Position]:
    """``count`` positions with ``empties`` empty squares and a move to make, from random games."""
    rng = random.Random(seed)
    found: list[Position] = []
    while len(found) < count:
        position = Position.start()
        while not position.over and 64 - (position.own() | position.opp()).bit_count() > empties:
            position = position.play(rng.choice(list(iter_squares(position.legal_moves()))))
        if not position.over and 64 - (position.own() | position.opp()).bit_count() == empties:
            found.append(position)
    return found


def solve_reach(seed: int, per_size: int = 8, start: int = 10) -> None:
    print(f"  exact solve, {per_size} positions from seeded random games per number of empties:")
    reach = None
    empties = start
    while True:
        seconds = []
        for position in _positions_with(empties, per_size, seed + empties):
            began = time.perf_counter()
            solve(position.own(), position.opp())
            seconds.append(time.perf_counter() - began)
        worst = max(seconds)
        print(
            f"    {empties} empties: median {statistics.median(seconds):.3f} s, max {worst:.3f} s"
        )
        if worst > GOAL_MOVE_SECONDS:
            break
        reach = empties
        empties += 1
    verdict = "MET" if reach is not None and reach >= GOAL_SOLVE_EMPTIES else "NOT MET"
    print(
        f"  solved exactly within {GOAL_MOVE_SECONDS:g} s from up to {reach} empties   "
        f">= {GOAL_SOLVE_EMPTIES}: {verdict}"
    )


# -- part 3: the rules' speed ----------------------------------------------------------


def _best_of(rounds: int, job) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        job()
        best = min(best, time.perf_counter() - began)
    return best


def rules_speed(seed: int) -> None:
    from tests.services import reversi_reference as reference

    rng = random.Random(seed)
    positions: list[Position] = []
    for _ in range(40):
        position = Position.start()
        while not position.over:
            positions.append(position)
            position = position.play(rng.choice(list(iter_squares(position.legal_moves()))))
    boards = [(p.own(), p.opp()) for p in positions]
    games = [reference.Game.from_digits(p.digits(), p.to_move) for p in positions]

    def ours() -> None:
        for own, opp in boards:
            moves(own, opp)

    def theirs() -> None:
        for game in games:
            game.legal_moves(game.to_move)

    fast, slow = _best_of(5, ours), _best_of(3, theirs)
    ratio = slow / fast
    print(f"rules' speed against the reference, same run ({len(positions)} positions):")
    print(
        f"  legal move generation: {len(positions) / fast:,.0f}/s against "
        f"{len(positions) / slow:,.0f}/s = {ratio:.1f}x   "
        f">= {GOAL_SPEED:g}x: {'MET' if ratio >= GOAL_SPEED else 'NOT MET'}"
    )
    counts = []

    def ours_perft() -> None:
        counts.append(perft(Position.start(), 6))

    def theirs_perft() -> None:
        counts.append(reference.perft(reference.Game.start(), 6))

    fast, slow = _best_of(5, ours_perft), _best_of(3, theirs_perft)
    ratio = slow / fast
    correct = set(counts) == {8200}
    print(
        f"  perft 6 ({'8200 leaves, both' if correct else f'WRONG: {sorted(set(counts))}'}): "
        f"{fast * 1e3:.1f} ms against {slow * 1e3:.1f} ms = {ratio:.1f}x   "
        f">= {GOAL_SPEED:g}x: {'MET' if ratio >= GOAL_SPEED else 'NOT MET'}"
    )


# -- the whole bench -----------------------------------------------------------------


def bench(games: int, seed: int, deep_budget: float, timing_games: int) -> int:
    rules_speed(seed)
    print()
    servers = reversi_servers(WORKERS, seed)
    try:
        failed = ladder(servers, games, seed, deep_budget)
        print()
        failed += clock(servers, timing_games, seed)
    finally:
        servers.close()
    solve_reach(seed)
    print(f"failed games: {failed}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scenarios.bench.reversi_bench", description=__doc__
    )
    parser.add_argument("--games", type=int, default=GAMES, help="ladder games per pair")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--deep-budget",
        type=float,
        default=LADDER_DEEP_BUDGET,
        help="deep's seconds a move in the ladder",
    )
    parser.add_argument("--timing-games", type=int, default=TIMING_GAMES)
    args = parser.parse_args(argv)
    return bench(args.games, args.seed, args.deep_budget, args.timing_games)


if __name__ == "__main__":
    sys.exit(main())
