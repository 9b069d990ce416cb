"""Reversi's four built-in computer players, as pure strategies: no I/O.

A player is asked for a move with ``choose(position, time_left)`` and answers
a square (``x * 8 + y``, as ``rules`` numbers them) that is legal for
``position.to_move``. The position is never over and always has a legal move
for the side to move (``Position.play`` makes passes itself). ``time_left``
is how many seconds this move may take; only ``deep`` looks at a clock.

=============  ===============================================================================
level          strategy
=============  ===============================================================================
``random``     a uniformly random legal move
``greedy``     the move that flips the most discs
``positional`` an available corner if any, else the best move one ply ahead by square
               weights (corners high, edges good, X- and C-squares next to an empty corner
               bad) plus mobility (own legal moves minus the opponent's)
``deep``       iterative deepening principal variation search (``search``) within a per-move
               time budget, and an exact endgame solve once the empties are few enough
=============  ===============================================================================

Every player takes a seed: the same seed and the same positions, asked in the
same order, give the same moves. Ties are broken by the seeded generator.
``deep`` with a time budget may search deeper on a faster machine; given a
depth limit and no budget (``Deep(seed, budget=None, max_depth=d)``) it is
deterministic as well.
"""

from __future__ import annotations

import random
import time
from typing import Protocol

from services.reversi.evaluation import ORDER_RANK
from services.reversi.rules import Position, flips, iter_squares, moves
from services.reversi.search import Searcher, SearchTimeout

__all__ = [
    "DEFAULT_BUDGET",
    "LEVELS",
    "SOLVE_EMPTIES",
    "Deep",
    "Greedy",
    "Player",
    "Positional",
    "RandomPlayer",
    "make_player",
]

LEVELS = ("random", "greedy", "positional", "deep")

DEFAULT_BUDGET = 0.9  # deep's seconds per move unless told otherwise
SOLVE_EMPTIES = 16  # with a clock, deep tries an exact solve at this many empties or fewer


class Player(Protocol):
    name: str

    def choose(self, position: Position, time_left: float | None = None) -> int:
        """A legal square for ``position.to_move``; ``time_left``: seconds this move may take."""
        ...


def _legal(position: Position) -> list[int]:
    legal = position.legal_moves()
    if not legal:
        raise ValueError("the side to move has no legal move")
    return list(iter_squares(legal))


class RandomPlayer:
    """A uniformly random legal move."""

    name = "random"

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def choose(self, position: Position, time_left: float | None = None) -> int:
        return self._rng.choice(_legal(position))


class Greedy:
    """The move that turns over the most discs; the seeded generator picks among equals."""

    name = "greedy"

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def choose(self, position: Position, time_left: float | None = None) -> int:
        own, opp = position.own(), position.opp()
        counted = [(flips(own, opp, sq).bit_count(), sq) for sq in _legal(position)]
        most = max(count for count, _ in counted)
        return self._rng.choice([sq for count, sq in counted if count == most])


# -- positional ---------------------------------------------------------------------------


def _square_class(sq: int) -> tuple[int, int]:
    x, y = divmod(sq, 8)
    a, b = min(x, 7 - x), min(y, 7 - y)
    return (a, b) if a <= b else (b, a)


# Weights by a square's distances to the nearest edges (smaller first).
_CLASS_WEIGHTS = {
    (0, 0): 100,  # corner
    (0, 1): -20,  # C-square
    (1, 1): -40,  # X-square
    (0, 2): 10,  # A-square
    (0, 3): 6,  # B-square
    (1, 2): -3,
    (1, 3): -3,
    (2, 2): 2,
    (2, 3): 1,
    (3, 3): 0,
}
# (weight, squares) for every weight, so a sum of weights is a few popcounts.
_WEIGHT_MASKS = tuple(
    (weight, sum(1 << sq for sq in range(64) if _CLASS_WEIGHTS[_square_class(sq)] == weight))
    for weight in sorted(set(_CLASS_WEIGHTS.values()))
    if weight
)
_CORNERS = (1 << 0) | (1 << 7) | (1 << 56) | (1 << 63)
_TAKEN_CORNER_WEIGHT = 4  # an X- or C-square once its corner is taken


def _corner_neighbours(corner: int) -> int:
    cx, cy = divmod(corner, 8)
    return sum(
        1 << (x * 8 + y) for x in range(8) for y in range(8) if max(abs(x - cx), abs(y - cy)) == 1
    )


# Each corner with its X-square and its two C-squares, and what taking it changes per square.
_CORNER_NEIGHBOURS = tuple((1 << corner, _corner_neighbours(corner)) for corner in (0, 7, 56, 63))
_MOBILITY_WEIGHT = 5


def _weights(own: int, opp: int) -> int:
    """Square weights of ``own``'s discs minus ``opp``'s, X- and C-squares by their corner."""
    score = 0
    for weight, mask in _WEIGHT_MASKS:
        score += weight * ((own & mask).bit_count() - (opp & mask).bit_count())
    for corner, around in _CORNER_NEIGHBOURS:
        if (own | opp) & corner:
            # Undo the penalty of a corner's neighbours once the corner is taken.
            for weight, mask in _WEIGHT_MASKS:
                part = around & mask
                if part:
                    score += (_TAKEN_CORNER_WEIGHT - weight) * (
                        (own & part).bit_count() - (opp & part).bit_count()
                    )
    return score


