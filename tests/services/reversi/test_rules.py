"""Reversi's bitboard rules: each rule alone, perft, and whole games against a plain grid.

``reversi_reference`` plays the same games the slow, obvious way (a grid and
one-square walks); random boards and random games must come out identical in
every legal move, every flip, every pass and every result.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.reversi.rules import (
    BLACK,
    EMPTY,
    FULL,
    WHITE,
    IllegalMove,
    Position,
    coordinates,
    flips,
    iter_squares,
    moves,
    opponent,
    perft,
    square,
)
from tests.helpers import reversi_reference as ref

PERFT_FROM_START = [1, 4, 12, 56, 244, 1396, 8200]


def board(discs: dict[tuple[int, int], int], to_move: int = BLACK) -> Position:
    """A position holding ``discs`` at (x, y), built through the wire's digits."""
    digits = ["0"] * 64
    for (x, y), colour in discs.items():
        digits[x * 8 + y] = str(colour)
    return Position.from_digits("".join(digits), to_move)


def cells(mask: int) -> set[tuple[int, int]]:
    return {coordinates(sq) for sq in iter_squares(mask)}


def reference(position: Position) -> ref.Game:
    return ref.Game.from_digits(position.digits(), position.to_move)


# -- squares and colours --------------------------------------------------------------


def test_square_numbering_is_the_handouts() -> None:
    assert coordinates(20) == (2, 4)
    assert square(2, 4) == 20
    assert square(0, 0) == 0
    assert square(0, 7) == 7  # the left-upper corner
    assert square(7, 0) == 56  # the right-lower corner
    assert square(7, 7) == 63
    for sq in range(64):
        assert square(*coordinates(sq)) == sq


@pytest.mark.parametrize(("x", "y"), [(8, 0), (0, 8), (-1, 0), (0, -1)])
def test_square_off_the_board(x: int, y: int) -> None:
    with pytest.raises(ValueError):
        square(x, y)


@pytest.mark.parametrize("sq", [-1, 64])
def test_coordinates_off_the_board(sq: int) -> None:
    with pytest.raises(ValueError):
        coordinates(sq)


def test_colours() -> None:
    assert (EMPTY, WHITE, BLACK) == (0, 1, 2)
    assert FULL == 2**64 - 1
    assert opponent(BLACK) == WHITE
    assert opponent(WHITE) == BLACK
    with pytest.raises(ValueError):
        opponent(EMPTY)


def test_iter_squares() -> None:
    assert list(iter_squares(0)) == []
    assert list(iter_squares((1 << 63) | (1 << 20) | 1)) == [0, 20, 63]


# -- the start --------------------------------------------------------------------------


def test_start_position() -> None:
    start = Position.start()
    assert start.to_move == BLACK
    assert cells(start.white) == {(3, 3), (4, 4)}
    assert cells(start.black) == {(3, 4), (4, 3)}
    assert start.own() == start.black
    assert start.opp() == start.white
    assert start.count(BLACK) == start.count(WHITE) == 2
    assert start.count(EMPTY) == 60
    assert start.square_colour(square(3, 3)) == WHITE
    assert start.square_colour(square(3, 4)) == BLACK
    assert start.square_colour(0) == EMPTY
    assert cells(start.legal_moves()) == {(3, 2), (2, 3), (5, 4), (4, 5)}
    assert not start.over
    digits = start.digits()
    assert len(digits) == 64
    assert {i: d for i, d in enumerate(digits) if d != "0"} == {
        27: "1",
        28: "2",
        35: "2",
        36: "1",
    }


def test_first_move() -> None:
    start = Position.start()
    assert cells(flips(start.black, start.white, square(3, 2))) == {(3, 3)}
    after = start.play(square(3, 2))
    assert after.to_move == WHITE
    assert cells(after.black) == {(3, 2), (3, 3), (3, 4), (4, 3)}
    assert cells(after.white) == {(4, 4)}
    assert after.own() == after.white


# -- digits -----------------------------------------------------------------------------


def test_digits_round_trip() -> None:
    digits = "0120" * 16
    for to_move in (BLACK, WHITE):
        position = Position.from_digits(digits, to_move)
        assert position.digits() == digits
        assert position.to_move == to_move
        assert Position.from_digits(position.digits(), to_move) == position


@pytest.mark.parametrize(
    ("digits", "to_move"),
    [
        ("0" * 63, BLACK),
        ("0" * 65, BLACK),
        ("0" * 63 + "3", BLACK),
        ("0" * 63 + " ", BLACK),
        ("0" * 62 + "_1", BLACK),
        ("\u0662" * 64, BLACK),  # an Arabic-Indic two: a digit to int(), not to the wire
        ("0" * 64, EMPTY),
        ("0" * 64, 3),
    ],
)
def test_bad_digits(digits: str, to_move: int) -> None:
    with pytest.raises(ValueError):
        Position.from_digits(digits, to_move)


def test_bad_position() -> None:
    with pytest.raises(ValueError):
        Position(black=1, white=1, to_move=BLACK)  # two discs on one square
    with pytest.raises(ValueError):
        Position(black=1 << 64, white=0, to_move=BLACK)
    with pytest.raises(ValueError):
        Position(black=-1, white=0, to_move=BLACK)


