"""No Tipping declared for ``ring serve``, ``ring discover``, ``ring bot`` and ``ring play``.

Imports stay light: the ``ring`` command loads this to build its help; the
server and the clients are imported when they run.
"""

from __future__ import annotations

import argparse
import functools

import trio

from ring import cliargs
from ring.registry import ClientCommand, ServeSettings, Service, as_service_error
from services.notipping.rules import DEFAULT_MAX_WEIGHT, MAX_WEIGHT_LIMIT

DEFAULT_PORT = 10987
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

    options = settings.options
    config = NoTippingConfig(
        host=settings.host,
        port=settings.port,
        seed=settings.seed,
        max_weight=options.max_weight,
        time_budget=options.time_budget,
        transcripts=settings.transcripts,
        idle_timeout=options.idle_timeout,
        wait_timeout=options.wait_timeout,
        max_connections=options.max_connections or 256,
        max_per_address=options.max_per_address,
        advertise=settings.advertise,
        mdns_interface=settings.mdns_interface,
        mdns_name=options.name or "notipping",
        on_end=lambda report: settings.say(f"notipping: {report.line}"),
    )
    async with trio.open_nursery() as nursery:
        with as_service_error(ServerError):
            server = await nursery.start(functools.partial(serve_notipping, config))
        task_status.started(server.address)


def _handle(text: str) -> str:
    from services.notipping.protocol import HANDLE

    if not HANDLE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"a handle is 1-32 of A-Z a-z 0-9 _ . -, not {text!r}")
    return text


def _add_client_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        type=cliargs.address,
        default=("127.0.0.1", DEFAULT_PORT),
        metavar="HOST:PORT",
        help=f"where the server listens (default 127.0.0.1:{DEFAULT_PORT})",
    )
    parser.add_argument("--handle", required=True, type=_handle, help="your name in the game")
    parser.add_argument(
        "--player",
        required=True,
        type=int,
        choices=[0, 1],
        help="the seat to ask for: 0 moves first, 1 second",
    )
    parser.add_argument(
        "--timeout",
        type=cliargs.seconds,
        default=600.0,
        metavar="SECONDS",
        help="longest wait for the server (for an opponent, or the opponent's move)",
    )


def _add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    _add_client_arguments(parser)
    parser.add_argument(
        "--level", required=True, choices=LEVELS, help="which built-in player plays"
    )
    parser.add_argument("--seed", type=int, help="seed for the player's choices")
    parser.add_argument(
        "--games", type=cliargs.positive, default=1, metavar="N", help="play N games in a row"
    )


def _run_client(args: argparse.Namespace) -> int:
    from services.notipping.client import run

    return run(args)


SERVICE = Service(
    name="notipping",
    default_port=DEFAULT_PORT,
    mdns_type="_notipping._tcp.local.",
    summary="No Tipping, the course server: many games at once, a time budget per player",
    serve=_serve,
    add_options=_add_options,
    bot=ClientCommand(_add_bot_arguments, _run_client),
    play=ClientCommand(_add_client_arguments, _run_client),
)
