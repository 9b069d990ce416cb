"""What each built-in FishNet player's idea is worth: the ladder beside its ablations.

The ladder (``scenarios.bench.fishnet_ladder``) measures the four built-in players
through the real server. This study shows why the order holds: it plays
each built-in player beside the same player with one idea taken away (or,
for bob, the rule he had before), in this process (no network:
``play_game`` tells each side exactly the lines the server would, so no
player sees a hidden card), 10,000 seeded games a pair, first move
alternating, and prints the score (ties half) and wins, ties and losses with
95 % Wilson intervals.

The ablations are not built-in players; they exist to be measured:

- ``old-bob``: bob before issue 14, the rank he holds most of, skipping only
  the rank he has just missed on until the opponent fishes;
- ``bob-most``: bob's list of ranks the opponent lacks, asking for the rank
  he holds most of: alice without her memory of what the opponent holds;
- ``alice-rand``: alice asking for a random rank (not her largest holding)
  when she has no certain hit: alice before issue 14;
- ``smarx-noend``: smarx without its endgame search.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from scenarios.bench.fishnet_ladder import PairResult, format_figures
from services.fishnet.bots import (
    Alice,
    Bob,
    Decision,
    Player,
    Seed,
    Smarx,
    Spot,
    play_game,
)
from services.fishnet.rules import FishNetGame

GAMES = 10_000
SEED = 2024
NAME_WIDTH = 11


class OldBob(Player):
    """The rank he holds most of, skipping the rank he just missed on until the opponent fishes."""

    name = "old-bob"

    def __init__(self, seed: Seed = None) -> None:
        super().__init__(seed)
        self.missed: int | None = None

    def _decide(self) -> Decision:
        ranks = [rank for rank in self.ranks_held if rank != self.missed]
        return Decision(self._most_held(ranks or self.ranks_held))

    def _on_opponent_lacks(self, rank: int) -> None:
        self.missed = rank

    def _on_opponent_drew(self) -> None:
        self.missed = None


class BobMost(Bob):
    """Bob's list of ranks the opponent lacks; the rank he holds most of among the rest."""

    name = "bob-most"

    def _decide(self) -> Decision:
        return Decision(self._most_held(self._fresh()))


class AliceRandom(Alice):
    """Alice, asking for a random rank where she would ask for her largest holding."""

    name = "alice-rand"

    def _decide(self) -> Decision:
        remembered = [rank for rank in self.ranks_held if rank in self.memory]
        if remembered:
            return Decision(self._most_held(remembered))
        return Decision(self.rng.choice(self._fresh()))


class SmarxNoEndgame(Smarx):
    """Smarx without the endgame search."""

    name = "smarx-noend"

    def _endgame(self) -> Decision | None:
        return None


PLAYERS: dict[str, Callable[[Seed], Player]] = {
    cls.name: cls for cls in (Spot, OldBob, Bob, BobMost, AliceRandom, Alice, SmarxNoEndgame, Smarx)
}

# (first, second): what each pair answers is in the docs' study section.
PAIRS: tuple[tuple[str, str], ...] = (
    ("old-bob", "spot"),
    ("bob", "spot"),
    ("bob-most", "bob"),
    ("alice", "bob-most"),
    ("alice", "alice-rand"),
    ("smarx", "alice"),
    ("smarx-noend", "alice"),
    ("smarx", "smarx-noend"),
)


def play_pair(first: str, second: str, games: int, seed: int) -> PairResult:
    """``games`` seeded games; ``first`` moves first in the even ones."""
    result = PairResult(first, second)
    for i in range(games):
        players = [PLAYERS[first](f"{seed}:{first}:{i}"), PLAYERS[second](f"{seed}:{second}:{i}")]
        game = FishNetGame(f"study:{seed}:{first}:{second}:{i}", first=i % 2)
        outcome = play_game(players, game)
        if outcome.winner is None:
            result.ties += 1
        elif outcome.winner == 0:
            result.wins += 1
        else:
            result.losses += 1
    result.strong_first = (games + 1) // 2
    return result


def study(games: int, seed: int, pairs: Sequence[tuple[str, str]] = PAIRS) -> list[PairResult]:
    print(f"FishNet strength study: {games} games a pair in-process, seed {seed}")
    heading = f"  {'pair':<{2 * NAME_WIDTH + 3}}{'games':>6} {'wins':>5} {'ties':>5} {'losses':>5}"
    print(f"{heading}  score (ties half) [95%]   win rate [95%]")
    results = []
    for first, second in pairs:
        started = time.monotonic()
        result = play_pair(first, second, games, seed)
        results.append(result)
        elapsed = time.monotonic() - started
        print(f"{format_figures(result, NAME_WIDTH)}   ({elapsed:.1f} s)", flush=True)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scenarios.bench.fishnet_study", description=__doc__
    )
    parser.add_argument("--games", type=int, default=GAMES, help="games per pair")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    study(args.games, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
