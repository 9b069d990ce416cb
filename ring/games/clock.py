"""Players' clocks that charge a player only for its own time, not for the server's.

A move clock measured as "loop time since the prompt" charges a player for
whatever else the server did meanwhile: if one step of another game holds
the loop for half a second, every clock runs on, and a reply that arrived in
time sits unread until a deadline has already passed. So a ``TurnClock``
counts the wall time since it started, less the time the loop spent in
*long stretches of work*: each pass of Trio's scheduler over the tasks that
are ready (the time between two polls for I/O) beyond ``ALLOWANCE`` seconds.
While the loop waits for I/O it counts in full; so does a short pass (a
reply noticed late by at most ``ALLOWANCE``). A stretch of the server's own
work that overlaps the player's thinking is not charged either: the clock
leans the player's way by at most what the server itself took.

``TurnClock(limit)`` starts now; ``used()`` is the time charged so far;
``deadline()`` is the loop time at which the limit runs out if the loop stays
free, so a wait is ``with trio.move_on_at(clock.deadline())`` in a loop that
waits again while ``clock.expired()`` is false (``within`` does it). The
meter behind it is a Trio instrument, installed in each run at its first use.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

T = TypeVar("T")

# A scheduler pass up to this long is charged to the clocks running through it.
ALLOWANCE = 0.005
# What is left of a limit below this has run out: a deadline that close to a loop time
# of hundreds of seconds is that time itself in floating point, and a wait for it would
# end at once, again and again (a test's mock clock, which only moves when all wait).
RESOLUTION = 1e-6


class _BusyMeter(trio.abc.Instrument):
    """Total time spent in scheduler passes beyond ``ALLOWANCE``, since the run began.

    A pass is timed on the loop's clock and on the real one, and counts the
    smaller: on the real clock they agree, while a test's mock clock may jump
    a minute within a pass that did no work.
    """

    def __init__(self) -> None:
        self.busy = 0.0  # passes ended so far
        self.pass_began: tuple[float, float] | None = None  # None while waiting for I/O

    def after_io_wait(self, timeout: float) -> None:
        self.pass_began = (trio.current_time(), time.perf_counter())

    def before_io_wait(self, timeout: float) -> None:
        self.busy += self._this_pass()
        self.pass_began = None

    def busy_now(self) -> float:
        """Busy time so far, the pass under way included."""
        return self.busy + self._this_pass()

    def _this_pass(self) -> float:
        if self.pass_began is None:
            return 0.0
        loop, real = self.pass_began
        took = min(trio.current_time() - loop, time.perf_counter() - real)
        return max(0.0, took - ALLOWANCE)


_METER: trio.lowlevel.RunVar[_BusyMeter] = trio.lowlevel.RunVar("ring.games.clock meter")


def _meter() -> _BusyMeter:
    try:
        return _METER.get()
    except LookupError:
        meter = _BusyMeter()
        meter.after_io_wait(0.0)  # installed mid-pass: this pass counts from now
        trio.lowlevel.add_instrument(meter)
        _METER.set(meter)
        return meter


class TurnClock:
    """One player's time for one wait (``limit`` seconds; ``math.inf``: no limit)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self._meter = _meter()
        self._started = trio.current_time()
        self._busy_at_start = self._meter.busy_now()

    def used(self) -> float:
        """Seconds charged so far: the time since the start, less the server's long passes."""
        elapsed = trio.current_time() - self._started
        return max(0.0, elapsed - (self._meter.busy_now() - self._busy_at_start))

    def expired(self) -> bool:
        return self.used() >= self.limit - RESOLUTION

    def deadline(self) -> float:
        """The loop time at which the limit runs out if the loop stays free from now on."""
        if self.limit == math.inf:
            return math.inf
        return trio.current_time() + max(0.0, self.limit - self.used())


class TimedOut:
    """``within``'s answer when the clock ran out."""


TIMED_OUT = TimedOut()


async def within(clock: TurnClock, wait: Callable[[], Awaitable[T]]) -> T | TimedOut:
    """``await wait()`` until it answers, or ``TIMED_OUT`` once ``clock`` has run out.

    ``wait`` is called again after each deadline that the server's own work
    pushed back, so it must lose nothing when cancelled (a read, a channel's
    receive).
    """
    while True:
        deadline = clock.deadline()
        if deadline == math.inf:  # no limit (a built-in player's turn): no cancel scope
            return await wait()
        with trio.move_on_at(deadline):
            return await wait()
        if clock.expired():
            return TIMED_OUT
