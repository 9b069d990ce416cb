"""Reversi declared for ``ring serve`` and ``ring discover``.

Imports stay light: the ``ring`` command loads this to build its help; the
server is imported when it runs.
"""

from __future__ import annotations

import argparse

import trio

from ring.cli import cliargs
from ring.cli.client_args import GameClients, Names
from ring.cli.registry import ServeSettings, Service, start_server
from services.reversi import DEFAULT_PORT

LEVELS = ["random", "greedy", "positional", "deep"]


def _add_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--no-newlines",
        dest="newlines",
        action="store_false",
        help="send U1, B..., W1, G bare, without the newline the course server ended them with",
    )


async def _serve(settings: ServeSettings, *, task_status: trio.TaskStatus[tuple[str, int]]) -> None:
    from services.reversi.server import ReversiConfig, ServerError, serve_reversi

    config = ReversiConfig(
        **settings.server_kwargs("reversi"),
        move_time=settings.move_time,
        newlines=settings.options.newlines,
        on_end=settings.reporter("reversi"),
    )
    await start_server(serve_reversi, config, ServerError, task_status=task_status)


def _is_name(text: str) -> bool:
    from services.reversi.protocol import is_name

    return is_name(text)


def _add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--move-time",
        type=cliargs.seconds,
        metavar="SECONDS",
        help="the server's time per move, so deep can budget (default: deep's own, under 1 s)",
    )
    parser.add_argument(
        "--depth",
        type=cliargs.positive,
        metavar="N",
        help="deep searches N moves ahead, with no time budget: the same moves on any machine",
    )


def _run_client(args: argparse.Namespace) -> int:
    from services.reversi.client import run

    return run(args)


NAMES = Names("1-10 of A-Z a-z 0-9 _", _is_name)
CLIENTS = GameClients(DEFAULT_PORT, NAMES, LEVELS, _run_client, add_bot_own=_add_bot_arguments)

SERVICE = Service(
    name="reversi",
    default_port=DEFAULT_PORT,
    summary="Reversi (Othello), the course server: many games at once, move time enforced",
    serve=_serve,
    move_time=30.0,
    add_options=_add_options,
    bot=CLIENTS.bot,
    play=CLIENTS.play,
)
