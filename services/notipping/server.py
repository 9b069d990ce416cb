"""The No Tipping server over TCP: a thin Trio layer around the rules and the sans-IO protocol.

``rules.Game`` decides every move; this module only seats players and forms
games, and ``match`` plays each one (its messages, clocks and transcript).
WIRE.md decides where the handout is silent; the choices below are this
server's where both are.

Seating. Joins fill the seats of the game being formed. ``JOINREQUEST:h:p;``
gets ``GRANTED;`` when seat p of that game is free, else ``DENIED;`` (seat
taken, p not 0 or 1, a malformed handle or request). After ``DENIED;`` the
connection stays open and may ask again, for the other seat say, up to
``MAX_JOIN_REQUESTS`` requests; the last one denied closes it. Any other
message before a seat is granted (a move, garbage, a message over the size
limit) gets ``DENIED;`` and the close. A connection silent for
``idle_timeout`` while it has no seat (since it connected, or since its last
``DENIED;``) is closed. The same handle may hold both seats (a bot against
itself). Once both seats are granted, both players get
``BEGIN:<game>:<maxweight>;`` (games numbered 1, 2, 3... per server) and a
new game starts forming, so many games run at once. A granted player waits
at most ``wait_timeout`` for an opponent; a granted seat whose connection
drops, times out or sends over ``MAX_MESSAGE`` bytes before its game is
freed for someone else.

The game runs in the task of the player whose seat completed it (a
``match.Match``); the other player's task keeps its connection open until the
game is over.

Transcripts go in ``transcripts/game-NNNNNN.jsonl``, one per game. Stopping
the server closes the games as they stand (the handout has no message for
it); their transcripts end with the reason. Off loopback (or with
``advertise``) the server is advertised over mDNS as ``_notipping._tcp.local.``.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ring.net import (
    DEFAULT_MAX_PER_ADDRESS,
    CannotListen,
    Refusal,
    answer_once,
    mark_established,
    serving,
    wants_mdns,
)
from services.notipping import protocol as wire
from services.notipping.match import TIMED_OUT, GameReport, Match, Seat, describe
from services.notipping.protocol import MAX_MESSAGE
from services.notipping.rules import DEFAULT_MAX_WEIGHT, MAX_WEIGHT_LIMIT, Game

if TYPE_CHECKING:
    from ring.discovery import Advertiser

DEFAULT_PORT = 10987
MAX_JOIN_REQUESTS = 10  # per connection, granted or denied
SHUTDOWN_TIMEOUT = 1.0  # how long the shutdown may take to close every game, all together


class ServerError(Exception):
    """The server could not run at all (port in use, transcripts not writable)."""


@dataclass(frozen=True)
class NoTippingConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # written into the transcripts; nothing is random
    max_weight: int = DEFAULT_MAX_WEIGHT  # each player holds weights 1..max_weight
    time_budget: float = 120.0  # seconds each player has for all its moves; 0: no budget
    transcripts: str | Path | None = None  # one JSON-lines file per game
    idle_timeout: float = 120.0  # to ask for a seat
    wait_timeout: float = 600.0  # for an opponent to come (and for one move, budget off)
    max_connections: int = 256
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS  # None or 0: no such cap
    exempt_loopback: bool = True  # tests turn it off to meet that cap from 127.0.0.1
    send_timeout: float = 10.0
    advertise: bool | None = None  # None: only when not on a loopback address
    mdns_interface: str | None = None
    mdns_name: str = "notipping"
    on_end: Callable[[GameReport], object] | None = field(default=None, compare=False)
    # Tests start games from a chosen position (near a tip, in the remove phase).
    start_game: Game | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.max_weight <= MAX_WEIGHT_LIMIT:
            raise ValueError(f"max_weight is 1..{MAX_WEIGHT_LIMIT}, not {self.max_weight}")
        if self.time_budget < 0:
            raise ValueError("time_budget cannot be negative")


class NoTippingServer:
    def __init__(self, config: NoTippingConfig) -> None:
        self.config = config
        self.address: tuple[str, int] = ("", 0)
        self.reports: list[GameReport] = []
        self.games_running: set[Match] = set()
        self._seats: dict[int, Seat] = {}  # the game being formed
        self._games = itertools.count(1)

    @property
    def forming(self) -> dict[int, str]:
        """The seats taken in the game being formed, with their handles."""
        return {seat: player.handle for seat, player in sorted(self._seats.items())}

    # -- a connection, from its join to the end of its game ---------------------

    async def handle(self, stream: trio.abc.Stream) -> None:
        player = Seat(stream, _peer_of(stream))
        try:
            if not await self._join(player):
                return
            mark_established()
            opponent = self._seats.get(1 - player.seat)
            if opponent is None or not opponent.granted:
                # The opponent's task, or a later one, begins the game.
                await self._wait_for_opponent(player)
                return
            # Both seats are granted: this task plays the game, and a new one forms.
            del self._seats[0], self._seats[1]
            opponent.begun.set()
            opponent.waiting_scope.cancel()
            await opponent.stopped_waiting.wait()  # one reader of its stream at a time
            players = (player, opponent) if player.seat == 0 else (opponent, player)
            number = next(self._games)
            game = Match(self.config, number, players, self.transcript_path(number), self.reported)
            self.games_running.add(game)
            try:
                await game.run()
            finally:
                self.games_running.discard(game)
                opponent.game_over.set()
        finally:
            self._free(player)
            player.stopped_waiting.set()
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()

    def _free(self, player: Seat) -> None:
        if self._seats.get(player.seat) is player:
            del self._seats[player.seat]

    async def _join(self, player: Seat) -> bool:
        """Whether the player was granted a seat (held in ``_seats``); refusals are logged."""
        config = self.config
        for _ in range(MAX_JOIN_REQUESTS):
            event = await player.event(trio.current_time() + config.idle_timeout)
            if event is TIMED_OUT:
                _log_line(f"notipping: {player.peer}: no JOINREQUEST within "
                          f"{config.idle_timeout:g} s; closing")  # fmt: skip
                return False
            if isinstance(event, wire.Closed):
                _log_line(f"notipping: {player.peer}: closed before joining")
                return False
            if isinstance(event, wire.JoinRequest) and event.player not in self._seats:
                # Taken before the write, so that no one else is granted it meanwhile.
                self._seats[event.player] = player
                player.handle, player.seat = event.handle, event.player
                player.granted = await player.send(wire.Granted(), config.send_timeout)
                return player.granted
            if isinstance(event, wire.JoinRequest):
                reason = f"seat {event.player} is taken"
            elif isinstance(event, wire.BadJoin):
                reason = event.reason
            else:
                _log_line(f"notipping: {player.peer}: denied, closing: "
                          f"{describe(event)} before joining")  # fmt: skip
                await player.send(wire.Denied(), config.send_timeout)
                return False
            _log_line(f"notipping: {player.peer}: JOINREQUEST denied: {reason}")
            if not await player.send(wire.Denied(), config.send_timeout):
                return False
        _log_line(f"notipping: {player.peer}: {MAX_JOIN_REQUESTS} join requests; closing")
        return False

    async def _wait_for_opponent(self, player: Seat) -> None:
        """Keep a granted player until its game begins; free its seat if it goes first.

        Once the game has begun, the opponent's task plays it; this one keeps
        the connection open until it is over (the game's own deadlines bound it).
        """
        why = f"no opponent within {self.config.wait_timeout:g} s"
        with trio.move_on_after(self.config.wait_timeout), player.waiting_scope:
            while True:
                data = await player.read()
                # Kept for the game (moves sent early are read then), but no one
                # may fill the server's memory.
                if player.too_much_unread(data):
                    why = f"sent over {MAX_MESSAGE} bytes before its game"
                    break
                player.protocol.receive_data(data)
                if not data:
                    why = f"left before its game began; seat {player.seat} is free again"
                    break
        # Going either way: a game that began meanwhile finds it gone.
        player.gone = not player.waiting_scope.cancelled_caught
        if not player.begun.is_set():
            self._free(player)  # before any checkpoint: no game can take it now
            _log_line(f"notipping: {player.who}: {why}")
            return
        player.stopped_waiting.set()
        await player.game_over.wait()

    # -- transcripts and reports -----------------------------------------------

    def transcript_path(self, number: int) -> Path | None:
        folder = self.config.transcripts
        return None if folder is None else Path(folder) / f"game-{number:06d}.jsonl"

    def reported(self, report: GameReport) -> None:
        self.reports.append(report)
        if self.config.on_end is not None:
            self.config.on_end(report)

    async def shut_down(self) -> None:
        """The handout has no message for a server that stops: games are closed as they stand."""
        for game in list(self.games_running):
            game.abandon("the server shut down")

    # -- mDNS -----------------------------------------------------------------

    def advertise(
        self, nursery: trio.Nursery, on_advertise: Callable[[Advertiser], object] | None
    ) -> None:
        config = self.config
        host, port = self.address
        if not wants_mdns(config.advertise, host):
            return
        from ring.discovery import start_advertising

        start_advertising(
            nursery,
            "notipping",
            port,
            host=host,
            mdns_interface=config.mdns_interface,
            mdns_name=config.mdns_name,
            txt={"v": "1", "max_weight": str(config.max_weight)},
            who="notipping",
            on_advertise=on_advertise,
        )


def _peer_of(stream: trio.abc.Stream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]  # type: ignore[attr-defined]
    except (AttributeError, OSError):  # not a socket (tests), or already reset
        return "?"
    return f"{host}:{port}"


def _log_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


async def _refuse(stream: trio.SocketStream, why: Refusal) -> None:
    """A newcomer the server cannot take gets the protocol's one refusal, ``DENIED;``
    (then ``ring.net`` closes it)."""
    _log_line(f"notipping: {_peer_of(stream)}: denied, closing: {why.value}")
    await answer_once(stream, wire.encode(wire.Denied()))


async def serve_notipping(
    config: NoTippingConfig,
    *,
    task_status: trio.TaskStatus[NoTippingServer] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> None:
    """Serve until cancelled; ``await nursery.start(serve_notipping, config)`` gives the server.

    Raises ``ServerError`` before listening if it cannot run.
    """
    if config.transcripts is not None:
        try:
            Path(config.transcripts).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot write transcripts in {config.transcripts}: {exc}") from None
    server = NoTippingServer(config)
    async with trio.open_nursery() as nursery:
        listening = serving(
            server.handle,
            config.host,
            config.port,
            max_connections=config.max_connections,
            on_stop=server.shut_down,
            stop_timeout=SHUTDOWN_TIMEOUT,
            max_per_address=config.max_per_address,
            exempt_loopback=config.exempt_loopback,
            refuse=_refuse,
        )
        try:
            async with listening as address:
                server.address = address
                server.advertise(nursery, on_advertise)
                task_status.started(server)
                await trio.sleep_forever()
        except CannotListen as exc:
            raise ServerError(str(exc)) from None
