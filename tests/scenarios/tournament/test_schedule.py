"""A tournament's schedule: every pair its games, colours balanced, rounds with no one
twice, rings that share the games out evenly, the same schedule from the same seed."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scenarios.tournament.schedule import (
    Format,
    ScheduleError,
    _circle_rounds,
    fingerprint,
    rings,
    two_player,
)

NAMES = st.lists(
    st.text("abcdefghij", min_size=1, max_size=4), min_size=2, max_size=11, unique=True
)


@given(NAMES, st.integers(1, 3).map(lambda legs: 2 * legs), st.integers(0, 2**64))
def test_a_round_robin_plays_each_pair_its_games_half_with_each_colour(
    names: list[str], games: int, seed: int
) -> None:
    schedule = two_player(names, games, seed)
    ordered = Counter(game.players for game in schedule)
    n = len(names)
    assert len(schedule) == n * (n - 1) // 2 * games
    assert all(ordered[a, b] == games // 2 for a in names for b in names if a != b)
    assert [game.number for game in schedule] == list(range(1, len(schedule) + 1))
    assert len({game.seed for game in schedule}) == len(schedule)
    assert two_player(names, games, seed) == schedule  # decided by its inputs alone


@given(NAMES)
def test_a_round_of_the_circle_method_has_no_one_twice(names: list[str]) -> None:
    rounds = _circle_rounds(names)
    pairs = [frozenset(pair) for round_ in rounds for pair in round_]
    assert len(pairs) == len(set(pairs)) == len(names) * (len(names) - 1) // 2
    for round_ in rounds:
        seated = [name for pair in round_ for name in pair]
        assert len(seated) == len(set(seated)) >= len(names) - 1


@given(NAMES, st.integers(1, 3).map(lambda legs: 2 * legs), st.integers(0, 2**64))
def test_a_gauntlet_plays_the_first_against_each_other_half_with_each_colour(
    names: list[str], games: int, seed: int
) -> None:
    first, *others = names
    ordered = Counter(game.players for game in two_player(names, games, seed, Format.GAUNTLET))
    assert sum(ordered.values()) == len(others) * games
    assert all(ordered[first, o] == ordered[o, first] == games // 2 for o in others)


@given(
    NAMES, st.integers(2, 8), st.integers(1, 40), st.integers(0, 2**64)
)  # fmt: skip
def test_rings_share_the_games_out_evenly(
    names: list[str], size: int, games: int, seed: int
) -> None:
    if size > len(names):
        with pytest.raises(ScheduleError, match="--ring-size"):
            rings(names, size, games, seed)
        return
    schedule = rings(names, size, games, seed)
    assert len(schedule) == games
    assert all(len(set(game.players)) == size for game in schedule)
    appearances = Counter(name for game in schedule for name in game.players)
    counts = [appearances[name] for name in names]
    assert max(counts) - min(counts) <= 1
    assert rings(names, size, games, seed) == schedule


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: two_player(["a", "b"], 3, 1), "an even number"),
        (lambda: two_player(["a"], 2, 1), "at least 2 entrants"),
        (lambda: two_player(["a", "a"], 2, 1), "two entrants are named 'a'"),
        (lambda: two_player(["a", "b c"], 2, 1), "a word of printable characters"),
        (lambda: rings(["a", "b", "c"], 2, 0, 1), "at least 1"),
        (lambda: rings([str(i) for i in range(10)], 9, 1, 1), "between 2 and 8"),
    ],
)
def test_a_schedule_that_cannot_be_is_one_clear_error(call, says: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ScheduleError, match=says):
        call()


def test_the_fingerprint_tells_another_tournament_apart() -> None:
    schedule = two_player(["a", "b", "c"], 2, 7)
    same = fingerprint(two_player(["a", "b", "c"], 2, 7), game="reversi", move_time=1)
    assert fingerprint(schedule, game="reversi", move_time=1) == same
    assert fingerprint(schedule, game="reversi", move_time=2) != same
    assert fingerprint(two_player(["a", "b", "c"], 2, 8), game="reversi", move_time=1) != same
