"""Why the FishNet ladder's goals are not met: the players as specified beside candidate rules.

The ladder (``scenarios.fishnet_ladder``) measures the four built-in players
through the real server. This study asks the question its figures raise for
whoever owns the players' definitions: would another rule for bob, or a
stronger smarx, give a ladder that meets the goals? It plays the built-in
players and two candidate players against each other in this process (no
network: ``play_game`` tells each side exactly the lines the server would, so
no player sees a hidden card), 2,000 seeded games a pair, first move
alternating, and prints wins, ties and losses with 95 % Wilson intervals.

The candidates are not built-in players; they exist to be measured:

- ``bob-lacks``: bob's rule (the rank he holds most of) that also leaves out
  every rank the opponent has said it lacks (his request missed, or he took
  all its cards) until the opponent asks for that rank. That memory is
  alice's second half, without her memory of what the opponent holds.
- ``alice-most``: alice, but with no remembered rank to ask for she asks for
  the rank she holds most of (not a random one) among those the opponent is
  not known to lack.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from scenarios.fishnet_ladder import PairResult, format_figures
from services.fishnet.players import (
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

GAMES = 2000
SEED = 2024
NAME_WIDTH = 10


class BobLacks(Player):
    """The rank it holds most of, among the ranks the opponent is not known to lack."""

    name = "bob-lacks"

    def __init__(self, seed: Seed = None) -> None:
        super().__init__(seed)
        self.lacked: set[int] = set()

    def _decide(self) -> Decision:
        ranks = [rank for rank in self.ranks_held if rank not in self.lacked]
        return Decision(self._most_held(ranks or self.ranks_held))

    def _on_opponent_gave(self, rank: int, count: int) -> None:
        self.lacked.add(rank)

    def _on_opponent_lacks(self, rank: int) -> None:
        self.lacked.add(rank)

    def _on_opponent_shows(self, rank: int) -> None:
        self.lacked.discard(rank)

    def _on_booked(self, rank: int) -> None:
        self.lacked.discard(rank)


class AliceMost(Alice):
    """Alice, asking for the rank she holds most of where she would ask at random."""

    name = "alice-most"

    def _decide(self) -> Decision:
        remembered = [rank for rank in self.ranks_held if rank in self.memory]
        if remembered:
            return Decision(self._most_held(remembered))
        fresh = [rank for rank in self.ranks_held if rank not in self.lacked]
        return Decision(self._most_held(fresh or self.ranks_held))


PLAYERS: dict[str, Callable[[Seed], Player]] = {
    cls.name: cls for cls in (Spot, Bob, BobLacks, Alice, AliceMost, Smarx)
}

# (first, second): the question each pair answers is in the docs' study section.
PAIRS: tuple[tuple[str, str], ...] = (
    ("bob", "spot"),
    ("bob-lacks", "spot"),
    ("alice", "spot"),
    ("alice", "bob-lacks"),
    ("alice-most", "bob-lacks"),
    ("smarx", "spot"),
    ("smarx", "alice"),
    ("smarx", "bob-lacks"),
    ("smarx", "alice-most"),
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
    heading = f"  {'pair':<{2 * NAME_WIDTH + 4}}{'wins':>5} {'ties':>5} {'losses':>5}  "
    print(f"{heading}win rate [95% interval]    score (ties half) [95%]")
    results = []
    for first, second in pairs:
        started = time.monotonic()
        result = play_pair(first, second, games, seed)
        results.append(result)
        elapsed = time.monotonic() - started
        print(f"{format_figures(result, NAME_WIDTH)}   ({elapsed:.1f} s)", flush=True)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.fishnet_study", description=__doc__)
    parser.add_argument("--games", type=int, default=GAMES, help="games per pair")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    study(args.games, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
