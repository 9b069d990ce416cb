"""The ``ring`` command: the peer, and whatever the packages above declare.

``ring`` is the bottom layer, so this module knows no service and no
scenario by name: ``ring serve``, ``ring discover``, ``ring bot`` and
``ring play`` are built from the services declared through entry points
(``ring.cli.registry``), and ``ring table``, ``ring scenario`` and ``ring gofish``
are commands declared the same way. Each command imports its implementation
only when chosen, so ``ring peer`` starts without loading the tables.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ring.cli import cliargs
from ring.cli.registry import Command, Service, declared_commands, declared_services
from ring.version import VERSION
from ring.wire.net import DEFAULT_MAX_PER_ADDRESS


def build_parser(
    services: Sequence[Service] | None = None, commands: Sequence[Command] | None = None
) -> argparse.ArgumentParser:
    """The whole command line; ``services`` and ``commands`` default to the declared ones."""
    services = declared_services() if services is None else services
    commands = declared_commands() if commands is None else commands
    parser = argparse.ArgumentParser(
        prog="ring",
        description="Old Maid ring, game servers and clients for course game labs.",
    )
    parser.add_argument("--version", action="version", version=f"ring (cardring {VERSION})")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_peer(subcommands)
    _add_discover(subcommands, services)
    from ring.cli.serve import add_parser as add_serve

    add_serve(subcommands, services)
    _add_clients(subcommands, services)
    for command in commands:
        sub = subcommands.add_parser(command.name, help=command.help)
        command.add_arguments(sub)
        sub.set_defaults(declared=command)
    return parser


def _add_peer(commands: argparse._SubParsersAction) -> None:
    peer = commands.add_parser("peer", help="join a table and play in the ring")
    # --name and --server as in every client (ring play, ring bot); --nick and
    # --table, their old spellings, still work.
    cliargs.add_renamed(
        peer,
        "--name",
        "--nick",
        required=True,
        help="your name in the game (1-32 of A-Z a-z 0-9 _ -)",
    )
    cliargs.add_renamed(
        peer,
        "--server",
        "--table",
        type=cliargs.address,
        metavar="HOST:PORT",
        help="where the table listens (default: find a waiting table over mDNS)",
    )
    peer.add_argument(
        "--table-name",
        type=cliargs.service_name,
        metavar="NAME",
        help="without --server: join the table with this mDNS instance name (or name prefix)",
    )
    peer.add_argument(
        "--mdns-interface",
        type=cliargs.ipv4,
        metavar="ADDR",
        help=cliargs.MDNS_INTERFACE_HELP + " (default: all)",
    )
    peer.add_argument(
        "--discover-timeout",
        type=cliargs.seconds,
        default=10.0,
        metavar="SECONDS",
        help="without --server: longest wait for a waiting table to be found",
    )
    peer.add_argument("--port", type=int, default=0, help="port for the right neighbour (0: any)")
    peer.add_argument(
        "--host", help="address to listen on and announce (default: the one facing the table)"
    )
    peer.add_argument("--seed", type=int, help="seed for card placement and picks")
    peer.add_argument("--events", metavar="FILE", help="write what happens as JSON lines")
    peer.add_argument(
        "--peer-timeout",
        dest="timeout",
        type=cliargs.seconds,
        default=10.0,
        metavar="SECONDS",
        help="longest wait for any single reply (from a neighbour or the table) or connection",
    )
    peer.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="play as an older client: no proofs, no reports (protocol 14.5, 14.6); a table "
        "run with --verified refuses it",
    )
    peer.add_argument(
        "--no-witness",
        dest="witness",
        action="store_false",
        help="verify, but never ask the table to witness an exchange (protocol 14.6): a game "
        "with such a player is not witnessed",
    )
    # The old name of --peer-timeout, kept so that existing command lines work.
    peer.add_argument("--timeout", dest="timeout", type=cliargs.seconds, help=argparse.SUPPRESS)
    peer.add_argument(
        "--max-connections",
        type=cliargs.positive,
        default=64,
        metavar="N",
        help="inbound connections open at once (idle ones are evicted first)",
    )
    peer.add_argument(
        "--max-per-address",
        type=cliargs.count,
        default=DEFAULT_MAX_PER_ADDRESS,
        metavar="N",
        help="inbound " + cliargs.MAX_PER_ADDRESS_HELP,
    )
    peer.add_argument(
        "--first-message-timeout",
        type=cliargs.seconds,
        default=10.0,
        metavar="SECONDS",
        help="close an inbound connection that sends nothing valid for this long",
    )
    peer.add_argument(
        "--join-timeout",
        type=cliargs.seconds,
        default=600.0,
        metavar="SECONDS",
        help="longest wait for the game to start",
    )
    peer.add_argument(
        "--idle-timeout",
        type=cliargs.seconds,
        default=120.0,
        metavar="SECONDS",
        help="give up when nothing at all happens in the game for this long",
    )
    peer.add_argument(
        "--linger",
        type=cliargs.seconds,
        default=0.2,
        metavar="SECONDS",
        help="once out, keep answering 'out' this long after the game ends",
    )
    peer.add_argument(
        "--stall-timeout",
        type=cliargs.seconds,
        default=3.0,
        metavar="SECONDS",
        help="after handing the turn to a player who then went out and left, how long to "
        "wait for the turn to move on before reporting that player to the table",
    )


def _add_discover(commands: argparse._SubParsersAction, services: Sequence[Service]) -> None:
    discover = commands.add_parser(
        "discover", help="list the tables and servers advertised over mDNS, one per line"
    )
    discover.add_argument(
        "--timeout", type=cliargs.seconds, default=3.0, metavar="SECONDS", help="how long to listen"
    )
    discover.add_argument(
        "--mdns-interface",
        type=cliargs.ipv4,
        metavar="ADDR",
        help=cliargs.MDNS_INTERFACE_HELP + " (default: all)",
    )
    discover.add_argument(
        "--kind",
        action="append",
        choices=[service.name for service in services if not service.companion],
        help="only this kind of service (repeatable; default: every declared kind)",
    )


def _add_clients(commands: argparse._SubParsersAction, services: Sequence[Service]) -> None:
    for verb, summary in (
        ("play", "play a game server's game from this terminal"),
        ("bot", "run a built-in player as a network client"),
    ):
        parser = commands.add_parser(verb, help=summary)
        games = parser.add_subparsers(dest="game", required=True, metavar="GAME")
        for service in services:
            client = getattr(service, verb)
            if client is not None:
                sub = games.add_parser(service.name, help=service.summary)
                client.add_arguments(sub)
                sub.set_defaults(declared=client)


def main(
    argv: Sequence[str] | None = None,
    *,
    services: Sequence[Service] | None = None,
    commands: Sequence[Command] | None = None,
) -> int:
    services = declared_services() if services is None else services
    parser = build_parser(services, commands)
    args = parser.parse_args(argv)
    if args.command == "peer":
        if args.server is not None and args.table_name is not None:
            parser.error("--table-name chooses among tables found over mDNS: drop --server")
        from ring.oldmaid.peer import run as run_peer

        return run_peer(args)
    if args.command == "discover":
        # the game services: a companion (the live page) is not advertised
        args.kind = args.kind or [service.name for service in services if not service.companion]
        from ring.mdns.discovery import run as run_discover

        return run_discover(args)
    if args.command == "serve":
        from ring.cli.serve import run as run_serve

        return run_serve(args, services)
    return args.declared.run(args)


if __name__ == "__main__":
    sys.exit(main())
