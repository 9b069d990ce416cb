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


def test_a_checked_floor_asks_its_table_once_a_handoff() -> None:
    # The witnessed handoff's floor (oldmaid.md 14.6): the picker checks each offer with a
    # ninth process before its ok, so the table's stand-in answers every handoff's check.
    floor = ring_floor.measure(nodes=3, handoffs=30, timeout=TIMEOUT, checked=True)
    assert floor.checks == 30
    assert floor.handoffs == 30 - 3
    assert 0 < floor.median <= floor.p99 < 1.0
