"""The tournament bench's plumbing: a short, shallow run of each part."""

from __future__ import annotations

import argparse

import pytest
import trio

from scenarios.bench import tournament_bench


def test_the_round_robin_reports_pace_overhead_and_ranking(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = argparse.Namespace(levels=["random", "greedy"], games=2, depth=1, seed=3)
    tournament_bench.report_round_robin(args)
    said = capsys.readouterr().out
    assert said.count("games a minute; a game's share") == 2
    assert "crosstable: 4 seats of 2 games, 2 points: adds up MET" in said
    assert "scaling from 1 to 2: " in said


def test_the_bare_games_are_played_whole() -> None:
    seconds = trio.run(tournament_bench.bare, ["deep", "deep2"], 2, 3, 1, 2)
    assert seconds > 0
