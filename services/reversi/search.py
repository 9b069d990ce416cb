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
otherwise a static square order. Leaves use ``evaluate``. A finished game
scores ``WIN`` plus a hundred per disc of difference, above any evaluation.

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

from services.reversi.rules import FULL, flips, iter_squares, moves

__all__ = [
    "ORDER_RANK",
    "WIN",
    "SearchTimeout",
    "Searcher",
    "evaluate",
    "final_score",
    "solve",
    "static_order",
]

# -- board geometry -----------------------------------------------------------------------

_Y0 = 0x0101010101010101  # squares with y = 0 (bit 8x)
_Y7 = _Y0 << 7
_NOT_Y0 = FULL ^ _Y0
_NOT_Y7 = FULL ^ _Y7
_CORNERS = (1 << 0) | (1 << 7) | (1 << 56) | (1 << 63)
# Gathers bits 0, 8, ..., 56 (after masking with _Y0) into bits 56..63, x in order.
_GATHER = sum(1 << (56 - 7 * x) for x in range(8))


def _class_of(sq: int) -> tuple[int, int]:
    """A square's distances to the nearest edges, smaller first: (0, 0) is a corner."""
    x, y = divmod(sq, 8)
    a, b = min(x, 7 - x), min(y, 7 - y)
    return (a, b) if a <= b else (b, a)


def _mask(classes: tuple[tuple[int, int], ...]) -> int:
    return sum(1 << sq for sq in range(64) if _class_of(sq) in classes)


# Squares from best to worst to try first when nothing better is known: corners,
# the edge squares two and three from a corner, the centre, the inner ring's
# squares, then the squares touching a corner (C on the edge, X on the diagonal).
_ORDER_GROUPS = tuple(
    _mask(group)
    for group in (
        ((0, 0),),
        ((0, 2),),
        ((0, 3),),
        ((2, 2),),
        ((2, 3), (3, 3)),
        ((1, 2), (1, 3)),
        ((0, 1),),
        ((1, 1),),
    )
)
# Each square's place in that order (the index of its group).
ORDER_RANK = tuple(
    next(rank for rank, group in enumerate(_ORDER_GROUPS) if (group >> sq) & 1) for sq in range(64)
)

# Each X-square (diagonal neighbour of a corner) with its corner.
_X_SQUARES = ((1 << 0, 1 << 9), (1 << 7, 1 << 14), (1 << 56, 1 << 49), (1 << 63, 1 << 54))

# The four quadrants, for parity ordering of the last empties.
_QUADRANTS = tuple(
    sum(1 << (x * 8 + y) for x in range(qx, qx + 4) for y in range(qy, qy + 4))
    for qx in (0, 4)
    for qy in (0, 4)
)


def static_order(legal: int) -> list[int]:
    """The squares of ``legal`` in the static order: corners first, X-squares last."""
    order: list[int] = []
    for group in _ORDER_GROUPS:
        order.extend(iter_squares(legal & group))
    return order


def neighbours(discs: int) -> int:
    """Every square next to (in any of the eight directions) a square of ``discs``."""
    up = discs & _NOT_Y7  # may step to y + 1
    down = discs & _NOT_Y0  # may step to y - 1
    return (
        (discs << 8)
        | (discs >> 8)
        | (up << 1)
        | (down >> 1)
        | (up << 9)
        | (down >> 9)
        | (down << 7)
        | (up >> 7)
    ) & FULL


# -- evaluation ---------------------------------------------------------------------------

WIN = 20000  # a won game scores WIN + 100 per disc of difference; no evaluation comes close

_MOBILITY = 9  # per legal move more than the opponent
_POTENTIAL = 4  # per empty square next to an opponent disc more than next to one of ours
_X_SQUARE = 30  # a disc on an X-square whose corner is empty
_PARITY = 6  # the side to move plays the last move (odd number of empties)

