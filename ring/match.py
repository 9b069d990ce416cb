"""One two-player match over two connections: turns on a clock, the verdict, the record.

A ``Match`` knows nothing of any game. As h11 is driven by HTTP's rules, it
is driven by two sans-IO pieces the game gives it: each player's protocol
object (``Wire``: bytes in, events out, a message to bytes), and one
``Rules`` object that says, for a game state and the seat to move, what to
send (``prompt``), what the mover's answer does (``judge``: the next state,
ask again, or a forfeit), when the game is over and who won (``verdict``),
what each player is told at the end (``farewell``), and every reason in the
game's own words (``forfeit``).

What a match does, the same for every game:

- Seats. ``Seat`` is one connection: its stream, its protocol, its name, and
  the events by which a lobby (``ring.lobby``) hands it to its match. Every
  write gives up after ``Terms.send_timeout``; a player whose connection has
  closed, or that could not take a write, is ``gone`` and is sent nothing more.
- Turns. The mover gets ``prompt``; its next event answers it (bytes sent
  early are read in order when its turn comes). The clock is a
  ``ring.clock.TurnClock`` started once the turn's first prompt is written,
  so the server's own long stretches of work are not charged: one turn may
  take ``Terms.move_time``, all of a player's turns ``Terms.budget``. An
  answer the rules refuse (``AGAIN``) gets the prompt again, the clock
  running on, up to ``Terms.attempts`` in a row. With ``Terms.watch_waiting``
  the other player's connection is read meanwhile, unparsed: if it closes, or
  more than ``Seat.max_unread`` bytes wait from it, it loses at once.
- The end. ``farewell``'s messages, in order; then the ``end`` record
  (winner and loser by name, or a draw; the reason; for a forfeit the
  ``culprit``; the game's ``details``), and the game's ``report`` is returned.
- The record, through a ``ring.record.RecordHub``: ``start`` (the players as
  the rules name them, the seed, the game's options), the lines a seat logged
  before its game (with their own times), every message out and every event
  in (as the seat shows it) with the player's ``tags``, the rules' ``move``
  records, and ``end``.

``Arena`` holds a server's matches under way (a stopped server ends their
records without a result) and the reports of those that ended.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import trio

from ring import record
from ring.clock import TIMED_OUT, TurnClock, within
from ring.sansio import NEED_DATA, Closed
from ring.seeds import keyed_text
from ring.transport import SEND_FAILED, read_before, write

READ_SIZE = 4096
SHUT_DOWN = "the server shut down"

S = TypeVar("S")


def game_seed(seed: int, keyed: bool, service: str, number: int) -> str:
    """Game ``number``'s seed: ``<seed>:<number>``, or a keyed hash of both when ``seed``
    is a secret (``ring.seeds``)."""
    return keyed_text(seed, service, number) if keyed else f"{seed}:{number}"


class Wire(Protocol):
    """A game's sans-IO protocol, the server's end of one connection."""

    @property
    def buffered(self) -> int:
        """Bytes received and not yet turned into events."""

    def send(self, message: Any) -> bytes: ...

    def receive_data(self, data: bytes) -> None:
        """Bytes from the player; ``b""`` once it closed its end."""

    def next_event(self) -> Any:
        """The next event, ``NEED_DATA``, or ``ring.sansio.Closed()`` once closed."""


Shown = Callable[[Any], "dict[str, Any] | None"]


class Seat:
    """One player's connection, from its first byte to the end of its game."""

    def __init__(
        self, stream: trio.abc.Stream, protocol: Wire, peer: str, *, max_unread: int, shown: Shown
    ) -> None:
        self.stream = stream
        self.protocol = protocol
        self.peer = peer
        self.max_unread = max_unread  # bytes that may wait unread, before its game or its turn
        self.shown = shown  # how an event in shows in the record (None: not at all)
        self.name = ""
        self.seat = -1  # its seat in the game forming (ring.lobby)
        self.granted = False  # it holds that seat
        self.gone = False  # closed, or unable to take our writes
        self.begun = trio.Event()  # seated in a game that has begun
        self.game_over = trio.Event()  # its game is over: its connection may close
        self.waiting_scope = trio.CancelScope()  # its own task reads until the game begins
        self.stopped_waiting = trio.Event()  # that read has ended: the game may read now
        # Lines logged before its game has a record, kept with their times (bounded).
        self.prelude = record.Held()
        self.log: Callable[..., None] = lambda **line: self.prelude.add(line)

    @property
    def who(self) -> str:
        return f"{self.name} ({self.peer})" if self.name else self.peer

    async def send(self, message: Any, timeout: float) -> bool:
        """Write one message; False (and ``gone``) if the player cannot take it."""
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

    async def event(self, deadline: float = math.inf) -> Any:
        """The next event (logged as ``shown``), or ``TIMED_OUT`` at ``deadline``."""
        while (event := self.protocol.next_event()) is NEED_DATA:
            try:
                data = await read_before(self.stream, deadline, READ_SIZE)
            except trio.TooSlowError:
                return TIMED_OUT
            self.protocol.receive_data(data)
        if isinstance(event, Closed):
            self.gone = True
        self.note(event)
        return event

    def note(self, event: Any) -> None:
        fields = self.shown(event)
        if fields is not None:
            self.log(dir="in", **fields)

    async def read(self) -> bytes:
        """The next bytes, or b"" once the stream has ended or broken; no deadline of its own."""
        return await read_before(self.stream, math.inf, READ_SIZE)

    def too_much_unread(self, data: bytes = b"") -> bool:
        return self.protocol.buffered + len(data) > self.max_unread


