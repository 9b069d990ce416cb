"""How long ``ring check`` takes: each game's whole suite against a prompt program (our
own bot or peer) and against one that hangs in every case, at the protocol's own times.

The goals (issue 41): a prompt client's suite in at most 60 s a game; a program that
hangs in every case, a suite that ends in at most 120 s, each hung case reported as
what it waited for. A hung program here connects, sends its first message (Old Maid:
none, it never joins) and then waits for ever, as a program that missed a message
does; its suite is bounded by the longest wait the protocol allows (No Tipping's 120 s
budget, FishNet's 120 s a move), which the checker must not cut short: a program
that answers in 119 s is within the rules.

Run with ``python -m scenarios.bench.check_times`` or as part of ``make bench-check``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import trio

from scenarios import processes
from scenarios.check import fishnet, notipping, oldmaid, reversi
from scenarios.check.runner import run_cases
from scenarios.check.verdicts import CaseResult
from scenarios.programs import Program

PROMPT_GOAL = 60.0
HUNG_GOAL = 120.0
GAMES = {"reversi": reversi, "notipping": notipping, "fishnet": fishnet, "oldmaid": oldmaid}
# Our own programs, prompt: the ones `ring check`'s tests pass in every case.
PROMPT = {
    "reversi": ("bot", "reversi", "--server", "{address}", "--name", "{name}",
                "--level", "greedy"),
    "notipping": ("bot", "notipping", "--server", "{address}", "--name", "{name}",
                  "--seat", "{seat}", "--level", "greedy"),
    "fishnet": ("bot", "fishnet", "--server", "{address}", "--name", "{name}",
                "--opponent", "spot", "--level", "bob"),
    "oldmaid": ("peer", "--name", "{nick}", "--server", "{table}", "--host", "127.0.0.1"),
}  # fmt: skip
# A program that hangs: what it sends first (None: nothing at all), then it waits.
FIRST_MESSAGE = {
    "reversi": "N{name}\n",
    "notipping": "JOINREQUEST:{name}:{seat};",
    "fishnet": "play {name} spot\n",
    "oldmaid": None,
}
HANG = """
import socket, sys, time
sock = socket.create_connection((sys.argv[1], int(sys.argv[2])))
if len(sys.argv) > 3:
    sock.sendall(sys.argv[3].encode())
time.sleep(3600)
"""


def hung_program(game: str) -> Program:
    first = FIRST_MESSAGE[game]
    argv = [sys.executable, "-c", HANG, "{host}", "{port}"]
    return Program(tuple(argv + ([first] if first is not None else [])))


def suite(game: str, program: Program, jobs: int) -> tuple[float, list[CaseResult]]:
    cases = GAMES[game].cases()
    with tempfile.TemporaryDirectory(prefix="check-times-") as logs:
        began = time.monotonic()
        results = trio.run(lambda: run_cases(cases, program, Path(logs), jobs=jobs))
        return time.monotonic() - began, results


def _counts(results: list[CaseResult]) -> str:
    counts = Counter(result.verdict.value for result in results)
    return ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.check_times")
    parser.add_argument("--game", action="append", choices=sorted(GAMES))
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--no-hung", action="store_true", help="only the prompt programs")
    args = parser.parse_args(argv)
    games = args.game or list(GAMES)
    print("ring check: a whole suite's time, at the protocol's own move times")
    print(f"{'game':<10} {'program':<8} {'cases':>5} {'seconds':>8}  goal      verdicts")
    for game in games:
        runs = [("prompt", Program((*processes.ring_command(), *PROMPT[game])), PROMPT_GOAL)]
        if not args.no_hung:
            runs.append(("hung", hung_program(game), HUNG_GOAL))
        for kind, program, goal in runs:
            seconds, results = suite(game, program, args.jobs)
            met = "MET" if seconds <= goal else "NOT MET"
            print(
                f"{game:<10} {kind:<8} {len(results):>5} {seconds:>8.1f}  "
                f"<= {goal:g} s {met:<8} {_counts(results)}",
                flush=True,
            )
            if kind == "hung":
                waited = Counter(result.reason.split(" within ")[0] for result in results)
                for what, n in waited.most_common():
                    print(f"{'':<20} {n} x {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
