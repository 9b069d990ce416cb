"""No Tipping declared for ``ring serve``, ``ring discover``, ``ring bot`` and ``ring play``.

Imports stay light: the ``ring`` command loads this to build its help; the
server and the clients are imported when they run.
"""

from __future__ import annotations

import argparse

import trio

from ring.cli import cliargs
from ring.cli.client_args import GameClients, Names
from ring.cli.registry import ServeSettings, Service, start_server
from services.notipping import DEFAULT_PORT
from services.notipping.rules import DEFAULT_MAX_WEIGHT, MAX_WEIGHT_LIMIT

LEVELS = ["random", "greedy", "solver"]


def _max_weight(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_WEIGHT_LIMIT:
        raise argparse.ArgumentTypeError(
            f"the heaviest weight is 1-{MAX_WEIGHT_LIMIT}, not {text!r}"
        )
    return int(text)


def _add_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--max-weight",
        type=_max_weight,
        default=DEFAULT_MAX_WEIGHT,
        metavar="W",
        help=f"each player holds weights 1..W (1-{MAX_WEIGHT_LIMIT}, default {DEFAULT_MAX_WEIGHT})",
    )
    group.add_argument(
        "--time-budget",
        type=cliargs.seconds,
        default=120.0,
        metavar="SECONDS",
        help="each player's time for all its moves; past it, it loses (default 120; 0: off)",
    )


async def _serve(settings: ServeSettings, *, task_status: trio.TaskStatus[tuple[str, int]]) -> None:
    from services.notipping.server import NoTippingConfig, ServerError, serve_notipping

    common = settings.server_kwargs("notipping")
    # Nothing in a No Tipping game is dealt: a published --seed is only recorded,
    # and a secret key (no --seed) is not written anywhere.
    if common.pop("keyed"):
        common["seed"] = None
    config = NoTippingConfig(
        **common,
        max_weight=settings.options.max_weight,
        time_budget=settings.options.time_budget,
        on_end=settings.reporter("notipping"),
    )
    await start_server(serve_notipping, config, ServerError, task_status=task_status)


def _is_handle(text: str) -> bool:
    from services.notipping.protocol import HANDLE

    return HANDLE.fullmatch(text) is not None


def _add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--depth",
        type=cliargs.positive,
        metavar="N",
        help="solver searches N plies ahead, with no time budget: the same moves on any machine",
    )


def _run_client(args: argparse.Namespace) -> int:
    from services.notipping.client import run

    return run(args)


NAMES = Names("1-32 of A-Z a-z 0-9 _ . -", _is_handle)
CLIENTS = GameClients(
    DEFAULT_PORT,
    NAMES,
    LEVELS,
    _run_client,
    seats=[0, 1],
    seat_help="the seat to ask for: 0 moves first, 1 second",
    old_flags={"--name": "--handle", "--seat": "--player"},
    add_bot_own=_add_bot_arguments,
)

SERVICE = Service(
    name="notipping",
    default_port=DEFAULT_PORT,
    summary="No Tipping, the course server: many games at once, a time budget per player",
    serve=_serve,
    add_options=_add_options,
    bot=CLIENTS.bot,
    play=CLIENTS.play,
)
