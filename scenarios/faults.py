"""Faults that must end cleanly: a table and peers as OS processes, then a fault.

``ring scenario fault-kill-peer``
    SIGKILL one peer (``p3``) once it has logged ``phase: offer``. The table
    must abort the game naming it (transcript, ``status``, watchers, its last
    line and exit status 1), and every other peer must exit non-zero within
    5 s with one line on stderr and no traceback.
``ring scenario fault-kill-table``
    SIGKILL the table once the last card is dealt: every peer exits non-zero
    within 5 s, one line each.
``ring scenario fault-stop-peer``
    SIGSTOP seat 2 while it waits for the game to start, so player1's first
    ``your_turn`` waits on it. Player1 gives up after ``--peer-timeout`` (2 s
    here) with one line naming the silent player and tells the table why
    (``give_up``): the table aborts naming the stopped player, never the one
    that waited for it, and the others exit within 5 s. The stopped peer is
    then resumed and must end by itself too.

Every moment is chosen from the logs, not from a clock, and the seed fixes
the game, so a run is reproducible. Whatever happens, every process started
here is killed and reaped before the scenario returns.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios import oldmaid_game, processes
from scenarios.oldmaid_game import HOST, LISTENING, TABLE
from scenarios.processes import ChildProcess, ProcessResult
from scenarios.verify import CheckResult
from services.oldmaid.referee import TableGame

NAMES = ("fault-kill-peer", "fault-kill-table", "fault-stop-peer")
PLAYERS = 6
KILL_VICTIM = "p3"
EXIT_BOUND = 5.0  # seconds from the fault (or the first failure) to every exit
STOP_PEER_TIMEOUT = 2.0  # the peers' --peer-timeout in fault-stop-peer
POLL = 0.005  # seconds between looks at a log file or a process

Record = dict[str, Any]


@dataclass
class FaultResult:
    name: str
    players: int
    seed: int
    workdir: Path
    fault: str = ""  # what was done, for the summary
    victim: str | None = None
    fault_at: float | None = None  # time.monotonic() of the signal
    exit_at: dict[str, float] = field(default_factory=dict)  # process name -> its exit
    processes: dict[str, ProcessResult] = field(default_factory=dict)
    status: Record | None = None  # the last status reply seen after the fault
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.checks) and all(c.ok for c in self.checks)

    def after_fault(self, name: str) -> float | None:
        """Seconds from the fault to this process's exit; None if it did not exit."""
        if self.fault_at is None or name not in self.exit_at:
            return None
        return self.exit_at[name] - self.fault_at


# -- watching files and processes ---------------------------------------------------


