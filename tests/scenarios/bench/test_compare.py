"""``make bench-compare``'s reading of a bench's figures and its paired summary (the runs
themselves are benchmarks, not tests)."""

from __future__ import annotations

from pathlib import Path

from scenarios.bench.compare import Side, figures, summary

RING_OUTPUT = """\
run 1/3: seed 2013, 185 handoffs, 28 skips, wall 1.629 s
loopback RTT (Trio ping-pong, 2 processes, 2000 round trips): median 0.064 ms, p99 0.089 ms
handoffs measured: 532 over 3 verified runs
  median handoff           1.138 ms   target <= 1.000 ms NOT MET
  median handoff / RTT        17.9x   target <= 3x       NOT MET
  p99 handoff              2.307 ms   target <= 2.000 ms NOT MET
  median wall time          1.629 s   target <= 3 s      MET
"""


def test_a_benchs_figure_lines_are_read_by_label_and_nothing_else() -> None:
    assert figures(RING_OUTPUT) == {
        "median handoff": (1.138, "ms"),
        "median handoff / RTT": (17.9, "x"),
        "p99 handoff": (2.307, "ms"),
        "median wall time": (1.629, "s"),
    }


def test_the_summary_pairs_rounds_and_keeps_only_figures_every_round_has() -> None:
    before = Side("old", Path("python"), Path("."))
    after = Side("new", Path("python"), Path("."))
    before.rounds = [{"median": (1.0, "ms"), "only old": (5.0, "s")}, {"median": (2.0, "ms")}]
    after.rounds = [{"median": (1.5, "ms")}, {"median": (2.0, "ms")}]
    header, row = summary(before, after)
    assert header.split()[:2] == ["figure", "before"]
    words = row.split()
    assert words[0] == "median" and "only" not in row
    assert words[1:3] == ["1.500", "ms"]  # the median of 1.0 and 2.0
    assert words[5:7] == ["+0.250", "ms"]  # the median of the differences +0.5 and 0
    assert words[-1] == "1.250x"  # the median of the ratios 1.5 and 1.0
