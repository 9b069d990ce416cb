"""Game-tree search for the ``deep`` Reversi player: a mid-game search and an exact endgame solver.

Everything works on the two bitboards of ``rules`` seen from the side to move,
``(own, opp)``, and scores are negamax scores: what the side to move gets,
so a child's score is negated on the way up. A side with no move passes: the
search goes on with the sides swapped (the pass is not a ply), and when
neither side can move the game is over and scored exactly.

Mid-game (``Searcher.root_search``): principal variation search (alpha-beta
with null windows after the first move) to a fixed depth, a transposition
table keyed by ``(own, opp)`` holding score bounds, the depth they came from
and the best move found, and move ordering by the table's move, then (deep
enough in the tree for it to pay) the opponent's mobility after the move,
otherwise the static square order. Leaves use ``evaluate``, and a finished
game ``final_score`` (both from ``evaluation``, with the square order).

Endgame (``Searcher.root_solve``, ``solve``): the same search without an
evaluation, to the end of the game, scoring the final disc difference (empty
squares are nobody's, as in ``rules``). Positions with many empties order
moves fastest-first (fewest replies for the opponent) and use the table; the
last ``_SMALL`` empties are searched from a plain list of empty squares, odd
regions first, testing each square with ``flips`` instead of generating
moves; the very last empty square is scored directly.

A ``Searcher`` can be given a deadline (``time.perf_counter()`` seconds): it
looks at the clock every ``_CHECK`` nodes and raises ``SearchTimeout`` once
the deadline has passed, so the caller keeps the result of the last search
that finished.
"""

from __future__ import annotations

import time

from services.reversi.evaluation import CORNERS, ORDER_GROUPS, ORDER_RANK, evaluate, final_score
from services.reversi.rules import FULL, flips, iter_squares, moves

__all__ = ["SearchTimeout", "Searcher", "solve"]

_INF = 1 << 20  # beyond every mid-game score
_EXACT_INF = 65  # beyond every disc difference
_CHECK = 255  # mid-game: look at the clock when (nodes & _CHECK) == 0
_EXACT_CHECK = 7  # the same in the endgame search above the small searches
_SMALL = 6  # at most this many empties: the list-based endgame search
_SORT_DEPTH = 3  # mid-game nodes at least this deep sort their moves by opponent mobility
_TABLE_LIMIT = 400_000  # entries before the transposition table is cleared


class SearchTimeout(Exception):
    """The deadline passed during a search; its result is lost."""


