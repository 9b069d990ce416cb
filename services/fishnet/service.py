"""FishNet declared for ``ring serve``, ``ring discover``, ``ring bot`` and ``ring play``.

Imports stay light: the ``ring`` command loads this to build its help; the
server and the clients are imported when they run.
"""

from __future__ import annotations

import argparse
import functools

import trio

from ring import cliargs
from ring.registry import ClientCommand, ServeSettings, Service, as_service_error

DEFAULT_PORT = 1530
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
        "--move-timeout",
        type=cliargs.seconds,
        default=120.0,
        metavar="SECONDS",
        help="a player who does not answer yourturn within this loses",
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
    from services.fishnet.server import ServerConfig, ServerError, serve_fishnet

    options = settings.options
    config = ServerConfig(
        host=settings.host,
        port=settings.port,
        seed=settings.seed,
        keyed=settings.keyed,
        youmake=options.youmake,
        transcript_dir=settings.transcripts,
        bot_moves=options.bot_moves,
        idle_timeout=options.idle_timeout,
        wait_timeout=options.wait_timeout,
        move_timeout=options.move_timeout,
        max_moves=options.max_moves,
        max_connections=options.max_connections or 256,
        max_per_address=options.max_per_address,
        max_waiting_per_host=options.max_waiting_per_host,
        advertise=settings.advertise,
        mdns_interface=settings.mdns_interface,
        mdns_name=options.name or "fishnet",
    )
    async with trio.open_nursery() as nursery:
        with as_service_error(ServerError):
            server = await nursery.start(functools.partial(serve_fishnet, config))
        server.on_report = lambda report: settings.say(f"fishnet: {report.line}")
        task_status.started(server.address)


def _team_name(text: str) -> str:
    from services.fishnet.protocol import is_word

    if not is_word(text):
        raise argparse.ArgumentTypeError(f"a name is printable text without spaces, not {text!r}")
    return text


def _add_client_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        type=cliargs.address,
        default=("127.0.0.1", DEFAULT_PORT),
        metavar="HOST:PORT",
        help=f"where the server listens (default 127.0.0.1:{DEFAULT_PORT})",
    )
    parser.add_argument("--name", required=True, type=_team_name, help="your team name (no spaces)")
    parser.add_argument(
        "--opponent", required=True, help="a built-in player (spot, bob, alice, smarx) or a team"
    )
    parser.add_argument(
        "--timeout",
        type=cliargs.seconds,
        default=600.0,
        metavar="SECONDS",
        help="longest wait for the server (the opponent may be a person thinking)",
    )
    parser.add_argument(
        "--quit",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="send the later handout's closing quit after the game (default: on)",
    )


def _add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    _add_client_arguments(parser)
    parser.add_argument(
        "--level", required=True, type=str.lower, choices=LEVELS, help="which built-in player plays"
    )
    parser.add_argument("--seed", type=int, help="seed for the player's choices")
    parser.add_argument(
        "--games", type=cliargs.positive, default=1, metavar="N", help="play N games in a row"
    )


def _run_client(args: argparse.Namespace) -> int:
    from services.fishnet.client import run

    return run(args)


SERVICE = Service(
    name="fishnet",
    default_port=DEFAULT_PORT,
    mdns_type="_fishnet._tcp.local.",
    summary="FishNet (Go Fish through a server, with built-in players)",
    serve=_serve,
    add_options=_add_options,
    bot=ClientCommand(_add_bot_arguments, _run_client),
    play=ClientCommand(_add_client_arguments, _run_client),
)
