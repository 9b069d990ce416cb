"""Ratings: maximum-likelihood Elo that recovers a known order, intervals that cover and
shrink, a crosstable that adds up; Old Maid standings with their intervals."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scenarios.tournament.ratings import (
    ELO_PER_NATURAL,
    Record,
    crosstable,
    elo,
    ring_standings,
    totals,
    wilson,
)


def simulated(strengths: dict[str, float], games: int, seed: int) -> list:
    """Round-robin results drawn from the Elo model itself (strengths in Elo points)."""
    rng = random.Random(seed)
    names = list(strengths)
    results = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for g in range(games):
                first, second = (a, b) if g % 2 == 0 else (b, a)
                p = 1 / (1 + 10 ** ((strengths[second] - strengths[first]) / 400))
                results.append((first, second, 1.0 if rng.random() < p else 0.0))
    return results


def test_maximum_likelihood_recovers_the_order_and_covers_the_truth() -> None:
    strengths = {"spot": -300.0, "bob": -100.0, "alice": 100.0, "smarx": 300.0}
    ratings = elo(list(strengths), simulated(strengths, 200, seed=1))
    assert [r.name for r in ratings] == ["smarx", "alice", "bob", "spot"]
    assert abs(sum(r.elo for r in ratings)) < 1e-6  # relative to the field's mean
    for r in ratings:
        assert r.low < r.elo < r.high
        assert r.low <= strengths[r.name] <= r.high, r


def test_more_games_narrow_the_intervals() -> None:
    strengths = {"a": 0.0, "b": 100.0, "c": 200.0}
    few = {r.name: r.high - r.low for r in elo(list(strengths), simulated(strengths, 10, 2))}
    many = {r.name: r.high - r.low for r in elo(list(strengths), simulated(strengths, 250, 2))}
    assert all(many[name] < few[name] / 3 for name in strengths)


def test_draws_count_half_and_a_perfect_score_stays_finite() -> None:
    even = elo(["a", "b"], [("a", "b", 0.5)] * 6 + [("a", "b", 1.0), ("b", "a", 1.0)])
    assert abs(even[0].elo - even[1].elo) < 1e-6
    perfect = elo(["a", "b", "c"], [("a", "b", 1.0), ("c", "a", 0.0), ("b", "c", 0.5)] * 4)
    assert perfect[0].name == "a" and math.isfinite(perfect[0].elo)
    assert perfect[0].high - perfect[0].low > 100  # one entrant never lost: little is known


@given(
    st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd"), st.sampled_from([0, 0.5, 1])),
        max_size=40,
    )
)
def test_any_results_give_finite_ratings_and_an_even_crosstable(results: list) -> None:
    results = [(a, b, float(s)) for a, b, s in results if a != b]
    names = ["a", "b", "c", "d"]
    ratings = elo(names, results)
    assert all(math.isfinite(r.elo) and r.low <= r.elo <= r.high for r in ratings)
    assert sum(r.games for r in ratings) == 2 * len(results)
    table = crosstable(names, results)
    for (a, b), record in table.items():
        mirror = table[b, a]
        assert (record.wins, record.draws, record.losses) == (
            mirror.losses,
            mirror.draws,
            mirror.wins,
        )
    field = totals(names, table)
    assert sum(r.games for r in field.values()) == 2 * len(results)
    assert sum(r.score for r in field.values()) == len(results)  # every game's point, once
    by_name = {r.name: r for r in ratings}
    assert all(by_name[name].score == field[name].score for name in names)


def test_a_record_takes_only_whole_or_half_points() -> None:
    assert Record().add(1).add(0.5).add(0) == Record(1, 1, 1)
    with pytest.raises(ValueError):
        Record().add(0.25)


def test_ring_standings_rank_by_the_rate_of_losing_then_the_mean_place() -> None:
    rings = [("a", "b", "c"), ("a", "c", "b"), ("b", "a", "c"), ("c", "a", "b")]
    standings = ring_standings(["a", "b", "c"], rings)
    # b and c both lost twice, with the same mean place (2.25): they keep their order.
    assert [s.name for s in standings] == ["a", "b", "c"]
    a = standings[0]
    assert (a.rings, a.losses, a.loss_rate) == (4, 0, 0.0)
    assert a.mean_place == pytest.approx(1.5)
    assert a.place_low < 1.5 < a.place_high
    assert a.loss_low == 0.0 and 0 < a.loss_high < 1


def test_wilson_intervals_cover_the_rate() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(30, 100)
    assert low < 0.3 < high and high - low < 0.2
    assert pytest.approx(173.7, abs=0.1) == ELO_PER_NATURAL
