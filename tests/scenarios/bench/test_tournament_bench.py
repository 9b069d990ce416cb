"""The tournament bench's plumbing: a short, shallow run of both parts."""

from __future__ import annotations

import pytest

from scenarios.bench import tournament_bench


def test_a_short_run_reports_pace_overhead_ranking_and_the_bare_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--levels", "random", "deep", "--games", "2", "--depth", "1", "--bare-games", "2",
            "--bare-runs", "1"]  # fmt: skip
    assert tournament_bench.main(argv) == 0
    said = capsys.readouterr().out
    assert said.count("games a minute; a game's share") == 2
    assert "crosstable: 4 seats of 2 games, 2 points: adds up MET" in said
    assert "scaling from 1 to 2: " in said
    assert "tournament / bare: " in said
