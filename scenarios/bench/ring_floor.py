"""The handoff's floor: eight Trio processes passing a turn round a ring, no game at all.

The loopback ping-pong (``pingpong.py``) is the issue's yardstick, but it is
hot: two processes bounce one message as fast as they can, so neither ever
sleeps. A ring's handoff is not like that. Eight peers share the machine's
cores, and each one sleeps between its turns; a handoff wakes a sleeping
process three times (the offer, the picker's ``ok`` and ``pick``, the card).
On a virtual machine whose idle cores halt, a wakeup from sleep costs
several times a hot one. This yardstick sends exactly those messages, each
in its own write as the peers do, round a ring of eight processes, with no
parsing, no hand, no log and no table: what is left of a handoff when every
bit of our own work is taken out.

Node ``i`` listens for its left neighbour and dials its right one. Handoff
``k`` goes from node ``k % N`` to node ``(k + 1) % N``: the holder notes the
time and writes the offer; the picker answers ``ok`` and then ``pick``, two
writes; the holder writes the card; the picker notes the time it read the
card, and is the next holder. Both times are ``time.perf_counter()``, one
system-wide monotonic clock on Linux, so they compare across processes.

``measure(checked=True)`` is the floor of a witnessed handoff (docs/protocols/oldmaid.md
14.6): a ninth process stands for the table, and the picker, once it has read the offer,
writes a check to it and reads its answer before its ``ok``: the same messages, in the same
order, between the same number of processes, with no work in any of them.

``measure()`` runs the nodes as OS processes (every wait bounded) and
returns the handoffs' durations; ``python -m scenarios.bench.ring_floor``
prints them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import trio

from scenarios.bench.pingpong import HOST, first_line, percentile, read_line, stop

OFFER = b'{"cmd":"offer","num_cards":7,"from":"p1","handoff":%d}\n'
OK = b'{"status":"ok"}\n'
PICK = b'{"cmd":"pick","card_num":3}\n'
CARD = b'{"status":"ok","card":{"value":"7","suit":"hearts"}}\n'
# A witnessed check as ring peer sends it: the offer as it came, seven hashes and a mac.
CHECK = b'{"cmd":"check_offer","offer":{"from":"p1","seq":1,"num_cards":7,"hashes":[%s],' \
    b'"mac":"%s"}}\n' % (b",".join([b'"%s"' % (b"0" * 32)] * 7), b"0" * 32)
NODES = 8
HANDOFFS = 800


@dataclass(frozen=True)
class Floor:
    handoffs: int
    median: float  # seconds
    p99: float
    checks: int = 0  # offers the table's stand-in answered (checked floors)


async def _node(
    index: int, nodes: int, handoffs: int, timeout: float, table_port: int | None = None
) -> None:
    """One node: listen, learn the right neighbour's port on stdin, play its handoffs
    (with ``table_port``, each offer it is handed checked there first)."""
    started: dict[int, float] = {}
    arrived: dict[int, float] = {}
    with trio.fail_after(timeout):
        listeners = await trio.open_tcp_listeners(0, host=HOST)
        print(listeners[0].socket.getsockname()[1], flush=True)
        stdin = trio.lowlevel.FdStream(0)
        right_port = int((await read_line(stdin, bytearray())) or b"0")
        right, left = await _connect(listeners, right_port)
        right_buffer, left_buffer, table_buffer = bytearray(), bytearray(), bytearray()
        table = None if table_port is None else await trio.open_tcp_stream(HOST, table_port)
        async with right, left:
            for number in range(handoffs):
                if number % nodes == index:  # this node holds the turn: hand it right
                    started[number] = time.perf_counter()
                    await right.send_all(OFFER % number)
                    await read_line(right, right_buffer)  # ok
                    await read_line(right, right_buffer)  # pick
                    await right.send_all(CARD)
                elif (number + 1) % nodes == index:  # the left neighbour hands it here
                    await read_line(left, left_buffer)  # offer
                    if table is not None:
                        await table.send_all(CHECK)
                        await read_line(table, table_buffer)  # the table's ok
                    await left.send_all(OK)
                    await left.send_all(PICK)
                    await read_line(left, left_buffer)  # card
                    arrived[number] = time.perf_counter()
        if table is not None:
            await table.aclose()
    print(json.dumps({"started": started, "arrived": arrived}), flush=True)


async def _table(nodes: int, timeout: float) -> None:
    """The witnessing table's stand-in: answer every check of each of ``nodes`` nodes."""
    with trio.fail_after(timeout):
        listeners = await trio.open_tcp_listeners(0, host=HOST)
        print(listeners[0].socket.getsockname()[1], flush=True)

        checks = 0

        async def answer(stream: trio.SocketStream) -> None:
            nonlocal checks
            buffer = bytearray()
            async with stream:
                while await read_line(stream, buffer):
                    await stream.send_all(OK)
                    checks += 1

        async with trio.open_nursery() as nursery:
            for _ in range(nodes):
                nursery.start_soon(answer, await listeners[0].accept())
            await listeners[0].aclose()
    print(checks, flush=True)


