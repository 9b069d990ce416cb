"""The handoff's floor: real processes passing offer, ok, pick and card round a ring."""

from __future__ import annotations

import pytest

from scenarios.bench import ring_floor

pytestmark = pytest.mark.scenario

TIMEOUT = 60.0  # generous, as for the scenarios: CI machines can be slow and loaded


def test_every_handoff_after_the_first_lap_is_timed() -> None:
    floor = ring_floor.measure(nodes=3, handoffs=30, timeout=TIMEOUT)
    # The first lap (one handoff a node) warms the connections up and is not counted.
    assert floor.handoffs == 30 - 3
    # Each handoff is three passes between processes: it takes time, and not seconds.
    assert 0 < floor.median <= floor.p99 < 1.0
