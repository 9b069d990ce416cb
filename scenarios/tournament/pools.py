"""Where a tournament's games run: this machine's pool of worker processes.

A pool takes the games' jobs and yields each outcome as its game ends (or
the exception that stopped it), in the order they end. The local pool is a
``ProcessPoolExecutor`` of ``concurrency`` workers started fresh ("spawn":
nothing of the runner's state leaks into a game); each worker plays one game
at a time with ``worker.play_game``. A worker that dies takes only the games
it held, which come back as errors. ``stop`` ends every game under way: the
workers are sent SIGTERM, and each kills its games' programs before it exits.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator, Sequence
from typing import Protocol

from scenarios.programs import sweep
from scenarios.tournament.jobs import BoxSettings, Entrant, GameJob, GameOutcome
from scenarios.tournament.worker import check_commands, play_game, start_worker

Played = tuple[GameJob, GameOutcome | BaseException]


class Pool(Protocol):
    def check(self, entrants: Sequence[Entrant], box: BoxSettings | None = None) -> list[str]:
        """One line for each command that cannot be started where games run, or each
        machine there that cannot make ``box``'s boxes."""

    def sweep(self, prefix: str) -> None:
        """Kill every program whose run token begins with ``prefix``, wherever games run."""

    def play(self, jobs: Sequence[GameJob]) -> Iterator[Played]: ...
    def stop(self) -> None: ...
    def close(self) -> None: ...


class LocalPool:
    """``concurrency`` worker processes on this machine."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None

    def check(self, entrants: Sequence[Entrant], box: BoxSettings | None = None) -> list[str]:
        # This machine's box was probed by the runner already.
        return check_commands(entrants)

    def sweep(self, prefix: str) -> None:
        sweep(prefix)

    def play(self, jobs: Sequence[GameJob]) -> Iterator[Played]:
        if not jobs:
            return
        self._executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=min(self.concurrency, len(jobs)),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=start_worker,
        )
        futures = {self._executor.submit(play_game, job): job for job in jobs}
        for future in concurrent.futures.as_completed(futures):
            job = futures[future]
            try:
                yield job, future.result()
            except Exception as exc:  # the game's failure, or its worker's death
                yield job, exc

    def stop(self) -> None:
        """End the games under way now: their workers kill their programs and exit."""
        executor = self._executor
        if executor is None:
            return
        # The executor has no public way to stop a running call: its worker processes
        # (a private table, stable since Python 3.8, emptied by shutdown) are told to stop.
        workers = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            with contextlib.suppress(ProcessLookupError, OSError):
                os.kill(process.pid, signal.SIGTERM)
        for process in workers:
            process.join(timeout=5)
        self._executor = None

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
