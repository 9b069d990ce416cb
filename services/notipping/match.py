"""One No Tipping game between two seated connections: ROUND after ROUND, the clock, the verdict.

``server`` seats the players (each a ``Seat``) and hands both to a ``Match``,
which plays the game to its end, ``rules.Game`` deciding every move, writes
its transcript and reports how it ended (``GameReport``) to a callback. It
knows nothing of the server: it reads only the config (``MatchConfig``).

Playing. Each turn the mover alone gets ``ROUND:<round>.<player>:ADD:<mine>:
<theirs>:<state>;`` or ``ROUND:<round>.<player>:REMOVE:<state>;``. Its next
message answers it: bytes a player sent early (before its game, or while the
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
an answer already waiting costs nothing. The clock is a
``ring.clock.TurnClock``: the time the server's loop spent in long stretches
of its own work (another game's step, a collection) is not charged. A player past its budget gets
``INVALID;`` ``LOSE;`` (WIRE.md: "loses the same way"). With the budget off
(0), one move may still take at most ``wait_timeout``: no one waits for an
opponent longer than that, in a game or before it. Every write gives up
after ``send_timeout`` (the player is then treated as gone).

Transcripts (``transcripts/game-NNNNNN.jsonl``, ``ring.events.EventLog``):
``start`` (game, handles, max_weight, seed), every message in and out with
the player's seat and handle (its join lines too, with the times they
happened; moves in their canonical form), a ``move`` record with both support
torques after each move, and ``end`` (winner, loser, reason). No Tipping has
no chance: ``seed`` is written there and does nothing else.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import trio

from ring.clock import TIMED_OUT, TurnClock, within
from ring.events import EventLog
from ring.sansio import NEED_DATA
from ring.transport import SEND_FAILED, read_before, write
from services.notipping import protocol as wire
from services.notipping.protocol import MAX_MESSAGE
from services.notipping.rules import ADD, REMOVE, Add, Game, InvalidMove, Remove

READ_SIZE = 4096
LEFT = "left the game"


class MatchConfig(Protocol):
    """What a match reads of the server's config (``server.NoTippingConfig``)."""

    @property
    def seed(self) -> int | None: ...
    @property
    def max_weight(self) -> int: ...
    @property
    def time_budget(self) -> float: ...
    @property
    def wait_timeout(self) -> float: ...
    @property
    def send_timeout(self) -> float: ...
    @property
    def start_game(self) -> Game | None: ...


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


class Seat:
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
            await write(self.stream, data, timeout)
        except SEND_FAILED:
            self.gone = True
            return False
        return True

    async def event(self, deadline: float) -> object:
        """The next event (logged), or ``TIMED_OUT`` at ``deadline``."""
        while (event := self.protocol.next_event()) is NEED_DATA:
            try:
                data = await read_before(self.stream, deadline, READ_SIZE)
            except trio.TooSlowError:
                return TIMED_OUT
            self.protocol.receive_data(data)
        if isinstance(event, wire.Closed):
            self.gone = True
        self.log(dir="in", **_record_of(event))
        return event

    async def read(self) -> bytes:
        """The next bytes, or b"" once the stream has ended or broken; no deadline of its own."""
        return await read_before(self.stream, math.inf, READ_SIZE)

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


def describe(event: object) -> str:
    """An event that is not a join, for the log and the game report."""
    if isinstance(event, wire.Garbled):
        # The text already shows bytes that are not ASCII as \xNN: quoted, not repr'd again.
        return f"'{event.text}' ({event.reason})"
    if isinstance(event, wire.MessageTooLong):
        return f"a message over {event.limit} bytes"
    if isinstance(event, wire.JoinRequest | wire.BadJoin):
        return "a JOINREQUEST during the game"
    return f"{_record_of(event)['line']!r}"


class Match:
    """One game, played in the caller's task by ``run``; ``on_end`` gets its report."""

    def __init__(
        self,
        config: MatchConfig,
        number: int,
        players: tuple[Seat, Seat],
        transcript: Path | None,
        on_end: Callable[[GameReport], object],
    ) -> None:
        self.config = config
        self.number = number
        self.players = players
        self.on_end = on_end
        self.game = config.start_game or Game.start(config.max_weight)
        budget = config.time_budget
        self.budgets = [budget if budget > 0 else math.inf] * 2
        self.log = EventLog(transcript, flush_each=True)

    async def run(self) -> None:
        try:
            await self._play()
        finally:
            self.log.close()

    def abandon(self, reason: str) -> None:
        """End the transcript of a game stopped as it stands, with no winner."""
        self.log.write("end", winner=None, loser=None, reason=reason)

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
        budgeted = config.time_budget > 0
        clock = TurnClock(self.budgets[seat] if budgeted else config.wait_timeout)
        answer = await self._answer(mover, other, clock)
        self.budgets[seat] -= clock.used()
        if isinstance(answer, _Loss):
            return answer
        if answer is TIMED_OUT:
            if budgeted:
                return _Loss(seat, f"ran out of time ({config.time_budget:g} s)", invalid=True)
            return _Loss(seat, f"did not move within {config.wait_timeout:g} s", invalid=True)
        if isinstance(answer, wire.Closed):
            return _Loss(seat, LEFT, invalid=False)
        if not isinstance(answer, wire.AddMove | wire.RemoveMove):
            return _Loss(seat, f"made an invalid move: {describe(answer)}", invalid=True)
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

    async def _answer(self, mover: Seat, other: Seat, clock: TurnClock) -> object:
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
            event = await within(clock, functools.partial(mover.event, math.inf))
            if answer is None:
                answer = event
            nursery.cancel_scope.cancel()
        return answer

    async def _watch(self, player: Seat) -> str:
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
        self.on_end(GameReport(self.number, handles, 1 - loss.player, loss.reason))
