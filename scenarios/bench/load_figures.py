"""What one load of the capacity bench reports, and the recorders its clients fill.

A load (``scenarios.bench.capacity_load``) prints one ``LoadFigures`` as a
JSON line, which the bench (``scenarios.bench.capacity``) reads back. Its
games write into one ``Recorder``: the latency samples, the games completed
and failed, and the time they were busy. ``Reply`` times a request to its
reply on one connection; ``Relay`` times a move to the board that shows it,
which may reach another connection than the one that sent it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Hashable
from dataclasses import dataclass, field

import trio

from ring.oldmaid.peer import PeerError
from scenarios.bench.pingpong import percentile
from services.fishnet import conversation as fishnet
from services.reversi import conversation as reversi


@dataclass
class LoadFigures:
    load: str
    slots: int
    duration: float  # seconds from the first game's start to the last game's end
    games: int = 0  # completed
    failed: int = 0
    failures: list[str] = field(default_factory=list)  # the first few, one line each
    busy: float = 0.0  # the games' durations added up: busy / duration = games at once
    samples: int = 0
    ambiguous: int = 0
    p50: float = 0.0
    p99: float = 0.0
    mean: float = 0.0
    maximum: float = 0.0
    # The load process's own CPU seconds: a saturated load times its own queue as
    # the server's latency, so the bench prints it beside the server's.
    cpu: float = 0.0
    # How late the load's own loop woke from a short sleep, p50/p99 (``probe_lag``): a
    # reply is timed when the load gets to it, so this much of every figure is the
    # load's own queue, not the server's.
    lag_p50: float = 0.0
    lag_p99: float = 0.0


class Recorder:
    """Latency samples and game counts of one load, and what its games share."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.games = 0
        self.failures: list[str] = []
        self.busy = 0.0
        self.ambiguous = 0
        self.relay = Relay(self)
        self.lags: list[float] = []  # probe_lag's
        # No Tipping forms one game at a time: a request for a seat already
        # granted in the game being formed is DENIED. One request a seat at a
        # time, held until BEGIN, is how a well-behaved pool of clients avoids that.
        self.seat_locks = (trio.Lock(), trio.Lock())

    async def game(self, play: Awaitable[object], *, counted: bool = True) -> None:
        """Play one connection's game; only one connection of each game counts it and its time."""
        start = time.perf_counter()
        try:
            await play
        except (fishnet.ClientError, reversi.ClientError, PeerError) as exc:
            self.failures.append(str(exc))
            return
        if counted:
            self.games += 1
            self.busy += time.perf_counter() - start

    def figures(self, load: str, slots: int, duration: float) -> LoadFigures:
        found = LoadFigures(load, slots, duration, self.games, len(self.failures))
        if self.lags:
            found.lag_p50 = percentile(self.lags, 0.50)
            found.lag_p99 = percentile(self.lags, 0.99)
        found.failures = self.failures[:5]
        found.busy, found.ambiguous = self.busy, self.ambiguous
        if self.samples:
            found.samples = len(self.samples)
            found.p50 = percentile(self.samples, 0.50)
            found.p99 = percentile(self.samples, 0.99)
            found.mean = statistics.fmean(self.samples)
            found.maximum = max(self.samples)
        return found


PROBE_INTERVAL = 0.01  # seconds between the lag probe's wakes


async def probe_lag(recorder: Recorder) -> None:
    """Until cancelled: how much later than asked the load's loop wakes from a sleep.

    The load times each reply when its loop gets round to it; a loop busy with
    hundreds of games (or waiting for a core) adds its own delay to every figure.
    """
    while True:
        asked = time.perf_counter() + PROBE_INTERVAL
        await trio.sleep(PROBE_INTERVAL)
        recorder.lags.append(max(time.perf_counter() - asked, 0.0))


class Reply:
    """One outstanding request on one connection: its send time until the reply comes."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.sent_at: float | None = None

    def sent(self) -> None:
        self.sent_at = time.perf_counter()

    def heard(self) -> None:
        if self.sent_at is not None:
            self.recorder.samples.append(time.perf_counter() - self.sent_at)
            self.sent_at = None


class Relay:
    """Moves sent and not yet seen arriving, keyed by the position they make."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.pending: dict[Hashable, list[float]] = {}

    def sent(self, position: Hashable) -> None:
        self.pending.setdefault(position, []).append(time.perf_counter())

    def arrived(self, position: Hashable) -> None:
        times = self.pending.pop(position, None)
        if times is None:  # a game's first board: no move made it
            return
        if len(times) == 1:
            self.recorder.samples.append(time.perf_counter() - times[0])
        else:
            self.recorder.ambiguous += len(times)