@dataclass(frozen=True)
class Terms:
    """How a game's turns are held."""

    move_time: float = math.inf  # one turn, from the end of writing its first prompt
    budget: float = math.inf  # all of one player's turns together
    send_timeout: float = 10.0  # each write
    attempts: int = 1  # refused answers in a row that lose (Fault.REFUSED)
    watch_waiting: bool = False  # read the waiting player's connection while the other moves


class Fault(enum.Enum):
    """Why a match itself ends a game against a player; the rules word it."""

    LEFT = "left"  # its connection closed, or could not take a write
    TIMED_OUT = "timed out"  # its turn's clock ran out
    FLOODED = "flooded"  # over max_unread bytes waited from it while the other moved
    REFUSED = "refused"  # Terms.attempts answers refused in a row


@dataclass(frozen=True)
class Verdict:
    """How a game ended: by seat."""

    winner: int | None  # None: a draw
    reason: str  # in the game's words ("board", "tipped the board", "left the game", ...)
    culprit: int | None = None  # the seat that forfeited; None when the board decided
    invalid: bool = False  # the culprit broke the rules (its farewell may say so first)

    @classmethod
    def forfeit(cls, seat: int, reason: str, *, invalid: bool = False) -> Verdict:
        return cls(1 - seat, reason, seat, invalid)


@dataclass(frozen=True)
class Moved(Generic[S]):
    """A legal move: the state after it, and the game's ``move`` record of it."""

    state: S
    record: dict[str, Any]


class Again:
    """An answer refused: the mover gets the prompt again."""


AGAIN = Again()


class Rules(Protocol[S]):
    """One game as a match plays it. States are the game's own; seats are 0 and 1."""

    @property
    def service(self) -> str: ...
    @property
    def terms(self) -> Terms: ...

    def options(self, state: S) -> dict[str, Any]:
        """The options that decide the game, for its ``start`` record."""

    def who(self, seat: int, name: str) -> record.Player:
        """The player as the ``start`` record names it (its seat or colour)."""

    def tags(self, seat: int, name: str) -> dict[str, Any]:
        """What each of the player's messages in the record carries."""

    def opening(self, state: S, number: int) -> Iterable[tuple[int, Any]]:
        """The messages before the first turn, in order, each to a seat."""

    def verdict(self, state: S) -> Verdict | None:
        """The result on the board once the game is over; None while it goes on."""

    def to_move(self, state: S) -> int: ...
    def prompt(self, state: S, seat: int) -> Any: ...

    def judge(self, state: S, seat: int, event: Any) -> Moved[S] | Again | Verdict:
        """What the mover's event (anything but ``Closed``) does."""

    def forfeit(self, seat: int, fault: Fault) -> Verdict: ...

    def farewell(self, verdict: Verdict) -> Iterable[tuple[int, Any]]:
        """The messages at the end, in order, each to a seat."""

    def details(self, state: S, verdict: Verdict) -> dict[str, Any]:
        """The game's own figures for the ``end`` record."""

    def report(self, number: int, names: tuple[str, str], state: S, verdict: Verdict) -> Any:
        """How the game ended, as its server tells its operator."""


