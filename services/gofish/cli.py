"""``ring gofish``: the terminal loop around a ``Session``.

Reads one line of standard input at a time and writes what the session says,
then its prompt, flushed before each read. ``--seed S`` seeds the one
``random.Random`` behind every shuffle and computer choice, so the same seed
and the same input lines give the same output.

Exit codes: 0 after ``q`` or at the end of input, 130 on Ctrl-C (after one
short line), 1 when standard output goes away mid-game.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from services.gofish.session import Session

INTERRUPTED = 130  # what shells report for a process ended by SIGINT


def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed) if args.seed is not None else random.Random()
    session = Session(rng)
    # Bytes that are not UTF-8 become an unknown command, not a traceback.
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")
    out = sys.stdout
    try:
        out.write(session.greeting())
        while True:
            out.write(session.prompt)
            out.flush()
            line = sys.stdin.readline()
            if not line:
                # The prompt's line is still open: end it before saying goodbye.
                out.write("\n" + session.end_of_input())
                out.flush()
                return 0
            reply = session.handle(line)
            out.write(reply.text)
            if reply.exit:
                out.flush()
                return 0
    except KeyboardInterrupt:
        out.write("\nInterrupted.\n")
        out.flush()
        return INTERRUPTED
    except BrokenPipeError:
        # Nobody reads any more; point stdout at nothing so the exit flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
