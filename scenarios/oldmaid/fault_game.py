"""One Old Maid game as OS processes, made to be interrupted, and the means to watch it.

The fault scenarios (``scenarios.oldmaid.faults``) start a table and ``ring peer``
processes exactly as ``oldmaid_game.run_scenario`` does, but hold on to them:
they read the logs as they grow to find the moment for a fault (``LogTail``,
``watch``), signal one process, then time everyone's exit (``wait_exits``)
and ask the table for its status while it ends (``StatusPoller``, a
thread). Every moment is read from the logs as they are written, never
guessed from a clock.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scenarios import processes
from scenarios.oldmaid import game as oldmaid_game
from scenarios.oldmaid.game import HOST, LISTENING, TABLE
from scenarios.processes import ChildProcess, ProcessResult
from services.oldmaid.referee.rules import TableGame

POLL = 0.005  # seconds between looks at a log file or a process

Record = dict[str, Any]


# -- watching files and processes ---------------------------------------------------


class LogTail:
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


def watch(
    tails: dict[str, LogTail],
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


def wait_exits(
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


class StatusPoller(threading.Thread):
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


# -- one game to interrupt ----------------------------------------------------------


class FaultGame:
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
            "--name", nick,
            "--server", f"{self.host}:{self.port}",
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
        tail = LogTail(self.transcript)
        tail.read()
        return tail.records
