"""Reversi's built-in players: legal moves always, seeded choices, each level's rule, the
exact endgame solver against a plain minimax, and a few quick seeded matches.

Nothing here times a search except one loose check that a clock is obeyed:
``Deep`` is tested with a fixed depth and no clock (``budget=None``), where it
is deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from services.reversi.bots import (
    DEFAULT_BUDGET,
    LEVELS,
    Deep,
    Greedy,
    Player,
    Positional,
    RandomPlayer,
    make_player,
)
from services.reversi.evaluation import evaluate, neighbours
from services.reversi.rules import (
    BLACK,
    FULL,
    WHITE,
    Position,
    flips,
    iter_squares,
    moves,
    opponent,
    square,
)
from services.reversi.search import Searcher, SearchTimeout, solve

CORNERS = {square(0, 0), square(0, 7), square(7, 0), square(7, 7)}


# -- positions ----------------------------------------------------------------------------


def random_game(rng: random.Random) -> list[Position]:
    """The positions of a game of random moves, each with a move for the side to move."""
    position = Position.start()
    seen = []
    while not position.over:
        seen.append(position)
        position = position.play(rng.choice(list(iter_squares(position.legal_moves()))))
    return seen


def random_positions(seed: int, games: int) -> list[Position]:
    rng = random.Random(seed)
    return [position for _ in range(games) for position in random_game(rng)]


def late_position(rng: random.Random, empties: int) -> Position:
    """A position of a random game with exactly ``empties`` empty squares, not over."""
    while True:
        position = Position.start()
        while not position.over and position.count(0) > empties:
            position = position.play(rng.choice(list(iter_squares(position.legal_moves()))))
        if not position.over:
            return position


def random_board(rng: random.Random, empties: int) -> Position:
    """Discs thrown at random (reachable or not), ``empties`` squares left free."""
    free = set(rng.sample(range(64), empties))
    black = white = 0
    for sq in range(64):
        if sq not in free:
            if rng.random() < 0.5:
                black |= 1 << sq
            else:
                white |= 1 << sq
    return Position(black=black, white=white, to_move=rng.choice((BLACK, WHITE)))


def one_move_positions() -> list[Position]:
    """Positions where the side to move has exactly one legal move."""
    found = [Position(black=1 << square(0, 0), white=1 << square(0, 1), to_move=BLACK)]
    found += [p for p in random_positions(3, 30) if p.legal_moves().bit_count() == 1][:20]
    return found


def legal_squares(position: Position) -> set[int]:
    return set(iter_squares(position.legal_moves()))


# -- plain minimax, the reference for the solver ------------------------------------------


def brute_force(position: Position) -> int:
    """The disc difference for ``position.to_move`` under best play, by trying every game."""
    mover = position.to_move
    if position.over:
        return position.count(mover) - position.count(opponent(mover))
    if not position.legal_moves():  # a pass: the same board, the other side to move
        return -brute_force(Position(position.black, position.white, opponent(mover)))
    best = -65
    for sq in iter_squares(position.legal_moves()):
        after = position.play(sq)  # play() makes the pass that may follow itself
        value = brute_force(after)
        best = max(best, value if after.to_move == mover else -value)
    return best


def exact_value(position: Position, sq: int) -> int:
    """What ``position.to_move`` gets by playing ``sq`` and then playing perfectly."""
    after = position.play(sq)
    value = solve(after.own(), after.opp())
    return value if after.to_move == position.to_move else -value


# -- the API ------------------------------------------------------------------------------


def test_levels_and_names() -> None:
    assert LEVELS == ("random", "greedy", "positional", "deep")
    for level in LEVELS:
        player: Player = make_player(level, 1)
        assert player.name == level
    with pytest.raises(ValueError):
        make_player("perfect", 1)


def deep_budget(move_time: float | None) -> float | None:
    player = make_player("deep", 1, move_time=move_time)
    assert isinstance(player, Deep)
    return player.budget


def test_deep_budget_from_move_time() -> None:
    # move_time is the server's limit per move: deep takes half of it, at most 0.9 s.
    assert DEFAULT_BUDGET == 0.9
    assert deep_budget(None) == DEFAULT_BUDGET
    assert deep_budget(30) == DEFAULT_BUDGET
    assert deep_budget(0.4) == pytest.approx(0.2)
    assert deep_budget(0) == DEFAULT_BUDGET  # a server's 0 is no limit
    with pytest.raises(ValueError):
        Deep(1, budget=None)
    with pytest.raises(ValueError):
        Deep(1, budget=None, max_depth=0)


PLAYERS: dict[str, Callable[[int], Player]] = {
    "random": RandomPlayer,
    "greedy": Greedy,
    "positional": Positional,
    "deep depth 2": lambda seed: Deep(seed, budget=None, max_depth=2),
    "deep 5 ms": lambda seed: make_player("deep", seed, move_time=0.01),
}


@pytest.mark.parametrize("kind", PLAYERS)
def test_always_a_legal_move(kind: str) -> None:
    rng = random.Random(kind)
    deep = kind.startswith("deep")
    positions = random_positions(1, 3 if deep else 12)
    positions += [random_board(rng, rng.randint(1, 40)) for _ in range(60 if deep else 300)]
    positions = [p for p in positions if p.legal_moves()]
    player = PLAYERS[kind](5)
    for position in positions:
        assert position.is_legal(player.choose(position))
    for position in one_move_positions():
        (only,) = legal_squares(position)
        assert player.choose(position) == only


@pytest.mark.parametrize("kind", ["random", "greedy", "positional", "deep depth 2"])
def test_same_seed_same_choices(kind: str) -> None:
    positions = random_positions(2, 3)
    first, second = PLAYERS[kind](11), PLAYERS[kind](11)
    choices = [first.choose(p) for p in positions]
    assert choices == [second.choose(p) for p in positions]
    if kind == "random":
        assert choices != [PLAYERS[kind](12).choose(p) for p in positions]


def test_string_seeds() -> None:
    positions = random_positions(4, 1)
    a, b = make_player("random", "ann:0"), make_player("random", "ann:0")
    assert [a.choose(p) for p in positions] == [b.choose(p) for p in positions]


# -- each level's rule --------------------------------------------------------------------


def test_greedy_flips_the_most() -> None:
    greedy = Greedy(3)
    for position in random_positions(5, 10):
        own, opp = position.own(), position.opp()
        counts = {sq: flips(own, opp, sq).bit_count() for sq in legal_squares(position)}
        assert counts[greedy.choose(position)] == max(counts.values())


def test_greedy_breaks_ties_by_seed() -> None:
    start = Position.start()  # four moves, one flip each
    picks = {Greedy(seed).choose(start) for seed in range(40)}
    assert picks == legal_squares(start)


def test_positional_takes_a_corner() -> None:
    positional = Positional(3)
    checked = 0
    for position in random_positions(6, 20):
        corners = legal_squares(position) & CORNERS
        if corners:
            assert positional.choose(position) in corners
            checked += 1
    assert checked > 20


# -- search -------------------------------------------------------------------------------


def transformed(discs: int, transform: Callable[[int, int], tuple[int, int]]) -> int:
    return sum(1 << square(*transform(*divmod(sq, 8))) for sq in iter_squares(discs))


SYMMETRIES: list[Callable[[int, int], tuple[int, int]]] = [
    lambda x, y: (7 - x, y),
    lambda x, y: (x, 7 - y),
    lambda x, y: (y, x),
    lambda x, y: (7 - y, 7 - x),
    lambda x, y: (7 - x, 7 - y),
    lambda x, y: (y, 7 - x),
]


def test_neighbours() -> None:
    rng = random.Random(8)
    for _ in range(100):
        discs = rng.getrandbits(64) & rng.getrandbits(64)
        expected = 0
        for sq in iter_squares(discs):
            x, y = divmod(sq, 8)
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    if (dx or dy) and 0 <= x + dx < 8 and 0 <= y + dy < 8:
                        expected |= 1 << square(x + dx, y + dy)
        assert neighbours(discs) == expected


def test_evaluation_is_symmetric() -> None:
    # Every term is the same on a rotated or mirrored board (the edge terms read
    # the four edges by different bit tricks, which this checks against each other).
    rng = random.Random(9)
    for position in random_positions(7, 2) + [random_board(rng, 20) for _ in range(30)]:
        own, opp = position.own(), position.opp()
        value = evaluate(own, opp)
        for symmetry in SYMMETRIES:
            assert evaluate(transformed(own, symmetry), transformed(opp, symmetry)) == value


def test_solve_matches_brute_force() -> None:
    rng = random.Random(10)
    positions = [late_position(rng, 1 + i % 8) for i in range(20)]
    positions += [random_board(rng, 1 + i % 8) for i in range(20)]
    passes = 0
    for position in positions:
        expected = brute_force(position)
        assert solve(position.own(), position.opp()) == expected, str(position)
        passes += not position.legal_moves() or any(
            position.play(sq).to_move == position.to_move
            for sq in iter_squares(position.legal_moves())
        )
    assert passes >= 5  # the random boards are full of passes; make sure some came up


def test_solve_passes_and_finished_boards() -> None:
    # Neither side can move: the count decides at once, empty squares count for nobody.
    black = 1 << square(0, 0) | 1 << square(0, 1)
    white = 1 << square(7, 7)
    assert solve(black, white) == 1
    assert solve(white, black) == -1
    assert solve(FULL, 0) == 64
    # The side to move has no move, the other has: solve passes.
    rng = random.Random(11)
    for _ in range(200):
        position = random_board(rng, rng.randint(1, 8))
        own, opp = position.own(), position.opp()
        if not moves(own, opp) and moves(opp, own):
            assert solve(own, opp) == -solve(opp, own)


def test_deep_solves_exactly() -> None:
    rng = random.Random(12)
    for i in range(24):
        empties = 4 + i % 7  # 4..10
        position = late_position(rng, empties) if i % 2 else random_board(rng, empties)
        if not position.legal_moves():
            continue
        deep = Deep(i, budget=None, max_depth=10)
        choice = deep.choose(position)
        values = {sq: exact_value(position, sq) for sq in legal_squares(position)}
        assert values[choice] == max(values.values())
        if len(values) > 1:
            assert deep.last["exact"]
            assert deep.last["score"] == max(values.values())


def test_timeout_raises_and_deep_still_moves() -> None:
    searcher = Searcher(deadline=0.0)  # long past
    start = Position.start()
    order = sorted(legal_squares(start))
    with pytest.raises(SearchTimeout):
        searcher.root_search(start.own(), start.opp(), order, 8)
    position = random_positions(13, 1)[20]
    assert position.is_legal(Deep(1).choose(position, time_left=0.001))


def test_deep_keeps_to_its_clock_loosely() -> None:
    # Budget 0.05 s (half of time_left): generous slack for a slow machine.
    position = random_positions(14, 1)[10]
    deep = Deep(2)
    deep.choose(position, time_left=0.1)
    assert deep.last["seconds"] < 0.5


# -- strength -----------------------------------------------------------------------------


def match(make_a: Callable[[int], Player], make_b: Callable[[int], Player], games: int) -> int:
    """Games won by A against B, colours alternating, every game seeded."""
    won = 0
    for game in range(games):
        a, b = make_a(game), make_b(1000 + game)
        black, white = (a, b) if game % 2 == 0 else (b, a)
        position = Position.start()
        while not position.over:
            player = black if position.to_move == BLACK else white
            position = position.play(player.choose(position))
        a_colour = BLACK if game % 2 == 0 else WHITE
        won += position.winner() == a_colour
    return won


def test_greedy_beats_random() -> None:
    # Greedy is only a little stronger (about 60 %): many quick games.
    assert match(Greedy, RandomPlayer, 200) > 110


def test_positional_beats_greedy() -> None:
    assert match(Positional, Greedy, 40) >= 30


def test_deep_beats_positional() -> None:
    assert match(lambda seed: Deep(seed, budget=None, max_depth=2), Positional, 40) >= 30
