"""Reversi declared for ``ring serve`` and ``ring discover``.

Imports stay light: the ``ring`` command loads this to build its help; the
server is imported when it runs.
"""

from __future__ import annotations

import argparse
import functools

import trio

from ring import cliargs
from ring.registry import ClientCommand, ServeSettings, Service, as_service_error

DEFAULT_PORT = 5410


def _add_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--move-time",
        type=cliargs.seconds,
        default=30.0,
        metavar="SECONDS",
        help="a player who has not moved this long after its board loses (default 30; 0: no limit)",
    )
    group.add_argument(
        "--no-newlines",
        dest="newlines",
        action="store_false",
        help="send U1, B..., W1, G bare, without the newline the course server ended them with",
    )


async def _serve(settings: ServeSettings, *, task_status: trio.TaskStatus[tuple[str, int]]) -> None:
    from services.reversi.server import ReversiConfig, ServerError, serve_reversi

    options = settings.options
    config = ReversiConfig(
        host=settings.host,
        port=settings.port,
        seed=settings.seed,
        keyed=settings.keyed,
        move_time=options.move_time,
        newlines=options.newlines,
        transcripts=settings.transcripts,
        idle_timeout=options.idle_timeout,
        wait_timeout=options.wait_timeout,
        max_connections=options.max_connections or 256,
        max_per_address=options.max_per_address,
        advertise=settings.advertise,
        mdns_interface=settings.mdns_interface,
        mdns_name=options.name or "reversi",
        on_end=lambda report: settings.say(f"reversi: {report.line}"),
    )
    async with trio.open_nursery() as nursery:
        with as_service_error(ServerError):
            server = await nursery.start(functools.partial(serve_reversi, config))
        task_status.started(server.address)


def _team_name(text: str) -> str:
    from services.reversi.protocol import is_name

    if not is_name(text):
        raise argparse.ArgumentTypeError(f"a name is 1-10 of A-Z a-z 0-9 _, not {text!r}")
    return text


def _add_client_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        type=cliargs.address,
        default=("127.0.0.1", DEFAULT_PORT),
        metavar="HOST:PORT",
        help=f"where the server listens (default 127.0.0.1:{DEFAULT_PORT})",
    )
    parser.add_argument("--name", required=True, type=_team_name, help="your team name")
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
        "--level",
        required=True,
        choices=["random", "greedy", "positional", "deep"],
        help="which built-in player plays",
    )
    parser.add_argument("--seed", type=int, help="seed for the player's choices")
    parser.add_argument(
        "--games", type=cliargs.positive, default=1, metavar="N", help="play N games in a row"
    )
    parser.add_argument(
        "--move-time",
        type=cliargs.seconds,
        metavar="SECONDS",
        help="the server's time per move, so deep can budget (default: deep's own, under 1 s)",
    )


def _run_client(args: argparse.Namespace) -> int:
    from services.reversi.client import run

    return run(args)


SERVICE = Service(
    name="reversi",
    default_port=DEFAULT_PORT,
    mdns_type="_reversi._tcp.local.",
    summary="Reversi (Othello), the course server: many games at once, move time enforced",
    serve=_serve,
    add_options=_add_options,
    bot=ClientCommand(_add_bot_arguments, _run_client),
    play=ClientCommand(_add_client_arguments, _run_client),
)
