"""Loopback round-trip time between two Trio processes: the floor under every handoff.

A handoff is a few request/reply exchanges between two peer processes, so
the fair yardstick is the same thing with no game logic: one Trio process
echoing small newline-terminated JSON messages, another Trio process sending
them one at a time and timing each reply, over 127.0.0.1 with TCP_NODELAY as
the peers use.

``python -m scenarios.bench.pingpong server`` prints ``pingpong listening on
HOST:PORT`` and echoes one connection; ``python -m scenarios.bench.pingpong client
HOST:PORT`` prints one JSON line of results. ``measure()`` runs both as OS
processes and returns the client's figures. ``python -m scenarios.bench.pingpong
echo`` echoes every connection, for the capacity bench's yardstick under load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import trio

HOST = "127.0.0.1"
MESSAGE = b'{"cmd":"offer","num_cards":7,"from":"p1"}\n'
READ_SIZE = 65536


@dataclass(frozen=True)
class PingPong:
    round_trips: int
    median: float  # seconds
    p99: float
    minimum: float


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile: the smallest value with at least ``fraction`` of them below."""
    ordered = sorted(values)
    # Rounding first keeps 0.99 * 2000 at rank 1980, not 1981 through float error.
    rank = max(1, math.ceil(round(len(ordered) * fraction, 9)))
    return ordered[rank - 1]


def _nodelay(stream: trio.SocketStream) -> None:
    # Trio sets it already; saying so keeps the yardstick honest if that changes.
    stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)


async def read_line(stream: trio.SocketStream, buffer: bytearray) -> bytes | None:
    while (end := buffer.find(b"\n")) < 0:
        data = await stream.receive_some(READ_SIZE)
        if not data:
            return None
        buffer += data
    line = bytes(buffer[: end + 1])
    del buffer[: end + 1]
    return line


async def serve(timeout: float) -> None:
    """Echo every line of the first connection, then exit."""
    with trio.fail_after(timeout):
        listeners = await trio.open_tcp_listeners(0, host=HOST)
        port = listeners[0].socket.getsockname()[1]
        print(f"pingpong listening on {HOST}:{port}", flush=True)
        stream = await listeners[0].accept()
        for listener in listeners:
            await listener.aclose()
        _nodelay(stream)
        buffer = bytearray()
        async with stream:
            while (line := await read_line(stream, buffer)) is not None:
                await stream.send_all(line)


async def echo_every_connection(timeout: float) -> None:
    """Echo every line of every connection, until ``timeout`` (the capacity bench's yardstick)."""
    with trio.move_on_after(timeout):
        listeners = await trio.open_tcp_listeners(0, host=HOST, backlog=4096)
        port = listeners[0].socket.getsockname()[1]
        print(f"echo listening on {HOST}:{port}", flush=True)

        async def echo(stream: trio.SocketStream) -> None:
            buffer = bytearray()
            async with stream:
                try:
                    while (line := await read_line(stream, buffer)) is not None:
                        await stream.send_all(line)
                except trio.BrokenResourceError:
                    pass

        await trio.serve_listeners(echo, listeners)


async def ping(host: str, port: int, round_trips: int, warmup: int, timeout: float) -> PingPong:
    with trio.fail_after(timeout):
        stream = await trio.open_tcp_stream(host, port)
        _nodelay(stream)
        buffer = bytearray()
        times = []
        async with stream:
            for number in range(warmup + round_trips):
                start = time.perf_counter()
                await stream.send_all(MESSAGE)
                if await read_line(stream, buffer) != MESSAGE:
                    raise RuntimeError("the echo server sent back something else")
                if number >= warmup:
                    times.append(time.perf_counter() - start)
    return PingPong(
        round_trips=round_trips,
        median=statistics.median(times),
        p99=percentile(times, 0.99),
        minimum=min(times),
    )


def measure(round_trips: int = 2000, warmup: int = 200, timeout: float = 30) -> PingPong:
    """Run the echo server and the client as two OS processes; every wait is bounded."""
    deadline = time.monotonic() + timeout
    module = [sys.executable, "-m", "scenarios.bench.pingpong"]
    processes: list[subprocess.Popen[str]] = []
    try:
        server = subprocess.Popen(
            [*module, "server", "--timeout", str(timeout)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        processes.append(server)
        address = first_line(server, deadline - time.monotonic(), "the echo server")
        if not address.startswith("pingpong listening on "):
            raise RuntimeError(f"the echo server printed {address!r}")
        client = subprocess.Popen(
            [
                *module,
                "client",
                address.removeprefix("pingpong listening on "),
                "--round-trips", str(round_trips),
                "--warmup", str(warmup),
                "--timeout", str(timeout),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        processes.append(client)
        output, _ = client.communicate(timeout=max(deadline - time.monotonic(), 0.0))
        if client.returncode != 0:
            raise RuntimeError(f"the ping-pong client exited {client.returncode}")
        return PingPong(**json.loads(output.strip().splitlines()[-1]))
    finally:
        stop(processes)


def stop(processes: Sequence[subprocess.Popen[str]]) -> None:
    """Kill each process still running, reap it (within 5 s: never hang), close its pipes."""
    for process in processes:
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def first_line(process: subprocess.Popen[str], timeout: float, name: str) -> str:
    """The process's next stdout line, read in a thread so the wait can time out."""
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    stdout = process.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=max(timeout, 0.0)).strip()
    except queue.Empty:
        raise RuntimeError(f"{name} said nothing within {timeout:.1f} s") from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.pingpong")
    parser.add_argument("role", choices=["server", "client", "measure", "echo"])
    parser.add_argument("address", nargs="?", metavar="HOST:PORT", help="for the client")
    parser.add_argument("--round-trips", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.role == "server":
        trio.run(serve, args.timeout)
        return 0
    if args.role == "echo":
        trio.run(echo_every_connection, args.timeout)
        return 0
    if args.role == "client":
        if args.address is None:
            parser.error("the client needs HOST:PORT")
        host, _, port = args.address.rpartition(":")
        result = trio.run(ping, host, int(port), args.round_trips, args.warmup, args.timeout)
        print(json.dumps(result.__dict__), flush=True)
        return 0
    result = measure(args.round_trips, args.warmup, args.timeout)
    print(
        f"{result.round_trips} round trips: median {result.median * 1e6:.1f} µs, "
        f"p99 {result.p99 * 1e6:.1f} µs, min {result.minimum * 1e6:.1f} µs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