class _Tail:
    """The complete JSON lines appended to a file so far, read incrementally."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[Record] = []
        self._offset = 0
        self._partial = b""

    def read(self) -> list[Record]:
        """Records that arrived since the last call."""
        try:
            with self.path.open("rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        new = []
        for line in lines:
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    new.append(record)
        self.records += new
        return new


def _watch(
    tails: dict[str, _Tail],
    found: Callable[[str, Record], bool],
    processes: list[ChildProcess],
    deadline: float,
) -> tuple[str, Record] | None:
    """The first (name, record) for which ``found`` is true, polling the files.

    None at the deadline, or once every process has exited (the game ended
    before the moment came).
    """
    while time.monotonic() < deadline:
        for name, tail in tails.items():
            for record in tail.read():
                if found(name, record):
                    return name, record
        if all(p.popen.poll() is not None for p in processes):
            return None
        time.sleep(POLL)
    return None


def _wait_exits(
    processes: list[ChildProcess], deadline: float, exit_at: dict[str, float]
) -> list[str]:
    """Poll until each process exits (noting when) or the deadline; those still running."""
    running = [p for p in processes if p.name not in exit_at]
    while running:
        for process in list(running):
            if process.popen.poll() is not None:
                exit_at[process.name] = time.monotonic()
                running.remove(process)
        if not running or time.monotonic() >= deadline:
            break
        time.sleep(POLL)
    return [p.name for p in running]


class _StatusPoller(threading.Thread):
    """Asks the table for ``status`` every 20 ms until it says aborted (or closes)."""

    def __init__(self, host: str, port: int, deadline: float) -> None:
        super().__init__(daemon=True)
        self.deadline = deadline
        self.last: Record | None = None
        self.sock = socket.create_connection((host, port), timeout=2)

    def run(self) -> None:
        buffer = b""
        with self.sock, contextlib.suppress(OSError, ValueError):
            while time.monotonic() < self.deadline:
                self.sock.sendall(b'{"cmd": "status"}\n')
                while b"\n" not in buffer:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                line, _, buffer = buffer.partition(b"\n")
                reply = json.loads(line)
                if "result" not in reply:
                    continue
                self.last = reply
                if reply.get("aborted") or reply.get("game_over"):
                    return
                time.sleep(0.02)


# -- one game with a fault -----------------------------------------------------------


class _Game:
    """A table and ``ring peer`` processes p1..pN, as ``oldmaid_game.run_scenario`` starts them."""

    def __init__(self, players: int, seed: int, workdir: Path, peer_args: list[str]) -> None:
        self.players = players
        self.seed = seed
        self.workdir = workdir
        self.peer_args = peer_args
        self.transcript = workdir / "table.jsonl"
        self.nicks = [f"p{i}" for i in range(1, players + 1)]
        self.event_logs = {nick: workdir / f"{nick}.events.jsonl" for nick in self.nicks}
        # The moments are read from these files: none may be left from a last run.
        for path in [self.transcript, *self.event_logs.values()]:
            path.unlink(missing_ok=True)
        self.processes: dict[str, ChildProcess] = {}
        self.host = HOST
        self.port = 0

    def start(self, deadline: float, *, hold_back: str | None = None) -> str | None:
        """Start the table and the peers (all but ``hold_back``); why not, if the table
        never listened."""
        ring = processes.ring_command()
        table = ChildProcess(
            TABLE,
            [
                *ring, "table",
                "--players", str(self.players),
                "--port", "0",
                "--host", HOST,
                "--seed", str(self.seed),
                "--transcript", str(self.transcript),
            ],
            self.workdir,
        )  # fmt: skip
        self.processes[TABLE] = table
        line = table.first_line(deadline - time.monotonic())
        match = LISTENING.fullmatch(line.strip()) if line else None
        if match is None:
            return f"the table printed {line!r} instead of 'table listening on HOST:PORT'"
        self.host, self.port = match["host"], int(match["port"])
        for nick in self.nicks:
            if nick != hold_back:
                self.start_peer(nick)
        return None

    def start_peer(self, nick: str) -> None:
        """``ring peer`` as ``oldmaid_game.run_scenario`` starts it: same seed, same log."""
        seeds = oldmaid_game.peer_seeds(self.seed, len(self.nicks))
        argv = [
            *processes.ring_command(), "peer",
            "--nick", nick,
            "--table", f"{self.host}:{self.port}",
            "--host", HOST,
            "--seed", str(seeds[self.nicks.index(nick)]),
            "--events", str(self.event_logs[nick]),
            *self.peer_args,
        ]  # fmt: skip
        self.processes[nick] = ChildProcess(nick, argv, self.workdir)

    def seating(self) -> list[str]:
        """The seat order the table will give p1..pN: the referee's own, from the seed."""
        referee = TableGame(self.players, self.seed)
        for number, nick in enumerate(self.nicks, 1):
            referee.join(nick, (HOST, number))
        return [seat.nick for seat in referee.start()]

    def peers(self, *, but: str | None = None) -> list[ChildProcess]:
        return [p for name, p in self.processes.items() if name not in (TABLE, but)]

    def signal(self, name: str, signum: int) -> float:
        self.processes[name].popen.send_signal(signum)
        return time.monotonic()

    def reap(self) -> dict[str, ProcessResult]:
        for process in self.processes.values():
            if process.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.popen.pid, signal.SIGCONT)
            process.kill()
        return {name: p.result() for name, p in self.processes.items()}

    def transcript_records(self) -> list[Record]:
        tail = _Tail(self.transcript)
        tail.read()
        return tail.records


def run_fault(
    name: str,
    seed: int = oldmaid_game.DEFAULT_SEED,
    *,
    workdir: Path,
    timeout: float = 60.0,
    players: int = PLAYERS,
) -> FaultResult:
    """Play one game as OS processes, inflict the fault ``name`` on it, and check the end."""
    if name not in NAMES:
        raise ValueError(f"unknown fault scenario {name!r}")
    workdir.mkdir(parents=True, exist_ok=True)
    result = FaultResult(name=name, players=players, seed=seed, workdir=workdir)
    stopping = name == "fault-stop-peer"
    peer_args = ["--peer-timeout", f"{STOP_PEER_TIMEOUT:g}"] if stopping else []
    game = _Game(players, seed, workdir, peer_args)
    deadline = time.monotonic() + timeout
    try:
        if stopping:
            _stop_peer(game, result, deadline)
        else:
            result.error = game.start(deadline)
            if result.error is None and name == "fault-kill-peer":
                _kill_peer(game, result, deadline)
            elif result.error is None:
                _kill_table(game, result, deadline)
    finally:
        result.processes = game.reap()
    return result


