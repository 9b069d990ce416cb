"""The Reversi server over TCP: a thin Trio layer around the rules and the sans-IO protocol.

Connections are paired in the order their names arrive; each pair plays a
game in the task of the second connection while the first one's task waits
for it, so many games run at once and a game's end closes exactly its two
connections. Every wait has a deadline: the name (``idle_timeout``, then
``NAME_SILENCE`` once it has begun), an opponent (``wait_timeout``), each move
(``move_time``, on a ``ring.clock.TurnClock``, which does not charge the
server's own long stretches of work), each write (``send_timeout``).
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from ring.clock import TIMED_OUT, TurnClock, within
from ring.events import EventLog
from ring.net import (
    DEFAULT_MAX_PER_ADDRESS,
    CannotListen,
    Refusal,
    mark_established,
    serving,
    wants_mdns,
)
from ring.sansio import NEED_DATA
from ring.seeds import keyed_text, server_seed
from ring.transport import SEND_FAILED, read_before, write
from services.reversi.protocol import (
    BadName,
    Board,
    Closed,
    Colour,
    GameOver,
    Garbled,
    LineTooLong,
    MoveAttempt,
    Named,
    Result,
    ServerConnection,
)
from services.reversi.rules import BLACK, WHITE, Position, square

if TYPE_CHECKING:
    from ring.discovery import Advertiser

DEFAULT_PORT = 5410
NAME_SILENCE = 0.2  # WIRE.md: a name without a newline ends after 200 ms of silence
MAX_EARLY_BYTES = 4096  # what a named player may send before its game starts
READ_SIZE = 4096
# How long the shutdown may take to close every game, all together.
SHUTDOWN_TIMEOUT = 1.0


class ServerError(Exception):
    """The server could not run at all (port in use, transcripts not writable)."""


@dataclass(frozen=True)
class ReversiConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # None: a random secret
    keyed: bool = False  # seed is a secret: games' seeds are keyed hashes of it (ring.seeds)
    move_time: float = 30.0  # seconds a player has for each move; 0: no limit
    newlines: bool = True  # end every server message with "\n" (the course server did)
    transcripts: str | Path | None = None  # one JSON-lines file per game
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


@dataclass(frozen=True)
class GameReport:
    """How one game ended, as the server prints it."""

    number: int
    names: tuple[str, str]  # black, white
    discs: tuple[int, int]  # black, white
    winner: int | None  # BLACK, WHITE, or None for a draw
    reason: str  # "board" (counted), or why a player lost

    @property
    def line(self) -> str:
        black, white = self.names
        discs = f"{self.discs[0]} - {self.discs[1]}"
        score = f"game {self.number}: {black} (black) {discs} {white} (white)"
        if self.winner is None:
            return f"{score}: a draw"
        who, other = (black, white) if self.winner == BLACK else (white, black)
        if self.reason == "board":
            return f"{score}: {who} wins"
        return f"{score}: {who} wins, {other} {self.reason}"


class _Player:
    """One named connection: its stream, its protocol state, and its place in a game."""

    def __init__(self, stream: trio.abc.Stream, protocol: ServerConnection, peer: str) -> None:
        self.stream = stream
        self.protocol = protocol
        self.peer = peer
        self.name = ""
        self.gone = False  # closed, or unable to take our writes
        self.game_over = trio.Event()  # its game is over: its connection may close
        self.paired = trio.Event()
        self.waiting_scope = trio.CancelScope()  # its own task reads for EOF until paired
        self.stopped_waiting = trio.Event()  # that read has ended: the game may read now
        self.log: Callable[..., None] = lambda **record: None

    async def send(self, message: Any, timeout: float) -> bool:
        if self.gone:
            return False
        data = self.protocol.send(message)
        self.log(dir="out", line=data.decode().strip())
        try:
            await write(self.stream, data, timeout)
        except SEND_FAILED:
            self.gone = True
            return False
        return True

    async def event(self, deadline: float) -> Any:
        """The next event before ``deadline`` (``trio.TooSlowError`` after it)."""
        while True:
            event = self.protocol.next_event()
            if event is not NEED_DATA:
                if isinstance(event, Closed):
                    self.gone = True
                return event
            self.protocol.receive_data(await read_before(self.stream, deadline, READ_SIZE))

    async def _read(self) -> bytes:
        """The next bytes, or b"" once the stream has ended or broken; no deadline of its own."""
        return await read_before(self.stream, math.inf, READ_SIZE)


class ReversiServer:
    def __init__(self, config: ReversiConfig, seed: int, *, keyed: bool = False) -> None:
        self.config = config
        self.seed = seed
        self.keyed = keyed  # seed is a secret key (ring.seeds)
        self.address: tuple[str, int] = ("", 0)
        self.reports: list[GameReport] = []
        self.games_running: set[_Game] = set()
        self._waiting: _Player | None = None
        self._games = itertools.count(1)

    def game_seed(self, number: int) -> str:
        """Game ``number``'s seed: ``<seed>:<number>``, or a keyed hash of both (``keyed``)."""
        if self.keyed:
            return keyed_text(self.seed, "reversi", number)
        return f"{self.seed}:{number}"

    # -- a connection, from its name to the end of its game --------------------

    async def handle(self, stream: trio.abc.Stream) -> None:
        peer = _peer_of(stream)
        player = _Player(stream, ServerConnection(newlines=self.config.newlines), peer)
        try:
            name = await self._read_name(player)
            if name is None:
                return
            player.name = name
            mark_established()
            opponent = self._waiting
            if opponent is None or opponent.gone:
                self._waiting = player
                await self._wait_for_opponent(player)
                return
            self._waiting = None
            opponent.paired.set()
            opponent.waiting_scope.cancel()
            await opponent.stopped_waiting.wait()  # one reader of its stream at a time
            game = _Game(self, next(self._games), opponent, player)
            try:
                await game.run()
            finally:
                opponent.game_over.set()
        finally:
            if self._waiting is player:
                self._waiting = None
            player.stopped_waiting.set()
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()

    async def _read_name(self, player: _Player) -> str | None:
        """The player's name, or None (logged) if it never comes or is refused."""
        config = self.config
        deadline = trio.current_time() + config.idle_timeout
        protocol = player.protocol
        while True:
            event = protocol.next_event()
            if isinstance(event, Named):
                return event.name
            if isinstance(event, BadName):
                _log_line(f"reversi: {player.peer}: name refused, closing: {event.reason}")
                return None
            if isinstance(event, Closed):
                _log_line(f"reversi: {player.peer}: closed before naming itself")
                return None
            if isinstance(event, LineTooLong):
                _log_line(f"reversi: {player.peer}: name refused, closing: a line over 4 KiB")
                return None
            assert event is NEED_DATA, event
            # Once a name has begun, 200 ms of silence ends it (WIRE.md).
            started = protocol.name_started
            wait_until = trio.current_time() + NAME_SILENCE if started else deadline
            with trio.move_on_at(min(wait_until, deadline)) as scope:
                data = await player._read()
            if scope.cancelled_caught:
                if started:
                    protocol.name_silence()
                    continue
                _log_line(f"reversi: {player.peer}: no name within {config.idle_timeout:g} s")
                return None
            protocol.receive_data(data)

    async def _wait_for_opponent(self, player: _Player) -> None:
        """Keep a named player until an opponent comes; notice if it leaves meanwhile.

        Once paired, the opponent's task plays the game; this one keeps the
        connection open until the game is over (the game's own deadlines bound it).
        """
        with trio.move_on_after(self.config.wait_timeout), player.waiting_scope:
            while True:
                data = await player._read()
                # Bytes sent before the game are kept for it: moves are read
                # then. Up to a line's worth: no one may fill the server's memory.
                if player.protocol.buffered + len(data) > MAX_EARLY_BYTES:
                    _log_line(f"reversi: {player.name} ({player.peer}): sent over "
                              f"{MAX_EARLY_BYTES} bytes before its game; closing")  # fmt: skip
                    data = b""
                player.protocol.receive_data(data)
                if not data:
                    player.gone = True
                    break
        player.stopped_waiting.set()
        if player.paired.is_set():
            await player.game_over.wait()
        elif not player.gone:
            _log_line(f"reversi: {player.name} ({player.peer}): no opponent came")

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
            game.log.write("end", winner=None, reason="the server shut down")

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
            "reversi",
            port,
            host=host,
            mdns_interface=config.mdns_interface,
            mdns_name=config.mdns_name,
            txt={"v": "1"},
            who="reversi",
            on_advertise=on_advertise,
        )


