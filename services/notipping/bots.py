"""No Tipping's built-in computer players, as pure strategies: no I/O.

A player is asked for a move with ``choose(game, time_left)`` and answers an
``Add`` or a ``Remove`` that ``game.check`` allows for ``game.to_move``
(a move that tips the board is allowed: it loses). The game is never over.
``time_left`` is how many seconds this move may take; only ``solver`` looks
at a clock.

=============  ===============================================================================
level          strategy
=============  ===============================================================================
``random``     the course's random player: ADD a random weight at the leftmost position where
               it does not tip (the other weights in random order if it tips everywhere);
               REMOVE a random block whose removal does not tip; any move if all tip
``greedy``     never tips when it can help it; among the safe moves, one that leaves the
               opponent the fewest safe replies
``solver``     REMOVE: solved exactly (a memoised win/lose search over the blocks left), a
               winning move whenever there is one. ADD: iterative deepening alpha-beta
               within a time budget (2 s), exact once it reaches the last placement (the
               REMOVE solver at its leaves); before that its leaves are scored mainly by
               whether the mover would win a REMOVE phase starting there (``solver``)
=============  ===============================================================================

Every player takes a seed: the same seed and the same positions, asked in the
same order, give the same moves. Ties are broken by the seeded generator.
``solver`` with a time budget may search deeper on a faster machine; given a
depth limit and no budget (``Solver(seed, budget=None, max_depth=d)``) it is
deterministic as well.
"""

from __future__ import annotations

import random
import time
from typing import Protocol

from services.notipping.rules import ADD, Add, Game, Move
from services.notipping.solver import Decision, RemoveSolver, count_safe, decide, safe_moves

__all__ = [
    "DEFAULT_BUDGET",
    "LEVELS",
    "Greedy",
    "Player",
    "RandomPlayer",
    "Solver",
    "make_player",
]

LEVELS = ("random", "greedy", "solver")

DEFAULT_BUDGET = 2.0  # solver's seconds per move unless told otherwise


class Player(Protocol):
    name: str

    def choose(self, game: Game, time_left: float | None = None) -> Move:
        """An allowed move for ``game.to_move``; ``time_left``: seconds this move may take."""
        ...


def _playable(game: Game) -> list[Move]:
    if game.over:
        raise ValueError("the game is over")
    legal = game.legal_moves()
    if not legal:
        raise ValueError("the player to move has no move")
    return legal


class RandomPlayer:
    """The course's random player: random weights placed leftmost, random safe removals."""

    name = "random"

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def choose(self, game: Game, time_left: float | None = None) -> Move:
        legal = _playable(game)
        if game.phase == ADD:
            weights = sorted(game.hands[game.to_move])
            # One shuffle: the first weight is the random pick, the rest the order of retries.
            self._rng.shuffle(weights)
            free = game.free()
            for weight in weights:
                for position in free:
                    move = Add(weight, position)
                    if not game.tips_after(move):
                        return move
            return self._rng.choice(legal)
        safe = [move for move in legal if not game.tips_after(move)]
        return self._rng.choice(safe or legal)


class Greedy:
    """A safe move leaving the opponent the fewest safe replies; any move if all tip."""

    name = "greedy"

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def choose(self, game: Game, time_left: float | None = None) -> Move:
        legal = _playable(game)
        safe = safe_moves(game)
        if not safe:
            return self._rng.choice(legal)
        counted = [(count_safe(game.play(move)), move) for move in safe]
        fewest = min(count for count, _ in counted)
        return self._rng.choice([move for count, move in counted if count == fewest])


def _limit(budget: float | None, time_left: float | None) -> float | None:
    """Seconds a move may take: the budget, or half of ``time_left`` if that is less.

    A ``time_left`` of 0 or less is no limit (a server's move time of 0 means
    none), like None.
    """
    if time_left is None or time_left <= 0:
        return budget
    return time_left * 0.5 if budget is None else min(budget, time_left * 0.5)


class Solver:
    """The REMOVE phase solved exactly; the ADD phase searched within a time budget.

    ``budget``: seconds per move (half of ``choose``'s ``time_left`` is the
    limit instead when that is smaller); None means no clock unless
    ``time_left`` gives one, and then ``max_depth`` is required.
    ``max_depth``: the deepest ADD iteration in plies (None: as deep as the
    time allows; the search stops anyway once it is exact).

    The REMOVE solver's cache is kept from move to move (and game to game: it
    is keyed by the board alone). After each move ``last`` holds how it was
    chosen (``solver.Decision``) and the seconds it took.
    """

    name = "solver"

    def __init__(
        self, seed: int | str, budget: float | None = DEFAULT_BUDGET, max_depth: int | None = None
    ) -> None:
        if budget is None and max_depth is None:
            raise ValueError("solver needs a time budget, a depth limit or both")
        if max_depth is not None and max_depth < 1:
            raise ValueError("max_depth is at least 1")
        self._rng = random.Random(seed)
        self.budget = budget
        self.max_depth = max_depth
        self.remover = RemoveSolver()
        self.last: Decision | None = None
        self.last_seconds = 0.0

    def choose(self, game: Game, time_left: float | None = None) -> Move:
        start = time.perf_counter()
        _playable(game)
        limit = _limit(self.budget, time_left)
        # A little is kept back for what follows a search's last clock check.
        deadline = None if limit is None else start + max(limit * 0.9, 0.0)
        self.last = decide(
            game, deadline, max_depth=self.max_depth, rng=self._rng, remover=self.remover
        )
        self.last_seconds = time.perf_counter() - start
        return self.last.move


def make_player(
    level: str, seed: int | str, *, move_time: float | None = None, depth: int | None = None
) -> Player:
    """The player of ``level`` (one of ``LEVELS``), seeded.

    ``depth``: ``solver`` searches that many plies ahead and no time budget, so it
    makes the same moves on any machine (a tournament's built-in players).

    ``move_time`` is the time the server allows a move, in seconds (None or 0:
    no limit). ``solver`` spends at most ``DEFAULT_BUDGET`` (2 s) per move, or
    half of ``move_time`` if that is less (and half of ``choose``'s
    ``time_left`` likewise); for another budget construct ``Solver`` directly.
    The other levels take no time worth counting.
    """
    if level == "random":
        return RandomPlayer(seed)
    if level == "greedy":
        return Greedy(seed)
    if level == "solver" and depth is not None:
        return Solver(seed, budget=None, max_depth=depth)
    if level == "solver":
        return Solver(seed, budget=_limit(DEFAULT_BUDGET, move_time))
    raise ValueError(f"no player level {level!r}: the levels are {', '.join(LEVELS)}")
