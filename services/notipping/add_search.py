"""The No Tipping ADD phase, searched: negamax with alpha-beta and a transposition table.

``AddSearch`` is deepened one ply at a time until a deadline (by
``services.notipping.solver.decide``). A move that ends the ADD phase is
scored exactly by the REMOVE solver, so once the depth reaches the last
placement the search is exact; before that, leaves are scored by
``AddSearch.evaluate``: mainly whether the mover would win a REMOVE phase
beginning on the board as it is, then safe placements and where the centre
of mass is. Scores are from the point of view of the player to move;
``WIN`` is a proven win, far above any evaluation.
"""

from __future__ import annotations

import time

from services.notipping.remove_solver import RemoveSolver, SearchTimeout
from services.notipping.rules import POSITIONS, Game, left_torque, right_torque
from services.notipping.safety import (
    _BITS,
    _free_mask,
    _hand_mask,
    _mobility,
    _weights_of,
    board_code,
    safe_positions,
)

WIN = 1_000_000
# The ADD search looks at the clock when the node count has these low bits clear: more
# often than the REMOVE search (remove_solver._CHECK), as its nodes cost far more.
_ADD_CHECK = 31
# ``AddSearch.evaluate`` solves the REMOVE phase of boards with at most this many blocks: beyond,
# the solve costs more than the deeper search it displaces is worth (measured at max weight 10).
_PARTIAL_BLOCKS = 12
_SIZE = len(POSITIONS)
_EXACT, _LOWER, _UPPER = 0, 1, 2


class AddSearch:
    """Negamax with alpha-beta and a transposition table over the ADD phase.

    The position searched is kept here and changed by ``place`` and
    ``unplace``: the board (and its ``code``), the ``free`` positions as a
    mask of indices, both torques, and the hands as masks of weights, the
    mover's (``mine``) and the opponent's (``theirs``). A move is
    ``(weight, index)``.
    """

    def __init__(self, remover: RemoveSolver, game: Game, deadline: float | None = None) -> None:
        self.remover = remover
        self.deadline = deadline
        self.table: dict[tuple[int, int, int], tuple[int, int, int, tuple[int, int] | None]] = {}
        self.nodes = 0
        self.board = list(game.weights)
        self.code = board_code(self.board)
        self.free = _free_mask(game)
        self.left, self.right = game.left, game.right
        self.mine = _hand_mask(game.hands[game.to_move])
        self.theirs = _hand_mask(game.hands[1 - game.to_move])
        self.root_best: tuple[int, tuple[int, int]] | None = None
        self.root_searched = 0

    def place(self, move: tuple[int, int]) -> None:
        weight, i = move
        self.board[i] = weight
        self.code += weight << (_BITS * i)
        self.free ^= 1 << i
        self.left += left_torque(weight, POSITIONS[i])
        self.right += right_torque(weight, POSITIONS[i])
        self.mine, self.theirs = self.theirs, self.mine ^ (1 << weight)

    def unplace(self, move: tuple[int, int]) -> None:
        weight, i = move
        self.board[i] = 0
        self.code -= weight << (_BITS * i)
        self.free ^= 1 << i
        self.left -= left_torque(weight, POSITIONS[i])
        self.right -= right_torque(weight, POSITIONS[i])
        self.mine, self.theirs = self.theirs ^ (1 << weight), self.mine

    def moves(self) -> list[tuple[int, int]]:
        """The mover's safe placements."""
        found = []
        for weight in _weights_of(self.mine):
            spots = safe_positions(weight, self.left, self.right, self.free)
            while spots:
                bit = spots & -spots
                spots ^= bit
                found.append((weight, bit.bit_length() - 1))
        return found

    def order(self, moves: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Moves that leave the opponent the fewest safe placements first (a stable sort)."""

        def replies(move: tuple[int, int]) -> int:
            weight, i = move
            return _mobility(
                self.theirs,
                self.left + left_torque(weight, POSITIONS[i]),
                self.right + right_torque(weight, POSITIONS[i]),
                self.free ^ (1 << i),
            )

        return sorted(moves, key=replies)

    def evaluate(self) -> int:
        """A guess at how good the position is for the mover, far below ``WIN``.

        Three signs, weighed by how well they agreed with exact results of
        positions four to six placements from the end (random and greedy play
        at max weight 7):

        - whether the mover would win a REMOVE phase beginning on this board
          now (the REMOVE solver's verdict; only for boards of at most
          ``_PARTIAL_BLOCKS`` blocks): the strongest sign;
        - the mover's safe placements against the opponent's on this board;
        - the centre of mass near the left support (small ``left``) favours
          the mover.
        """
        left, right, free = self.left, self.right, self.free
        own = _mobility(self.mine, left, right, free)
        if not own:
            return -WIN
        score = 10 * (own - _mobility(self.theirs, left, right, free))
        if _SIZE - free.bit_count() <= _PARTIAL_BLOCKS and self.remover.wins(
            self.board, left, right
        ):
            score += 200
        # left / mass, the centre of mass's distance from the left support: 0..2.
        return score - 200 * left // (left - right)

    def score(self, move: tuple[int, int], depth: int, alpha: int, beta: int) -> int:
        """The mover's score for ``move``, searched ``depth - 1`` plies after it."""
        self.place(move)
        try:
            if not self.mine and not self.theirs:  # the last placement: exact
                return -WIN if self.remover.wins(self.board, self.left, self.right) else WIN
            return -self.negamax(depth - 1, -beta, -alpha)
        finally:
            self.unplace(move)

    def negamax(self, depth: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if (
            self.deadline is not None
            and not self.nodes & _ADD_CHECK
            and time.perf_counter() > self.deadline
        ):
            raise SearchTimeout
        key = (self.code, self.mine, self.theirs)
        entry = self.table.get(key)
        hint = None
        if entry is not None:
            stored_depth, stored, flag, hint = entry
            if stored_depth >= depth and (
                flag == _EXACT
                or (flag == _LOWER and stored >= beta)
                or (flag == _UPPER and stored <= alpha)
            ):
                return stored
        if depth <= 0:
            return self.evaluate()
        moves = self.moves()
        if not moves:
            return -WIN
        if depth > 1:
            moves = self.order(moves)
        if hint in moves:
            moves.remove(hint)
            moves.insert(0, hint)
        start_alpha, best, best_move = alpha, -WIN - 1, moves[0]
        for move in moves:
            value = self.score(move, depth, alpha, beta)
            if value > best:
                best, best_move = value, move
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        flag = _UPPER if best <= start_alpha else _LOWER if best >= beta else _EXACT
        # A proven result holds at any depth.
        stored_depth = 99 if abs(best) == WIN else depth
        self.table[key] = (stored_depth, best, flag, best_move)
        return best

    def root(self, moves: list[tuple[int, int]], depth: int) -> tuple[int, tuple[int, int]]:
        """The best of ``moves`` (in the order given) searched ``depth`` plies, and its score.

        ``root_best`` holds the best move fully searched so far and
        ``root_searched`` how many moves were, for a caller whose deadline
        passes mid-way.
        """
        self.root_best = None
        self.root_searched = 0
        alpha = -WIN - 1
        for move in moves:
            value = self.score(move, depth, alpha, WIN + 1)
            self.root_searched += 1
            if value > alpha:
                alpha = value
                self.root_best = (value, move)
                if value == WIN:
                    break
        assert self.root_best is not None
        return self.root_best
