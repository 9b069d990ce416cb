"""Run one Old Maid game as real OS processes and verify it.

``run_scenario`` starts ``ring table`` on a free loopback port, waits for its
``table listening on HOST:PORT`` line, starts the peers through the ``ring``
command, waits for every process under one deadline, and runs
``scenarios.oldmaid.verifier.verify`` over the transcript and event logs. Whatever happens,
no process it started outlives it. ``format_result`` is the summary
``ring scenario N-players`` prints.

``Run`` (the processes under one deadline), ``verify_game`` and the line
helpers of ``format_result`` are shared with ``scenarios.oldmaid.several_games``,
which plays several such games at one table.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scenarios.oldmaid.verifier import verify
from scenarios.oldmaid.verifier.verify import Finding, GameRecords, GameSummary
from scenarios.processes import ChildProcess, ProcessResult, ring_command

# The seed ``ring scenario N-players`` uses without --seed. Chosen (with the
# real table and peers) so that the 8-player game has at least one skip;
# tests/scenarios/oldmaid/test_game.py asserts that it still does.
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
    findings: list[Finding] = field(default_factory=list)
    wall_time: float | None = None  # first process start to last exit
    still_running: list[str] = field(default_factory=list)  # at the deadline
    error: str | None = None  # the scenario could not even be played out

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.findings) and all(c.ok for c in self.findings)


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

    The rest serve runs off loopback (``scenarios.oldmaid.lan``): ``prefix(name)`` is
    put before the command of the process of that name (say, ``ip netns exec
    NS``); the table listens on ``table_host``; ``table_args`` and
    ``peer_args`` are appended to the table's and each ``ring peer``'s
    arguments; with ``discovery`` the peers get neither ``--server`` nor
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
    run = Run(workdir, timeout, prefix)
    try:
        game = ["--players", str(players), "--transcript", str(transcript), *table_args]
        listening = run.start_table(ring, game, seed, host=table_host)
        if isinstance(listening, str):
            result.error = listening
        else:
            host, port = listening
            seeds = peer_seeds(seed, len(nicks))
            where = None if discovery else listening
            run.start_peers(ring, nicks, seeds, event_logs, where, peer_args)
            fields = {"host": host, "port": port, "table": f"{host}:{port}", "workdir": workdir}
            for number, command in enumerate(extra_peers, 1):
                run.start(f"x{number}", [part.format(**fields) for part in command])
        if result.error is None:  # a table that never listened has no game to wait for
            result.wall_time = run.wait()
    finally:
        run.kill()
    result.processes = run.results()
    result.still_running = run.still_running
    result.error = run.late(result.error)
    verify_game(result, transcript, event_logs, run.exits(), run.lines())
    return result


class Run:
    """The processes of one scenario run under one deadline, ``timeout`` s after it began.

    ``start_table`` and ``start_peers`` start ``ring table`` and ``ring peer``
    as every Old Maid scenario does; ``wait`` waits for all of them, and
    ``kill`` (always, in a ``finally``) makes sure none outlives the run.
    """

    def __init__(
        self, workdir: Path, timeout: float, prefix: Callable[[str], Sequence[str]] | None = None
    ) -> None:
        self.workdir = workdir
        self.timeout = timeout
        self.prefix = prefix or (lambda _name: ())
        self.processes: list[ChildProcess] = []
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.still_running: list[str] = []  # at the deadline

    def start(self, name: str, argv: list[str]) -> ChildProcess:
        process = ChildProcess(name, argv, self.workdir, self.prefix(name))
        self.processes.append(process)
        return process

    def start_table(
        self, ring: Sequence[str], options: Sequence[str], seed: int, *, host: str = HOST
    ) -> tuple[str, str] | str:
        """Start ``ring table`` with ``options`` on a free port of ``host``, and wait for
        its first line: the HOST, PORT it listens on, or why it does not listen."""
        argv = [*ring, "table", "--port", "0", "--host", host, "--seed", str(seed), *options]
        table = self.start(TABLE, argv)
        line = table.first_line(self.deadline - time.monotonic())
        match = LISTENING.fullmatch(line.strip()) if line else None
        if match is not None:
            return match["host"], match["port"]
        if line is not None:
            what = f"printed {line!r}"
        elif table.popen.poll() is not None:
            what = f"exited ({table.popen.returncode}) without a word"
        else:
            what = f"said nothing within {self.timeout:g} s"
        return f"the table {what} instead of 'table listening on HOST:PORT'"

    def start_peers(
        self,
        ring: Sequence[str],
        nicks: Sequence[str],
        seeds: Sequence[int],
        event_logs: Mapping[str, Path],
        table: tuple[str, str] | None,
        peer_args: Sequence[str] = (),
    ) -> None:
        """``ring peer`` processes, one per nick, each with its seed and event log.

        They join the ``table`` (HOST, PORT) and listen on loopback; with no
        ``table`` they find one by mDNS and listen on the address facing it.
        """
        where = [] if table is None else ["--server", ":".join(table), "--host", HOST]
        for nick, peer_seed in zip(nicks, seeds, strict=True):
            argv = [
                *ring,
                "peer",
                "--name", nick,
                *where,
                "--seed", str(peer_seed),
                "--events", str(event_logs[nick]),
                *peer_args,
            ]  # fmt: skip
            self.start(nick, argv)

    def wait(self) -> float | None:
        """Wait for every process until the deadline: the wall time if all exited, else None."""
        for process in self.processes:
            if not process.wait(self.deadline):
                self.still_running.append(process.name)
        # Waiting in turn returns at the last exit, whatever order they end in.
        return None if self.still_running else time.monotonic() - self.started

    def kill(self) -> None:
        """Kill whatever still runs, and reap it: no process outlives the run."""
        for process in self.processes:
            process.kill()

    def results(self) -> dict[str, ProcessResult]:
        return {p.name: p.result() for p in self.processes}

    def exits(self) -> dict[str, int | None]:
        """Exit codes by name; a process killed at the deadline has none of its own."""
        return {
            p.name: None if p.name in self.still_running else p.popen.returncode
            for p in self.processes
        }

    def lines(self) -> dict[str, list[str]]:
        return {p.name: list(p.stdout) for p in self.processes}

    def late(self, error: str | None) -> str | None:
        """``error``, plus the processes that were still running at the deadline."""
        if not self.still_running:
            return error
        late = f"timed out after {self.timeout:g} s; still running: {', '.join(self.still_running)}"
        return f"{error}; {late}" if error else late


def verify_game(
    result: ScenarioResult,
    transcript: Path | None,
    event_logs: Mapping[str, Path],
    exits: Mapping[str, int | None],
    lines: Mapping[str, list[str]],
) -> None:
    """Load one game's records into ``result``, summarise them and run every check."""
    result.records = verify.load_records(transcript, event_logs, exits=exits, lines=lines)
    result.summary = verify.summarise(result.records)
    result.findings = verify.verify(result.records)