# Edge terms, each edge scored alone from its 8 squares (a corner is on two edges).
_E_CORNER = 35
_E_STABLE = 9  # a disc in a run of one colour from a corner, or on a full edge
_E_C_SQUARE = 14  # a disc on a C-square whose corner is empty
_E_DISC = 2  # any other disc on the edge


def _edge_value(own: int, opp: int) -> int:
    """One edge (8 bits, corners at bits 0 and 7) from the side of ``own``."""
    value = 0
    stable = [0] * 8
    full = (own | opp) == 0xFF
    for corner, step in ((0, 1), (7, -1)):
        colour = own if (own >> corner) & 1 else opp if (opp >> corner) & 1 else 0
        if colour:
            i = corner
            while 0 <= i < 8 and (colour >> i) & 1:
                stable[i] = 1
                i += step
    for i in range(8):
        mine, theirs = (own >> i) & 1, (opp >> i) & 1
        if not (mine or theirs):
            continue
        sign = 1 if mine else -1
        if i in (0, 7):
            value += sign * (_E_CORNER + _E_STABLE)
        elif stable[i] or full:
            value += sign * _E_STABLE
        elif i in (1, 6) and not ((own | opp) >> (0 if i == 1 else 7)) & 1:
            value -= sign * _E_C_SQUARE
        else:
            value += sign * _E_DISC
    return value


def _edge_table() -> list[int]:
    table = [0] * (1 << 16)
    for own in range(256):
        rest = 0xFF ^ own
        opp = rest
        while True:  # every subset of the squares ``own`` leaves
            table[own << 8 | opp] = _edge_value(own, opp)
            if not opp:
                break
            opp = (opp - 1) & rest
    return table


_EDGES = _edge_table()


def _edge_index(own: int, opp: int) -> tuple[int, int, int, int]:
    """The four edges' table indices: x = 0, x = 7, y = 0, y = 7."""
    return (
        (own & 0xFF) << 8 | (opp & 0xFF),
        (own >> 56) << 8 | (opp >> 56),
        (((own & _Y0) * _GATHER) >> 56 & 0xFF) << 8 | (((opp & _Y0) * _GATHER) >> 56 & 0xFF),
        ((((own >> 7) & _Y0) * _GATHER) >> 56 & 0xFF) << 8
        | ((((opp >> 7) & _Y0) * _GATHER) >> 56 & 0xFF),
    )


def evaluate(own: int, opp: int) -> int:
    """A mid-game estimate for the side to move (one legal move more is worth ``_MOBILITY``).

    Mobility (legal moves, ours minus the opponent's), potential mobility
    (empty squares next to the other side's discs: where moves will come
    from), the four edges by table (corners, discs stable along an edge from a
    corner, C-squares next to an empty corner, other edge discs), X-squares
    next to an empty corner, and parity.
    """
    empty = FULL ^ (own | opp)
    score = _MOBILITY * (moves(own, opp).bit_count() - moves(opp, own).bit_count())
    score += _POTENTIAL * (
        (neighbours(opp) & empty).bit_count() - (neighbours(own) & empty).bit_count()
    )
    edges = _EDGES
    a, b, c, d = _edge_index(own, opp)
    score += edges[a] + edges[b] + edges[c] + edges[d]
    for corner, x_square in _X_SQUARES:
        if corner & empty:
            if x_square & own:
                score -= _X_SQUARE
            elif x_square & opp:
                score += _X_SQUARE
    if empty.bit_count() & 1:
        score += _PARITY
    return score


def final_score(own: int, opp: int) -> int:
    """A finished game in the mid-game search's scale."""
    diff = own.bit_count() - opp.bit_count()
    if diff > 0:
        return WIN + 100 * diff
    if diff < 0:
        return -WIN + 100 * diff
    return 0


# -- search -------------------------------------------------------------------------------

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
                key = replies.bit_count() + 2 * (replies & _CORNERS).bit_count()
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
        for group in _ORDER_GROUPS:
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
