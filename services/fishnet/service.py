"""FishNet declared for ``ring serve``, ``ring discover``, ``ring bot`` and ``ring play``.

Imports stay light: the ``ring`` command loads this to build its help; the
server and the clients are imported when they run.
"""

from __future__ import annotations

import argparse
import math

import trio

from ring.cli import cliargs
from ring.cli.client_args import GameClients, Names
from ring.cli.registry import ServeSettings, Service, start_server
from services.fishnet import DEFAULT_PORT

LEVELS = ["spot", "bob", "alice", "smarx"]


def _add_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--youmake", action="store_true", help="tell a player its own books (later handout)"
    )
    group.add_argument(
        "--bot-moves",
        choices=["random", "first", "second"],
        default="random",
        help="against a built-in player, whether it moves first (default: random, seeded)",
    )
    group.add_argument(
        "--max-moves",
        type=cliargs.positive,
        default=1000,
        metavar="N",
        help="end a game by its books after N requests and passes",
    )
    group.add_argument(
        "--max-waiting-per-host",
        type=cliargs.positive,
        default=32,
        metavar="N",
        help="clients of one host waiting for a named opponent at once (default 32)",
    )


async def _serve(settings: ServeSettings, *, task_status: trio.TaskStatus[tuple[str, int]]) -> None:
    from services.fishnet.server import FishNetServer, ServerConfig, ServerError, serve_fishnet

    common = settings.server_kwargs("fishnet")
    common["transcript_dir"] = common.pop("transcripts")
    options = settings.options
    config = ServerConfig(
        **common,
        youmake=options.youmake,
        bot_moves=options.bot_moves,
        move_timeout=settings.move_time or math.inf,  # 0: no limit, as for Reversi
        max_moves=options.max_moves,
        max_waiting_per_host=options.max_waiting_per_host,
    )

    def report(server: FishNetServer) -> None:
        server.on_report = settings.reporter("fishnet")

    await start_server(serve_fishnet, config, ServerError, task_status=task_status, started=report)


def _is_word(text: str) -> bool:
    from services.fishnet.protocol import is_word

    return is_word(text)


def _add_own_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--opponent", required=True, help="a built-in player (spot, bob, alice, smarx) or a team"
    )
    parser.add_argument(
        "--quit",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="send the later handout's closing quit after the game (default: on)",
    )


def _run_client(args: argparse.Namespace) -> int:
    from services.fishnet.client import run

    return run(args)


NAMES = Names("printable text without spaces", _is_word)
CLIENTS = GameClients(DEFAULT_PORT, NAMES, LEVELS, _run_client, add_own=_add_own_arguments)

SERVICE = Service(
    name="fishnet",
    default_port=DEFAULT_PORT,
    summary="FishNet (Go Fish through a server, with built-in players)",
    serve=_serve,
    move_time=120.0,
    add_options=_add_options,
    bot=CLIENTS.bot,
    play=CLIENTS.play,
)
