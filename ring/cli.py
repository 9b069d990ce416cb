"""The ``ring`` command: one entry point for tables, peers and scenarios.

Each subcommand imports its implementation only when chosen, so ``ring
peer`` starts without loading the tables (and, later, zeroconf).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def _players(text: str) -> int:
    value = int(text)
    if not 2 <= value <= 8:
        raise argparse.ArgumentTypeError("an Old Maid game has 2 to 8 players")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("a time cannot be negative")
    return value


def _ipv4(text: str) -> str:
    parts = text.split(".")
    if len(parts) != 4 or not all(p.isdigit() and int(p) < 256 for p in parts):
        raise argparse.ArgumentTypeError(f"expected an IPv4 address, got {text!r}")
    return text


def _service_name(text: str) -> str:
    if not 1 <= len(text) <= 32 or not all(c.isalnum() or c in "_-" for c in text):
        raise argparse.ArgumentTypeError("a name is 1-32 of A-Z a-z 0-9 _ -")
    return text


_MDNS_INTERFACE_HELP = "the one interface address to use mDNS on; 0.0.0.0: all"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ring",
        description="Old Maid ring, game servers and clients for course game labs.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    table = commands.add_parser("table", help="run an Old Maid table (deals and referees)")
    table.add_argument("--players", type=_players, default=4, help="players per game (2-8)")
    table.add_argument("--port", type=int, default=9898, help="TCP port (0: any free port)")
    table.add_argument("--host", default="127.0.0.1", help="address to listen on")
    table.add_argument("--seed", type=int, help="seed for seating and the deck (default: random)")
    table.add_argument(
        "--start-after",
        type=_seconds,
        metavar="SECONDS",
        help="start this long after the second join, even if fewer than --players joined",
    )
    table.add_argument("--transcript", metavar="FILE", help="write every message as JSON lines")
    table.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="close a connection that sends nothing for this long (players excepted mid-game)",
    )
    table.add_argument(
        "--linger",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="after the game, keep answering status until players leave, at most this long",
    )
    table.add_argument(
        "--last-pair-grace",
        type=_seconds,
        default=2.0,
        metavar="SECONDS",
        help="once all players but one are out, how long to wait for pairs never discarded "
        "before ending the game without them",
    )
    table.add_argument("--max-connections", type=int, default=64, metavar="N")
    table.add_argument(
        "--advertise",
        action=argparse.BooleanOptionalAction,
        help="advertise over mDNS (default: only when --host is not a loopback address)",
    )
    table.add_argument(
        "--mdns-interface",
        type=_ipv4,
        metavar="ADDR",
        help=_MDNS_INTERFACE_HELP + " (default: --host)",
    )
    table.add_argument(
        "--name",
        type=_service_name,
        default="table",
        help="mDNS instance name; a random id is appended (default: table)",
    )

    peer = commands.add_parser("peer", help="join a table and play in the ring")
    peer.add_argument("--nick", required=True, help="1-32 of A-Z a-z 0-9 _ -")
    peer.add_argument(
        "--table",
        type=_address,
        metavar="HOST:PORT",
        help="where the table listens (default: find a waiting table over mDNS)",
    )
    peer.add_argument(
        "--table-name",
        type=_service_name,
        metavar="NAME",
        help="without --table: join the table with this mDNS instance name (or name prefix)",
    )
    peer.add_argument(
        "--mdns-interface",
        type=_ipv4,
        metavar="ADDR",
        help=_MDNS_INTERFACE_HELP + " (default: all)",
    )
    peer.add_argument(
        "--discover-timeout",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="without --table: longest wait for a waiting table to be found",
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
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="longest wait for any single reply (from a neighbour or the table) or connection",
    )
    # The old name of --peer-timeout, kept so that existing command lines work.
    peer.add_argument("--timeout", dest="timeout", type=_seconds, help=argparse.SUPPRESS)
    peer.add_argument(
        "--max-connections",
        type=int,
        default=64,
        metavar="N",
        help="inbound connections open at once (idle ones are evicted first)",
    )
    peer.add_argument(
        "--first-message-timeout",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="close an inbound connection that sends nothing valid for this long",
    )
    peer.add_argument(
        "--join-timeout",
        type=_seconds,
        default=600.0,
        metavar="SECONDS",
        help="longest wait for the game to start",
    )
    peer.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="give up when nothing at all happens in the game for this long",
    )
    peer.add_argument(
        "--linger",
        type=_seconds,
        default=0.2,
        metavar="SECONDS",
        help="once out, keep answering 'out' this long after the game ends",
    )
    peer.add_argument(
        "--stall-timeout",
        type=_seconds,
        default=3.0,
        metavar="SECONDS",
        help="after handing the turn to a player who then went out and left, how long to "
        "wait for the turn to move on before reporting that player to the table",
    )

    scenario = commands.add_parser(
        "scenario", help="run a table and peers as OS processes and verify the game"
    )
    scenario.add_argument("name", metavar="NAME", help="N-players, e.g. 8-players")
    scenario.add_argument("--seed", type=int, help="game seed (default: the scenario's own)")
    scenario.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS")
    scenario.add_argument("--keep", metavar="DIR", help="keep logs and transcript in DIR")
    discover = commands.add_parser(
        "discover", help="list the tables advertised over mDNS, one per line"
    )
    discover.add_argument(
        "--timeout", type=_seconds, default=3.0, metavar="SECONDS", help="how long to listen"
    )
    discover.add_argument(
        "--mdns-interface",
        type=_ipv4,
        metavar="ADDR",
        help=_MDNS_INTERFACE_HELP + " (default: all)",
    )
    discover.add_argument(
        "--kind",
        action="append",
        # ring.discovery.SERVICE_TYPES, not imported here: it imports zeroconf.
        choices=["oldmaid", "fishnet", "reversi", "notipping"],
        help="only this kind of table (repeatable; default: all kinds)",
    )
    _add_serve(commands)
    _add_fishnet_clients(commands)

    gofish = commands.add_parser(
        "gofish", help="play the interactive Go Fish game against 1-5 computer players"
    )
    gofish.add_argument("--seed", type=int, help="seed for shuffles and computer choices")
    return parser


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) < 65536:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {text!r}")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def _team_name(text: str) -> str:
    from services.fishnet.protocol import is_word

    if not is_word(text):
        raise argparse.ArgumentTypeError(f"a name is printable text without spaces, not {text!r}")
    return text


def _add_serve(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve", help="run a game server with its built-in players (FishNet)"
    )
    serve.add_argument(
        "--fishnet",
        nargs="?",
        const=1530,
        type=_port,
        metavar="PORT",
        help="serve FishNet (Go Fish) on PORT (default 1530; 0: any free port)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--seed", type=int, help="server seed: replays every game (default: random)")
    serve.add_argument(
        "--youmake", action="store_true", help="tell a player its own books (later handout)"
    )
    serve.add_argument("--transcript", metavar="DIR", help="write one JSON-lines file per game")
    serve.add_argument(
        "--bot-moves",
        choices=["random", "first", "second"],
        default="random",
        help="against a built-in player, whether it moves first (default: random, seeded)",
    )
    serve.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="close a connection that sends no play for this long",
    )
    serve.add_argument(
        "--wait-timeout",
        type=_seconds,
        default=600.0,
        metavar="SECONDS",
        help="longest wait for a named opponent to ask for the same game",
    )
    serve.add_argument(
        "--move-timeout",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="a player who does not answer yourturn within this loses",
    )
    serve.add_argument(
        "--max-moves",
        type=_positive,
        default=1000,
        metavar="N",
        help="end a game by its books after N requests and passes",
    )
    serve.add_argument("--max-connections", type=_positive, default=256, metavar="N")
    serve.add_argument(
        "--max-waiting-per-host",
        type=_positive,
        default=32,
        metavar="N",
        help="clients of one host waiting for a named opponent at once (default 32)",
    )
    serve.add_argument(
        "--advertise",
        action=argparse.BooleanOptionalAction,
        help="advertise over mDNS (default: only when --host is not a loopback address)",
    )
    serve.add_argument("--mdns-interface", type=_ipv4, metavar="ADDR", help=_MDNS_INTERFACE_HELP)
    serve.add_argument("--name", type=_service_name, help="mDNS instance name (default: fishnet)")


def _add_fishnet_clients(commands: argparse._SubParsersAction) -> None:
    play = commands.add_parser("play", help="play a game server's game from this terminal")
    bot = commands.add_parser("bot", help="run a built-in player as a network client")
    for parser in (play, bot):
        parser.add_argument("game", choices=["fishnet"], help="which game")
        parser.add_argument(
            "--server",
            type=_address,
            default=("127.0.0.1", 1530),
            metavar="HOST:PORT",
            help="where the server listens (default 127.0.0.1:1530)",
        )
        parser.add_argument(
            "--name", required=True, type=_team_name, help="your team name (no spaces)"
        )
        parser.add_argument(
            "--opponent",
            required=True,
            help="a built-in player (spot, bob, alice, smarx) or a team",
        )
        parser.add_argument(
            "--timeout",
            type=_seconds,
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
    bot.add_argument(
        "--level",
        required=True,
        type=str.lower,
        choices=["spot", "bob", "alice", "smarx"],
        help="which built-in player plays",
    )
    bot.add_argument("--seed", type=int, help="seed for the player's choices")
    bot.add_argument(
        "--games", type=_positive, default=1, metavar="N", help="play N games one after another"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "peer" and args.table is not None and args.table_name is not None:
        parser.error("--table-name chooses among tables found over mDNS: drop --table")
    if args.command == "table":
        from services.oldmaid.table import run as run_table

        return run_table(args)
    if args.command == "peer":
        from ring.oldmaid.peer import run as run_peer

        return run_peer(args)
    if args.command == "scenario":
        from scenarios.runner import run as run_scenario

        return run_scenario(args)
    if args.command == "discover":
        from ring.discovery import run as run_discover

        return run_discover(args)
    if args.command == "serve":
        if args.fishnet is None:
            parser.error("choose a game to serve: --fishnet [PORT]")
        from services.fishnet.server import run as run_fishnet_server

        return run_fishnet_server(args)
    if args.command in ("play", "bot"):
        from services.fishnet.client import run as run_fishnet_client

        return run_fishnet_client(args)
    if args.command == "gofish":
        from services.gofish.cli import run as run_gofish

        return run_gofish(args)
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
