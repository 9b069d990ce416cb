"""A lab's machines as a tournament's pool: Dask distributed (the ``cluster`` extra).

The instructor's machine runs ``dask scheduler``; each lab machine ``dask
worker tcp://HOST:8786``; ``ring tournament ... --cluster tcp://HOST:8786``
sends each game, as its job, to a worker, which plays it with the same
``worker.play_game`` the local pool uses (its own Trio loop, in one of the
worker's threads), and sends back the result and the files. The same seed
gives the same games, and with built-in players the same results, on either
pool.

Before the first game every worker checks every command (``check``), and a
worker that cannot run one is named with it. Everything a program needs
(its command, its files) must be at the same path on every worker: a lab's
shared home folders, or a copy on each machine.

A stop (Ctrl-C) cancels the games not yet started and kills, on every
worker, the programs of the games under way (``sweep``): those games end at
once and are not counted. A worker that dies takes its games with it; Dask
gives them to another worker.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from scenarios.tournament.jobs import BoxSettings, Entrant, GameJob
from scenarios.tournament.pools import Played

# How long to wait for the scheduler to answer at the start.
CONNECT_TIMEOUT = 30.0


class ClusterError(Exception):
    """The cluster cannot be used; the message says why, in one line."""


class DaskPool:
    def __init__(self, address: str, *, timeout: float = CONNECT_TIMEOUT) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError(
                "--cluster needs Dask distributed on this machine and every worker: "
                "pip install 'cardring[cluster]'"
            ) from None
        self.address = address
        self.timeout = timeout
        try:
            self.client: Any = Client(address, timeout=timeout)
        except OSError as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        self._futures: list[Any] = []

    def workers(self) -> list[str]:
        return sorted(self.client.scheduler_info()["workers"])

    def check(self, entrants: Sequence[Entrant], box: BoxSettings | None = None) -> list[str]:
        """Every worker checks every command, and its box; each problem names its worker."""
        try:  # workers started with the scheduler may still be joining it
            self.client.wait_for_workers(1, timeout=self.timeout)
        except TimeoutError:
            return [f"the Dask scheduler at {self.address} has no workers "
                    f"(none joined within {self.timeout:g} s)"]  # fmt: skip
        try:
            found = self.client.run(_check_here, list(entrants), box)
        except Exception as exc:  # a worker without cardring cannot even unpickle the call
            return [f"a worker cannot run cardring's games ({type(exc).__name__}: {exc}): "
                    "install cardring on every worker"]  # fmt: skip
        return [f"worker {worker}: {problem}"
                for worker, problems in sorted(found.items()) for problem in problems]  # fmt: skip

    def sweep(self, prefix: str) -> None:
        from scenarios.programs import sweep

        self.client.run(sweep, prefix)

    def play(self, jobs: Sequence[GameJob]) -> Iterator[Played]:
        from distributed import as_completed

        from scenarios.tournament.worker import play_game

        if not jobs:
            return
        futures = self.client.map(
            play_game, list(jobs), key=[f"game-{job.tag_prefix}-{job.number}" for job in jobs],
            pure=False,
        )  # fmt: skip
        self._futures = futures
        by_key = {future.key: job for future, job in zip(futures, jobs, strict=True)}
        for future in as_completed(futures):
            job = by_key[future.key]
            try:
                yield job, future.result()
            except Exception as exc:  # the game's failure, or its worker's
                yield job, exc

    def stop(self) -> None:
        if self._futures:
            self.client.cancel(self._futures)

    def close(self) -> None:
        self.client.close()


def _check_here(entrants: list[Entrant], box: BoxSettings | None) -> list[str]:
    from scenarios.tournament.worker import check_box, check_commands

    return check_box(box) + check_commands(entrants)
