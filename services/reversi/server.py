"""The Reversi server over TCP: names in, pairs seated, each pair's game played.

Connections are paired in the order their names arrive (``ring.games.lobby``);
each pair plays a ``ring.games.match.Match`` of Reversi (``match.ReversiRules``) in
the task of the second connection while the first one's task waits for it,
so many games run at once and a game's end closes exactly its two
connections. A seeded coin (the game's seed) decides who is Black (players
a tournament seated, ``Lobby.handle``'s ``seat``: seat 0 is Black). Every
wait has a deadline: the name (``idle_timeout``, then ``NAME_SILENCE`` once
it has begun), an opponent (``wait_timeout``), each move (``move_time``, on a
``ring.games.clock.TurnClock``, which does not charge the server's own long
stretches of work), each write (``send_timeout``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ring.games.lobby import Lobby, ServerError, serve
from ring.games.match import Match, Seat, game_seed
from ring.games.record import RecordHub
from ring.games.seeds import server_seed
from ring.wire.net import DEFAULT_MAX_PER_ADDRESS
from ring.wire.sansio import NEED_DATA
from services.reversi import DEFAULT_PORT
from services.reversi.game import GameReport, ReversiRules, shown
from services.reversi.protocol import BadName, Closed, LineTooLong, Named, ServerConnection
from services.reversi.rules import Position

if TYPE_CHECKING:
    from ring.mdns.discovery import Advertiser

__all__ = [
    "DEFAULT_PORT",
    "GameReport",
    "ReversiConfig",
    "ReversiServer",
    "ServerError",
    "serve_reversi",
]

NAME_SILENCE = 0.2  # reversi.md 6: a name without a newline ends after 200 ms of silence
MAX_EARLY_BYTES = 4096  # what a named player may send before its game starts
UNNAMED = "closed before naming itself"  # a log line's words (docs/protocols/reversi.md)


@dataclass(frozen=True)
class ReversiConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # None: a random secret
    keyed: bool = False  # seed is a secret: games' seeds are keyed hashes of it (ring.games.seeds)
    move_time: float = 30.0  # seconds a player has for each move; 0: no limit
    newlines: bool = True  # end every server message with "\n" (the course server did)
    transcripts: str | Path | None = None  # one JSON-lines file per game
    hub: RecordHub | None = field(default=None, compare=False)  # None: the server's own
    idle_timeout: float = 120.0  # to send a name
    wait_timeout: float = 600.0  # for an opponent to come
    send_timeout: float = 10.0
    max_illegal: int = 100  # illegal or garbled attempts in a row that lose the game
    max_connections: int = 256
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS  # None or 0: no such cap
    exempt_loopback: bool = True  # tests turn it off to meet that cap from 127.0.0.1
    advertise: bool | None = None  # None: only when not on a loopback address
    mdns_interface: str | None = None
    mdns_name: str = "reversi"
    on_end: Callable[[GameReport], object] | None = field(default=None, compare=False)
    # Tests start games from a chosen position (a pass, an early end).
    start_position: Position | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.move_time < 0:
            raise ValueError("move_time cannot be negative")
        if self.max_illegal < 1:
            raise ValueError("max_illegal must be at least 1")


class ReversiServer(Lobby):
    service = "reversi"
    LEFT_WAITING = None
    NO_OPPONENT = "no opponent came"

    def __init__(self, config: ReversiConfig, seed: int, *, keyed: bool = False) -> None:
        super().__init__(config)
        self.config: ReversiConfig = config
        self.seed = seed
        self.keyed = keyed  # seed is a secret key (ring.games.seeds)
        self.rules = ReversiRules(
            move_time=config.move_time,
            max_illegal=config.max_illegal,
            send_timeout=config.send_timeout,
        )

    def game_seed(self, number: int) -> str:
        """Game ``number``'s seed: ``<seed>:<number>``, or a keyed hash of both (``keyed``)."""
        return game_seed(self.seed, self.keyed, self.service, number)

    def seat(self, stream: trio.abc.Stream, peer: str) -> Seat:
        protocol = ServerConnection(newlines=self.config.newlines)
        return Seat(stream, protocol, peer, max_unread=MAX_EARLY_BYTES, shown=shown)

    async def introduce(self, player: Seat) -> bool:
        name = await self._read_name(player)
        if name is None:
            return False
        player.name = name
        # The first named player waits in seat 0; the next one completes the game (a
        # tournament's player takes the seat it was assigned).
        seat = player.assigned if player.assigned is not None else 1 if 0 in self.forming else 0
        player.granted = self.take(player, seat)
        if not player.granted:
            self.log(f"{player.peer}: seat {seat} is taken; closing")
        return player.granted

    def match(self, number: int, players: tuple[Seat, Seat]) -> Match[Position]:
        seed = self.game_seed(number)
        # A seeded coin: a game replays from the server's seed and its number. Players
        # seated by a tournament have their colours already: seat 0 is Black.
        assigned = all(player.assigned is not None for player in players)
        black_first = assigned or random.Random(f"reversi-colours:{seed}").random() < 0.5
        first, second = players
        black, white = (first, second) if black_first else (second, first)
        start = self.config.start_position or Position.start()
        return Match(self.rules, (black, white), start, number=number, seed=seed, hub=self.hub)

    async def _read_name(self, player: Seat) -> str | None:
        """The player's name, or None (logged) if it never comes or is refused."""
        config = self.config
        deadline = trio.current_time() + config.idle_timeout
        protocol = player.protocol
        assert isinstance(protocol, ServerConnection)
        while True:
            event = protocol.next_event()
            if isinstance(event, Named):
                return event.name
            if isinstance(event, BadName):
                self.log(f"{player.peer}: name refused, closing: {event.reason}")
                return None
            if isinstance(event, Closed):
                self.unseated.say(UNNAMED, f"{player.peer}: {UNNAMED}")
                return None
            if isinstance(event, LineTooLong):
                self.log(f"{player.peer}: name refused, closing: a line over 4 KiB")
                return None
            assert event is NEED_DATA, event
            # Once a name has begun, 200 ms of silence ends it (docs/protocols/reversi.md 6).
            started = protocol.name_started
            wait_until = trio.current_time() + NAME_SILENCE if started else deadline
            with trio.move_on_at(min(wait_until, deadline)) as scope:
                data = await player.read()
            if scope.cancelled_caught:
                if started:
                    protocol.name_silence()
                    continue
                kind = f"no name within {config.idle_timeout:g} s"
                self.unseated.say(kind, f"{player.peer}: {kind}")
                return None
            protocol.receive_data(data)


async def serve_reversi(
    config: ReversiConfig,
    *,
    task_status: trio.TaskStatus[ReversiServer] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> None:
    """Serve until cancelled; ``await nursery.start(serve_reversi, config)`` gives the server.

    Raises ``ServerError`` before listening if it cannot run. The protocol has
    no error message: a newcomer the server cannot take is only logged, and a
    stop closes the games as they stand (their records end with the reason).
    """
    seed, keyed = server_seed(config.seed, config.keyed)
    server = ReversiServer(config, seed, keyed=keyed)
    await serve(server, task_status=task_status, on_advertise=on_advertise)
