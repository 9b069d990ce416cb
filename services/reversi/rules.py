"""Reversi (Othello) as the server referees it: pure state on bitboards, no I/O, no clock.

Squares are numbered as the handout numbers the digits of a board message:
square i is (x, y) = (i // 8, i % 8), (0, 0) bottom-left, x growing to the
right and y upward. Bit i of a 64-bit int is square i, so a board message is
the bitboards read bit by bit, and the wire's ``Mxy`` is ``square(x, y)``.

In this layout neighbouring x differ by 8 and neighbouring y by 1: a shift by
8 never wraps (it falls off the ends of the 64 bits), while any shift that
changes y wraps from y = 7 of one x to y = 0 of the next. Every direction with
a y component therefore only lets discs off the y = 0 and y = 7 edges take
part as the two ends of a line, never in its middle (``_INNER_Y``).

Rules as implemented, including where the handout is silent:

- Black moves first. A move must flip at least one disc; it flips every
  straight line of opponent discs that it closes with one of the mover's.
- A player with no legal move is skipped while the opponent has one; the
  game is over when neither has one, whether or not the board is full.
- The winner has more discs; equal counts are a draw. Empty squares are not
  given to anyone.
- ``perft`` counts a forced pass as a ply, and a finished game reached before
  the full depth as one leaf, as the usual published Othello perft figures do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

EMPTY, WHITE, BLACK = 0, 1, 2
FULL = (1 << 64) - 1

_SIZE = 8
_Y0 = 0x0101010101010101  # every square with y = 0
_Y7 = _Y0 << 7  # every square with y = 7
# Squares that may sit inside a line in a direction that changes y: a shift
# by 1, 7 or 9 carries y = 7 of one x onto y = 0 of the next, so a disc on
# either edge must stop a line there instead of continuing it.
_INNER_Y = FULL ^ (_Y0 | _Y7)

# Board digits to the bits of one colour, and to nothing (what remains is not a digit).
_BLACK_BITS = str.maketrans("012", "001")
_WHITE_BITS = str.maketrans("012", "010")
_NOT_A_DIGIT = str.maketrans("", "", "012")


class IllegalMove(ValueError):
    """A move that the player to move may not make (occupied, off the board, or flips nothing)."""


def square(x: int, y: int) -> int:
    """The square at (x, y); a coordinate outside 0..7 is a ValueError, not a wrapped square."""
    if not (0 <= x < _SIZE and 0 <= y < _SIZE):
        raise ValueError(f"no square at ({x}, {y}): coordinates are 0..7")
    return x * _SIZE + y


def coordinates(sq: int) -> tuple[int, int]:
    """The (x, y) of square ``sq``, as the handout reads the i-th digit."""
    if not 0 <= sq < _SIZE * _SIZE:
        raise ValueError(f"no square {sq}: squares are 0..63")
    return divmod(sq, _SIZE)


def opponent(colour: int) -> int:
    """The other player; EMPTY has no opponent, so anything else is a ValueError."""
    if colour == BLACK:
        return WHITE
    if colour == WHITE:
        return BLACK
    raise ValueError(f"not a player colour: {colour!r}")


def iter_squares(mask: int) -> Iterator[int]:
    """The squares set in ``mask``, ascending (the order of the board digits)."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def moves(own: int, opp: int) -> int:
    """All legal moves of the side with discs ``own`` against ``opp``, as a bitmask.

    Each direction grows, from the mover's discs, the runs of opponent discs
    next to them, then keeps the empty squares just past a run. Runs are at
    most 6 long; after two single steps, two steps of two (through pairs of
    adjacent opponent discs) reach all 6, which is fewer operations than six
    single steps. Left shifts may carry bits past bit 63; the masks drop them.
    """
    empty = FULL ^ (own | opp)

    # x + 1 and x - 1 (shift 8): nothing wraps, so every opponent disc counts.
    pair = opp & (opp << 8)
    t = opp & (own << 8)
    t |= opp & (t << 8)
    t |= pair & (t << 16)
    t |= pair & (t << 16)
    found = t << 8
    pair >>= 8
    t = opp & (own >> 8)
    t |= opp & (t >> 8)
    t |= pair & (t >> 16)
    t |= pair & (t >> 16)
    found |= t >> 8

    m = opp & _INNER_Y
    # y + 1 (shift 1): along y the squares of a line are consecutive bits, so
    # adding a bit just past each of the mover's discs carries through the run
    # of opponent discs above it and lands on the square after the run. The
    # xor drops the added bits where no run took them in.
    start = own << 1
    found |= (start + m) ^ start
    # y - 1: carries only run upwards, so this one steps.
    pair = m & (m >> 1)
    t = m & (own >> 1)
    t |= m & (t >> 1)
    t |= pair & (t >> 2)
    t |= pair & (t >> 2)
    found |= t >> 1

    # (x + 1, y + 1) and (x - 1, y - 1) (shift 9).
    pair = m & (m << 9)
    t = m & (own << 9)
    t |= m & (t << 9)
    t |= pair & (t << 18)
    t |= pair & (t << 18)
    found |= t << 9
    pair >>= 9
    t = m & (own >> 9)
    t |= m & (t >> 9)
    t |= pair & (t >> 18)
    t |= pair & (t >> 18)
    found |= t >> 9

    # (x + 1, y - 1) and (x - 1, y + 1) (shift 7).
    pair = m & (m << 7)
    t = m & (own << 7)
    t |= m & (t << 7)
    t |= pair & (t << 14)
    t |= pair & (t << 14)
    found |= t << 7
    pair >>= 7
    t = m & (own >> 7)
    t |= m & (t >> 7)
    t |= pair & (t >> 14)
    t |= pair & (t >> 14)
    found |= t >> 7

    return found & empty