def format_result(result: ScenarioResult) -> str:
    """The human summary ``ring scenario`` prints."""
    lines = [f"scenario {result.players}-players, seed {result.seed}"]
    lines += summary_lines(result)
    wall = "n/a" if result.wall_time is None else f"{result.wall_time:.3f} s"
    lines.append(f"  wall time {wall}")
    if result.error:
        lines.append(f"ERROR {result.error}")
    lines += finding_lines(result.findings)
    if not result.ok:
        lines += stderr_lines(result.processes.values())
    return "\n".join(lines)


def summary_lines(result: ScenarioResult) -> list[str]:
    """What the game looked like: seats, handoffs, skips, out order and loser."""
    summary = result.summary
    if summary is None:
        return []
    return [
        f"  players   {result.players}, seated {' '.join(summary.seats) or '(unknown)'}",
        f"  handoffs  {len(summary.handoffs)} ({summary.offers} offers, {summary.passes} passes)",
        f"  skips     {summary.skips}",
        f"  out       {', '.join(summary.out_order) or '(nobody)'}",
        f"  loser     {summary.loser or '(none)'}",
    ]


def finding_lines(findings: Iterable[Finding]) -> list[str]:
    return [f"{'PASS' if f.ok else 'FAIL'}  {f.name}: {f.detail}" for f in findings]


def stderr_lines(processes: Iterable[ProcessResult]) -> list[str]:
    """The last stderr line of each process that failed: usually why it did."""
    return [
        f"  {process.name} stderr: {process.stderr[-1]}"
        for process in processes
        if process.returncode != 0 and process.stderr
    ]
