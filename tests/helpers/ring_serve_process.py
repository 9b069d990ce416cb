"""``ring serve`` as a real process for the tests that drive it from outside (a browser, a
raw socket): started, its addresses read from its stdout, stopped with Ctrl-C."""

from __future__ import annotations

import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

WAIT = 30.0


def ring(*words: str) -> list[str]:
    return [sys.executable, "-m", "ring", *words]


@contextmanager
def ring_serve(
    *words: str, services: int, program: Sequence[str] | None = None, cwd: Path | None = None
) -> Iterator[dict[str, str]]:
    """``ring serve WORDS`` on loopback; each of its ``services``' ``HOST:PORT`` by name.
    ``program``: the ``ring`` command to run (default: this interpreter's ``-m ring``), from
    ``cwd`` (an installed ``ring``, from a folder outside the clone)."""
    ring_command = list(program) if program is not None else ring()
    command = [*ring_command, "serve", *words, "--host", "127.0.0.1", "--no-advertise"]
    # unbuffered: a line read leaves no other line hidden in a buffer that select cannot see
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, cwd=cwd
    )
    assert server.stdout is not None
    addresses: dict[str, str] = {}
    try:
        with selectors.DefaultSelector() as waiting:
            waiting.register(server.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + WAIT
            while len(addresses) < services and waiting.select(deadline - time.monotonic()):
                words_said = server.stdout.readline().decode().split()
                if words_said[1:3] == ["listening", "on"]:
                    addresses[words_said[0]] = words_said[3]
        assert len(addresses) == services, addresses
        yield addresses
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
