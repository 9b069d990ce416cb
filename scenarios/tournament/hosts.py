"""Each two-player game as a tournament hosts it: its real server, its built-in players.

A tournament game is served by the game's own server code (``ReversiServer``,
``NoTippingServer``: the same lobby, protocol, clocks and rules as ``ring
serve``), one server per game, configured from the tournament's settings;
the runner seats the players itself (``ring.games.lobby.Lobby.handle``'s
``seat``). A built-in entrant is ``ring bot GAME`` as a program, started like
any other, seeded from the game's seed and searching to a fixed depth, so a
game between built-in players plays the same on any machine.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ring.cli.client_args import Names
from ring.games.record import RecordHub
from ring.games.seeds import keyed_seed
from scenarios.tournament.jobs import GameJob, Settings

HOST = "127.0.0.1"
# A game's end by its own clocks, plus this, before the runner stops it as stuck.
SLACK = 30.0


@dataclass(frozen=True)
class TwoPlayerHost:
    """How a tournament serves one two-player game."""

    game: str
    title: str
    levels: tuple[str, ...]  # the built-in players
    names: Names  # what the game takes as a name
    searching: str  # the level searching to ``depth``
    depth: int  # its depth when the settings give none
    server: Callable[[GameJob, RecordHub], Any]  # a Lobby, or FishNet's server
    game_time: Callable[[Settings], float]  # the longest a game can last by its clocks
    # Whether the program at ``seat`` has joined the game forming (its seat taken).
    joined: Callable[[Any, int], bool] = lambda server, seat: seat in server.forming
    seat_values: bool = False  # programs are told their seat ({seat})
    extra_bot_arguments: tuple[str, ...] = ()  # what the game's ring bot needs beside
    # The end record's details as a score ("40-24"), for the game's one line; the
    # players' names in the match's seat order.
    score_line: Callable[[dict[str, Any], list[str]], str] | None = None
    bot_move_time: bool = False  # ``ring bot`` takes --move-time

    def builtin_command(self, level: str, job: GameJob, seat: int) -> list[str]:
        """``ring bot`` for a built-in entrant, its seed drawn from the game's."""
        command = [sys.executable, "-m", "ring", "bot", self.game, "--server", "{address}"]
        command += ["--name", "{name}", "--level", level, "--games", "1"]
        command += ["--seed", str(keyed_seed(job.seed, "builtin", seat) % 2**63)]
        command += ["--timeout", f"{job.settings.connect_within + self.game_time(job.settings):g}"]
        if self.seat_values:
            command += ["--seat", "{seat}"]
        command += self.extra_bot_arguments
        if self.bot_move_time and job.settings.move_time:
            command += ["--move-time", f"{job.settings.move_time:g}"]
        if level == self.searching:
            command += ["--depth", str(job.settings.depth or self.depth)]
        return command


def _reversi_server(job: GameJob, hub: RecordHub) -> Any:
    from services.reversi.server import ReversiConfig, ReversiServer

    settings = job.settings
    config = ReversiConfig(
        host=HOST,
        port=0,
        move_time=_reversi_move_time(settings),
        hub=hub,
        idle_timeout=settings.connect_within,
        wait_timeout=settings.connect_within,
        advertise=False,
    )
    return ReversiServer(config, job.seed)


def _reversi_move_time(settings: Settings) -> float:
    from services.reversi.server import ReversiConfig

    return ReversiConfig.move_time if settings.move_time is None else settings.move_time


def _notipping_server(job: GameJob, hub: RecordHub) -> Any:
    from services.notipping.server import NoTippingConfig, NoTippingServer

    settings = job.settings
    options: dict[str, object] = {}
    if settings.max_weight is not None:
        options["max_weight"] = settings.max_weight
    config = NoTippingConfig(
        host=HOST,
        port=0,
        seed=job.seed,
        time_budget=_notipping_budget(settings),
        hub=hub,
        idle_timeout=settings.connect_within,
        wait_timeout=settings.connect_within,
        advertise=False,
        **options,  # type: ignore[arg-type]
    )
    return NoTippingServer(config)


def _notipping_budget(settings: Settings) -> float:
    from services.notipping.server import NoTippingConfig

    return NoTippingConfig.time_budget if settings.time_budget is None else settings.time_budget


def _fishnet_server(job: GameJob, hub: RecordHub) -> Any:
    from services.fishnet.config import ServerConfig
    from services.fishnet.server import FishNetServer

    settings = job.settings
    config = ServerConfig(
        host=HOST,
        port=0,
        seed=job.seed,
        hub=hub,
        idle_timeout=settings.connect_within,
        wait_timeout=settings.connect_within,
        move_timeout=_fishnet_move_time(settings),
        pair_in_order=True,
        search_workers=1,
        advertise=False,
    )
    return FishNetServer(config, job.seed)


def _fishnet_move_time(settings: Settings) -> float:
    from services.fishnet.config import ServerConfig

    return ServerConfig.move_timeout if settings.move_time is None else settings.move_time


def _fishnet_time(settings: Settings) -> float:
    from services.fishnet.config import ServerConfig

    return ServerConfig.max_moves * _fishnet_move_time(settings) + SLACK


def _names(game: str) -> Names:
    import importlib

    return importlib.import_module(f"services.{game}.service").NAMES  # type: ignore[no-any-return]


def _reversi_time(settings: Settings) -> float:
    # At most 60 moves, each within its move time; 0 is no limit.
    move_time = _reversi_move_time(settings)
    return 60 * move_time + SLACK if move_time else math.inf


def _notipping_time(settings: Settings) -> float:
    budget = _notipping_budget(settings)
    return 2 * budget + SLACK if budget else math.inf


def _books(details: dict[str, Any], names: list[str]) -> str:
    books = details.get("books")
    if not isinstance(books, list) or len(books) != len(names):
        return ""
    return ", ".join(f"{name} {count} books" for name, count in zip(names, books, strict=True))


HOSTS: dict[str, TwoPlayerHost] = {
    "reversi": TwoPlayerHost(
        game="reversi",
        title="Reversi",
        levels=("random", "greedy", "positional", "deep"),
        names=_names("reversi"),
        searching="deep",
        depth=5,
        server=_reversi_server,
        game_time=_reversi_time,
        bot_move_time=True,
        score_line=lambda details, names: f"{details['black']}-{details['white']}",
    ),
    "fishnet": TwoPlayerHost(
        game="fishnet",
        title="FishNet",
        levels=("spot", "bob", "alice", "smarx"),
        names=_names("fishnet"),
        searching="",
        depth=0,
        server=_fishnet_server,
        game_time=_fishnet_time,
        joined=lambda server, seat: seat in server.waiting_seats(),
        # the server pairs its two programs whatever opponent their play names
        extra_bot_arguments=("--opponent", "opponent"),
        score_line=lambda details, names: _books(details, names),
    ),
    "notipping": TwoPlayerHost(
        game="notipping",
        title="No Tipping",
        levels=("random", "greedy", "solver"),
        names=_names("notipping"),
        searching="solver",
        depth=2,
        server=_notipping_server,
        game_time=_notipping_time,
        seat_values=True,
    ),
}
