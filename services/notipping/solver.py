"""Game-tree search for No Tipping: the REMOVE phase solved exactly, the ADD phase searched.

Only the board matters once every weight is placed: anyone may remove any
block, and who is to move follows from how many blocks are left. So the
REMOVE phase is solved by a win/lose search (``RemoveSolver``) over which of
the blocks on the board at its start are still there, a bitmask, with both
support torques updated by each block's precomputed part. Results are
remembered by the board itself (``board_code``: four bits a position), which
is the same state whatever game or search reached it, so one cache serves
every solve of a game and every leaf of the ADD search.

The ADD phase (``AddSearch``) is negamax with alpha-beta and a transposition
table, deepened one ply at a time until a deadline. A move that ends the ADD
phase is scored exactly by the REMOVE solver, so once the depth reaches the
last placement the search is exact; before that, leaves are scored by
``AddSearch.evaluate``: mainly whether the mover would win a REMOVE phase beginning on
the board as it is, then safe placements and where the centre of mass is.

Both searches only ever try safe moves: a move that tips loses at once, so a
player with no safe move has lost (unless every move tips, which is the same).
Scores are from the point of view of the player to move; ``WIN`` is a proven
win, far above any evaluation. A deadline is ``time.perf_counter()`` seconds:
the searches look at the clock every few milliseconds and raise
``SearchTimeout`` once it has passed; whatever they had proven stays cached.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from services.notipping.rules import (
    ADD,
    LOW,
    POSITIONS,
    Add,
    Game,
    Move,
    Remove,
    left_torque,
    right_torque,
)

__all__ = [
    "WIN",
    "AddSearch",
    "Decision",
    "RemoveSolver",
    "SearchTimeout",
    "best_move",
    "board_code",
    "count_safe",
    "decide",
    "safe_moves",
    "safe_positions",
    "solve_remove",
]

WIN = 1_000_000
_BITS = 4  # bits of a position in a board code: weights are at most 10
_CHECK = 2047  # the REMOVE search looks at the clock when the node count has these low bits clear
_ADD_CHECK = 31  # the same for the ADD search, whose nodes cost far more
# ``AddSearch.evaluate`` solves the REMOVE phase of boards with at most this many blocks: beyond,
# the solve costs more than the deeper search it displaces is worth (measured at max weight 10).
_PARTIAL_BLOCKS = 12
_SIZE = len(POSITIONS)


class SearchTimeout(Exception):
    """The deadline passed during a search."""


def board_code(weights: tuple[int, ...] | list[int]) -> int:
    """The board as one integer, four bits a position: what the REMOVE cache is keyed by."""
    code = 0
    for i, weight in enumerate(weights):
        code |= weight << (_BITS * i)
    return code


def _span(low: int, high: int) -> int:
    """The positions low..high (clipped to the board) as a mask of indices."""
    low, high = max(low, LOW), min(high, -LOW)
    if low > high:
        return 0
    return ((1 << (high - LOW + 1)) - 1) ^ ((1 << (low - LOW)) - 1)


def safe_positions(weight: int, left: int, right: int, free: int) -> int:
    """The free positions (mask of indices) where ``weight`` can be added without tipping.

    The centre of mass has to stay between the supports, so for one weight the
    safe positions are an interval: ``left + w (x + 3) >= 0`` and
    ``right + w (x + 1) <= 0``.
    """
    return free & _span(-3 - left // weight, -1 + (-right) // weight)


def _removable(weight: int, position: int, left: int, right: int) -> bool:
    return left - left_torque(weight, position) >= 0 and right - right_torque(weight, position) <= 0


def _free_mask(game: Game) -> int:
    return sum(1 << i for i, weight in enumerate(game.weights) if not weight)


def _hand_mask(hand: frozenset[int]) -> int:
    return sum(1 << weight for weight in hand)


def _weights_of(hand: int) -> list[int]:
    return [w for w in range(hand.bit_length()) if hand >> w & 1]


def _mobility(hand: int, left: int, right: int, free: int) -> int:
    """How many safe placements a player holding ``hand`` (a mask of weights) has."""
    return sum(safe_positions(w, left, right, free).bit_count() for w in _weights_of(hand))


def safe_moves(game: Game) -> list[Move]:
    """The allowed moves of the player to move that do not tip the board."""
    return [move for move in game.legal_moves() if not game.tips_after(move)]


def count_safe(game: Game) -> int:
    """``len(safe_moves(game))``, counted without making the moves."""
    if game.over:
        return 0
    if game.phase == ADD:
        hand = _hand_mask(game.hands[game.to_move])
        return _mobility(hand, game.left, game.right, _free_mask(game))
    return sum(
        _removable(game.weight_at(position), position, game.left, game.right)
        for position in game.occupied()
    )


# -- the REMOVE phase ---------------------------------------------------------------------


class RemoveSolver:
    """Exact win/lose search of the REMOVE phase, remembering every board it has solved.

    ``cache`` maps a ``board_code`` to whether the player to move there wins;
    it is emptied before a solve once it holds more than ``max_entries``.
    ``deadline`` (None: none) applies to every solve until changed.
    """

    def __init__(self, max_entries: int = 1_000_000) -> None:
        self.cache: dict[int, bool] = {}
        self.max_entries = max_entries
        self.deadline: float | None = None
        self.nodes = 0

    def wins(self, weights: tuple[int, ...] | list[int], left: int, right: int) -> bool:
        """Whether the player to move wins the REMOVE phase from this standing board."""
        cache = self.cache
        code = board_code(weights)
        known = cache.get(code)
        if known is not None:
            return known
        if len(cache) > self.max_entries:
            cache.clear()
        # Per block: its bit in the mask, what removing it takes off both torques and
        # off the board code. Removal is safe while left >= its part and right <= its part.
        blocks = [
            (
                1 << k,
                left_torque(weights[i], POSITIONS[i]),
                right_torque(weights[i], POSITIONS[i]),
                weights[i] << (_BITS * i),
            )
            for k, i in enumerate(i for i, weight in enumerate(weights) if weight)
        ]
        deadline = self.deadline
        nodes = self.nodes

        def search(mask: int, code: int, left: int, right: int) -> bool:
            nonlocal nodes
            nodes += 1
            if deadline is not None and not nodes & _CHECK and time.perf_counter() > deadline:
                raise SearchTimeout
            for bit, block_left, block_right, block_code in blocks:
                if mask & bit and left >= block_left and right <= block_right:
                    after = code - block_code
                    known = cache.get(after)
                    if known is None:
                        known = search(mask ^ bit, after, left - block_left, right - block_right)
                    if not known:
                        cache[code] = True
                        return True
            cache[code] = False
            return False

        try:
            return search((1 << len(blocks)) - 1, code, left, right)
        finally:
            self.nodes = nodes

    def solve(self, game: Game) -> bool:
        """Whether ``game.to_move`` wins ``game`` (in its REMOVE phase) with perfect play."""
        if game.phase == ADD or game.over:
            raise ValueError("solve takes a REMOVE-phase game that is not over")
        return self.wins(game.weights, game.left, game.right)

    def outcomes(self, game: Game) -> dict[Remove, bool]:
        """Every safe removal, and whether the player making it then wins."""
        found = {}
        weights = list(game.weights)
        for position in game.occupied():
            weight = game.weight_at(position)
            if not _removable(weight, position, game.left, game.right):
                continue
            i = position - LOW
            weights[i] = 0
            after_left = game.left - left_torque(weight, position)
            after_right = game.right - right_torque(weight, position)
            found[Remove(position)] = not self.wins(weights, after_left, after_right)
            weights[i] = weight
        return found


def solve_remove(game: Game, solver: RemoveSolver | None = None) -> bool:
    """Whether the player to move wins this REMOVE-phase game with perfect play."""
    return (solver or RemoveSolver()).solve(game)


# -- the ADD phase ------------------------------------------------------------------------


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


@dataclass
class Decision:
    """What ``decide`` chose and how.

    ``score`` is for the player to move (``WIN``: proven won, ``-WIN``: proven
    lost, None: not searched), ``depth`` the deepest ADD search finished in
    plies, ``exact`` whether the score is proven.
    """

    move: Move
    score: int | None = None
    depth: int = 0
    exact: bool = False
    nodes: int = 0


def _fewest_replies(game: Game, moves: list[Move]) -> list[Move]:
    """The moves after which the opponent has the fewest safe replies."""
    counted = [(count_safe(game.play(move)), move) for move in moves]
    fewest = min(count for count, _ in counted)
    return [move for count, move in counted if count == fewest]


def _decide_remove(game: Game, remover: RemoveSolver, rng: random.Random) -> Decision:
    safe = safe_moves(game)
    if not safe:
        return Decision(rng.choice(game.legal_moves()), -WIN, exact=True)
    try:
        outcomes = remover.outcomes(game)
        winning = [move for move, won in outcomes.items() if won]
        if winning:
            return Decision(rng.choice(winning), WIN, exact=True)
        # Lost against perfect play: leave the opponent the largest share of replies
        # that lose, so that any slip is likely to be one.
        shares = {}
        for move in safe:
            after = game.play(move)
            replies = remover.outcomes(after)
            shares[move] = sum(not won for won in replies.values()) / max(len(replies), 1)
        most = max(shares.values())
        chosen = rng.choice([move for move, share in shares.items() if share == most])
        return Decision(chosen, -WIN, exact=True)
    except SearchTimeout:
        return Decision(rng.choice(_fewest_replies(game, safe)))


def decide(
    game: Game,
    deadline: float | None = None,
    *,
    max_depth: int | None = None,
    rng: random.Random | None = None,
    remover: RemoveSolver | None = None,
) -> Decision:
    """The searched move for ``game.to_move``, with how it was found.

    REMOVE phase: solved exactly (a winning move if there is one). ADD phase:
    iterative deepening up to ``max_depth`` plies (None: to the end of the ADD
    phase) until ``deadline``; the last finished depth's move, or a better
    one the unfinished depth had found; if not even the first depth finishes,
    the move leaving the opponent the fewest safe replies. The searches look
    at the clock every few milliseconds, so a caller should leave a little time.
    """
    if game.over:
        raise ValueError("the game is over")
    rng = rng or random.Random(0)
    remover = remover or RemoveSolver()
    remover.deadline = deadline
    try:
        if game.phase != ADD:
            return _decide_remove(game, remover, rng)
        return _decide_add(game, deadline, max_depth, rng, remover)
    finally:
        remover.deadline = None


def _decide_add(
    game: Game,
    deadline: float | None,
    max_depth: int | None,
    rng: random.Random,
    remover: RemoveSolver,
) -> Decision:
    safe = safe_moves(game)
    if not safe:
        return Decision(rng.choice(game.legal_moves()), -WIN, exact=True)
    nodes_before = remover.nodes
    search = AddSearch(remover, game, deadline)
    remover.deadline = deadline
    order = [(move.weight, move.position - LOW) for move in safe if isinstance(move, Add)]
    rng.shuffle(order)
    # Fewest safe replies for the opponent first: the move played if even the first
    # depth runs out of time.
    order = search.order(order)
    remaining = len(game.hands[0]) + len(game.hands[1])
    limit = remaining if max_depth is None else min(max_depth, remaining)
    decision = Decision(safe[0])
    best: tuple[int | None, tuple[int, int]] = (None, order[0])
    for depth in range(1, limit + 1):
        try:
            score, move = search.root(order, depth)
        except SearchTimeout:
            best = _after_timeout(search, order, best)
            break
        if score == -WIN and decision.depth:
            # Lost whatever is played: keep the move the shallower search liked, which a
            # fallible opponent is the least likely to punish.
            best = (score, best[1])
            decision.exact = True
            break
        best = (score, move)
        decision.depth, decision.exact = depth, depth == remaining or abs(score) == WIN
        order.remove(move)
        order.insert(0, move)
        if decision.exact:
            break
    decision.score, (weight, i) = best
    decision.move = Add(weight, POSITIONS[i])
    decision.nodes = search.nodes + remover.nodes - nodes_before
    return decision


def _after_timeout(
    search: AddSearch,
    order: list[tuple[int, int]],
    best: tuple[int | None, tuple[int, int]],
) -> tuple[int | None, tuple[int, int]]:
    """The move to play when a depth ran out of time, ``best`` being the last depth's.

    The unfinished depth searched the last best move first; a move it found
    better since was searched deeper than anything else. If all it searched
    are proven losses, the first move it had not reached may still hold.
    """
    partial = search.root_best
    if partial is None:
        return best
    if partial[0] > -WIN:
        return partial
    if search.root_searched < len(order):
        return None, order[search.root_searched]
    return partial


def best_move(
    game: Game,
    deadline: float | None = None,
    *,
    max_depth: int | None = None,
    rng: random.Random | None = None,
    remover: RemoveSolver | None = None,
) -> Move:
    """``decide``'s move: the searched move for ``game.to_move``."""
    return decide(game, deadline, max_depth=max_depth, rng=rng, remover=remover).move
