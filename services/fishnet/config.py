"""How a FishNet server is set up: ``ServerConfig``, from ``ring serve`` or a test."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ring.games.record import RecordHub
from ring.wire.net import DEFAULT_MAX_PER_ADDRESS
from services.fishnet import DEFAULT_PORT
from services.fishnet.rules import FishNetGame

BOT_MOVES = ("random", "first", "second")

GameFactory = Callable[[str, "int | None"], FishNetGame]


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # None: a random secret, printed nowhere
    keyed: bool = False  # seed is a secret: games' seeds are keyed hashes of it (ring.games.seeds)
    youmake: bool = False  # the later edition's "youmake r"
    transcript_dir: str | Path | None = None  # one JSON-lines file per game
    # Every game's records (ring.games.record) go to this hub; None: the server makes
    # its own. With transcript_dir, the server subscribes its files to it.
    hub: RecordHub | None = field(default=None, compare=False, repr=False)
    bot_moves: str = "random"  # against a built-in player: who moves first
    idle_timeout: float = 120.0  # to send "play"
    wait_timeout: float = 600.0  # for a named opponent to come
    move_timeout: float = 120.0  # to answer "yourturn"
    send_timeout: float = 10.0
    max_moves: int = 1000
    # Pair clients two by two as they come, whatever names their play gives, and
    # never with a built-in player: a tournament's server for one game of two programs.
    pair_in_order: bool = False
    # A built-in player's long search (smarx's endgame) runs in one of
    # search_workers processes (None: one a core but the server's) and may
    # take search_timeout seconds; past it, the player decides by its quick rules.
    search_timeout: float = 5.0
    search_workers: int | None = None
    max_connections: int = 256
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS  # None or 0: no such cap
    exempt_loopback: bool = True  # tests turn it off to meet that cap from 127.0.0.1
    # Clients of one host waiting for a named opponent at once: a client stuck
    # in a reconnect loop must not fill the server for the whole class.
    max_waiting_per_host: int = 32
    advertise: bool | None = None  # None: only when not on a loopback address
    mdns_interface: str | None = None
    mdns_name: str = "fishnet"
    # Tests deal exact games: (game seed, first player or None) -> game.
    make_game: GameFactory = field(default=FishNetGame, repr=False)

    def __post_init__(self) -> None:
        if self.bot_moves not in BOT_MOVES:
            raise ValueError(f"bot_moves is one of {', '.join(BOT_MOVES)}")
        if self.max_moves < 1:
            raise ValueError("max_moves must be at least 1")
        if self.max_waiting_per_host < 1:
            raise ValueError("max_waiting_per_host must be at least 1")

    def game_options(self) -> dict[str, Any]:
        """The options that decide a game, for its ``start`` record (``search_timeout``
        too: a search given up changes smarx's move)."""
        return {
            "youmake": self.youmake,
            "bot_moves": self.bot_moves,
            "max_moves": self.max_moves,
            "move_timeout": self.move_timeout,
            "search_timeout": self.search_timeout,
        }
