"""FishNet at saturation (issue 46): many games against the built-in spot started at once
through one ``ring serve --fishnet``, from a load of our own, and a raw echo beside it.

The load is plain asyncio (none of the project's code): each game a connection that plays
``play <name> spot`` to its end, asking for the rank it holds most of, so the same load
measures any revision's server (``--server-python``: the interpreter whose ``ring`` serves;
``make bench-compare`` passes the revision's). The yardstick, in the same run: the raw Trio
line echo (``scenarios.bench.pingpong echo``) under the same number of connections, each
sending as many lines, one at a time, as a game's client sends on average. Figures: games a
second, the games' p50/p99 time, the echo's lines a second, and games/s against it.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from scenarios.bench.pingpong import first_line

GAMES = 500
GAME_TIMEOUT = 300.0
START_TIMEOUT = 30.0


@dataclass
class Played:
    seconds: float
    lines_sent: int
    result: str


async def play_spot(host: str, port: int, name: str) -> Played:
    """One game against spot, to its end: the rank held most of, every turn."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    hand: collections.Counter[int] = collections.Counter()
    sent, result = 1, "none"
    writer.write(f"play {name} spot\n".encode())
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            word, *rest = line.decode().split()
            if word == "fish":
                hand[int(rest[0])] += 1
            elif word == "oppgives":
                hand[int(rest[1])] += int(rest[0])
            elif word == "request":
                hand.pop(int(rest[0]), None)
            elif word == "yourturn":
                for rank in [r for r, n in hand.items() if n >= 4]:
                    del hand[rank]  # a book: the server took it silently
                held = [r for r, n in hand.items() if n > 0]
                ask = f"request {max(held, key=lambda r: hand[r])}\n" if held else "pass\n"
                writer.write(ask.encode())
                sent += 1
            elif word in ("youwin", "youlose", "tiegame"):
                result = word
    finally:
        writer.close()
    return Played(time.perf_counter() - started, sent, result)


async def echo_lines(host: str, port: int, lines: int) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    for _ in range(lines):
        writer.write(b"ping\n")
        await reader.readline()
    writer.close()


def start(argv: list[str], prefix: str) -> tuple[subprocess.Popen[str], str, int]:
    """A server process (from a neutral folder, so an installed revision is the one run)
    and the address its first line of that ``prefix`` gives; every read bounded."""
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        cwd=tempfile.gettempdir(),
    )  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while line := first_line(process, deadline - time.monotonic(), argv[0]):
            if line.startswith(prefix):
                host, _, port = line.removeprefix(prefix).split()[0].rpartition(":")
                return process, host, int(port)
    except RuntimeError:
        pass  # said nothing in time
    process.kill()
    raise SystemExit(f"no '{prefix}' line from {' '.join(argv)}")


async def load(host: str, port: int, games: int) -> tuple[float, list[Played]]:
    started = time.perf_counter()
    played = await asyncio.wait_for(
        asyncio.gather(*(play_spot(host, port, f"s{n}") for n in range(games))), GAME_TIMEOUT
    )
    return time.perf_counter() - started, list(played)


async def echo_load(host: str, port: int, connections: int, lines: int) -> float:
    started = time.perf_counter()
    each = (echo_lines(host, port, lines) for _ in range(connections))
    await asyncio.wait_for(asyncio.gather(*each), GAME_TIMEOUT)
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.fishnet_saturation")
    parser.add_argument("--games", type=int, default=GAMES)
    parser.add_argument("--seed", type=int, default=1530)
    parser.add_argument("--server-python", default=sys.executable,
                        help="the interpreter whose ring serves (default: this one)")  # fmt: skip
    args = parser.parse_args(argv)
    serve = [args.server_python, "-m", "ring", "serve", "--fishnet", "0", "--host", "127.0.0.1",
             "--seed", str(args.seed), "--no-advertise",
             # Every game at once: more connections than a server allows by default (256).
             "--max-connections", str(max(256, 2 * args.games))]  # fmt: skip
    server, host, port = start(serve, "fishnet listening on ")
    try:
        elapsed, played = asyncio.run(load(host, port, args.games))
    finally:
        server.kill()
        server.wait()
    unfinished = sum(p.result == "none" for p in played)
    lines = round(statistics.mean(p.lines_sent for p in played))
    echo, ehost, eport = start(
        [sys.executable, "-m", "scenarios.bench.pingpong", "echo", "--timeout", "600"],
        "echo listening on ",
    )
    try:
        echo_elapsed = asyncio.run(echo_load(ehost, eport, args.games, lines))
    finally:
        echo.kill()
        echo.wait()
    times = sorted(p.seconds for p in played)
    rate = args.games / elapsed
    echo_rate = args.games * lines / echo_elapsed
    print(f"{args.games} FishNet games against spot at once through ring serve "
          f"({args.server_python}); {unfinished} unfinished; "
          f"{lines} client lines a game")  # fmt: skip
    print(f"  games a second          {rate:.1f} games/s")
    print(f"  game time p50           {statistics.median(times) * 1e3:.1f} ms")
    print(f"  game time p99           {times[int(0.99 * (len(times) - 1))] * 1e3:.1f} ms")
    print(f"  echo lines a second     {echo_rate:.0f} /s")
    print(f"  game lines / echo lines  {rate * lines / echo_rate:.3f}x")
    return 1 if unfinished else 0


if __name__ == "__main__":
    raise SystemExit(main())
