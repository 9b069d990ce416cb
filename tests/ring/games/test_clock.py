"""``ring.games.clock``: a player's clock runs while the loop is free, not while the server works.

A stretch of the server's own work is simulated by blocking the loop in one
step (``time.sleep``), as a search run on the loop did. What is asserted is
what the clock charges, never how long anything took.
"""

from __future__ import annotations

import math
import time

import pytest
import trio
import trio.testing

from ring.games.clock import ALLOWANCE, TIMED_OUT, TurnClock, within

STALL = 0.5


async def test_a_stall_of_the_loop_is_not_charged() -> None:
    clock = TurnClock(STALL / 2)
    time.sleep(STALL)  # the loop is held: another game's step, a collection
    assert not clock.expired()
    assert clock.used() < STALL / 2
    await trio.sleep(0)  # the pass that held the loop has ended: still not charged
    assert not clock.expired()


async def test_a_wait_outlives_a_deadline_the_stall_pushed_back() -> None:
    clock = TurnClock(STALL / 2)
    answered = trio.Event()

    async def answer_after_a_stall() -> None:
        time.sleep(STALL)
        await trio.testing.wait_all_tasks_blocked()  # the old deadline has been seen
        answered.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_after_a_stall)
        assert await within(clock, answered.wait) is None


async def test_the_clock_runs_while_the_loop_waits(autojump_clock: trio.abc.Clock) -> None:
    clock = TurnClock(30)
    start = trio.current_time()
    assert await within(clock, trio.sleep_forever) is TIMED_OUT
    # The mock clock's jump to the deadline is not the server's work.
    assert trio.current_time() - start == pytest.approx(30, abs=ALLOWANCE * 2)
    assert clock.expired()


async def test_time_used_adds_up_across_waits(autojump_clock: trio.abc.Clock) -> None:
    clock = TurnClock(30)
    await trio.sleep(10)
    await trio.sleep(10)
    assert clock.used() == pytest.approx(20, abs=ALLOWANCE * 2)
    assert await within(clock, trio.sleep_forever) is TIMED_OUT


async def test_no_limit_never_runs_out(autojump_clock: trio.abc.Clock) -> None:
    clock = TurnClock(math.inf)
    assert clock.deadline() == math.inf
    with trio.move_on_after(3600):
        await within(clock, trio.sleep_forever)
    assert not clock.expired()


async def test_a_remainder_below_the_clocks_resolution_has_run_out(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The server's own work can leave a limit a remainder too small for a deadline to hold
    (at a loop time of 5600 s, now + 1e-13 is now): that wait would end at once, again and
    again, and on a mock clock, which moves only when all wait, for ever."""
    await trio.sleep(5000.0)
    clock = TurnClock(600.0)
    await trio.sleep(600.0)
    clock._busy_at_start -= math.ulp(600.0)  # a busy pass left one float step of the limit
    assert clock.used() < clock.limit
    assert clock.deadline() == trio.current_time()
    assert clock.expired()
    assert await within(clock, trio.Event().wait) is TIMED_OUT
