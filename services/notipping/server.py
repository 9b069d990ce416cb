"""The No Tipping server over TCP: a thin Trio layer around the rules and the sans-IO protocol.

``rules.Game`` decides every move; this module only seats players, carries
messages, keeps the clocks and writes transcripts. WIRE.md decides where the
handout is silent; the choices below are this server's where both are.

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

Playing. The game runs in the task of the player whose seat completed it;
the other player's task keeps its connection open until the game is over.
Each turn the mover alone gets ``ROUND:<round>.<player>:ADD:<mine>:<theirs>:
<state>;`` or ``ROUND:<round>.<player>:REMOVE:<state>;``. Its next message
answers it: bytes a player sent early (before its game, or while the
opponent moved) are read in order when its turn comes, as the course server
read only the mover's socket. A move ``rules.Game`` refuses, garbage, a move
of the wrong phase, a ``JOINREQUEST`` or a message over the size limit gets
``INVALID;`` then ``LOSE;``, and the opponent ``WIN;``. A move that tips the
board gets ``LOSE;`` (no ``INVALID;``: the move was allowed) and the opponent
``WIN;``. While the opponent moves, the waiting player's connection is
watched: if it closes, it loses at once (``WIN;`` to the mover), even with a
move still unread; if more than ``MAX_MESSAGE`` bytes wait unread from it,
it gets ``INVALID;`` ``LOSE;``. A mover whose connection closes loses too
(the opponent gets ``WIN;``). After ``WIN;``/``LOSE;`` both connections close.

Clocks. Each player has ``time_budget`` seconds in all for its moves,
counted from the end of writing its ``ROUND`` to the arrival of its answer;
an answer already waiting costs nothing. A player past its budget gets
``INVALID;`` ``LOSE;`` (WIRE.md: "loses the same way"). With the budget off
(0), one move may still take at most ``wait_timeout``: no one waits for an
opponent longer than that, in a game or before it. Every write gives up
after ``send_timeout`` (the player is then treated as gone).

Transcripts (``transcripts/game-NNNNNN.jsonl``, ``ring.events.EventLog``):
``start`` (game, handles, max_weight, seed), every message in and out with
the player's seat and handle (its join lines too, with the times they
happened; moves in their canonical form), a ``move`` record with both support
torques after each move, and ``end`` (winner, loser, reason). No Tipping has
no chance: ``seed`` is written there and does nothing else. Stopping the
server closes the games as they stand (the handout has no message for it);
their transcripts end with the reason. Off loopback (or with ``advertise``)
the server is advertised over mDNS as ``_notipping._tcp.local.``.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from ring.events import EventLog
from ring.net import CannotListen, mark_established, serving, wants_mdns
from ring.sansio import NEED_DATA
from services.notipping import protocol as wire
from services.notipping.protocol import MAX_MESSAGE
from services.notipping.rules import (
    ADD,
    DEFAULT_MAX_WEIGHT,
    MAX_WEIGHT_LIMIT,
    REMOVE,
    Add,
    Game,
    InvalidMove,
    Remove,
)

if TYPE_CHECKING:
    from ring.discovery import Advertiser

DEFAULT_PORT = 10987
MAX_JOIN_REQUESTS = 10  # per connection, granted or denied
READ_SIZE = 4096
SHUTDOWN_TIMEOUT = 1.0  # how long the shutdown may take to close every game, all together
LEFT = "left the game"


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


@dataclass(frozen=True)
class GameReport:
    """How one game ended, as the server prints it."""

    number: int
    handles: tuple[str, str]  # player 0, player 1
    winner: int
    reason: str  # what the loser did: "tipped the board", "made an invalid move: ..."

    @property
    def loser(self) -> int:
        return 1 - self.winner

    @property
    def line(self) -> str:
        winner, loser = self.handles[self.winner], self.handles[self.loser]
        beat = f"{winner} (player {self.winner}) beat {loser} (player {self.loser})"
        return f"game {self.number}: {beat}: {loser} {self.reason}"


@dataclass(frozen=True)
class _Loss:
    player: int
    reason: str
    invalid: bool  # INVALID; before LOSE;


class _TimedOut:
    pass


TIMED_OUT = _TimedOut()


class _Player:
    """One connection: its stream, its protocol state, its seat and its place in a game."""

    def __init__(self, stream: trio.abc.Stream, peer: str) -> None:
        self.stream = stream
        self.peer = peer
        self.protocol = wire.ServerConnection()
        self.handle = ""
        self.seat = -1
        self.granted = False  # GRANTED; has been written
        self.gone = False  # closed, or unable to take our writes
        self.begun = trio.Event()  # seated in a game that has begun
        self.game_over = trio.Event()  # its game is over: its connection may close
        self.waiting_scope = trio.CancelScope()  # its own task reads until the game begins
        self.stopped_waiting = trio.Event()  # that read has ended: the game may use the stream
        # Lines before the game has a transcript, kept with their times (at most a
        # few dozen: the join requests are capped).
        self.prelude: list[dict[str, Any]] = []
        self.log: Callable[..., None] = lambda **record: self.prelude.append(
            {"t": time.monotonic(), **record}
        )

    @property
    def who(self) -> str:
        return f"{self.handle} ({self.peer})" if self.handle else self.peer

    async def send(self, message: wire.ServerMessage, timeout: float) -> bool:
        if self.gone:
            return False
        data = self.protocol.send(message)
        self.log(dir="out", line=data.decode().strip())
        try:
            with trio.fail_after(timeout):
                await self.stream.send_all(data)
        except (trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError):
            self.gone = True
            return False
        return True

    async def event(self, deadline: float) -> object:
        """The next event (logged), or ``TIMED_OUT`` at ``deadline``."""
        while (event := self.protocol.next_event()) is NEED_DATA:
            with trio.move_on_at(deadline) as scope:
                data = await self.read()
            if scope.cancelled_caught:
                return TIMED_OUT
            self.protocol.receive_data(data)
        if isinstance(event, wire.Closed):
            self.gone = True
        self.log(dir="in", **_record_of(event))
        return event

    async def read(self) -> bytes:
        try:
            return await self.stream.receive_some(READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    def too_much_unread(self, data: bytes = b"") -> bool:
        return self.protocol.buffered + len(data) > MAX_MESSAGE


def _record_of(event: object) -> dict[str, Any]:
    """An event as a transcript shows it: the message in its canonical form."""
    if isinstance(event, wire.JoinRequest):
        return {"line": f"JOINREQUEST:{event.handle}:{event.player};"}
    if isinstance(event, wire.AddMove):
        return {"line": f"ADD:{event.weight}:{event.position};"}
    if isinstance(event, wire.RemoveMove):
        return {"line": f"REMOVE:{event.position};"}
    if isinstance(event, wire.BadJoin):
        return {"bad_join": event.reason}
    if isinstance(event, wire.Garbled):
        return {"garbled": event.text, "reason": event.reason}
    if isinstance(event, wire.MessageTooLong):
        return {"too_long": event.limit}
    return {"closed": True}


def _describe(event: object) -> str:
    """An event that is not a join, for the log and the game report."""
    if isinstance(event, wire.Garbled):
        return f"{event.text!r} ({event.reason})"
    if isinstance(event, wire.MessageTooLong):
        return f"a message over {event.limit} bytes"
    if isinstance(event, wire.JoinRequest | wire.BadJoin):
        return "a JOINREQUEST during the game"
    return f"{_record_of(event)['line']!r}"


class NoTippingServer:
    def __init__(self, config: NoTippingConfig) -> None:
        self.config = config
        self.address: tuple[str, int] = ("", 0)
        self.reports: list[GameReport] = []
        self.games_running: set[_Game] = set()
        self._seats: dict[int, _Player] = {}  # the game being formed
        self._games = itertools.count(1)

    @property
    def forming(self) -> dict[int, str]:
        """The seats taken in the game being formed, with their handles."""
        return {seat: player.handle for seat, player in sorted(self._seats.items())}

    # -- a connection, from its join to the end of its game ---------------------

    async def handle(self, stream: trio.abc.Stream) -> None:
        player = _Player(stream, _peer_of(stream))
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
            game = _Game(self, next(self._games), players)
            try:
                await game.run()
            finally:
                opponent.game_over.set()
        finally:
            self._free(player)
            player.stopped_waiting.set()
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()

    def _free(self, player: _Player) -> None:
        if self._seats.get(player.seat) is player:
            del self._seats[player.seat]

    async def _join(self, player: _Player) -> bool:
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
                          f"{_describe(event)} before joining")  # fmt: skip
                await player.send(wire.Denied(), config.send_timeout)
                return False
            _log_line(f"notipping: {player.peer}: JOINREQUEST denied: {reason}")
            if not await player.send(wire.Denied(), config.send_timeout):
                return False
        _log_line(f"notipping: {player.peer}: {MAX_JOIN_REQUESTS} join requests; closing")
        return False

    async def _wait_for_opponent(self, player: _Player) -> None:
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
            game.log.write("end", winner=None, loser=None, reason="the server shut down")

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


class _Game:
    def __init__(
        self, server: NoTippingServer, number: int, players: tuple[_Player, _Player]
    ) -> None:
        self.server = server
        self.config = server.config
        self.number = number
        self.players = players
        self.game = self.config.start_game or Game.start(self.config.max_weight)
        budget = self.config.time_budget
        self.budgets = [budget if budget > 0 else math.inf] * 2
        self.log = EventLog(server.transcript_path(number), flush_each=True)

    async def run(self) -> None:
        self.server.games_running.add(self)
        try:
            await self._play()
        finally:
            self.server.games_running.discard(self)
            self.log.close()

    async def _play(self) -> None:
        handles = [player.handle for player in self.players]
        self.log.write("start", game=self.number, handles=handles,
                       max_weight=self.game.max_weight, seed=self.config.seed)  # fmt: skip
        joins = []  # both players' join lines, in the order they happened
        for seat, player in enumerate(self.players):
            player.log = functools.partial(self.log.record, player=seat, handle=player.handle)
            joins += [(record["t"], seat, record) for record in player.prelude]
        for _, seat, record in sorted(joins, key=lambda join: join[:2]):
            self.players[seat].log(**record)
        begin = wire.Begin(self.number, self.game.max_weight)
        for player in self.players:
            await player.send(begin, self.config.send_timeout)
        loss: _Loss | None = None
        while not self.game.over and loss is None:
            loss = await self._turn()
        if loss is None:
            assert self.game.loser is not None
            loss = _Loss(self.game.loser, "tipped the board", invalid=False)
        else:
            self.game = self.game.forfeit(loss.player)
        await self._finish(loss)

    async def _turn(self) -> _Loss | None:
        """Play the mover's move; None if the game goes on or ends by a tip, else who lost."""
        config, game = self.config, self.game
        seat = game.to_move
        mover, other = self.players[seat], self.players[1 - seat]
        hands = (tuple(game.hands[seat]), tuple(game.hands[1 - seat]))
        if game.phase == ADD:
            message = wire.Round(game.round, seat, ADD, hands[0], hands[1], game.weights)
        else:
            message = wire.Round(game.round, seat, REMOVE, None, None, game.weights)
        if not await mover.send(message, config.send_timeout):
            return _Loss(seat, LEFT, invalid=False)
        started = trio.current_time()
        budgeted = config.time_budget > 0
        limit = self.budgets[seat] if budgeted else config.wait_timeout
        answer = await self._answer(mover, other, started + limit)
        self.budgets[seat] -= trio.current_time() - started
        if isinstance(answer, _Loss):
            return answer
        if answer is TIMED_OUT:
            if budgeted:
                return _Loss(seat, f"ran out of time ({config.time_budget:g} s)", invalid=True)
            return _Loss(seat, f"did not move within {config.wait_timeout:g} s", invalid=True)
        if isinstance(answer, wire.Closed):
            return _Loss(seat, LEFT, invalid=False)
        if not isinstance(answer, wire.AddMove | wire.RemoveMove):
            return _Loss(seat, f"made an invalid move: {_describe(answer)}", invalid=True)
        if isinstance(answer, wire.AddMove):
            move: Add | Remove = Add(answer.weight, answer.position)
            weight = answer.weight
        else:
            move = Remove(answer.position)
            weight = game.weight_at(answer.position)
        try:
            self.game = game.play(move)
        except InvalidMove as exc:
            return _Loss(seat, f"made an invalid move: {exc}", invalid=True)
        self.log.write("move", player=seat, move=type(move).__name__.upper(), weight=weight,
                       position=answer.position, left=self.game.left, right=self.game.right,
                       tipped=self.game.over)  # fmt: skip
        return None

    async def _answer(self, mover: _Player, other: _Player, deadline: float) -> object:
        """The mover's next event or ``TIMED_OUT``; or the waiting player's loss, if it
        leaves or sends too much meanwhile."""
        answer: object = None
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal answer
                reason = await self._watch(other)
                if answer is None:
                    answer = _Loss(other.seat, reason, invalid=reason != LEFT)
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            event = await mover.event(deadline)
            if answer is None:
                answer = event
            nursery.cancel_scope.cancel()
        return answer

    async def _watch(self, player: _Player) -> str:
        """Read the waiting player's bytes, unparsed, until it loses by them: why."""
        while not player.gone:
            if player.too_much_unread():
                return f"sent over {MAX_MESSAGE} bytes out of turn"
            data = await player.read()
            if player.too_much_unread(data):
                return f"sent over {MAX_MESSAGE} bytes out of turn"
            player.protocol.receive_data(data)
            if not data:
                player.log(dir="in", closed=True)
                player.gone = True
        return LEFT

    async def _finish(self, loss: _Loss) -> None:
        timeout = self.config.send_timeout
        loser, winner = self.players[loss.player], self.players[1 - loss.player]
        if loss.invalid:
            await loser.send(wire.Invalid(), timeout)
        await loser.send(wire.Lose(), timeout)
        await winner.send(wire.Win(), timeout)
        self.log.write("end", winner=1 - loss.player, loser=loss.player, reason=loss.reason)
        handles = (self.players[0].handle, self.players[1].handle)
        self.server.reported(GameReport(self.number, handles, 1 - loss.player, loss.reason))


def _peer_of(stream: trio.abc.Stream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]  # type: ignore[attr-defined]
    except (AttributeError, OSError):  # not a socket (tests), or already reset
        return "?"
    return f"{host}:{port}"


def _log_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


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
        )
        try:
            async with listening as address:
                server.address = address
                server.advertise(nursery, on_advertise)
                task_status.started(server)
                await trio.sleep_forever()
        except CannotListen as exc:
            raise ServerError(str(exc)) from None
