"""What the ``deep`` Reversi player knows of a position without looking ahead.

Two things the search (``search``) asks of a position that need no search:
the order in which to try squares when nothing better is known
(``static_order``, ``ORDER_RANK``: corners first, the squares that hand the
opponent a corner last), and how good a mid-game position is for the side
to move (``evaluate``: mobility, potential mobility, the edges by table,
X-squares, parity). A finished game scores ``final_score``: ``WIN`` plus a
hundred per disc of difference, above any evaluation.

Everything works on the two bitboards of ``rules`` seen from the side to
move, ``(own, opp)``.
"""

from __future__ import annotations

from services.reversi.rules import FULL, iter_squares, moves

__all__ = [
    "CORNERS",
    "ORDER_GROUPS",
    "ORDER_RANK",
    "WIN",
    "evaluate",
    "final_score",
    "neighbours",
    "static_order",
]

# -- board geometry -----------------------------------------------------------------------

_Y0 = 0x0101010101010101  # squares with y = 0 (bit 8x)
_Y7 = _Y0 << 7
_NOT_Y0 = FULL ^ _Y0
_NOT_Y7 = FULL ^ _Y7
CORNERS = (1 << 0) | (1 << 7) | (1 << 56) | (1 << 63)
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
ORDER_GROUPS = tuple(
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
    next(rank for rank, group in enumerate(ORDER_GROUPS) if (group >> sq) & 1) for sq in range(64)
)

# Each X-square (diagonal neighbour of a corner) with its corner.
_X_SQUARES = ((1 << 0, 1 << 9), (1 << 7, 1 << 14), (1 << 56, 1 << 49), (1 << 63, 1 << 54))


def static_order(legal: int) -> list[int]:
    """The squares of ``legal`` in the static order: corners first, X-squares last."""
    order: list[int] = []
    for group in ORDER_GROUPS:
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