# Per square, its lines as (nearest square, all squares) bitmasks.
_Lines = tuple[tuple[tuple[int, int], ...], ...]


def _rays() -> tuple[_Lines, _Lines]:
    """For each square, the lines leaving it that could hold a flip, split by index order.

    A line needs at least two squares (an opponent disc and the closing disc).
    Along an "up" line square indices grow, so the nearest square of a set on
    it is its lowest bit; along a "down" line it is the highest. Each line
    comes with its nearest square: most lines do not start with an opponent
    disc, and that one test is enough to pass them by.
    """
    up: list[tuple[tuple[int, int], ...]] = []
    down: list[tuple[tuple[int, int], ...]] = []
    for sq in range(_SIZE * _SIZE):
        x0, y0 = divmod(sq, _SIZE)
        sq_up: list[tuple[int, int]] = []
        sq_down: list[tuple[int, int]] = []
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if dx == dy == 0:
                    continue
                line = []
                x, y = x0 + dx, y0 + dy
                while 0 <= x < _SIZE and 0 <= y < _SIZE:
                    line.append(1 << (x * _SIZE + y))
                    x, y = x + dx, y + dy
                if len(line) >= 2:
                    (sq_up if dx * _SIZE + dy > 0 else sq_down).append((line[0], sum(line)))
        up.append(tuple(sq_up))
        down.append(tuple(sq_down))
    return tuple(up), tuple(down)


_RAYS_UP, _RAYS_DOWN = _rays()


def flips(own: int, opp: int, sq: int) -> int:
    """The discs that ``own`` playing ``sq`` turns over; 0 exactly when the move is not legal.

    On each line from ``sq`` the first square that is not an opponent disc
    decides: if it is the mover's, everything before it on the line flips.
    Finding it is one bit trick per line instead of a walk.
    """
    if not 0 <= sq < _SIZE * _SIZE:
        raise ValueError(f"no square {sq}: squares are 0..63")
    if ((own | opp) >> sq) & 1:
        return 0
    flipped = 0
    free = ~opp
    for near, ray in _RAYS_UP[sq]:
        if near & opp:
            stop = ray & free
            first = stop & -stop
            if first & own:
                flipped |= ray & (first - 1)
    for near, ray in _RAYS_DOWN[sq]:
        if near & opp:
            stop = ray & free
            if stop:
                first = 1 << (stop.bit_length() - 1)
                if first & own:
                    flipped |= ray & -(first << 1)
    return flipped


