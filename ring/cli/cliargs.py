"""Argument types shared by the ``ring`` command and the commands packages declare.

Each turns a command-line word into a value or raises ``ArgumentTypeError``
with a message naming what was expected, so a wrong flag costs one clear
line and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
from typing import Any

MDNS_INTERFACE_HELP = "the one interface address to use mDNS on; 0.0.0.0: all"
MAX_PER_ADDRESS_HELP = (
    "connections open at once from one address, loopback excepted "
    "(default %(default)s; 0: no limit)"
)


def address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def players(text: str) -> int:
    value = int(text)
    if not 2 <= value <= 8:
        raise argparse.ArgumentTypeError("an Old Maid game has 2 to 8 players")
    return value


def seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("a time cannot be negative")
    return value


def ipv4(text: str) -> str:
    parts = text.split(".")
    if len(parts) != 4 or not all(p.isdigit() and int(p) < 256 for p in parts):
        raise argparse.ArgumentTypeError(f"expected an IPv4 address, got {text!r}")
    return text


def service_name(text: str) -> str:
    if not 1 <= len(text) <= 32 or not all(c.isalnum() or c in "_-" for c in text):
        raise argparse.ArgumentTypeError("a name is 1-32 of A-Z a-z 0-9 _ -")
    return text


def port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) < 65536:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {text!r}")
    return int(text)


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def count(text: str) -> int:
    """A whole number, 0 included (where 0 turns a limit off)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number (0 or more), got {text!r}")
    return int(text)


_SAME_FOR_BOTH = ("action", "type", "choices", "nargs", "const")


def add_renamed(
    parser: argparse._ActionsContainer, flag: str, old: str, **kwargs: Any
) -> argparse.Action:
    """Add ``flag``, and ``old`` as its former spelling: the same dest, type and
    choices, so old command lines keep working, but absent from ``--help``.

    A required flag may be given in either spelling (not both): the two are
    then a required group, whose error names only ``flag``.
    """
    required = kwargs.pop("required", False)
    container = parser.add_mutually_exclusive_group(required=True) if required else parser
    action = container.add_argument(flag, **kwargs)
    same = {key: kwargs[key] for key in _SAME_FOR_BOTH if key in kwargs}
    container.add_argument(
        old, dest=action.dest, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **same
    )
    return action


def add_listener_options(
    group: argparse._ArgumentGroup | argparse.ArgumentParser,
    *,
    each: str = "",
    max_connections: int | None = None,
    mdns_name: str | None = None,
    mdns_interface_default: str = "",
) -> None:
    """The options every server takes for its listener and mDNS, spelled once: ``--host``,
    ``--max-connections``, ``--max-per-address``, ``--advertise``, ``--mdns-interface``,
    ``--name``. ``each`` says what a cap is counted over (ring serve: ", per service");
    ``max_connections`` and ``mdns_name`` are defaults (None: each service's own)."""
    from ring.wire.net import DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PER_ADDRESS

    group.add_argument("--host", default="127.0.0.1", help="address to listen on")
    group.add_argument(
        "--max-connections",
        type=positive,
        default=max_connections,
        metavar="N",
        help=f"connections open at once{each} (default {DEFAULT_MAX_CONNECTIONS})",
    )
    group.add_argument(
        "--max-per-address",
        type=count,
        default=DEFAULT_MAX_PER_ADDRESS,
        metavar="N",
        help=f"connections open at once from one address{each}, loopback excepted "
        "(default %(default)s; 0: no limit)",
    )
    group.add_argument(
        "--advertise",
        action=argparse.BooleanOptionalAction,
        help="advertise over mDNS (default: only when --host is not a loopback address)",
    )
    group.add_argument(
        "--mdns-interface",
        type=ipv4,
        metavar="ADDR",
        help=MDNS_INTERFACE_HELP + mdns_interface_default,
    )
    group.add_argument(
        "--name",
        type=service_name,
        default=mdns_name,
        help="mDNS instance name, before a random id "
        f"(default: {mdns_name or 'each service' + chr(39) + 's own'})",
    )