class Searcher:
    """One search's state: the transposition table, the node count and the deadline."""

    def __init__(self, deadline: float | None = None) -> None:
        self.deadline = deadline
        self.nodes = 0
        self.table: dict[tuple[int, int], tuple[int, int, int, int]] = {}
        self.exact_table: dict[tuple[int, int], tuple[int, int, int]] = {}
        # The best root move of the root search under way, once the search has seen one
        # (the first move searched, or one proven better than every move before it):
        # after a timeout, no worse a choice than the first move by the deeper search.
        self.root_best: tuple[int, int] | None = None

    def _tick(self) -> None:
        self.nodes += 1
        if (
            not self.nodes & _CHECK
            and self.deadline is not None
            and time.perf_counter() > self.deadline
        ):
            raise SearchTimeout

    # -- mid-game -------------------------------------------------------------------------

    def _children(
        self, own: int, opp: int, legal: int, hint: int, sort: bool
    ) -> list[tuple[int, int]]:
        """The moves of ``legal`` as (square, flipped discs), in the order to search them."""
        if sort:
            keyed = []
            for sq in iter_squares(legal):
                f = flips(own, opp, sq)
                bit = 1 << sq
                replies = moves(opp ^ f, own | f | bit)
                # Fewest replies first; a reply into a corner counts as several.
                key = replies.bit_count() + 2 * (replies & CORNERS).bit_count()
                key = key * 8 + ORDER_RANK[sq]
                if sq == hint:
                    key = -1
                keyed.append((key, sq, f))
            keyed.sort()
            return [(sq, f) for _, sq, f in keyed]
        order = []
        if hint >= 0 and (legal >> hint) & 1:
            order.append((hint, flips(own, opp, hint)))
            legal ^= 1 << hint
        for group in ORDER_GROUPS:
            for sq in iter_squares(legal & group):
                order.append((sq, flips(own, opp, sq)))
        return order

    def _mid(self, own: int, opp: int, depth: int, alpha: int, beta: int) -> int:
        self._tick()
        if depth <= 0:
            return evaluate(own, opp)
        key = (own, opp)
        entry = self.table.get(key)
        hint = -1
        if entry is not None:
            entry_depth, low, high, hint = entry
            if entry_depth >= depth:
                if low >= beta:
                    return low
                if high <= alpha:
                    return high
                if low == high:
                    return low
        legal = moves(own, opp)
        if not legal:
            if moves(opp, own):
                return -self._mid(opp, own, depth, -beta, -alpha)
            return final_score(own, opp)
        alpha0 = alpha
        best, best_sq = -_INF, -1
        first = True
        for sq, f in self._children(own, opp, legal, hint, depth >= _SORT_DEPTH):
            child_own, child_opp = opp ^ f, own | f | (1 << sq)
            if first:
                value = -self._mid(child_own, child_opp, depth - 1, -beta, -alpha)
                first = False
            else:
                value = -self._mid(child_own, child_opp, depth - 1, -alpha - 1, -alpha)
                if alpha < value < beta:
                    value = -self._mid(child_own, child_opp, depth - 1, -beta, -value)
            if value > best:
                best, best_sq = value, sq
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if len(self.table) > _TABLE_LIMIT:
            self.table.clear()
        if best <= alpha0:
            self.table[key] = (depth, -_INF, best, best_sq)
        elif best >= beta:
            self.table[key] = (depth, best, _INF, best_sq)
        else:
            self.table[key] = (depth, best, best, best_sq)
        return best

    def root_search(self, own: int, opp: int, order: list[int], depth: int) -> tuple[int, int]:
        """(score, best square) of a ``depth``-ply search trying the moves in ``order`` first.

        Among moves of equal score the one earlier in ``order`` wins.
        """
        self.root_best = None
        alpha, best_sq = -_INF, order[0]
        for i, sq in enumerate(order):
            f = flips(own, opp, sq)
            child_own, child_opp = opp ^ f, own | f | (1 << sq)
            if i == 0:
                value = -self._mid(child_own, child_opp, depth - 1, -_INF, _INF)
            else:
                value = -self._mid(child_own, child_opp, depth - 1, -alpha - 1, -alpha)
                if value > alpha:
                    self.root_best = (value, sq)  # failed high: better than all before it
                    value = -self._mid(child_own, child_opp, depth - 1, -_INF, -alpha)
            if i == 0 or value > alpha:
                alpha, best_sq = value, sq
                self.root_best = (value, sq)
        return alpha, best_sq

    # -- endgame --------------------------------------------------------------------------

    def _exact(self, own: int, opp: int, alpha: int, beta: int, empties: int) -> int:
        """The final disc difference for the side to move, within (alpha, beta) (fail-soft)."""
        if empties <= _SMALL:
            return _small(own, opp, alpha, beta, _parity_order(FULL ^ (own | opp)), False)
        # These nodes each stand for a whole small search: look at the clock more often.
        self.nodes += 1
        if (
            not self.nodes & _EXACT_CHECK
            and self.deadline is not None
            and time.perf_counter() > self.deadline
        ):
            raise SearchTimeout
        key = (own, opp)
        table = self.exact_table
        entry = table.get(key)
        hint = -1
        if entry is not None:
            low, high, hint = entry
            if low >= beta:
                return low
            if high <= alpha:
                return high
            if low == high:
                return low
        legal = moves(own, opp)
        if not legal:
            if moves(opp, own):
                return -self._exact(opp, own, -beta, -alpha, empties)
            return own.bit_count() - opp.bit_count()
        alpha0 = alpha
        best, best_sq = -_EXACT_INF, -1
        first = True
        for sq, f in self._children(own, opp, legal, hint, True):
            child_own, child_opp = opp ^ f, own | f | (1 << sq)
            if first:
                value = -self._exact(child_own, child_opp, -beta, -alpha, empties - 1)
                first = False
            else:
                value = -self._exact(child_own, child_opp, -alpha - 1, -alpha, empties - 1)
                if alpha < value < beta:
                    value = -self._exact(child_own, child_opp, -beta, -value, empties - 1)
            if value > best:
                best, best_sq = value, sq
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if len(table) > _TABLE_LIMIT:
            table.clear()
        low, high = (-_EXACT_INF, _EXACT_INF) if entry is None else entry[:2]
        if best <= alpha0:
            high = min(high, best)
        elif best >= beta:
            low = max(low, best)
        else:
            low = high = best
        table[key] = (low, high, best_sq)
        return best

    def root_solve(self, own: int, opp: int, order: list[int]) -> tuple[int, int]:
        """(exact final disc difference, a best square), trying the moves in ``order`` first."""
        empties = 64 - (own | opp).bit_count()
        self.root_best = None
        alpha, best_sq = -_EXACT_INF, order[0]
        for i, sq in enumerate(order):
            f = flips(own, opp, sq)
            child_own, child_opp = opp ^ f, own | f | (1 << sq)
            if i == 0:
                value = -self._exact(child_own, child_opp, -_EXACT_INF, _EXACT_INF, empties - 1)
            else:
                value = -self._exact(child_own, child_opp, -alpha - 1, -alpha, empties - 1)
                if value > alpha:
                    self.root_best = (value, sq)
                    value = -self._exact(child_own, child_opp, -_EXACT_INF, -alpha, empties - 1)
            if i == 0 or value > alpha:
                alpha, best_sq = value, sq
                self.root_best = (value, sq)
        return alpha, best_sq