@dataclass(frozen=True, slots=True)
class Position:
    """A board and the player to move, who always has a legal move unless the game is over.

    ``play`` keeps that promise by skipping a player without moves, so the
    server never has to send a board to a player who cannot answer it. A
    position from ``from_digits`` or the constructor need not keep it.
    """

    black: int
    white: int
    to_move: int

    def __post_init__(self) -> None:
        if self.to_move not in (BLACK, WHITE):
            raise ValueError(f"to_move must be BLACK or WHITE, not {self.to_move!r}")
        for disc in (self.black, self.white):
            if not isinstance(disc, int) or disc & ~FULL:
                raise ValueError("a bitboard is an int of 64 bits")
        if self.black & self.white:
            raise ValueError("a square holds one disc at most")

    @classmethod
    def start(cls) -> Position:
        return cls(
            black=(1 << square(3, 4)) | (1 << square(4, 3)),
            white=(1 << square(3, 3)) | (1 << square(4, 4)),
            to_move=BLACK,
        )

    def own(self) -> int:
        return self.black if self.to_move == BLACK else self.white

    def opp(self) -> int:
        return self.white if self.to_move == BLACK else self.black

    def legal_moves(self) -> int:
        return moves(self.own(), self.opp())

    def is_legal(self, sq: int) -> bool:
        """Whether ``to_move`` may play ``sq``; a number off the board is just not legal."""
        return 0 <= sq < _SIZE * _SIZE and bool((self.legal_moves() >> sq) & 1)

    def play(self, sq: int) -> Position:
        """The position after ``to_move`` plays ``sq``, with any pass that follows already made.

        The next player is the opponent if it can move, else the mover again
        (a pass), else nobody: the game is over and ``to_move`` is the
        opponent, so that a finished game still alternates.
        """
        if not 0 <= sq < _SIZE * _SIZE:
            raise IllegalMove(f"no square {sq}: squares are 0..63")
        own, opp = self.own(), self.opp()
        flipped = flips(own, opp, sq)
        if not flipped:
            raise IllegalMove(f"{coordinates(sq)} is not a legal move")
        own |= flipped | (1 << sq)
        opp ^= flipped
        passes = not moves(opp, own) and moves(own, opp) != 0
        nxt = self.to_move if passes else opponent(self.to_move)
        if self.to_move == BLACK:
            return Position(black=own, white=opp, to_move=nxt)
        return Position(black=opp, white=own, to_move=nxt)

    @property
    def over(self) -> bool:
        return not moves(self.black, self.white) and not moves(self.white, self.black)

    def count(self, colour: int) -> int:
        if colour == BLACK:
            return self.black.bit_count()
        if colour == WHITE:
            return self.white.bit_count()
        if colour == EMPTY:
            return 64 - (self.black | self.white).bit_count()
        raise ValueError(f"not a colour: {colour!r}")

    def winner(self) -> int | None:
        """The player with more discs, None for equal counts; asking before the end is a bug."""
        if not self.over:
            raise ValueError("the game is not over")
        black, white = self.black.bit_count(), self.white.bit_count()
        if black == white:
            return None
        return BLACK if black > white else WHITE

    def square_colour(self, sq: int) -> int:
        if not 0 <= sq < _SIZE * _SIZE:
            raise ValueError(f"no square {sq}: squares are 0..63")
        if (self.black >> sq) & 1:
            return BLACK
        if (self.white >> sq) & 1:
            return WHITE
        return EMPTY

    def digits(self) -> str:
        """The 64 digits of the handout's board message, which is ``"B" + digits()``."""
        # Each bitboard in binary, square 0 first, read as a decimal number:
        # black * 2 + white then has the digit 2, 1 or 0 at each square, with no
        # carries because no square holds two discs.
        black = int(f"{self.black:064b}"[::-1])
        white = int(f"{self.white:064b}"[::-1])
        return f"{black * 2 + white:064d}"

    @classmethod
    def from_digits(cls, digits: str, to_move: int) -> Position:
        """The position a board message shows; the message does not say who is to move."""
        if not isinstance(digits, str) or len(digits) != 64:
            raise ValueError("a board is 64 digits")
        stray = digits.translate(_NOT_A_DIGIT)
        if stray:
            raise ValueError(f"board digits are 0, 1 and 2, not {stray[0]!r}")
        # Square 0 is the first digit but the lowest bit, hence the reversal.
        black = int(digits.translate(_BLACK_BITS)[::-1], 2)
        white = int(digits.translate(_WHITE_BITS)[::-1], 2)
        return cls(black=black, white=white, to_move=to_move)

    def __str__(self) -> str:
        """The board as a person reads it: y = 7 on top, x left to right, B/W/.."""
        glyph = {EMPTY: ".", WHITE: "W", BLACK: "B"}
        rows = [
            "".join(glyph[self.square_colour(square(x, y))] for x in range(_SIZE))
            for y in reversed(range(_SIZE))
        ]
        return "\n".join(rows)


def perft(position: Position, depth: int) -> int:
    """Leaf positions ``depth`` plies ahead; the standard check that move generation is right."""
    if depth < 0:
        raise ValueError("depth must be 0 or more")
    if depth == 0:
        return 1
    return _perft(position.own(), position.opp(), depth)


def _perft(own: int, opp: int, depth: int) -> int:
    legal = moves(own, opp)
    if depth == 1:
        # A pass is a ply too, and a finished game is a leaf: either way, one.
        return legal.bit_count() or 1
    if not legal:
        if moves(opp, own):
            return _perft(opp, own, depth - 1)
        return 1
    total = 0
    while legal:
        bit = legal & -legal
        legal ^= bit
        flipped = flips(own, opp, bit.bit_length() - 1)
        total += _perft(opp ^ flipped, own | flipped | bit, depth - 1)
    return total
