"""The Old Maid table declared for ``ring serve`` and ``ring discover``, and ``ring table``.

``ring serve --oldmaid`` runs the table for a class: game after game, several
at once, until stopped. ``ring table`` is the same table for a set number of
games (one by default), then it exits with how they ended. Imports stay
light: the table itself is imported when it runs.
"""

from __future__ import annotations

import argparse
import sys

import trio

from ring.cli import cliargs
from ring.cli.registry import Command, ServeSettings, Service, as_server_error
from ring.oldmaid import DEFAULT_PORT
from ring.wire.net import DEFAULT_MAX_CONNECTIONS


def _add_game_options(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--players", type=cliargs.players, default=4, help="players per game (2-8, default 4)"
    )
    group.add_argument(
        "--start-after",
        type=cliargs.seconds,
        metavar="SECONDS",
        help="start a game this long after its second join, even if fewer than --players joined",
    )
    group.add_argument(
        "--linger",
        type=cliargs.seconds,
        default=10.0,
        metavar="SECONDS",
        help="after a game, keep answering its players until they leave, at most this long",
    )
    group.add_argument(
        "--last-pair-grace",
        type=cliargs.seconds,
        default=2.0,
        metavar="SECONDS",
        help="once all players but one are out, how long to wait for pairs never discarded "
        "before ending the game without them",
    )
    group.add_argument(
        "--turn-timeout",
        type=cliargs.seconds,
        default=300.0,
        metavar="SECONDS",
        help="abort a game in which nothing moves (no draw, discard or player out) for this "
        "long (default 300, above ring peer's 120 s idle timeout; 0: no limit)",
    )
    group.add_argument(
        "--verified",
        action="store_true",
        help="seat only players that join with verify and witness, so that every game is "
        "verified and witnessed: each exchange committed to and reported, and a silent "
        "player named (protocol 14.5 and 14.6)",
    )


async def _serve(settings: ServeSettings, *, task_status: trio.TaskStatus[tuple[str, int]]) -> None:
    from services.oldmaid.table.server import ServerError, TableConfig, serve_tables

    options = settings.options
    config = TableConfig(
        **settings.server_kwargs("table"),
        players=options.players,
        start_after=options.start_after,
        games=None,
        turn_timeout=options.turn_timeout,
        linger=options.linger,
        last_pair_grace=options.last_pair_grace,
        verified=options.verified,
        on_end=lambda outcome: settings.say(f"oldmaid game {outcome.number}: {outcome.line}"),
    )
    with as_server_error(ServerError):
        await serve_tables(config, task_status=task_status)


def _add_table_arguments(table: argparse.ArgumentParser) -> None:
    _add_game_options(table)
    table.add_argument(
        "--games",
        type=cliargs.positive,
        default=1,
        metavar="N",
        help="play N games (several at once, as players join), then exit (default 1)",
    )
    table.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port (0: any free port)")
    table.add_argument(
        "--seed",
        type=int,
        help="seed for seating and the deck (default: a secret, printed nowhere; each "
        "game's transcript holds its own seed)",
    )
    table.add_argument("--transcript", metavar="FILE", help="write every message as JSON lines")
    table.add_argument("--transcripts", metavar="DIR", help="one JSON-lines file per game in DIR")
    table.add_argument(
        "--idle-timeout",
        type=cliargs.seconds,
        default=120.0,
        metavar="SECONDS",
        help="close a connection that has not joined this long after it connected",
    )
    table.add_argument(
        "--wait-timeout",
        type=cliargs.seconds,
        default=600.0,
        metavar="SECONDS",
        help="answer a join with an error, freeing its seat, if its game has not started "
        "this long after it (default 600)",
    )
    cliargs.add_listener_options(
        table,
        max_connections=DEFAULT_MAX_CONNECTIONS,
        mdns_name="table",
        mdns_interface_default=" (default: --host)",
    )


def _run_table(args: argparse.Namespace) -> int:
    if args.transcript is not None and args.transcripts is not None:
        print("table: give --transcript FILE or --transcripts DIR, not both", file=sys.stderr)
        return 2
    from services.oldmaid.table.server import run

    return run(args)


SERVICE = Service(
    name="oldmaid",
    default_port=DEFAULT_PORT,
    summary="Old Maid tables (the ring's dealer and referee, game after game)",
    serve=_serve,
    add_options=_add_game_options,
)

TABLE_COMMAND = Command(
    name="table",
    help="run an Old Maid table (deals and referees) for one game, or --games N",
    add_arguments=_add_table_arguments,
    run=_run_table,
)