# The four quadrants, for parity ordering of the last empties.
_QUADRANTS = tuple(
    sum(1 << (x * 8 + y) for x in range(qx, qx + 4) for y in range(qy, qy + 4))
    for qx in (0, 4)
    for qy in (0, 4)
)


def _parity_order(empty: int) -> list[int]:
    """The empty squares, those in quadrants with an odd number of empties first."""
    odd: list[int] = []
    even: list[int] = []
    for quadrant in _QUADRANTS:
        part = empty & quadrant
        if part:
            squares = sorted(iter_squares(part), key=ORDER_RANK.__getitem__)
            (odd if part.bit_count() & 1 else even).extend(squares)
    return odd + even


def _small(own: int, opp: int, alpha: int, beta: int, empties: list[int], passed: bool) -> int:
    """The exact search over a short list of empty squares (fail-soft alpha-beta)."""
    if len(empties) == 1:
        sq = empties[0]
        diff = own.bit_count() - opp.bit_count()
        f = flips(own, opp, sq)
        if f:
            return diff + 2 * f.bit_count() + 1
        f = flips(opp, own, sq)
        if f:
            return diff - 2 * f.bit_count() - 1
        return diff
    best = -_EXACT_INF
    for i, sq in enumerate(empties):
        f = flips(own, opp, sq)
        if f:
            value = -_small(
                opp ^ f, own | f | (1 << sq), -beta, -alpha, empties[:i] + empties[i + 1 :], False
            )
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        return best
    if best == -_EXACT_INF:  # no move
        if passed or not empties:
            return own.bit_count() - opp.bit_count()
        return -_small(opp, own, -beta, -alpha, empties, True)
    return best


def solve(own: int, opp: int) -> int:
    """The final disc difference (own minus opp) that the side to move can force; exact."""
    empties = 64 - (own | opp).bit_count()
    return Searcher()._exact(own, opp, -_EXACT_INF, _EXACT_INF, empties)
