"""``ring scenario`` declared for the ``ring`` command (``ring.cli.registry.Command``)."""

from __future__ import annotations

import argparse

from ring.cli import cliargs
from ring.cli.registry import Command


def _add_arguments(scenario: argparse.ArgumentParser) -> None:
    scenario.add_argument(
        "name", metavar="NAME", help="N-players (e.g. 8-players), GxN-players (G games "
        "at once at one table, e.g. 3x4-players), fault-kill-peer, fault-kill-table, "
        "fault-stop-peer or lan"
    )  # fmt: skip
    scenario.add_argument("--seed", type=int, help="game seed (default: the scenario's own)")
    scenario.add_argument("--timeout", type=cliargs.seconds, default=60.0, metavar="SECONDS")
    scenario.add_argument("--keep", metavar="DIR", help="keep logs and transcript in DIR")


def _run(args: argparse.Namespace) -> int:
    from scenarios.runner import run

    return run(args)


COMMAND = Command(
    name="scenario",
    help="run a table and peers as OS processes and verify the game",
    add_arguments=_add_arguments,
    run=_run,
)