def _kill_peer(game: _Game, result: FaultResult, deadline: float) -> None:
    victim = KILL_VICTIM
    tails = {victim: _Tail(game.event_logs[victim])}
    seen = _watch(
        tails,
        lambda _n, r: r.get("event") == "phase" and r.get("phase") == "offer",
        list(game.processes.values()),
        deadline,
    )
    if seen is None:
        result.error = f"{victim} never logged phase offer"
        return
    poller = _StatusPoller(game.host, game.port, deadline)
    result.victim = victim
    result.fault = f"SIGKILL {victim} once it logged phase offer"
    result.fault_at = game.signal(victim, signal.SIGKILL)
    poller.start()
    survivors = game.peers(but=victim)
    _wait_exits(
        [*survivors, game.processes[TABLE]],
        min(deadline, result.fault_at + EXIT_BOUND + 5),
        result.exit_at,
    )
    poller.join(timeout=max(0.0, deadline - time.monotonic()))
    result.status = poller.last
    result.processes = game.reap()
    result.checks = [
        *_exit_checks(result, survivors, EXIT_BOUND),
        *_table_abort_checks(game, result, victim),
        _status_check(result, victim),
        _watcher_check(game, result, survivors, victim),
    ]


def _kill_table(game: _Game, result: FaultResult, deadline: float) -> None:
    tails = {TABLE: _Tail(game.transcript)}
    seen = _watch(
        tails,
        lambda _n, r: r.get("event") == "dealt" and r.get("last") is True,
        list(game.processes.values()),
        deadline,
    )
    if seen is None:
        result.error = "the table never dealt the last card"
        return
    result.victim = TABLE
    result.fault = "SIGKILL the table once it dealt the last card"
    result.fault_at = game.signal(TABLE, signal.SIGKILL)
    survivors = game.peers()
    _wait_exits(survivors, min(deadline, result.fault_at + EXIT_BOUND + 5), result.exit_at)
    result.processes = game.reap()
    result.checks = _exit_checks(result, survivors, EXIT_BOUND)


def _stop_peer(game: _Game, result: FaultResult, deadline: float) -> None:
    # A stopped peer is noticed only by someone waiting on its reply, and a
    # peer that holds the turn is waited on by no one. Mid-game, whether it
    # holds the turn at the moment the signal lands is a race; so stop it
    # while it waits for the game to start, which only this scenario can let
    # happen. Player1's first your_turn then goes to it, and waits.
    seats = game.seating()
    victim, waiter = seats[1], seats[0]
    late = next(nick for nick in reversed(game.nicks) if nick != victim)
    result.error = game.start(deadline, hold_back=late)
    if result.error is not None:
        return

    def joined(_name: str, record: Record) -> bool:
        msg = record.get("msg")
        return record.get("dir") == "in" and isinstance(msg, dict) and msg.get("nick") == victim

    seen = _watch({TABLE: _Tail(game.transcript)}, joined, list(game.processes.values()), deadline)
    if seen is None:
        result.error = f"the table never read {victim}'s join"
        return
    result.victim = victim
    result.fault = (
        f"SIGSTOP {victim} (seat 2) once the table read its join; then {late} joins, the game "
        f"starts, and {waiter} (player1) hands {victim} the draw turn"
    )
    result.fault_at = game.signal(victim, signal.SIGSTOP)
    game.start_peer(late)
    survivors = game.peers(but=victim)
    bound = STOP_PEER_TIMEOUT + EXIT_BOUND
    _wait_exits(survivors, min(deadline, time.monotonic() + bound + 5), result.exit_at)
    # Resumed, the stopped peer finds the game aborted and ends by itself;
    # then the table, whose last player has gone, ends too.
    with contextlib.suppress(ProcessLookupError):
        os.kill(game.processes[victim].popen.pid, signal.SIGCONT)
    _wait_exits(
        [game.processes[victim], game.processes[TABLE]],
        min(deadline, time.monotonic() + EXIT_BOUND),
        result.exit_at,
    )
    result.processes = game.reap()

    checks = _exit_checks(result, survivors, bound)
    line = result.processes[waiter].stderr
    named = len(line) == 1 and "did not answer" in line[0] and victim in line[0]
    checks.append(
        CheckResult("the waiting peer names the silent one", named, f"{waiter} said {line!r}")
    )
    started = next((r["t"] for r in game.transcript_records() if r.get("event") == "started"), None)
    gave_up = result.exit_at.get(waiter)
    waited = None if started is None or gave_up is None else gave_up - started
    checks.append(
        CheckResult(
            "peer timeout",
            waited is not None and STOP_PEER_TIMEOUT <= waited < bound,
            f"{waiter} gave up {_seconds(waited)} after the game started "
            f"(--peer-timeout {STOP_PEER_TIMEOUT:g})",
        )
    )
    others = [p.name for p in survivors if p.name != waiter]
    after = {n: result.exit_at[n] - gave_up for n in others if n in result.exit_at and gave_up}
    late_ones = [n for n in others if after.get(n, math.inf) >= EXIT_BOUND]
    checks.append(
        CheckResult(
            "others follow",
            not late_ones,
            ", ".join(f"{n} {_seconds(t)}" for n, t in after.items()) + f" after {waiter}"
            if not late_ones
            else f"late or still running: {', '.join(late_ones)}",
        )
    )
    checks += _table_abort_checks(game, result, victim)
    checks.append(
        CheckResult(
            "resumed, all end",
            victim in result.exit_at and TABLE in result.exit_at,
            f"after SIGCONT: {victim} exit {_code(result, victim)}, "
            f"table exit {_code(result, TABLE)}",
        )
    )
    result.checks = checks