class _Game:
    def __init__(self, server: ReversiServer, number: int, first: _Player, second: _Player) -> None:
        self.server = server
        self.config = server.config
        self.number = number
        self.seed = server.game_seed(number)
        self.log = EventLog(server.transcript_path(number), flush_each=True)
        # A seeded coin: a game replays from the server's seed and its number.
        black_first = random.Random(f"reversi-colours:{self.seed}").random() < 0.5
        self.black, self.white = (first, second) if black_first else (second, first)
        for colour, player in ((BLACK, self.black), (WHITE, self.white)):
            player.log = functools.partial(self.log.record, colour=_COLOUR_NAMES[colour],
                                           name=player.name)  # fmt: skip

    def _player(self, colour: int) -> _Player:
        return self.black if colour == BLACK else self.white

    async def run(self) -> None:
        self.server.games_running.add(self)
        try:
            await self._play()
        finally:
            self.server.games_running.discard(self)
            self.log.close()

    async def _play(self) -> None:
        timeout = self.config.send_timeout
        self.log.write(
            "start", game=self.number, seed=self.seed, black=self.black.name, white=self.white.name
        )
        await self.black.send(Colour(1), timeout)
        await self.white.send(Colour(0), timeout)
        position = self.config.start_position or Position.start()
        loser: int | None = None
        reason = "board"
        while not position.over:
            mover = self._player(position.to_move)
            outcome = await self._turn(mover, position)
            if isinstance(outcome, Position):
                position = outcome
            else:
                loser, reason = position.to_move, outcome
                break
        winner = position.winner() if loser is None else (BLACK if loser == WHITE else WHITE)
        await self._finish(position, winner, reason)

    async def _turn(self, mover: _Player, position: Position) -> Position | str:
        """The position after the mover's legal move, or why the mover lost."""
        config = self.config
        # The move time runs from the end of writing the turn's first board:
        # boards sent again after illegal attempts do not extend it. The
        # server's own long stretches of work are not charged (ring.clock).
        limit = config.move_time if config.move_time > 0 else math.inf
        clock: TurnClock | None = None
        illegal = 0
        while True:
            if not await mover.send(Board(position.digits()), config.send_timeout):
                return "left the game"
            clock = clock or TurnClock(limit)
            event = await within(clock, functools.partial(mover.event, math.inf))
            if event is TIMED_OUT:
                return f"did not move within {config.move_time:g} s"
            if isinstance(event, Closed | LineTooLong):
                return "left the game" if isinstance(event, Closed) else "sent a line over 4 KiB"
            if isinstance(event, MoveAttempt):
                mover.log(dir="in", line=f"M{event.x}{event.y}")
                sq = square(event.x, event.y)
                if position.is_legal(sq):
                    self.log.write("move", colour=_COLOUR_NAMES[position.to_move], x=event.x,
                                   y=event.y)  # fmt: skip
                    return position.play(sq)
            elif isinstance(event, Garbled):
                mover.log(dir="in", garbled=event.text)
            illegal += 1
            if illegal >= config.max_illegal:
                return f"made {illegal} illegal moves in a row"

    async def _finish(self, position: Position, winner: int | None, reason: str) -> None:
        timeout = self.config.send_timeout
        discs = (position.count(BLACK), position.count(WHITE))
        for colour in (BLACK, WHITE):
            player = self._player(colour)
            result = 2 if winner is None else (1 if winner == colour else 0)
            await player.send(Result(result), timeout)
            await player.send(GameOver(), timeout)
        self.log.write(
            "end",
            winner=None if winner is None else _COLOUR_NAMES[winner],
            black=discs[0],
            white=discs[1],
            reason=reason,
        )
        names = (self.black.name, self.white.name)
        self.server.reported(GameReport(self.number, names, discs, winner, reason))


_COLOUR_NAMES = {BLACK: "black", WHITE: "white"}


def _peer_of(stream: trio.abc.Stream) -> str:
    socket = getattr(stream, "socket", None)
    try:
        host, port = socket.getpeername()[:2] if socket is not None else ("?", 0)
    except OSError:
        return "?"
    return f"{host}:{port}"


def _log_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


async def _refuse(stream: trio.SocketStream, why: Refusal) -> None:
    """The protocol has no error message: a newcomer the server cannot take is only logged
    (then ``ring.net`` closes it)."""
    _log_line(f"reversi: {_peer_of(stream)}: refused, closing: {why.value}")


async def serve_reversi(
    config: ReversiConfig,
    *,
    task_status: trio.TaskStatus[ReversiServer] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> None:
    """Serve until cancelled; ``await nursery.start(serve_reversi, config)`` gives the server.

    Raises ``ServerError`` before listening if it cannot run.
    """
    seed, keyed = server_seed(config.seed, config.keyed)
    if config.transcripts is not None:
        try:
            Path(config.transcripts).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot write transcripts in {config.transcripts}: {exc}") from None
    server = ReversiServer(config, seed, keyed=keyed)
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
