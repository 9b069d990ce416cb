"""Run one Old Maid game as real OS processes and verify it.

``run_scenario`` starts ``ring table`` on a free loopback port, waits for its
``table listening on HOST:PORT`` line, starts the peers through the ``ring``
command, waits for every process under one deadline, and runs
``scenarios.verify`` over the transcript and event logs. Whatever happens,
no process it started outlives it. ``format_result`` is the summary
``ring scenario N-players`` prints.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scenarios import verify
from scenarios.processes import ChildProcess, ProcessResult, ring_command
from scenarios.verify import CheckResult, GameRecords, GameSummary

# The seed ``ring scenario N-players`` uses without --seed. Chosen (with the
# real table and peers) so that the 8-player game has at least one skip;
# tests/scenarios/test_scenario.py asserts that it still does.
DEFAULT_SEED = 2013

HOST = "127.0.0.1"
MIN_PLAYERS, MAX_PLAYERS = 2, 8
TABLE = "table"
LISTENING = re.compile(r"table listening on (?P<host>\S+):(?P<port>\d+)")


def peer_seeds(seed: int, count: int) -> list[int]:
    """Per-peer seeds: a pure function of the scenario seed, so a game replays exactly."""
    rng = random.Random(f"cardring scenario {seed}")
    return [rng.randrange(2**31) for _ in range(count)]


@dataclass
class ScenarioResult:
    players: int
    seed: int
    workdir: Path
    processes: dict[str, ProcessResult] = field(default_factory=dict)
    records: GameRecords | None = None
    summary: GameSummary | None = None
    checks: list[CheckResult] = field(default_factory=list)
    wall_time: float | None = None  # first process start to last exit
    still_running: list[str] = field(default_factory=list)  # at the deadline
    error: str | None = None  # the scenario could not even be played out

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.checks) and all(c.ok for c in self.checks)


def run_scenario(
    players: int,
    seed: int,
    *,
    workdir: Path,
    timeout: float = 60,
    extra_peers: list[list[str]] | None = None,
    prefix: Callable[[str], Sequence[str]] | None = None,
    table_host: str = HOST,
    table_args: Sequence[str] = (),
    peer_args: Sequence[str] = (),
    discovery: bool = False,
) -> ScenarioResult:
    """Play one game with a table and ``players`` peers as OS processes, then verify it.

    ``extra_peers`` are command lines of further peers (say, an independent
    interop client); they take seats out of ``players``, and the rest are
    ``ring peer`` processes named p1, p2, ... Their arguments may use
    ``{host}``, ``{port}``, ``{table}`` (HOST:PORT) and ``{workdir}`` (so a
    literal brace is written ``{{``). They need not keep an event log; their
    processes are named x1, x2, ...

    The rest serve runs off loopback (``scenarios.lan``): ``prefix(name)`` is
    put before the command of the process of that name (say, ``ip netns exec
    NS``); the table listens on ``table_host``; ``table_args`` and
    ``peer_args`` are appended to the table's and each ``ring peer``'s
    arguments; with ``discovery`` the peers get neither ``--table`` nor
    ``--host``, so they find the table by mDNS and listen on the address
    facing it.

    One deadline, ``timeout`` seconds after the start, covers everything;
    processes still running then are killed and named in ``still_running``.
    """
    extra_peers = extra_peers or []
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"an Old Maid game has {MIN_PLAYERS} to {MAX_PLAYERS} players")
    if len(extra_peers) > players:
        raise ValueError(f"{len(extra_peers)} extra peers do not fit in {players} seats")
    workdir.mkdir(parents=True, exist_ok=True)
    result = ScenarioResult(players=players, seed=seed, workdir=workdir)
    transcript = workdir / "table.jsonl"
    nicks = [f"p{i}" for i in range(1, players - len(extra_peers) + 1)]
    event_logs = {nick: workdir / f"{nick}.events.jsonl" for nick in nicks}
    ring = ring_command()
    wrap = prefix or (lambda _name: ())
    processes: list[ChildProcess] = []
    started = time.monotonic()
    deadline = started + timeout
    try:
        table = ChildProcess(
            TABLE,
            [
                *ring,
                "table",
                "--players", str(players),
                "--port", "0",
                "--host", table_host,
                "--seed", str(seed),
                "--transcript", str(transcript),
                *table_args,
            ],
            workdir,
            wrap(TABLE),
        )  # fmt: skip
        processes.append(table)
        line = table.first_line(deadline - time.monotonic())
        match = LISTENING.fullmatch(line.strip()) if line else None
        if match is None:
            if line is not None:
                what = f"printed {line!r}"
            elif table.popen.poll() is not None:
                what = f"exited ({table.popen.returncode}) without a word"
            else:
                what = f"said nothing within {timeout:g} s"
            result.error = f"the table {what} instead of 'table listening on HOST:PORT'"
        else:
            host, port = match["host"], match["port"]
            for nick, peer_seed in zip(nicks, peer_seeds(seed, len(nicks)), strict=True):
                where = [] if discovery else ["--table", f"{host}:{port}", "--host", HOST]
                argv = [
                    *ring,
                    "peer",
                    "--nick", nick,
                    *where,
                    "--seed", str(peer_seed),
                    "--events", str(event_logs[nick]),
                    *peer_args,
                ]  # fmt: skip
                processes.append(ChildProcess(nick, argv, workdir, wrap(nick)))
            fields = {"host": host, "port": port, "table": f"{host}:{port}", "workdir": workdir}
            for number, command in enumerate(extra_peers, 1):
                argv = [part.format(**fields) for part in command]
                processes.append(ChildProcess(f"x{number}", argv, workdir, wrap(f"x{number}")))
        # A table that never listened has no game to wait for: kill it now.
        for process in processes if result.error is None else []:
            if not process.wait(deadline):
                result.still_running.append(process.name)
        if result.error is None and not result.still_running:
            # Waiting in turn returns at the last exit, whatever order they end in.
            result.wall_time = time.monotonic() - started
    finally:
        for process in processes:
            process.kill()
    result.processes = {p.name: p.result() for p in processes}
    if result.still_running:
        late = f"timed out after {timeout:g} s; still running: {', '.join(result.still_running)}"
        result.error = f"{result.error}; {late}" if result.error else late
    result.records = verify.load_records(
        transcript,
        event_logs,
        # A process killed at the deadline has no exit code of its own.
        exits={
            p.name: None if p.name in result.still_running else p.returncode
            for p in result.processes.values()
        },
        lines={p.name: p.stdout for p in result.processes.values()},
    )
    result.summary = verify.summarise(result.records)
    result.checks = verify.verify(result.records)
    return result


def format_result(result: ScenarioResult) -> str:
    """The human summary ``ring scenario`` prints."""
    lines = [f"scenario {result.players}-players, seed {result.seed}"]
    summary = result.summary
    if summary is not None:
        lines += [
            f"  players   {result.players}, seated {' '.join(summary.seats) or '(unknown)'}",
            f"  handoffs  {len(summary.handoffs)} ({summary.offers} offers, "
            f"{summary.passes} passes)",
            f"  skips     {summary.skips}",
            f"  out       {', '.join(summary.out_order) or '(nobody)'}",
            f"  loser     {summary.loser or '(none)'}",
        ]
    wall = "n/a" if result.wall_time is None else f"{result.wall_time:.3f} s"
    lines.append(f"  wall time {wall}")
    if result.error:
        lines.append(f"ERROR {result.error}")
    for check in result.checks:
        lines.append(f"{'PASS' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    if not result.ok:
        for process in result.processes.values():
            if process.returncode != 0 and process.stderr:
                lines.append(f"  {process.name} stderr: {process.stderr[-1]}")
    return "\n".join(lines)