# -- moves ------------------------------------------------------------------------------


def test_illegal_moves() -> None:
    start = Position.start()
    assert issubclass(IllegalMove, ValueError)
    for sq in (square(3, 3), square(3, 4), square(0, 0), square(2, 2), -1, 64):
        assert not start.is_legal(sq)
        with pytest.raises(IllegalMove):
            start.play(sq)
    assert flips(start.black, start.white, square(3, 3)) == 0  # occupied
    assert flips(start.black, start.white, square(2, 2)) == 0  # flips nothing
    with pytest.raises(ValueError):
        flips(start.black, start.white, 64)


def test_lines_do_not_wrap_between_columns() -> None:
    # Squares 7, 8, 9 are (0, 7), (1, 0), (1, 1): consecutive bits but no line.
    assert moves(1 << 7, 1 << 8) == 0
    assert moves(1 << 9, 1 << 8) == 0
    # Diagonals across the y edge: (0, 6) (1, 7) then (2, 8) does not exist,
    # but bit 16 is (2, 0); likewise going down from (2, 1) through (1, 0).
    assert moves(1 << square(0, 6), 1 << square(1, 7)) == 0
    assert moves(1 << square(2, 1), 1 << square(1, 0)) == 0
    # Along x nothing wraps, but lines end at the board's ends.
    assert moves(1 << square(1, 3), 1 << square(0, 3)) == 0
    assert moves(1 << square(6, 3), 1 << square(7, 3)) == 0


def test_one_move_flips_every_closed_line() -> None:
    discs = {(3, 3): BLACK}
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            if (dx, dy) != (0, 0):
                discs[(3 + dx, 3 + dy)] = WHITE
                discs[(3 + 2 * dx, 3 + 2 * dy)] = BLACK
    del discs[(3, 3)]
    position = board(discs)
    turned = flips(position.black, position.white, square(3, 3))
    assert cells(turned) == {xy for xy, colour in discs.items() if colour == WHITE}
    after = position.play(square(3, 3))
    assert after.count(WHITE) == 0
    assert after.over


def test_a_long_line_flips_whole() -> None:
    discs = {(0, y): WHITE for y in range(1, 7)} | {(0, 7): BLACK}
    position = board(discs)
    assert cells(position.legal_moves()) == {(0, 0)}
    after = position.play(square(0, 0))
    assert after.count(BLACK) == 8
    assert after.count(WHITE) == 0


def test_pass() -> None:
    position = board({(0, 0): BLACK, (1, 0): WHITE, (3, 0): WHITE})
    assert cells(position.legal_moves()) == {(2, 0)}
    after = position.play(square(2, 0))
    # White has no move (the only line from (3, 0) runs off the board), Black does.
    assert moves(after.white, after.black) == 0
    assert after.to_move == BLACK
    assert not after.over
    assert cells(after.legal_moves()) == {(4, 0)}
    end = after.play(square(4, 0))
    assert end.over
    assert end.to_move == WHITE
    assert end.count(EMPTY) == 59
    assert end.winner() == BLACK


def test_nobody_can_move_before_the_board_is_full() -> None:
    position = board({(0, 0): WHITE, (7, 7): BLACK})
    assert position.over
    assert position.legal_moves() == 0
    assert position.winner() is None  # one disc each: a draw
    with pytest.raises(IllegalMove):
        position.play(square(1, 1))
    assert perft(position, 3) == 1


def test_winner() -> None:
    full_black = Position.from_digits("2" * 33 + "1" * 31, WHITE)
    assert full_black.over
    assert full_black.winner() == BLACK
    full_white = Position.from_digits("1" * 40 + "2" * 24, BLACK)
    assert full_white.winner() == WHITE
    drawn = Position.from_digits("12" * 32, BLACK)
    assert drawn.over
    assert drawn.winner() is None
    with pytest.raises(ValueError):
        Position.start().winner()


# -- perft ------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", range(len(PERFT_FROM_START)))
def test_perft_from_start(depth: int) -> None:
    assert perft(Position.start(), depth) == PERFT_FROM_START[depth]


@pytest.mark.parametrize("depth", range(6))
def test_reference_perft_from_start(depth: int) -> None:
    # The reference is only a judge if it gets the published figures too.
    assert ref.perft(ref.Game.start(), depth) == PERFT_FROM_START[depth]


def test_perft_counts_a_pass_as_a_ply() -> None:
    position = board({(0, 0): BLACK, (1, 0): WHITE, (3, 0): WHITE}, to_move=WHITE)
    # White passes, Black plays (2, 0), White passes again, Black plays (4, 0) and the
    # game is over: one line of play, each pass a ply, the end a leaf however deep.
    assert position.legal_moves() == 0
    for depth in range(1, 7):
        assert perft(position, depth) == 1
        assert ref.perft(reference(position), depth) == 1
    with pytest.raises(ValueError):
        perft(position, -1)


# -- against the reference --------------------------------------------------------------