class Positional:
    """A corner when one is legal; otherwise the best position one move ahead.

    A move is scored by the square weights of the board after it, plus
    ``_MOBILITY_WEIGHT`` times the mover's legal moves minus the opponent's
    there (an opponent left without a move counts as a zero).
    """

    name = "positional"

    def __init__(self, seed: int | str) -> None:
        self._rng = random.Random(seed)

    def choose(self, position: Position, time_left: float | None = None) -> int:
        own, opp = position.own(), position.opp()
        candidates = _legal(position)
        corners = [sq for sq in candidates if (_CORNERS >> sq) & 1]
        if corners:
            candidates = corners
        best, chosen = None, []
        for sq in candidates:
            f = flips(own, opp, sq)
            after_own, after_opp = own | f | (1 << sq), opp ^ f
            mobility = moves(after_own, after_opp).bit_count() - (
                moves(after_opp, after_own).bit_count()
            )
            score = _weights(after_own, after_opp) + _MOBILITY_WEIGHT * mobility
            if best is None or score > best:
                best, chosen = score, [sq]
            elif score == best:
                chosen.append(sq)
        return self._rng.choice(chosen)


# -- deep ---------------------------------------------------------------------------------


def _limit(budget: float | None, time_left: float | None) -> float | None:
    """Seconds a move may take: the budget, or half of ``time_left`` if that is less.

    A ``time_left`` of 0 or less is no limit (a server's move time of 0 means
    none), like None.
    """
    if time_left is None or time_left <= 0:
        return budget
    return time_left * 0.5 if budget is None else min(budget, time_left * 0.5)


class Deep:
    """Iterative deepening search within a time budget per move, exact near the end.

    ``budget``: seconds per move (half of ``choose``'s ``time_left`` is the
    limit instead when that is smaller); None means no clock unless
    ``time_left`` gives one, and then ``max_depth`` is required.
    ``max_depth``: the deepest mid-game iteration (None: as deep as the time
    allows). ``solve_empties``: from how many empty squares on the exact
    endgame solver is tried (after a short mid-game search, whose move stands
    if the solve runs out of time); the default is ``SOLVE_EMPTIES`` with a
    clock and ``max_depth`` without one. Whatever these are, a search whose
    depth reaches the end of the game is an exact solve.

    After each move ``last`` holds what the search did: depth reached, whether
    it solved exactly, the score, nodes and seconds.
    """

    name = "deep"

    def __init__(
        self,
        seed: int | str,
        budget: float | None = DEFAULT_BUDGET,
        max_depth: int | None = None,
        solve_empties: int | None = None,
    ) -> None:
        if budget is None and max_depth is None:
            raise ValueError("deep needs a time budget, a depth limit or both")
        if max_depth is not None and max_depth < 1:
            raise ValueError("max_depth is at least 1")
        self._rng = random.Random(seed)
        self.budget = budget
        self.max_depth = max_depth
        if solve_empties is None:
            solve_empties = SOLVE_EMPTIES if budget is not None else max_depth
        self.solve_empties = solve_empties
        self.last: dict[str, object] = {}

    def choose(self, position: Position, time_left: float | None = None) -> int:
        start = time.perf_counter()
        own, opp = position.own(), position.opp()
        squares = _legal(position)
        # The static order (corners first, X-squares last), at random within a class.
        self._rng.shuffle(squares)
        order = sorted(squares, key=ORDER_RANK.__getitem__)
        if len(order) == 1:
            self.last = {"depth": 0, "exact": False, "score": None, "nodes": 0, "seconds": 0.0}
            return order[0]

        limit = _limit(self.budget, time_left)
        deadline = None if limit is None else start + max(limit, 0.0)
        searcher = Searcher(deadline)
        empties = 64 - (own | opp).bit_count()
        best, score, exact, depth_done = order[0], None, False, 0
        try:
            depth = 1
            while True:
                # A short mid-game search first orders the moves for the solver, and its
                # move stands if the solver runs out of time.
                deepest = self.max_depth is not None and depth > self.max_depth
                warm = deepest or (
                    depth > 2
                    and (limit is None or depth > 4 or time.perf_counter() - start > 0.1 * limit)
                )
                if depth >= empties or (empties <= self.solve_empties and warm):
                    score, best = searcher.root_solve(own, opp, order)
                    exact, depth_done = True, empties
                    break
                if deepest:
                    break
                score, best = searcher.root_search(own, opp, order, depth)
                depth_done = depth
                order.remove(best)
                order.insert(0, best)
                depth += 1
        except SearchTimeout:
            # The unfinished search's best so far was searched deeper than ``best``.
            if searcher.root_best is not None:
                score, best = searcher.root_best
        self.last = {
            "depth": depth_done,
            "exact": exact,
            "score": score,
            "nodes": searcher.nodes,
            "seconds": time.perf_counter() - start,
        }
        return best


def make_player(
    level: str, seed: int | str, *, move_time: float | None = None, depth: int | None = None
) -> Player:
    """The player of ``level`` (one of ``LEVELS``), seeded.

    ``depth``: ``deep`` searches that many moves ahead and no time budget, so it
    makes the same moves on any machine (a tournament's built-in players).

    ``move_time`` is the time the server allows a move, in seconds (None or 0:
    no limit). ``deep`` spends ``DEFAULT_BUDGET`` (0.9 s) per move, or half of
    ``move_time`` if that is less (and half of ``choose``'s ``time_left``
    likewise); for another budget construct ``Deep`` directly. The other
    levels take no time worth counting.
    """
    if level == "random":
        return RandomPlayer(seed)
    if level == "greedy":
        return Greedy(seed)
    if level == "positional":
        return Positional(seed)
    if level == "deep" and depth is not None:
        return Deep(seed, budget=None, max_depth=depth)
    if level == "deep":
        return Deep(seed, budget=_limit(DEFAULT_BUDGET, move_time))
    raise ValueError(f"no player level {level!r}: the levels are {', '.join(LEVELS)}")
