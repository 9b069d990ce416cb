"""No Tipping's built-in players: allowed moves always, seeded choices, each level's rule, the
exact solver against a plain minimax, and a few quick seeded matches.

Nothing here is timed: ``Solver`` is tested with a depth limit and no clock
(``budget=None``), where it is deterministic, except where only the move's
being allowed is checked.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.notipping.bots import (
    DEFAULT_BUDGET,
    LEVELS,
    Greedy,
    Player,
    RandomPlayer,
    Solver,
    make_player,
)
from services.notipping.rules import ADD, REMOVE, Add, Game, Move, Remove
from services.notipping.solver import (
    WIN,
    RemoveSolver,
    best_move,
    count_safe,
    decide,
    safe_moves,
    solve_remove,
)

MAX_WEIGHTS = (1, 2, 3, 5, 7, 10)


# -- positions ----------------------------------------------------------------------------


def random_game(rng: random.Random, max_weight: int, safe_only: bool = False) -> list[Game]:
    """The positions of a game of random moves, none over.

    Moves are safe ones only if asked, else mostly safe (four in five) so that
    games reach the REMOVE phase as well as tip.
    """
    game = Game.start(max_weight)
    seen = []
    while not game.over:
        seen.append(game)
        choices = safe_moves(game) if safe_only else game.legal_moves()
        if not choices:
            break
        if not safe_only and rng.random() < 0.8:
            choices = safe_moves(game) or choices
        game = game.play(rng.choice(choices))
    return seen


def positions(seed: int, games: int, max_weights: tuple[int, ...] = MAX_WEIGHTS) -> list[Game]:
    rng = random.Random(seed)
    return [
        game
        for _ in range(games)
        for max_weight in max_weights
        for game in random_game(rng, max_weight)
    ]


def remove_positions(seed: int, max_weight: int, count: int) -> list[Game]:
    """REMOVE-phase positions reached by random safe play, none over."""
    rng = random.Random(seed)
    found: list[Game] = []
    while len(found) < count:
        found += [g for g in random_game(rng, max_weight, safe_only=True) if g.phase == REMOVE]
    return found[:count]


def late_add_positions(seed: int, max_weight: int, placements_left: int, count: int) -> list[Game]:
    """ADD-phase positions with ``placements_left`` weights to place, by random safe play."""
    rng = random.Random(seed)
    found: list[Game] = []
    while len(found) < count:
        found += [
            g
            for g in random_game(rng, max_weight, safe_only=True)
            if g.phase == ADD and len(g.hands[0]) + len(g.hands[1]) == placements_left
        ]
    return found[:count]


def all_tipping_positions() -> list[Game]:
    """Positions (ADD and REMOVE) where every allowed move tips the board."""
    rng = random.Random(9)
    # Safe play goes on until the player to move has no safe move: the last position.
    found = [random_game(rng, max_weight, safe_only=True)[-1] for max_weight in (3, 7, 10, 10)]
    found = [g for g in found if not safe_moves(g)]
    assert {g.phase for g in found} == {ADD, REMOVE}
    return found


# -- plain minimax, the reference for the solver ------------------------------------------


def brute_force(game: Game) -> bool:
    """Whether ``game.to_move`` wins with perfect play, by trying every game from here."""
    for move in game.legal_moves():
        after = game.play(move)
        if not after.over and not brute_force(after):
            return True
    return False


def wins_by(game: Game, move: Move) -> bool:
    after = game.play(move)
    return not after.over and not brute_force(after)


# -- the API ------------------------------------------------------------------------------


def test_levels_and_names() -> None:
    assert LEVELS == ("random", "greedy", "solver")
    for level in LEVELS:
        player: Player = make_player(level, 1)
        assert player.name == level
    with pytest.raises(ValueError):
        make_player("perfect", 1)


def solver_budget(move_time: float | None) -> float | None:
    player = make_player("solver", 1, move_time=move_time)
    assert isinstance(player, Solver)
    return player.budget


def test_solver_budget_from_move_time() -> None:
    # move_time is the server's limit per move: the solver takes half of it, at most 2 s.
    assert DEFAULT_BUDGET == 2.0
    assert solver_budget(None) == DEFAULT_BUDGET
    assert solver_budget(30) == DEFAULT_BUDGET
    assert solver_budget(1.0) == pytest.approx(0.5)
    assert solver_budget(0) == DEFAULT_BUDGET  # a server's 0 is no limit
    with pytest.raises(ValueError):
        Solver(1, budget=None)
    with pytest.raises(ValueError):
        Solver(1, budget=None, max_depth=0)


PLAYERS: dict[str, Callable[[int], Player]] = {
    "random": RandomPlayer,
    "greedy": Greedy,
    "solver depth 1": lambda seed: Solver(seed, budget=None, max_depth=1),
}


@pytest.mark.parametrize("kind", PLAYERS)
def test_always_an_allowed_move(kind: str) -> None:
    player = PLAYERS[kind](5)
    for game in positions(1, 4) + all_tipping_positions():
        move = player.choose(game)
        game.check(move)  # raises InvalidMove if not allowed
        assert isinstance(move, Add if game.phase == ADD else Remove)


def test_solver_on_a_clock_always_an_allowed_move() -> None:
    # Clocks this short stop the search at once or early: the fallbacks must be allowed too.
    player = make_player("solver", 2, move_time=0.002)
    for game in positions(2, 1, (3, 7, 10)) + all_tipping_positions():
        game.check(player.choose(game, time_left=0.002))
    deeper = Solver(3, budget=0.05)
    for game in positions(3, 1, (7,)):
        game.check(deeper.choose(game))


def test_a_finished_game_is_refused() -> None:
    game = Game.start(1).play(Add(1, 10))  # tips at once
    assert game.over
    for level in LEVELS:
        with pytest.raises(ValueError):
            make_player(level, 1).choose(game)
    with pytest.raises(ValueError):
        decide(game)


@pytest.mark.parametrize("kind", ["random", "greedy", "solver depth 2"])
def test_same_seed_same_choices(kind: str) -> None:
    def make(seed: int) -> Player:
        if kind == "solver depth 2":
            return Solver(seed, budget=None, max_depth=2)
        return PLAYERS[kind](seed)

    games = positions(4, 1, (3, 7))
    first, second = make(11), make(11)
    choices = [first.choose(g) for g in games]
    assert choices == [second.choose(g) for g in games]
    if kind == "random":
        assert choices != [make(12).choose(g) for g in games]


def test_string_seeds() -> None:
    games = positions(5, 1, (7,))
    a, b = make_player("random", "ann:0"), make_player("random", "ann:0")
    assert [a.choose(g) for g in games] == [b.choose(g) for g in games]


# -- each level's rule --------------------------------------------------------------------


def test_random_places_leftmost_safe_and_removes_safely() -> None:
    player = RandomPlayer(6)
    for game in positions(6, 4):
        move = player.choose(game)
        safe = safe_moves(game)
        if game.phase == REMOVE:
            assert not safe or move in safe
            continue
        assert isinstance(move, Add)
        if not safe:
            continue  # every placement tips: any allowed move
        # A safe move whenever there is one, at the leftmost spot that does not tip.
        assert not game.tips_after(move)
        left_of_it = [p for p in game.free() if p < move.position]
        assert all(game.tips_after(Add(move.weight, p)) for p in left_of_it)


def test_random_picks_weights_and_blocks_at_random() -> None:
    start = Game.start(7)
    placed = [RandomPlayer(seed).choose(start) for seed in range(60)]
    # Each weight has a safe spot on the empty board, so each is placed by some seed.
    assert {move.weight for move in placed if isinstance(move, Add)} == set(range(1, 8))
    game = remove_positions(7, 7, 1)[0]
    assert len(safe_moves(game)) > 1
    removed = {RandomPlayer(seed).choose(game) for seed in range(60)}
    assert removed == set(safe_moves(game))


def test_greedy_leaves_the_fewest_safe_replies() -> None:
    player = Greedy(7)
    for game in positions(7, 2):
        move = player.choose(game)
        safe = safe_moves(game)
        if not safe:
            continue
        assert move in safe
        replies = {m: count_safe(game.play(m)) for m in safe}
        assert replies[move] == min(replies.values())


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), max_weight=st.integers(1, 10))
def test_count_safe_counts_the_safe_moves(seed: int, max_weight: int) -> None:
    for game in random_game(random.Random(seed), max_weight):
        assert count_safe(game) == len(safe_moves(game))


# -- the solver against brute force -------------------------------------------------------


@pytest.mark.parametrize(("max_weight", "count"), [(1, 10), (2, 30), (3, 40), (4, 25)])
def test_remove_phase_verdicts_match_brute_force(max_weight: int, count: int) -> None:
    solver = RemoveSolver()
    games = remove_positions(max_weight, max_weight, 400)
    # Every other position of each game, so the boards and movers vary.
    games = [g for g in games if len(g.occupied()) <= 7][::2][:count]
    assert len(games) == count
    verdicts = []
    for game in games:
        won = brute_force(game)
        verdicts.append(won)
        assert solve_remove(game) == won
        assert solver.solve(game) == won  # with a cache shared between positions
        outcomes = solver.outcomes(game)
        assert set(outcomes) == set(safe_moves(game))
        for move, move_wins in outcomes.items():
            assert move_wins == wins_by(game, move)
        move = Solver(8, budget=None, max_depth=1).choose(game)
        if won:
            assert wins_by(game, move)
        elif safe_moves(game):
            assert move in safe_moves(game)  # lost, but not by tipping now
    assert any(verdicts) and not all(verdicts)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), max_weight=st.integers(1, 3), removed=st.integers(0, 6))
def test_any_remove_phase_verdict_matches_brute_force(
    seed: int, max_weight: int, removed: int
) -> None:
    games = [g for g in random_game(random.Random(seed), max_weight, True) if g.phase == REMOVE]
    if games:
        game = games[min(removed, len(games) - 1)]
        assert solve_remove(game) == brute_force(game)


@pytest.mark.parametrize(
    ("max_weight", "placements_left", "count"),
    [(2, 1, 8), (2, 2, 8), (2, 3, 8), (3, 1, 8), (3, 2, 8), (3, 3, 8), (4, 2, 6)],
)
def test_add_phase_solved_near_the_end_matches_brute_force(
    max_weight: int, placements_left: int, count: int
) -> None:
    for game in late_add_positions(max_weight, max_weight, placements_left, count):
        won = brute_force(game)
        decision = decide(game, rng=random.Random(1))
        assert decision.exact
        assert (decision.score == WIN) == won
        if won:
            assert wins_by(game, decision.move)
            assert wins_by(game, Solver(9, budget=None, max_depth=placements_left).choose(game))
            assert wins_by(game, best_move(game))
        else:
            assert not game.tips_after(decision.move)  # lost, but not by tipping now


def test_the_whole_game_at_max_weight_one_is_lost_by_the_first_player() -> None:
    start = Game.start(1)
    assert not brute_force(start)
    decision = decide(start)
    assert decision.exact and decision.score == -WIN
    after = start.play(decision.move)
    assert not after.over  # lost, but it did not tip
    assert decide(after).score == WIN


def test_full_board_at_max_weight_ten_is_solved() -> None:
    # A full board (21 blocks) reached without tipping: heavy weights left, light right.
    layout = [
        (7, -3), (7, -2), (6, -1), (8, -6), (5, 1), (6, 0), (9, -7), (5, 2), (8, -5), (4, 3),
        (4, 4), (10, -9), (3, 5), (3, 6), (2, 7), (2, 8), (10, -10), (1, 9), (1, 10), (9, -8),
    ]  # fmt: skip
    game = Game.start(10)
    for weight, position in layout:
        game = game.play(Add(weight, position))
    assert game.phase == REMOVE and not game.over and len(game.occupied()) == 21
    solver = RemoveSolver()
    won = solver.solve(game)
    assert isinstance(won, bool)
    move = Solver(1, budget=None, max_depth=1).choose(game)
    after = game.play(move)
    if won:
        assert not after.over and not solver.solve(after)


# -- seeded matches -----------------------------------------------------------------------


def play(first: Player, second: Player, max_weight: int = 7) -> int:
    """The winner's seat of a game between two players, checking every move."""
    game = Game.start(max_weight)
    players = (first, second)
    while not game.over:
        move = players[game.to_move].choose(game)
        game.check(move)
        game = game.play(move)
    assert game.winner is not None
    return game.winner


def solver_wins(opponent: Callable[[int], Player], games: int, depth: int) -> tuple[int, int]:
    """The solver's wins (``depth`` plies, no clock) against ``opponent``: seat 0, seat 1."""

    def solver(i: int) -> Solver:
        return Solver(f"s{i}", budget=None, max_depth=depth)

    as_first = sum(play(solver(i), opponent(i)) == 0 for i in range(games))
    as_second = sum(play(opponent(i), solver(i)) == 1 for i in range(games))
    return as_first, as_second


def test_solver_beats_random_in_both_seats() -> None:
    as_first, as_second = solver_wins(RandomPlayer, 20, depth=1)
    assert as_first >= 17 and as_second >= 17  # 20 and 20 with these seeds


def test_solver_beats_greedy() -> None:
    as_first, as_second = solver_wins(Greedy, 10, depth=2)
    assert as_first + as_second >= 16  # 19 with these seeds