# -- checks --------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.3f} s"


def _after(result: FaultResult, name: str) -> float:
    after = result.after_fault(name)
    return math.inf if after is None else after


def _code(result: FaultResult, name: str) -> str:
    process = result.processes.get(name)
    return "?" if process is None or process.returncode is None else str(process.returncode)


def _exit_checks(
    result: FaultResult, survivors: list[ChildProcess], bound: float
) -> list[CheckResult]:
    late = [p.name for p in survivors if _after(result, p.name) >= bound]
    times = ", ".join(f"{p.name} {_seconds(result.after_fault(p.name))}" for p in survivors)
    zero = [p.name for p in survivors if p.popen.returncode in (0, None)]
    lines = [
        p.name
        for p in survivors
        if len(p.stderr) != 1 or any("Traceback" in line for line in p.stderr)
    ]
    return [
        CheckResult(f"exit within {bound:g} s", not late, times),
        CheckResult(
            "non-zero exits",
            not zero,
            "every survivor exited non-zero" if not zero else f"exited 0 or not: {zero}",
        ),
        CheckResult(
            "one line on stderr",
            not lines,
            "one line each, no traceback"
            if not lines
            else "; ".join(f"{p.name}: {p.stderr!r}" for p in survivors if p.name in lines),
        ),
    ]


def _table_abort_checks(game: _Game, result: FaultResult, culprit: str) -> list[CheckResult]:
    aborted = [r for r in game.transcript_records() if r.get("event") == "aborted"]
    reasons = [str(r.get("reason")) for r in aborted]
    table = game.processes[TABLE]
    last = table.stdout[-1] if table.stdout else ""
    named = [r.get("culprit") for r in aborted]
    return [
        CheckResult(
            "transcript aborted",
            len(aborted) == 1 and named == [culprit] and reasons[0].startswith(f"{culprit} "),
            f"aborted records: {reasons}, naming {named}",
        ),
        CheckResult(
            "table line",
            last.startswith(f"game aborted: {culprit} ") and table.popen.returncode == 1,
            f"table exit {table.popen.returncode}: {last!r}",
        ),
    ]


def _status_check(result: FaultResult, victim: str) -> CheckResult:
    status = result.status or {}
    return CheckResult(
        "status says aborted",
        status.get("aborted") is True and victim in str(status.get("reason")),
        f"last status reply: {status or 'none'}",
    )


def _watcher_check(
    game: _Game, result: FaultResult, survivors: list[ChildProcess], victim: str
) -> CheckResult:
    told = []
    for process in survivors:
        tail = _Tail(game.event_logs[process.name])
        tail.read()
        if any(
            r.get("event") == "game_over" and r.get("aborted") and victim in str(r.get("reason"))
            for r in tail.records
        ):
            told.append(process.name)
    return CheckResult(
        "watchers told",
        bool(told),
        f"game_over aborted naming {victim} reached {', '.join(told) or 'no one'}",
    )


# -- ring scenario fault-... -----------------------------------------------------------


def format_result(result: FaultResult) -> str:
    lines = [f"scenario {result.name}, seed {result.seed}, {result.players} players"]
    if result.fault:
        at = "" if result.fault_at is None else f" at t={result.fault_at:.6f}"
        lines.append(f"  fault     {result.fault}{at}")
    for name, process in result.processes.items():
        if name == result.victim and name != TABLE and result.name == "fault-kill-peer":
            continue
        after = result.after_fault(name)
        said = (
            (process.stderr if process.returncode and name != TABLE else None)
            or process.stdout
            or process.stderr
            or [""]
        )[-1]
        lines.append(f"  {name:<9} exit {process.returncode} after {_seconds(after)}: {said}")
    if result.error:
        lines.append(f"ERROR {result.error}")
    for check in result.checks:
        lines.append(f"{'PASS' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """``ring scenario fault-...``: the summary and checks; exit 0 only if all pass."""
    seed = oldmaid_game.DEFAULT_SEED if args.seed is None else args.seed
    keep = Path(args.keep) if args.keep else None
    workdir = keep or Path(tempfile.mkdtemp(prefix=f"ring-{args.name}-"))
    result = run_fault(args.name, seed, workdir=workdir, timeout=args.timeout)
    return processes.finish(format_result(result), result.ok, workdir, keep)
