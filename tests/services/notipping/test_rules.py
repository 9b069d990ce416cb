"""No Tipping rules: the physics, who may play what, and that every game ends.

Property tests play random games (any allowed move, tipping ones included, or
only safe ones while there are any) and check after every move that the
incremental torques equal a recomputation from the board, that blocks and
weights are conserved, and that the game ends within its bound.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.notipping.rules import (
    ADD,
    BOARD_WEIGHT,
    INITIAL_BLOCK,
    POSITIONS,
    REMOVE,
    TABLE,
    Add,
    Game,
    InvalidMove,
    Remove,
    index,
    tips,
    torques,
)


def play_random(game: Game, rng: random.Random, safe_first: bool) -> list[Game]:
    """Every position of a game of random moves, until it ends."""
    seen = [game]
    while not game.over:
        moves = game.legal_moves()
        if safe_first:
            safe = [m for m in moves if not game.tips_after(m)]
            moves = safe or moves
        game = game.play(rng.choice(moves))
        seen.append(game)
    return seen


def test_the_start_balances_with_the_board_and_the_initial_block() -> None:
    game = Game.start()
    position, weight = INITIAL_BLOCK
    assert game.weight_at(position) == weight and game.owner_at(position) == TABLE
    # About -3: board 3*3 = 9, block 3*(-1) = -3; about -1: board 3*1 = 3, block 3*(-3) = -9.
    assert (game.left, game.right) == (6, -6)
    assert not tips(game.left, game.right)
    assert game.phase == ADD and game.to_move == 0 and game.round == 1
    assert game.hands == (frozenset(range(1, 8)), frozenset(range(1, 8)))


def test_the_board_alone_tips_to_the_right() -> None:
    empty = (0,) * len(POSITIONS)
    left, right = torques(empty)
    assert (left, right) == (3 * BOARD_WEIGHT, BOARD_WEIGHT)
    assert tips(left, right)


def test_a_torque_of_exactly_zero_does_not_tip() -> None:
    assert not tips(0, 0)
    assert tips(-1, 0) and tips(0, 1)


def test_balancing_exactly_on_the_left_support_does_not_tip_and_one_more_does() -> None:
    # Left torque 6 at the start: weight 2 at -6 adds 2*(-3) = -6, leaving exactly 0.
    game = Game.start()
    exact = Add(2, -6)
    assert not game.tips_after(exact)
    after = game.play(exact)
    assert after.left == 0 and not after.over
    # Weight 3 at -6 adds -9: past the support.
    assert game.play(Add(3, -6)).loser == 0


def test_balancing_exactly_on_the_right_support_does_not_tip_and_one_more_does() -> None:
    # Right torque -6 at the start: weight 3 at 1 adds 3*2 = 6, leaving exactly 0.
    game = Game.start()
    after = game.play(Add(3, 1))
    assert after.right == 0 and not after.over
    assert game.play(Add(7, 0)).loser == 0  # 7*1 = 7 > 6


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        (Add(8, 0), "there is no weight 8"),
        (Add(0, 0), "there is no weight 0"),
        (Add(3, 11), "off the board"),
        (Add(3, -11), "off the board"),
        (Add(3, -4), "position -4 is taken"),
        (Remove(-4), "REMOVE in the add phase"),
    ],
)
def test_moves_not_allowed_at_the_start(move: Add | Remove, reason: str) -> None:
    with pytest.raises(InvalidMove, match=reason):
        Game.start().play(move)


def test_a_weight_once_placed_cannot_be_placed_again() -> None:
    game = Game.start().play(Add(1, 0)).play(Add(1, -2))
    with pytest.raises(InvalidMove, match="weight 1 has already been placed"):
        game.play(Add(1, -5))


def remove_phase(max_weight: int, seed: int) -> Game:
    """A position where every weight is placed and nothing has tipped."""
    rng = random.Random(seed)
    while True:
        game = Game.start(max_weight)
        while not game.over and game.phase == ADD:
            safe = [m for m in game.legal_moves() if not game.tips_after(m)]
            if not safe:
                break
            game = game.play(rng.choice(safe))
        if not game.over and game.phase == REMOVE:
            return game


def test_in_the_remove_phase_any_block_may_go_and_nothing_may_be_added() -> None:
    game = remove_phase(3, seed=1)
    assert game.hands == (frozenset(), frozenset())
    assert game.round == 4 and game.to_move == 0  # 6 adds: rounds 1-3
    owners = {game.owner_at(p) for p in game.occupied()}
    assert owners == {0, 1, TABLE}
    assert {m.position for m in game.legal_moves()} == set(game.occupied())
    with pytest.raises(InvalidMove, match="ADD in the remove phase"):
        game.play(Add(1, game.free()[0]))
    with pytest.raises(InvalidMove, match="no block at position"):
        game.play(Remove(game.free()[0]))
    # The initial block and the opponent's blocks are player 0's to remove too.
    for position in game.occupied():
        after = game.play(Remove(position))
        assert after.weight_at(position) == 0 and after.owner_at(position) is None


def test_a_finished_game_takes_no_more_moves() -> None:
    over = Game.start().play(Add(7, 10))
    assert over.loser == 0 and over.winner == 1
    assert over.legal_moves() == []
    with pytest.raises(InvalidMove, match="the game is over"):
        over.play(Add(1, 0))


def test_max_weight_is_one_to_ten() -> None:
    assert Game.start(10).hands[1] == frozenset(range(1, 11))
    for bad in (0, 11):
        with pytest.raises(ValueError, match="max weight"):
            Game.start(bad)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    max_weight=st.integers(1, 10),
    safe_first=st.booleans(),
)
def test_every_game_ends_and_the_torques_always_match_the_board(
    seed: int, max_weight: int, safe_first: bool
) -> None:
    positions = play_random(Game.start(max_weight), random.Random(seed), safe_first)
    final = positions[-1]
    assert final.over
    assert len(positions) - 1 <= 4 * max_weight + 1
    for game in positions:
        assert (game.left, game.right) == torques(game.weights)
        # Conserved: each weight is in its owner's hand, on the board, or was removed.
        for player in (0, 1):
            on_board = {w for w, o in zip(game.weights, game.owners, strict=True) if o == player}
            assert not on_board & game.hands[player]
            assert on_board | game.hands[player] <= set(range(1, max_weight + 1))
        assert all((w == 0) == (o is None) for w, o in zip(game.weights, game.owners, strict=True))
    # The mover of the last move lost, and only a tipping move ends a game.
    before = positions[-2]
    assert final.loser == before.to_move
    assert tips(final.left, final.right)
    assert all(not tips(g.left, g.right) for g in positions[:-1])


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), max_weight=st.integers(1, 10))
def test_safe_play_fills_the_board_before_anyone_removes(seed: int, max_weight: int) -> None:
    """With only safe moves while any exist, the add phase places every weight or tips trying."""
    positions = play_random(Game.start(max_weight), random.Random(seed), safe_first=True)
    adds = [g for g in positions[:-1] if g.phase == ADD]
    assert len(adds) <= 2 * max_weight
    for game in positions:
        if game.phase == REMOVE:
            assert len(game.occupied()) <= 2 * max_weight + 1
            assert game.round == game.moves_made // 2 + 1


def test_index_counts_positions_from_minus_ten() -> None:
    assert index(-10) == 0 and index(0) == 10 and index(10) == 20
    assert POSITIONS[index(-4)] == -4
