"""``make bench-fairness``: what each kind of hostile client costs honest players.

The capacity bench (``capacity.py``) runs its hostile clients beside 920
games at a class's pace, a load that keeps this 2-core machine's cores busy
on a slow day: its latencies are then queueing for the cores, and what a
hostile client adds drowns in that. This bench asks the fairness question
alone, at a load the machine carries: a class of ``CLASS_LOADS`` (60 FishNet
games, 30 Reversi, 30 No Tipping, 5 Old Maid games of 4 peers) at a class's
pace (a mean think of 0.5 s), beside nothing, then beside each hostile kind
alone, each from one address as from one student's machine (``hold``: 300
silent connections to every service, met by the per-address cap; ``flood``:
one client flooding FishNet, No Tipping and the table, never reading;
``dribble``: a message that never ends, a byte a second), then all of them;
and, apart, ``crowd``: 300 silent connections to every service from 300
addresses, as a class of that many machines would hold, which no per-address
cap bounds (what the hold cost before 127.0.0.2 met that cap). The phases
run in a rotated order each round, so that a drift of the machine's speed
falls on every kind alike, and each hostile phase is compared with the
round's own phase beside nothing.

It prints every phase's p99 for each service, then, for each kind, the
median over the rounds of the worst p99 and of its difference from the same
round's honest phase. The goal (issue 26): every service's p99 <= 50 ms with
the hostile clients. A measurement, not a test: it exits 1 only when a game
failed (then its figures cannot be trusted).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from scenarios.bench import capacity
from scenarios.bench.hostile_load import CROWD
from scenarios.bench.hostile_load import KINDS as HOSTILE_KINDS

CLASS_LOADS = {"fishnet": 60, "reversi": 30, "notipping": 30, "oldmaid": 5}
THINK = capacity.THINK
DURATION = 10.0
ROUNDS = 3
SEED = 26
HONEST = "none"
ALL_KINDS = "all"
GOAL_P99 = capacity.GOAL_P99


def _kinds(name: str) -> tuple[str, ...]:
    return HOSTILE_KINDS if name == ALL_KINDS else (name,)


def rotated(phases: list[str], number: int) -> list[str]:
    """Round ``number``'s order: each round starts one phase later, so none is always first."""
    shift = number % len(phases)
    return phases[shift:] + phases[:shift]


def summary_lines(
    worst: dict[str, list[float]], p99s: dict[str, dict[str, list[float]]]
) -> list[str]:
    """Each phase's median worst p99 over the rounds, its median difference from the
    same round's honest phase, each service's median p99, and the goal's verdict."""
    lines = [
        f"{'hostile':<8} {'worst p99':>10} {'minus honest':>13}  per service, median of rounds"
    ]
    for phase_name, worsts in worst.items():
        per_service = "  ".join(
            f"{load} {statistics.median(values) * 1e3:.1f}"
            for load, values in p99s[phase_name].items()
        )
        difference = ""
        if phase_name != HONEST:
            paired = [
                hostile - honest for hostile, honest in zip(worsts, worst[HONEST], strict=True)
            ]
            difference = f"{statistics.median(paired) * 1e3:+.1f} ms"
        lines.append(
            f"{phase_name:<8} {statistics.median(worsts) * 1e3:7.1f} ms {difference:>13}  "
            f"{per_service}"
        )
    all_worst = statistics.median(worst[ALL_KINDS])
    verdict = "MET" if all_worst <= GOAL_P99 else "NOT MET"
    lines.append(
        f"goal p99 <= {GOAL_P99 * 1e3:.0f} ms with every hostile kind, a class's load: "
        f"worst {all_worst * 1e3:.1f} ms (median of {len(worsts)} rounds), {verdict}"
    )
    return lines


def bench(rounds: int, duration: float, seed: int) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="fairness-bench-"))
    phases = [HONEST, *HOSTILE_KINDS, ALL_KINDS, CROWD]
    # worst[phase][round]: the worst service's p99; p99s[phase][service]: every round's
    worst: dict[str, list[float]] = {phase: [] for phase in phases}
    p99s: dict[str, dict[str, list[float]]] = {
        phase: {load: [] for load in CLASS_LOADS} for phase in phases
    }
    status = 0
    server, addresses = capacity.start_server(workdir, seed)
    print(
        "a class: "
        + ", ".join(f"{games} {load}" for load, games in CLASS_LOADS.items())
        + f" games at once, mean think {THINK:g} s; {duration:g} s phases, {rounds} rounds",
        flush=True,
    )
    try:
        for number in range(rounds):
            for phase_name in rotated(phases, number):
                plan = capacity.Plan(
                    f"round {number + 1}, hostile: {phase_name}",
                    dict(CLASS_LOADS),
                    THINK,
                    hostile=phase_name != HONEST,
                    kinds=_kinds(phase_name) if phase_name != HONEST else HOSTILE_KINDS,
                )
                phase = capacity.run_phase(
                    plan, addresses, server, workdir, duration, seed + number
                )
                games = [f for f in phase.figures if f.load in CLASS_LOADS]
                if any(f.failed or not f.games for f in games):
                    status = 1
                    for line in capacity.format_phase(phase, 1.0):
                        print(line, flush=True)
                for f in games:
                    p99s[phase_name][f.load].append(f.p99)
                worst[phase_name].append(max(f.p99 for f in games))
                cpu = f", {capacity.cpu_words(phase)}"
                print(
                    f"  {plan.name:<26} "
                    + "  ".join(f"{f.load} {f.p99 * 1e3:6.1f}" for f in games)
                    + f"  (p99, ms{cpu})",
                    flush=True,
                )
    finally:
        server.kill()
    print()
    for line in summary_lines(worst, p99s):
        print(line)
    return capacity.finish(server, workdir, status)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.fairness", description=__doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--duration", type=float, default=DURATION)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    return bench(args.rounds, args.duration, args.seed)


if __name__ == "__main__":
    sys.exit(main())
