"""Game-tree search for No Tipping: the REMOVE phase solved exactly, the ADD phase searched.

``decide`` (and ``best_move``) choose the move to play by a deadline, with
the searches beside this module: ``services.notipping.remove_solver``
(``RemoveSolver``, exact) and ``services.notipping.add_search``
(``AddSearch``, deepened one ply at a time), both over the masks and safe
moves of ``services.notipping.safety``. The bots, the bench and the tests
import them all from here.

Both searches only ever try safe moves: a move that tips loses at once, so a
player with no safe move has lost (unless every move tips, which is the same).
Scores are from the point of view of the player to move; ``WIN`` is a proven
win, far above any evaluation. A deadline is ``time.perf_counter()`` seconds:
the searches look at the clock every few milliseconds and raise
``SearchTimeout`` once it has passed; whatever they had proven stays cached.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from services.notipping.add_search import WIN, AddSearch
from services.notipping.remove_solver import RemoveSolver, SearchTimeout, solve_remove
from services.notipping.rules import (
    ADD,
    LOW,
    POSITIONS,
    Add,
    Game,
    Move,
)
from services.notipping.safety import board_code, count_safe, safe_moves, safe_positions

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
