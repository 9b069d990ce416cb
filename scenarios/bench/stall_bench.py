"""``make bench-stall``: does one player's legal game stall the other services of ``ring serve``?

One ``ring serve`` process runs FishNet and the Old Maid table on loopback.
A client asks the table for ``status`` every ``INTERVAL`` (10 ms) and times
each reply, in three phases of the same run:

- alone: nothing else runs (the baseline);
- beside games against spot: FishNet clients that always pass play spot,
  game after game (the control: the same games' own work, and no search);
- while smarx searches: the same clients play smarx. Passing runs the deck
  down while both hands stay small, which is where smarx searches the rest
  of the game exactly (each decision up to half a second of CPU).

It prints each phase's p50, p99 and max and its ratio to the baseline, and,
as the passers saw them, how long each built-in player took for its longest
turn (from a pass to the next ``yourturn``): smarx's shows that the
searches ran. Issue
28 measured a p99 of 1.1 ms alone and 413 ms with the searches on the
server's loop. A measurement, not a test: it exits 0 whatever the figures,
and 1 when a game or the server failed (then they cannot be trusted).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ring.wire.net import dial
from scenarios.bench.pingpong import percentile
from scenarios.processes import ChildProcess, ring_command
from services.fishnet.conversation import ClientError, play_one_game

INTERVAL = 0.010  # seconds between status requests
DURATION = 20.0  # seconds a phase
PASSERS = 2  # always-pass clients at once
SEED = 28
START_TIMEOUT = 30.0
REPLY_TIMEOUT = 10.0
GAME_TIMEOUT = 60.0


@dataclass
class Latency:
    """The table's status replies in one phase, as the poller timed them."""

    name: str
    samples: list[float] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return percentile(self.samples, 0.50)

    @property
    def p99(self) -> float:
        return percentile(self.samples, 0.99)

    @property
    def maximum(self) -> float:
        return max(self.samples)


@dataclass
class Passers:
    """What the always-pass clients saw of their opponent."""

    opponent: str
    games: int = 0
    failures: list[str] = field(default_factory=list)
    longest_turn: float = 0.0  # seconds from a pass to the next yourturn


class _AlwaysPass:
    """A FishNet client's agent that answers every ``yourturn`` with ``pass``."""

    def __init__(self, passers: Passers) -> None:
        self.passers = passers
        self.passed_at: float | None = None

    async def hear(self, line: str) -> str | None:
        if line != "yourturn":
            return None
        now = time.perf_counter()
        if self.passed_at is not None:
            self.passers.longest_turn = max(self.passers.longest_turn, now - self.passed_at)
        self.passed_at = now
        return "pass"


async def poll_status(address: tuple[str, int], phase: Latency, duration: float) -> None:
    """Ask the table for its status every INTERVAL for ``duration``; time each reply."""
    stream = await dial(*address, timeout=REPLY_TIMEOUT)
    async with stream:
        buffer = b""
        start = trio.current_time()
        ticks = 0
        while trio.current_time() - start < duration:
            sent = time.perf_counter()
            with trio.fail_after(REPLY_TIMEOUT):
                await stream.send_all(b'{"cmd":"status"}\n')
                while b"\n" not in buffer:
                    chunk = await stream.receive_some(65536)
                    if not chunk:
                        raise RuntimeError("the table closed the status connection")
                    buffer += chunk
            phase.samples.append(time.perf_counter() - sent)
            line, _, buffer = buffer.partition(b"\n")
            json.loads(line)  # a whole reply, or this raises
            ticks += 1
            await trio.sleep_until(start + ticks * INTERVAL)


async def keep_passing(
    address: tuple[str, int], passers: Passers, done: trio.Event, slot: int
) -> None:
    """Play the opponent, always passing, game after game until ``done``."""
    game = 0
    while not done.is_set():
        agent = _AlwaysPass(passers)
        team = f"passer{slot}x{game}"
        try:
            await play_one_game(address, team, passers.opponent, agent, timeout=GAME_TIMEOUT)
        except ClientError as exc:
            passers.failures.append(str(exc))
            return
        passers.games += 1
        game += 1


PHASES = (("beside games against spot", "spot"), ("while smarx searches", "smarx"))


async def measure(
    addresses: dict[str, tuple[str, int]], duration: float, passers: int
) -> tuple[Latency, list[tuple[Latency, Passers]]]:
    """The baseline, then each of PHASES with its passers' games."""
    alone = Latency("alone")
    await poll_status(addresses["oldmaid"], alone, duration)
    phases = []
    for name, opponent in PHASES:
        phase, seen = Latency(name), Passers(opponent)
        done = trio.Event()
        async with trio.open_nursery() as nursery:
            for slot in range(passers):
                nursery.start_soon(keep_passing, addresses["fishnet"], seen, done, slot)
            await poll_status(addresses["oldmaid"], phase, duration)
            done.set()  # the games under way finish
        phases.append((phase, seen))
    return alone, phases


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def start_server(workdir: Path, seed: int) -> tuple[ChildProcess, dict[str, tuple[str, int]]]:
    argv = ["serve", "--fishnet", "0", "--oldmaid", "0", "--seed", str(seed)]
    server = ChildProcess("server", argv, workdir, prefix=ring_command())
    addresses = {}
    for _ in range(2):
        line = server.first_line(START_TIMEOUT)
        if line is None or " listening on " not in line:
            server.kill()
            raise RuntimeError(f"ring serve did not start: {server.stderr[-3:]}")
        name, _, address = line.partition(" listening on ")
        addresses[name] = _address(address)
    return server, addresses


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def report(alone: Latency, phases: list[tuple[Latency, Passers]]) -> list[str]:
    lines = [f"Old Maid table status every {INTERVAL * 1e3:g} ms, reply latency at the client:"]
    for phase in (alone, *(phase for phase, _ in phases)):
        ratio = "" if phase is alone else f"  (p99 {phase.p99 / alone.p99:.2f}x alone)"
        lines.append(
            f"  {phase.name:<26} {len(phase.samples):>5} replies  p50 {_ms(phase.p50):>10}  "
            f"p99 {_ms(phase.p99):>10}  max {_ms(phase.maximum):>10}{ratio}"
        )
    for _, seen in phases:
        lines.append(
            f"  always-pass clients v {seen.opponent}: {seen.games} games, its longest turn "
            f"{_ms(seen.longest_turn)} (from a pass to the next yourturn)"
        )
        lines.extend(f"  FAILED: {failure}" for failure in seen.failures)
    return lines


def bench(duration: float, seed: int, passers: int) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="stall-bench-"))
    server, addresses = start_server(workdir, seed)
    try:
        alone, phases = trio.run(measure, addresses, duration, passers)
    finally:
        server.kill()
    for line in report(alone, phases):
        print(line, flush=True)
    failed = any(seen.failures or not seen.games for _, seen in phases)
    if any("Traceback" in line for line in server.stderr):
        print("the server wrote a traceback:", *server.stderr[-10:], sep="\n  ")
        failed = True
    if failed:
        print(f"FAILED: logs kept in {workdir}")
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scenarios.bench.stall_bench", description=__doc__
    )
    parser.add_argument("--duration", type=float, default=DURATION, help="seconds a phase")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--passers", type=int, default=PASSERS, help="always-pass clients at once")
    args = parser.parse_args(argv)
    return bench(args.duration, args.seed, args.passers)


if __name__ == "__main__":
    sys.exit(main())
