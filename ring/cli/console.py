"""The operator's lines on stdout, which must never stop a server.

A server's stdout can go away while it runs: ``ring serve | head``, a
closed terminal, a supervisor that stopped reading. Python then raises
``BrokenPipeError`` from the next ``print``, which would end the game that
happened to report, and again at exit when it flushes stdout. ``say``
drops the line instead, and points stdout at the null device so that every
later line (and the final flush) is dropped quietly too.
"""

from __future__ import annotations

import os
import sys


def say(line: str) -> None:
    """Print one line for the operator and flush it; nothing if stdout has gone."""
    try:
        print(line, flush=True)
    except (BrokenPipeError, ConnectionResetError):
        _stdout_to_null()


def _stdout_to_null() -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, sys.stdout.fileno())
    finally:
        os.close(null)
