"""A plain Reversi to check the bitboard rules against: a grid, and walks one square at a time.

Written for obviousness, not speed, and on purpose without anything from
``services.reversi.rules``: the cells are ``cells[x][y]`` with (0, 0)
bottom-left, the handout's digit i is the cell (i // 8, i % 8), and every
rule is spelled out the long way.
"""

from __future__ import annotations

EMPTY, WHITE, BLACK = 0, 1, 2
SIZE = 8
DIRECTIONS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]


def other(colour: int) -> int:
    return WHITE if colour == BLACK else BLACK


class Game:
    """A board, whose turn it is, and whether the game has ended."""

    def __init__(self, cells: list[list[int]], to_move: int) -> None:
        self.cells = cells
        self.to_move = to_move

    @classmethod
    def start(cls) -> Game:
        cells = [[EMPTY] * SIZE for _ in range(SIZE)]
        cells[3][3] = WHITE
        cells[4][4] = WHITE
        cells[3][4] = BLACK
        cells[4][3] = BLACK
        return cls(cells, BLACK)

    @classmethod
    def from_digits(cls, digits: str, to_move: int) -> Game:
        cells = [[EMPTY] * SIZE for _ in range(SIZE)]
        for i, digit in enumerate(digits):
            cells[i // SIZE][i % SIZE] = int(digit)
        return cls(cells, to_move)

    def copy(self) -> Game:
        return Game([column[:] for column in self.cells], self.to_move)

    def digits(self) -> str:
        out = ""
        for i in range(SIZE * SIZE):
            out += str(self.cells[i // SIZE][i % SIZE])
        return out

    def flips(self, colour: int, x: int, y: int) -> set[tuple[int, int]]:
        """The discs that ``colour`` would turn over by playing (x, y)."""
        cells = self.cells
        if cells[x][y] != EMPTY:
            return set()
        enemy = other(colour)
        result: set[tuple[int, int]] = set()
        for dx, dy in DIRECTIONS:
            line = []
            cx, cy = x + dx, y + dy
            while 0 <= cx < SIZE and 0 <= cy < SIZE and cells[cx][cy] == enemy:
                line.append((cx, cy))
                cx, cy = cx + dx, cy + dy
            if line and 0 <= cx < SIZE and 0 <= cy < SIZE and cells[cx][cy] == colour:
                result.update(line)
        return result

    def legal_moves(self, colour: int) -> set[tuple[int, int]]:
        found = set()
        for x in range(SIZE):
            for y in range(SIZE):
                if self.cells[x][y] == EMPTY and self.flips(colour, x, y):
                    found.add((x, y))
        return found

    def can_move(self, colour: int) -> bool:
        for x in range(SIZE):
            for y in range(SIZE):
                if self.cells[x][y] == EMPTY and self.flips(colour, x, y):
                    return True
        return False

    def over(self) -> bool:
        return not self.can_move(BLACK) and not self.can_move(WHITE)

    def count(self, colour: int) -> int:
        return sum(column.count(colour) for column in self.cells)

    def winner(self) -> int | None:
        black, white = self.count(BLACK), self.count(WHITE)
        if black > white:
            return BLACK
        if white > black:
            return WHITE
        return None

    def play(self, x: int, y: int) -> None:
        """The mover plays (x, y); then the turn passes, or stays if the opponent cannot move."""
        turned = self.flips(self.to_move, x, y)
        if not turned:
            raise ValueError(f"illegal move {(x, y)}")
        self.cells[x][y] = self.to_move
        for fx, fy in turned:
            self.cells[fx][fy] = self.to_move
        opponent = other(self.to_move)
        if self.can_move(opponent):
            self.to_move = opponent
        elif self.can_move(self.to_move):
            pass  # the opponent has no move and is skipped
        else:
            self.to_move = opponent  # nobody can move: the game is over


def perft(game: Game, depth: int) -> int:
    """Leaves ``depth`` plies ahead; a pass is a ply, a finished game one leaf."""
    if depth == 0:
        return 1
    colour = game.to_move
    legal = game.legal_moves(colour)
    if not legal:
        if not game.can_move(other(colour)):
            return 1
        passed = game.copy()
        passed.to_move = other(colour)
        return perft(passed, depth - 1)
    total = 0
    for x, y in sorted(legal):
        child = game.copy()
        for fx, fy in child.flips(colour, x, y):
            child.cells[fx][fy] = colour
        child.cells[x][y] = colour
        child.to_move = other(colour)
        total += perft(child, depth - 1)
    return total