dense = st.sampled_from("012")
sparse = st.sampled_from("0000012")
boards = st.one_of(
    st.lists(dense, min_size=64, max_size=64), st.lists(sparse, min_size=64, max_size=64)
).map("".join)


def check_against_reference(position: Position, game: ref.Game) -> None:
    """Every square's flips, hence the legal moves, agree for both players."""
    for colour in (BLACK, WHITE):
        own = position.black if colour == BLACK else position.white
        opp = position.white if colour == BLACK else position.black
        legal = moves(own, opp)
        expected_moves = set()
        for sq in range(64):
            x, y = coordinates(sq)
            turned = flips(own, opp, sq)
            expected = game.flips(colour, x, y)
            assert cells(turned) == expected, (colour, (x, y))
            assert turned & ~opp == 0  # only opponent discs turn over
            if expected:
                expected_moves.add((x, y))
        assert cells(legal) == expected_moves, colour


@settings(max_examples=300, deadline=None)
@given(digits=boards, to_move=st.sampled_from([BLACK, WHITE]))
def test_random_boards_match_the_reference(digits: str, to_move: int) -> None:
    position = Position.from_digits(digits, to_move)
    game = ref.Game.from_digits(digits, to_move)
    check_against_reference(position, game)
    assert position.over == game.over()
    if position.over:
        assert position.winner() == game.winner()


# A game is its choices: at each turn, the choice-th legal move (mod their
# number) in square order. Sixty choices cover any game; hypothesis shrinks a
# failing game towards the first legal move everywhere.
games = st.lists(st.integers(min_value=0, max_value=2**16), min_size=60, max_size=60)


def pick(legal: int, choice: int) -> int:
    options = list(iter_squares(legal))
    return options[choice % len(options)]


@settings(max_examples=300, deadline=None)
@given(choices=games)
def test_random_games_match_the_reference(choices: list[int]) -> None:
    position = Position.start()
    game = ref.Game.start()
    for played, choice in enumerate(choices, start=1):
        colour = position.to_move
        assert colour == game.to_move
        own, opp = position.own(), position.opp()
        legal = position.legal_moves()
        expected = {}
        for x, y in ref_squares():
            if game.cells[x][y] == ref.EMPTY:
                turned = game.flips(colour, x, y)
                if turned:
                    expected[(x, y)] = turned
        assert cells(legal) == set(expected)
        if not legal:
            break
        sq = pick(legal, choice)
        turned = flips(own, opp, sq)
        assert cells(turned) == expected[coordinates(sq)]
        empty = FULL ^ (position.black | position.white)
        assert turned & empty == 0  # flips never touch empty squares
        position = position.play(sq)
        game.play(*coordinates(sq))
        # Conservation: each move adds exactly one disc; flips only recolour.
        assert position.count(BLACK) + position.count(WHITE) == 4 + played
        assert position.digits() == game.digits()
        assert Position.from_digits(position.digits(), position.to_move) == position
        # The pass rule: to_move is the same player exactly when the opponent is skipped.
        assert position.to_move == game.to_move
        # The player to move can move, unless the game is over (checked on leaving the loop).
        assert position.over or position.legal_moves() != 0
    assert position.over
    assert game.over()
    assert position.count(BLACK) == game.count(BLACK)
    assert position.count(WHITE) == game.count(WHITE)
    assert position.winner() == game.winner()


def ref_squares() -> list[tuple[int, int]]:
    return [(x, y) for x in range(8) for y in range(8)]


@settings(max_examples=100, deadline=None)
@given(choices=games, plies=st.integers(min_value=30, max_value=60), pass_first=st.booleans())
def test_perft_matches_the_reference_late_in_games(
    choices: list[int], plies: int, pass_first: bool
) -> None:
    position = Position.start()
    for choice in choices[:plies]:
        legal = position.legal_moves()
        if not legal:
            break
        position = position.play(pick(legal, choice))
    if pass_first:  # a position whose player to move may have no move at all
        position = Position(position.black, position.white, opponent(position.to_move))
    depth = 3
    assert perft(position, depth) == ref.perft(reference(position), depth)


def test_seeded_games_pass_and_end_early_as_the_reference_does() -> None:
    # Passes and early ends are what the random games above must reach; make sure
    # that the same uniform choices do reach them, and replay such games exactly.
    rng = random.Random(2024)
    passing: list[list[int]] = []
    early: list[list[int]] = []
    for _ in range(400):
        position = Position.start()
        line: list[int] = []
        passed = False
        while not position.over:
            mover = position.to_move
            sq = pick(position.legal_moves(), rng.randrange(64))
            position = position.play(sq)
            line.append(sq)
            passed = passed or (position.to_move == mover and not position.over)
        if passed:
            passing.append(line)
        if position.count(EMPTY):
            early.append(line)
    assert len(passing) >= 50
    assert early
    for line in passing[:20] + early:
        position = Position.start()
        game = ref.Game.start()
        for sq in line:
            position = position.play(sq)
            game.play(*coordinates(sq))
            assert (position.digits(), position.to_move) == (game.digits(), game.to_move)
        assert position.over
        assert game.over()
        assert position.winner() == game.winner()
