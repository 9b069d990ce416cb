"""``ring gofish`` declared for the ``ring`` command (``ring.cli.registry.Command``)."""

from __future__ import annotations

import argparse

from ring.cli.registry import Command


def _add_arguments(gofish: argparse.ArgumentParser) -> None:
    gofish.add_argument("--seed", type=int, help="seed for shuffles and computer choices")


def _run(args: argparse.Namespace) -> int:
    from services.gofish.cli import run

    return run(args)


COMMAND = Command(
    name="gofish",
    help="play the interactive Go Fish game against 1-5 computer players",
    add_arguments=_add_arguments,
    run=_run,
)
