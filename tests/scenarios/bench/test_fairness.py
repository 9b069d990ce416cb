"""The fairness bench's bookkeeping: rotated rounds and hostile phases against honest ones.

Its phases are the capacity bench's (tests/scenarios/bench/test_capacity.py
runs them small, hostile kinds included); the figures are ``make bench-fairness``'s.
"""

from __future__ import annotations

from scenarios.bench import fairness


def test_each_round_starts_one_phase_later() -> None:
    phases = ["none", "hold", "flood", "dribble", "all"]
    assert fairness.rotated(phases, 0) == phases
    assert fairness.rotated(phases, 1) == ["hold", "flood", "dribble", "all", "none"]
    assert fairness.rotated(phases, 5) == phases
    assert all(sorted(fairness.rotated(phases, n)) == sorted(phases) for n in range(7))


def test_a_hostile_phase_is_compared_with_its_own_rounds_honest_phase() -> None:
    ms = 1e-3
    # Round 2 is slow for everyone: a paired difference does not take that for a cost.
    worst = {
        "none": [10 * ms, 100 * ms, 12 * ms],
        "hold": [11 * ms, 101 * ms, 13 * ms],
        "flood": [30 * ms, 120 * ms, 32 * ms],
        "dribble": [10 * ms, 100 * ms, 12 * ms],
        "all": [40 * ms, 130 * ms, 42 * ms],
    }
    p99s = {phase: {"fishnet": values, "oldmaid": [v / 2 for v in values]}
            for phase, values in worst.items()}  # fmt: skip
    lines = fairness.summary_lines(worst, p99s)
    by_phase = {line.split()[0]: line for line in lines[1:-1]}
    assert by_phase["none"].split()[1:3] == ["12.0", "ms"]
    assert "+1.0 ms" in by_phase["hold"]
    assert "+20.0 ms" in by_phase["flood"]
    assert "+0.0 ms" in by_phase["dribble"]
    assert "fishnet 42.0  oldmaid 21.0" in by_phase["all"]
    assert lines[-1].endswith("worst 42.0 ms (median of 3 rounds), MET")
    worst["all"] = [60 * ms, 160 * ms, 52 * ms]
    assert fairness.summary_lines(worst, p99s)[-1].endswith(
        "worst 60.0 ms (median of 3 rounds), NOT MET"
    )
