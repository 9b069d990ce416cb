"""``ring scenario NAME``: pick the scenario by its name and run it.

``N-players`` plays one Old Maid game as real OS processes and verifies it
(``scenarios.oldmaid_game``); ``fault-*`` are the fault scenarios
(``scenarios.faults``) and ``lan`` the game across a LAN of network
namespaces (``scenarios.lan``). ``run`` prints a short summary and one line
per check, and exits 0 only if every check passes.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from scenarios.oldmaid_game import (
    DEFAULT_SEED,
    MAX_PLAYERS,
    MIN_PLAYERS,
    format_result,
    run_scenario,
)
from scenarios.processes import finish

SCENARIO_NAME = re.compile(r"(?P<players>\d+)-players")


def parse_name(name: str) -> int:
    """The player count of a scenario name like ``8-players``; ValueError otherwise."""
    match = SCENARIO_NAME.fullmatch(name)
    players = int(match["players"]) if match else 0
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(
            f"unknown scenario {name!r}: expected N-players with N from "
            f"{MIN_PLAYERS} to {MAX_PLAYERS}, e.g. 8-players"
        )
    return players


def run(args: argparse.Namespace) -> int:
    """``ring scenario NAME [--seed S] [--timeout T] [--keep DIR]``."""
    if args.name.startswith("fault-"):
        from scenarios.faults import NAMES as FAULTS
        from scenarios.faults import run as run_fault

        if args.name in FAULTS:
            return run_fault(args)
    if args.name == "lan":
        from scenarios.lan import run as run_lan

        return run_lan(args)
    try:
        players = parse_name(args.name)
    except ValueError as exc:
        print(f"ring scenario: {exc}", file=sys.stderr)
        return 2
    seed = DEFAULT_SEED if args.seed is None else args.seed
    keep = Path(args.keep) if args.keep else None
    workdir = keep or Path(tempfile.mkdtemp(prefix=f"ring-scenario-{players}-"))
    result = run_scenario(players, seed, workdir=workdir, timeout=args.timeout)
    return finish(format_result(result), result.ok, workdir, keep)
