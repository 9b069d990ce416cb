"""``ring scenario NAME``: pick the scenario by its name and run it.

``N-players`` plays one Old Maid game as real OS processes and verifies it
(``scenarios.oldmaid.game``); ``GxN-players`` plays G such games at once at
one table and verifies each (``scenarios.oldmaid.several_games``); ``fault-*`` are
the fault scenarios (``scenarios.oldmaid.faults``) and ``lan`` the game across a LAN
of network namespaces (``scenarios.oldmaid.lan``). ``run`` prints a short summary
and one line per check, and exits 0 only if every check passes.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from scenarios.oldmaid.game import (
    DEFAULT_SEED,
    MAX_PLAYERS,
    MIN_PLAYERS,
    format_result,
    run_scenario,
)
from scenarios.oldmaid.several_games import MAX_GAMES, MIN_GAMES, format_games, run_games
from scenarios.processes import finish

SCENARIO_NAME = re.compile(r"(?:(?P<games>\d+)x)?(?P<players>\d+)-players")


def parse_name(name: str) -> tuple[int | None, int]:
    """(games, players) of a scenario name: ``8-players`` is (None, 8), one game;
    ``3x4-players`` is (3, 4). ValueError for any other name."""
    match = SCENARIO_NAME.fullmatch(name)
    players = int(match["players"]) if match else 0
    games = int(match["games"]) if match and match["games"] is not None else None
    if match and games is not None:
        if not (MIN_GAMES <= games <= MAX_GAMES and MIN_PLAYERS <= players <= MAX_PLAYERS):
            raise ValueError(
                f"unknown scenario {name!r}: expected GxN-players with G from {MIN_GAMES} "
                f"to {MAX_GAMES} games and N from {MIN_PLAYERS} to {MAX_PLAYERS} players, "
                "e.g. 3x4-players"
            )
    elif not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(
            f"unknown scenario {name!r}: expected N-players with N from "
            f"{MIN_PLAYERS} to {MAX_PLAYERS}, e.g. 8-players (or GxN-players, "
            "G games at once, e.g. 3x4-players)"
        )
    return games, players


def run(args: argparse.Namespace) -> int:
    """``ring scenario NAME [--seed S] [--timeout T] [--keep DIR]``."""
    if args.name.startswith("fault-"):
        from scenarios.oldmaid.faults import NAMES as FAULTS
        from scenarios.oldmaid.faults import run as run_fault

        if args.name in FAULTS:
            return run_fault(args)
    if args.name == "lan":
        from scenarios.oldmaid.lan import run as run_lan

        return run_lan(args)
    try:
        games, players = parse_name(args.name)
    except ValueError as exc:
        print(f"ring scenario: {exc}", file=sys.stderr)
        return 2
    seed = DEFAULT_SEED if args.seed is None else args.seed
    keep = Path(args.keep) if args.keep else None
    label = str(players) if games is None else f"{games}x{players}"
    workdir = keep or Path(tempfile.mkdtemp(prefix=f"ring-scenario-{label}-"))
    if games is not None:
        several = run_games(games, players, seed, workdir=workdir, timeout=args.timeout)
        return finish(format_games(several), several.ok, workdir, keep)
    result = run_scenario(players, seed, workdir=workdir, timeout=args.timeout)
    return finish(format_result(result), result.ok, workdir, keep)
