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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ring", description="Old Maid ring: table, peers and scenarios."
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
    table.add_argument("--max-connections", type=int, default=64, metavar="N")

    peer = commands.add_parser("peer", help="join a table and play in the ring")
    peer.add_argument("--nick", required=True, help="1-32 of A-Z a-z 0-9 _ -")
    peer.add_argument("--table", type=_address, required=True, metavar="HOST:PORT")
    peer.add_argument("--port", type=int, default=0, help="port for the right neighbour (0: any)")
    peer.add_argument(
        "--host", help="address to listen on and announce (default: the one facing the table)"
    )
    peer.add_argument("--seed", type=int, help="seed for card placement and picks")
    peer.add_argument("--events", metavar="FILE", help="write what happens as JSON lines")
    peer.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="longest wait for any single reply or connection",
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

    scenario = commands.add_parser(
        "scenario", help="run a table and peers as OS processes and verify the game"
    )
    scenario.add_argument("name", metavar="NAME", help="N-players, e.g. 8-players")
    scenario.add_argument("--seed", type=int, help="game seed (default: the scenario's own)")
    scenario.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS")
    scenario.add_argument("--keep", metavar="DIR", help="keep logs and transcript in DIR")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "table":
        from services.oldmaid.table import run as run_table

        return run_table(args)
    if args.command == "peer":
        from ring.oldmaid.peer import run as run_peer

        return run_peer(args)
    if args.command == "scenario":
        from scenarios.runner import run as run_scenario

        return run_scenario(args)
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
