"""The FishNet ladder bench: its statistics, and a short real run through two servers."""

from __future__ import annotations

import pytest

from scenarios import fishnet_ladder
from scenarios.fishnet_ladder import PairResult, pairs, wilson


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


def test_goals_need_the_rate_and_an_interval_above_half() -> None:
    close = PairResult("bob", "spot", wins=56, ties=0, losses=44)
    assert close.win_rate >= 0.55 and not close.met()  # 100 games: interval reaches below 50 %
    clear = PairResult("bob", "spot", wins=1200, ties=100, losses=700)
    assert clear.met()
    top = PairResult("smarx", "spot", wins=1300, ties=100, losses=600)
    assert top.goal() == 0.70 and not top.met()


def test_a_short_ladder_through_real_servers(capsys: pytest.CaptureFixture[str]) -> None:
    assert fishnet_ladder.ladder(games=8, seed=3) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " v " in line]
    assert len(rows) == 6
    for row in rows:
        wins, ties, losses = (int(word) for word in row.split()[3:6])
        assert wins + ties + losses == 8
    assert "failed games: 0" in out
