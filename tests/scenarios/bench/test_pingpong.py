"""The bench's yardstick: a Trio ping-pong between two processes, and its percentiles."""

from __future__ import annotations

import pytest

from scenarios.bench import pingpong

pytestmark = pytest.mark.scenario

# Generous, as for the scenarios: CI machines can be slow and loaded.
TIMEOUT = 60.0


def test_pingpong_between_two_processes() -> None:
    rtt = pingpong.measure(round_trips=200, warmup=20, timeout=TIMEOUT)
    assert rtt.round_trips == 200
    assert 0 < rtt.minimum <= rtt.median <= rtt.p99 < 1.0


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 2001)]
    assert pingpong.percentile(values, 0.99) == 1980.0
    assert pingpong.percentile(values, 0.5) == 1000.0
    assert pingpong.percentile([3.0], 0.99) == 3.0
