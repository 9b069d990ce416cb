"""How an Old Maid table is set up: ``TableConfig``, from ``ring table`` or ``ring serve``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ring.games.record import RecordHub
from ring.oldmaid import DEFAULT_PORT
from ring.oldmaid.cards import Card
from ring.wire.framing import DEFAULT_MAX_MESSAGE
from ring.wire.net import DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PER_ADDRESS
from services.oldmaid.referee.rules import MAX_PLAYERS, MIN_PLAYERS, Address
from services.oldmaid.table.outcome import GameOutcome


@dataclass(frozen=True)
class TableConfig:
    players: int = 4
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # None: a fresh secret key (keyed), printed nowhere
    # seed is a secret key: each game's seed is a keyed hash of it and the
    # game's number (ring.games.seeds), and only that goes in the game's transcript.
    keyed: bool = False
    start_after: float | None = None
    transcript: str | Path | None = None  # one file for every game
    transcripts: str | Path | None = None  # a folder: one file per game
    games: int | None = 1  # how many games to play before returning; None: until cancelled
    idle_timeout: float = 120.0  # from connect, for a connection that has not joined
    # A joined player whose game has not started this long after its join gets
    # an error reply to it, and its seat is free again; None: it waits for ever.
    wait_timeout: float | None = 600.0
    # A game in which nothing moves (no draw, discard or player out) this long
    # is aborted; 0: no limit. Above ring peer's 120 s idle timeout, so that
    # the players' own timeouts, which know more, always speak first.
    turn_timeout: float = 300.0
    linger: float = 10.0
    # Once every player but one is out, how long to wait for pairs still
    # undiscarded before ending the game without them (docs/protocols/oldmaid.md 7.9).
    last_pair_grace: float = 2.0
    # An accusation that names the accused (protocol 5.9) waits this long for a
    # counter-accusation before the game is aborted on it.
    accuse_window: float = 0.5
    # Seat only players that join with verify, so that every game is verified: every
    # exchange committed to and reported (docs/protocols/oldmaid.md 14.5, 14.6).
    verified: bool = False
    # With verified: seat only players that also join with witness (14.6, the table as
    # witness), so that every game is witnessed and a silent player is named. ring check
    # turns it off, to play a verifying program that does not witness (a WARN, not a refusal).
    require_witness: bool = True
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS  # None or 0: no such cap
    # Tests turn it off to meet the per-address cap from 127.0.0.1.
    exempt_loopback: bool = True
    send_timeout: float = 10.0
    max_message: int = DEFAULT_MAX_MESSAGE
    # mDNS: None advertises only when listening on a non-loopback address.
    advertise: bool | None = None
    mdns_interface: str | None = None  # default: the listening address (0.0.0.0: all)
    mdns_name: str = "table"  # the instance is "<mdns_name>-<8 hex>"
    # A stacked deck, in draw order, for every game instead of the seed's shuffle
    # (``ring check oldmaid`` stages its situations with one; not a command option).
    deck: tuple[Card, ...] | None = None
    # Where to listen instead of host:port: a tournament's, in its ring's box network.
    listener: trio.SocketListener | None = field(default=None, compare=False)
    # Asked before a join is taken: why this connection may not join as this nick (the
    # error reply), or None. A sandboxed tournament knows each entrant's connections.
    admit: Callable[[trio.SocketStream, str], str | None] | None = field(
        default=None, compare=False
    )
    # Where a connection that reaches the table through a relay really comes from (ring
    # check's relayed cases): the address a table dialled directly would have seen, which
    # a join without host or port is seated at (5.1); None from it: the connection's own.
    real_source: Callable[[Address], Address | None] | None = field(default=None, compare=False)
    # Told each nick that joins, as it joins (a tournament knows who came).
    on_join: Callable[[str], object] | None = field(default=None, compare=False)
    # The nicks a tournament's ring seats (one game): once each has joined, or been refused
    # for joining without verify, the game starts without waiting out ``start_after``.
    expected: frozenset[str] = frozenset()
    # Told each nick whose join a --verified table refused (it did not ask to verify).
    on_unverified: Callable[[str], object] | None = field(default=None, compare=False)
    # Told how each game ended, as it ends (``ring serve`` prints it).
    on_end: Callable[[GameOutcome], object] | None = field(default=None, compare=False)
    # Every game's records go here (ring.games.record); the transcript writer is one
    # subscriber. None: the table makes its own.
    hub: RecordHub | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"an Old Maid game has {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if self.games is not None and self.games < 1:
            raise ValueError("a table plays at least one game")

    def game_options(self) -> dict[str, Any]:
        """The options that decide a game, for its ``start`` record: how many players it
        waits for (and how long before it starts with fewer), and when it ends without
        its last pairs or is aborted because nothing moves."""
        options: dict[str, Any] = {
            "players": self.players,
            "start_after": self.start_after,
            "last_pair_grace": self.last_pair_grace,
            "turn_timeout": self.turn_timeout,
        }
        if self.verified:  # the record says the mode only where it is not the default
            options["verified"] = True
        if self.deck is not None:  # the seed no longer replays the deal: the deck does
            options["deck"] = [[card.value, card.suit] for card in self.deck]
        return options

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TableConfig:
        return cls(
            players=args.players,
            host=args.host,
            port=args.port,
            seed=args.seed,
            start_after=args.start_after,
            transcript=args.transcript,
            transcripts=getattr(args, "transcripts", None),
            games=getattr(args, "games", 1),
            idle_timeout=args.idle_timeout,
            wait_timeout=getattr(args, "wait_timeout", 600.0),
            turn_timeout=getattr(args, "turn_timeout", 300.0),
            linger=args.linger,
            last_pair_grace=getattr(args, "last_pair_grace", 2.0),
            verified=getattr(args, "verified", False),
            max_connections=args.max_connections,
            max_per_address=getattr(args, "max_per_address", DEFAULT_MAX_PER_ADDRESS),
            advertise=getattr(args, "advertise", None),
            mdns_interface=getattr(args, "mdns_interface", None),
            mdns_name=getattr(args, "name", None) or "table",
        )
