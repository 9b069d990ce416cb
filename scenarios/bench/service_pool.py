"""Several ``ring serve`` processes of one service, for benches that play one game per server.

A bench that needs the server to pair exactly the two clients of one game
gives each worker a server of its own and plays that worker's games one
after another; a pool starts the servers (each with transcripts, on a free
port of loopback) and stops them however the bench ends.
"""

from __future__ import annotations

import concurrent.futures
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import trio

from scenarios.processes import ChildProcess, ring_command

START_TIMEOUT = 30.0

Plan = TypeVar("Plan")
Record = TypeVar("Record")
PlayOne = Callable[[Plan, tuple[str, int]], Awaitable[Record]]


def _play_in_order(play: PlayOne, address: tuple[str, int], plans: list[Plan]) -> list[Record]:
    """A worker process: its plans' games one after another against its own server."""

    async def all_games() -> list[Record]:
        return [await play(plan, address) for plan in plans]

    return trio.run(all_games)


class ServicePool:
    """``count`` processes of ``ring serve --SERVICE 0 --seed S+i --transcripts DIR OPTIONS``."""

    def __init__(self, service: str, count: int, seed: int, options: Sequence[str] = ()) -> None:
        self.service = service
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{service}-bench-"))
        self.children: list[ChildProcess] = []
        self.addresses: list[tuple[str, int]] = []
        try:
            for i in range(count):
                self._start(f"server{i}", seed + i, options)
        except BaseException:
            self.close()
            raise

    def _start(self, name: str, seed: int, options: Sequence[str]) -> None:
        argv = [
            "serve", f"--{self.service}", "0", "--seed", str(seed),
            "--transcripts", str(self.workdir / name), *options,
        ]  # fmt: skip
        child = ChildProcess(name, argv, self.workdir, prefix=ring_command())
        self.children.append(child)
        line = child.first_line(START_TIMEOUT)
        prefix = f"{self.service} listening on "
        if line is None or not line.startswith(prefix):
            raise RuntimeError(f"the {self.service} server did not start: {child.stderr[-3:]}")
        host, _, port = line.removeprefix(prefix).rpartition(":")
        self.addresses.append((host, int(port)))

    def play(self, play: PlayOne, plans: Sequence[Plan]) -> list[Record]:
        """Every plan, split across one worker process a server; ``play`` plays one game.

        ``play`` must be a module-level function (the workers are processes).
        """
        count = len(self.addresses)
        shares = [list(plans[i::count]) for i in range(count)]
        with concurrent.futures.ProcessPoolExecutor(count) as pool:
            futures = [
                pool.submit(_play_in_order, play, address, share)
                for address, share in zip(self.addresses, shares, strict=True)
                if share
            ]
            return [record for future in futures for record in future.result()]

    def transcripts(self) -> list[Path]:
        return sorted(self.workdir.glob(f"server*/{self.service}/game-*.jsonl"))

    def close(self) -> None:
        for child in self.children:
            child.popen.terminate()
        for child in self.children:
            try:
                child.popen.wait(10)
            except Exception:
                child.popen.kill()