class Match(Generic[S]):
    """One game between two seats (in the rules' seat order), played by ``run``."""

    def __init__(
        self,
        rules: Rules[S],
        players: Sequence[Seat],
        state: S,
        *,
        number: int,
        seed: int | str | None,
        hub: record.RecordHub,
    ) -> None:
        self.rules = rules
        self.players = tuple(players)
        self.names = (self.players[0].name, self.players[1].name)
        self.state = state
        self.number = number
        self.seed = seed
        self.hub = hub
        self.budgets = [rules.terms.budget] * 2
        self.recorder: record.GameRecorder | None = None

    async def run(self) -> Any:
        """Play the game to its end; its report."""
        rules, players = self.rules, self.players
        seats = [rules.who(seat, player.name) for seat, player in enumerate(players)]
        options = rules.options(self.state)
        recorder = self.hub.open_game(
            rules.service, self.number, seats, seed=self.seed, options=options
        )
        self.recorder = recorder
        earlier = []  # both players' lines from before the game, in the order they happened
        for seat, player in enumerate(players):
            player.log = functools.partial(recorder.record, **rules.tags(seat, player.name))
            earlier += [(line["t"], seat, line) for line in player.prelude.records]
        for _, seat, line in sorted(earlier, key=lambda entry: entry[:2]):
            players[seat].log(**line)
        for seat, message in rules.opening(self.state, self.number):
            await players[seat].send(message, rules.terms.send_timeout)
        verdict = rules.verdict(self.state)
        while verdict is None:
            verdict = await self._turn()
        return await self._finish(recorder, verdict)

    def abandon(self, reason: str) -> None:
        """End the record of a game stopped as it stands, with no result."""
        if self.recorder is not None:
            self.recorder.end(reason)

    async def _turn(self) -> Verdict | None:
        """Play the mover's turn: None if the game goes on, else how it ended."""
        rules, state = self.rules, self.state
        terms = rules.terms
        seat = rules.to_move(state)
        mover = self.players[seat]
        prompt = rules.prompt(state, seat)
        clock: TurnClock | None = None
        refused = 0
        try:
            while True:
                if not await mover.send(prompt, terms.send_timeout):
                    return rules.forfeit(seat, Fault.LEFT)
                clock = clock or TurnClock(min(terms.move_time, self.budgets[seat]))
                answer = await self._answer(seat, clock)
                if isinstance(answer, Verdict):
                    return answer
                if answer is TIMED_OUT:
                    return rules.forfeit(seat, Fault.TIMED_OUT)
                if isinstance(answer, Closed):
                    return rules.forfeit(seat, Fault.LEFT)
                judged = rules.judge(state, seat, answer)
                if isinstance(judged, Moved):
                    self.state = judged.state
                    assert self.recorder is not None
                    self.recorder.record(event="move", **judged.record)
                    return rules.verdict(judged.state)
                if isinstance(judged, Verdict):
                    return judged
                refused += 1
                if refused >= terms.attempts:
                    return rules.forfeit(seat, Fault.REFUSED)
        finally:
            if clock is not None:
                self.budgets[seat] -= clock.used()

    async def _answer(self, seat: int, clock: TurnClock) -> Any:
        """The mover's next event or ``TIMED_OUT``; or, watching, the waiting player's
        forfeit if it leaves or sends too much meanwhile."""
        wait = functools.partial(self.players[seat].event, math.inf)
        if not self.rules.terms.watch_waiting:
            return await within(clock, wait)
        answer: Any = None
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal answer
                fault = await self._watch(self.players[1 - seat])
                if answer is None:
                    answer = self.rules.forfeit(1 - seat, fault)
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            event = await within(clock, wait)
            if answer is None:
                answer = event
            nursery.cancel_scope.cancel()
        return answer

    @staticmethod
    async def _watch(player: Seat) -> Fault:
        """Read the waiting player's bytes, unparsed, until it loses by them."""
        while not player.gone:
            if player.too_much_unread():
                return Fault.FLOODED
            data = await player.read()
            if player.too_much_unread(data):
                return Fault.FLOODED
            player.protocol.receive_data(data)
            if not data:
                player.note(Closed())
                player.gone = True
        return Fault.LEFT

    async def _finish(self, recorder: record.GameRecorder, verdict: Verdict) -> Any:
        rules, names = self.rules, self.names
        for seat, message in rules.farewell(verdict):
            await self.players[seat].send(message, rules.terms.send_timeout)
        winner = verdict.winner
        recorder.end(
            verdict.reason,
            winners=[] if winner is None else [names[winner]],
            losers=[] if winner is None else [names[1 - winner]],
            draw=winner is None,
            culprit=None if verdict.culprit is None else names[verdict.culprit],
            details=rules.details(self.state, verdict),
        )
        return rules.report(self.number, names, self.state, verdict)


class Arena:
    """A server's matches: those under way, and the reports of those that ended."""

    def __init__(self, on_end: Callable[[Any], object] | None = None) -> None:
        self.running: set[Match[Any]] = set()
        self.reports: list[Any] = []
        self.on_end = on_end

    async def play(self, match: Match[Any]) -> None:
        self.running.add(match)
        try:
            report = await match.run()
        finally:
            self.running.discard(match)
        self.reports.append(report)
        if self.on_end is not None:
            self.on_end(report)

    def stop(self, reason: str = SHUT_DOWN) -> None:
        """End the records of the games under way, as they stand (the server stops)."""
        for match in list(self.running):
            match.abandon(reason)
