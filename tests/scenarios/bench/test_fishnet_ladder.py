"""The FishNet ladder bench: its statistics, and a short real run through two servers."""

from __future__ import annotations

import pytest

from scenarios.bench import fishnet_ladder
from scenarios.bench.fishnet_ladder import PairResult, pairs, wilson


def test_wilson_interval_matches_known_values() -> None:
    low, high = wilson(55, 100)
    assert low == pytest.approx(0.4524, abs=1e-4)
    assert high == pytest.approx(0.6438, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)


def test_pairs_cover_every_pair_once_stronger_first() -> None:
    every = pairs()
    assert len(every) == 6 and len(set(every)) == 6
    levels = fishnet_ladder.LEVELS
    assert all(levels.index(strong) > levels.index(weak) for strong, weak in every)


def test_a_step_needs_its_score_interval_above_half() -> None:
    close = PairResult("bob", "spot", wins=56, ties=0, losses=44)
    assert close.score > 0.5 and not close.met()  # 100 games: the interval reaches below 50 %
    ties_count_half = PairResult("bob", "spot", wins=1000, ties=400, losses=600)
    assert ties_count_half.score == 0.6 and ties_count_half.met()
    not_a_step = PairResult("smarx", "bob", wins=10, ties=0, losses=90)
    assert not_a_step.met() is None
    top = PairResult("smarx", "spot", wins=1300, ties=100, losses=600)
    assert top.score == pytest.approx(0.675) and not top.met()  # the 72 % target
    assert PairResult("smarx", "spot", wins=1400, ties=100, losses=500).met()


def results(scores: dict[tuple[str, str], float]) -> list[PairResult]:
    return [
        PairResult(
            strong,
            weak,
            wins=round(1000 * scores[strong, weak]),
            losses=1000 - round(1000 * scores[strong, weak]),
        )
        for strong, weak in pairs()
    ]


def test_the_top_player_must_beat_every_opponent_by_more_than_the_others_do() -> None:
    scores = {
        ("bob", "spot"): 0.63, ("alice", "bob"): 0.54, ("smarx", "alice"): 0.52,
        ("alice", "spot"): 0.64, ("smarx", "bob"): 0.56, ("smarx", "spot"): 0.66,
    }  # fmt: skip
    assert fishnet_ladder.top_is_above_every_other(results(scores)) == []
    scores["alice", "spot"] = 0.67  # alice above smarx against spot
    assert fishnet_ladder.top_is_above_every_other(results(scores)) == ["alice v spot"]
    scores["smarx", "alice"] = 0.45  # and bob does better against alice than smarx
    shortfalls = fishnet_ladder.top_is_above_every_other(results(scores))
    assert shortfalls == ["alice v spot", "bob v alice"]


def test_a_short_ladder_through_real_servers(capsys: pytest.CaptureFixture[str]) -> None:
    assert fishnet_ladder.ladder(games=8, seed=3, max_games=16) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.endswith(" s)")]
    assert len(rows) == 6
    for row in rows:
        games, wins, ties, losses = (int(word) for word in row.split()[3:7])
        assert wins + ties + losses == games and games in (8, 16)
    assert "failed games: 0" in out