async def _connect(
    listeners: list[trio.SocketListener], right_port: int
) -> tuple[trio.SocketStream, trio.SocketStream]:
    """Dial the right neighbour while accepting the left one (every node does both at once)."""
    accepted: list[trio.SocketStream] = []

    async def accept_left() -> None:
        accepted.append(await listeners[0].accept())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(accept_left)
        right = await trio.open_tcp_stream(HOST, right_port)
    for listener in listeners:
        await listener.aclose()
    return right, accepted[0]


def measure(
    nodes: int = NODES, handoffs: int = HANDOFFS, timeout: float = 60, *, checked: bool = False
) -> Floor:
    """Run the ring as ``nodes`` OS processes (and, ``checked``, a table's stand-in) and
    return its handoffs' durations."""
    deadline = time.monotonic() + timeout
    module = [sys.executable, "-m", "scenarios.bench.ring_floor"]
    processes: list[subprocess.Popen[str]] = []
    try:
        table: list[str] = []
        if checked:
            command = [*module, "table", "--nodes", str(nodes), "--timeout", str(timeout)]
            processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
            table = ["--table-port", _line(processes[0], deadline)]
        for index in range(nodes):
            command = [*module, "node", str(index), "--nodes", str(nodes), *table]
            command += ["--handoffs", str(handoffs), "--timeout", str(timeout)]
            processes.append(
                subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            )
        ring = processes[len(processes) - nodes :]
        ports = [_line(process, deadline) for process in ring]
        for index, process in enumerate(ring):
            assert process.stdin is not None
            process.stdin.write(f"{ports[(index + 1) % nodes]}\n")
            process.stdin.flush()
        started: dict[int, float] = {}
        arrived: dict[int, float] = {}
        for process in ring:
            times = json.loads(_line(process, deadline))
            started.update({int(k): v for k, v in times["started"].items()})
            arrived.update({int(k): v for k, v in times["arrived"].items()})
        checks = int(_line(processes[0], deadline)) if checked else 0
    finally:
        stop(processes)
    # The first lap warms every connection up; the ring's peers are warm too by then.
    durations = [arrived[k] - started[k] for k in range(nodes, handoffs)]
    return Floor(
        handoffs=len(durations),
        median=statistics.median(durations),
        p99=percentile(durations, 0.99),
        checks=checks,
    )


def _line(process: subprocess.Popen[str], deadline: float) -> str:
    """One stdout line of a node, or an error once the deadline has passed."""
    line = first_line(process, deadline - time.monotonic(), "a ring-floor node")
    if not line:
        raise RuntimeError(f"a ring-floor node exited {process.wait(timeout=5)} without a line")
    return line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.ring_floor")
    parser.add_argument("role", choices=["measure", "node", "table"], nargs="?",
                        default="measure")  # fmt: skip
    parser.add_argument("index", type=int, nargs="?", default=0, help="a node's seat")
    parser.add_argument("--nodes", type=int, default=NODES)
    parser.add_argument("--handoffs", type=int, default=HANDOFFS)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--checked", action="store_true",
                        help="each offer checked with a table first (witnessed)")  # fmt: skip
    parser.add_argument("--table-port", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role == "node":
        trio.run(_node, args.index, args.nodes, args.handoffs, args.timeout, args.table_port)
        return 0
    if args.role == "table":
        trio.run(_table, args.nodes, args.timeout)
        return 0
    floor = measure(args.nodes, args.handoffs, args.timeout, checked=args.checked)
    print(
        f"{floor.handoffs} handoffs round {args.nodes} processes"
        f"{' and a table that checks each offer' if args.checked else ''}: "
        f"median {floor.median * 1e3:.3f} ms, p99 {floor.p99 * 1e3:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
