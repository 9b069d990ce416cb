"""How a ``ring peer`` is set up: ``PeerConfig``, from its command line or a test."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ring.oldmaid.stand_ins import StandIns
from ring.wire.net import DEFAULT_MAX_PER_ADDRESS


@dataclass
class PeerConfig:
    nick: str
    table: tuple[str, int] | None  # None: find a waiting table over mDNS
    host: str | None = None
    port: int = 0
    seed: int | None = None
    events: str | None = None
    timeout: float = 10.0
    join_timeout: float = 600.0
    idle_timeout: float = 120.0
    linger: float = 0.2
    # A picker pauses this long between ``ok`` and ``pick`` for an offerer
    # that has not said it reads a stream (older clients read one message a
    # recv). After a handoff to a player who then goes out and leaves, the
    # turn must show up again within stall_timeout, or the game is stalled.
    pick_pause: float = 0.05
    stall_timeout: float = 3.0
    # Inbound connections: at most this many open at once (ring.wire.net.listen
    # evicts the oldest that has not yet sent a valid message), and one that
    # sends nothing valid within first_message_timeout is closed.
    max_connections: int = 64
    # From one address, loopback excepted. A newcomer refused at a cap is closed
    # without a word: the dialler asks once more on a fresh connection (Links.ask).
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS
    exempt_loopback: bool = True  # tests turn it off to meet the cap from 127.0.0.1
    first_message_timeout: float = 10.0
    # Join with verify (protocol 14.5): prove who we are to the players we
    # dial, and check the proofs of the players that dial us.
    verify: bool = True
    # With verify: ask the table to witness an exchange a neighbour leaves us waiting in,
    # and make our moves of one it witnesses (protocol 14.6, "The table as witness").
    witness: bool = True
    # How long a neighbour may leave us waiting in an exchange before we ask the table to
    # witness it; None: the peer timeout. (Tests shorten it to send every exchange there.)
    witness_after: float | None = None
    # ring check's stand-ins for other players' habits and faults (ring.oldmaid.stand_ins);
    # a ``ring peer`` has none.
    stand_ins: StandIns = field(default_factory=StandIns, compare=False)
    # Handed every event-log record too (ring check and the tests watch the game so).
    on_event: Callable[[dict[str, Any]], object] | None = field(default=None, compare=False)
    # mDNS, used only when table is None.
    table_name: str | None = None  # the instance name, or the part before its id
    mdns_interface: str | None = None  # None: all interfaces
    discover_timeout: float = 10.0


def config_from_args(args: argparse.Namespace) -> PeerConfig:
    return PeerConfig(
        nick=args.name,
        table=args.server,
        host=args.host,
        port=args.port,
        seed=args.seed,
        events=args.events,
        timeout=args.timeout,
        join_timeout=args.join_timeout,
        idle_timeout=args.idle_timeout,
        linger=args.linger,
        stall_timeout=getattr(args, "stall_timeout", 3.0),
        max_connections=getattr(args, "max_connections", 64),
        max_per_address=getattr(args, "max_per_address", DEFAULT_MAX_PER_ADDRESS),
        first_message_timeout=getattr(args, "first_message_timeout", 10.0),
        table_name=getattr(args, "table_name", None),
        mdns_interface=getattr(args, "mdns_interface", None),
        discover_timeout=getattr(args, "discover_timeout", 10.0),
        verify=getattr(args, "verify", True),
        witness=getattr(args, "witness", True),
    )
