"""Child processes for the scenarios, and how a scenario command ends.

A ``ChildProcess`` is one OS process started with its output copied line by
line, by threads, to lists and to files in a work directory; it can be
waited for under a deadline and killed without ever hanging the caller.
``ring_command`` is how a scenario starts ``ring``. ``finish`` prints a
scenario's report and keeps or removes its work directory.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# Killed processes get this long to be reaped, and reader threads this long
# to drain their pipes, so cleanup itself can never hang.
REAP_TIMEOUT = 5.0


def ring_command() -> list[str]:
    """The ``ring`` entry point next to this interpreter, else ``python -m ring``."""
    script = Path(sys.executable).with_name("ring")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "ring"]


@dataclass
class ProcessResult:
    name: str
    argv: list[str]
    returncode: int | None  # None: still running at the deadline, so killed
    stdout: list[str]
    stderr: list[str]
    started: float | None = None  # time.monotonic() just before the process was started


class ChildProcess:
    """One child process; threads copy its output to lists and to files in the workdir."""

    def __init__(
        self, name: str, argv: list[str], workdir: Path, prefix: Sequence[str] = ()
    ) -> None:
        self.name = name
        self.argv = [*prefix, *argv]
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.started = time.monotonic()
        self.popen = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self.readers = [
            threading.Thread(
                target=self._copy,
                args=(self.popen.stdout, self.stdout, workdir / f"{name}.stdout", self.lines),
                daemon=True,
            ),
            threading.Thread(
                target=self._copy,
                args=(self.popen.stderr, self.stderr, workdir / f"{name}.stderr", None),
                daemon=True,
            ),
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _copy(
        stream: IO[str], lines: list[str], path: Path, notify: queue.Queue[str | None] | None
    ) -> None:
        with path.open("w") as copy:
            for line in stream:
                line = line.rstrip("\n")
                lines.append(line)
                copy.write(line + "\n")
                copy.flush()
                if notify is not None:
                    notify.put(line)
        if notify is not None:
            notify.put(None)  # end of output: the process will print nothing more

    def first_line(self, timeout: float) -> str | None:
        """The first stdout line, or None if the process ended or the time ran out first."""
        try:
            return self.lines.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def wait(self, deadline: float) -> bool:
        """True once the process has exited; False if it is still running at the deadline."""
        try:
            self.popen.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            return False
        return True

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        # A process stuck in the kernel cannot be reaped; do not hang on it.
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=REAP_TIMEOUT)
        for reader in self.readers:
            reader.join(timeout=REAP_TIMEOUT)

    def result(self) -> ProcessResult:
        code = self.popen.returncode
        return ProcessResult(
            self.name, self.argv, code, list(self.stdout), list(self.stderr), self.started
        )


def finish(text: str, ok: bool, workdir: Path, keep: Path | None) -> int:
    """Print a scenario's report; keep its logs if asked or if it failed; its exit code."""
    print(text, flush=True)
    if keep is not None:
        print(f"logs in {workdir}")
    elif ok:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"logs kept in {workdir}")
    return 0 if ok else 1
