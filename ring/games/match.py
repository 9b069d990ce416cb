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

- Seats. ``ring.games.seat.Seat`` is one connection: its stream, its protocol, its
  name, and the events by which a lobby (``ring.games.lobby``) hands it to its
  match. A seat may hold what it is told until the match next waits for a
  connection's answer, or the game ends (``flush``: a FishNet client gets a
  step's lines in one write). Every write gives up after ``Terms.send_timeout``;
  a player whose connection has closed, or that could not take a write, is
  ``gone`` and is sent nothing more. A game may seat any ``ring.games.seat.Occupant`` instead: a
  built-in player deciding in the server (off the clock), or a connection
  whose reading the game does itself.
- Turns. The mover gets ``prompt``; its next event answers it (bytes sent
  early are read in order when its turn comes). The clock is a
  ``ring.games.clock.TurnClock`` started once the turn's first prompt is written,
  so the server's own long stretches of work are not charged: one turn may
  take ``Terms.move_time``, all of a player's turns ``Terms.budget``. An
  answer the rules refuse (``Again``) gets its ``tells`` (why) and the prompt
  again, the clock running on, up to ``Terms.attempts`` in a row. With
  ``Terms.watch_waiting`` the other player's connection is read meanwhile,
  unparsed: if it closes, or more than ``Seat.max_unread`` bytes wait from
  it, it loses at once. A legal move (``Moved``) may tell either seat what
  happened (``tells``, in order); the mover moves again if the rules say so.
  With ``Terms.untold_leaves`` a player that cannot be told the opening or a
  move's news loses at once; else at its next prompt.
- The end. ``farewell``'s messages, in order; then the ``end`` record
  (winner and loser by name, or a draw; the reason; for a forfeit the
  ``culprit``; the game's ``details``), and the game's ``report`` is returned.
- The record, through a ``ring.games.record.RecordHub``: ``start`` (the players as
  the rules name them, the seed, the game's options), the lines a seat logged
  before its game (with their own times), the game's ``begun`` record if it
  has one, every message out and every event in (as the seat shows it) with
  the player's ``tags``, the rules' ``move`` records, and ``end``.

``Arena`` holds a server's matches under way (a stopped server ends their
records without a result) and the reports of those that ended.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import trio

from ring.games import record
from ring.games.clock import TIMED_OUT, TurnClock, within
from ring.games.seat import READ_SIZE, Fault, Occupant, Seat, Shown, Wire
from ring.games.seeds import keyed_text
from ring.wire.sansio import Closed

# The seat and its I/O live in ring.games.seat; a game's server takes them from here too.
__all__ = [
    "AGAIN",
    "READ_SIZE",
    "REPORTS_KEPT",
    "SHUT_DOWN",
    "Again",
    "Arena",
    "Fault",
    "Match",
    "Moved",
    "Occupant",
    "Rules",
    "Seat",
    "Shown",
    "Terms",
    "Verdict",
    "Wire",
    "game_seed",
]

SHUT_DOWN = "the server shut down"
# The reports of ended games a server keeps, newest last. It runs all day: its on_end
# callback is where reports go; these are a look at the last few (and for tests).
REPORTS_KEPT = 1_000

S = TypeVar("S")
Tells = Sequence[tuple[int, Any]]  # messages, each to a seat, in order


def game_seed(seed: int, keyed: bool, service: str, number: int) -> str:
    """Game ``number``'s seed: ``<seed>:<number>``, or a keyed hash of both when ``seed``
    is a secret (``ring.games.seeds``)."""
    return keyed_text(seed, service, number) if keyed else f"{seed}:{number}"


@dataclass(frozen=True)
class Terms:
    """How a game's turns are held."""

    move_time: float = math.inf  # one turn, from the end of writing its first prompt
    budget: float = math.inf  # all of one player's turns together
    send_timeout: float = 10.0  # each write
    attempts: float = 1  # refused answers in a row that lose (Fault.REFUSED); math.inf: none
    watch_waiting: bool = False  # read the waiting player's connection while the other moves
    # A player that cannot be told the opening or a move's news loses at once
    # (Fault.LEFT); else it is found out at its next prompt.
    untold_leaves: bool = False


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
    """A legal move: the state after it, the game's ``move`` record of it (None: none),
    and what either seat is told of it, in order."""

    state: S
    record: dict[str, Any] | None
    tells: Tells = ()


@dataclass(frozen=True)
class Again:
    """An answer refused: the mover is told ``tells`` (why), then gets the prompt again."""

    tells: Tells = ()


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
        players: Sequence[Occupant],
        state: S,
        *,
        number: int,
        seed: int | str | None,
        hub: record.RecordHub,
        begun: dict[str, Any] | None = None,
    ) -> None:
        self.rules = rules
        self.players = tuple(players)
        self.names = (self.players[0].name, self.players[1].name)
        self.state = state
        self.number = number
        self.seed = seed
        self.hub = hub
        self.begun = begun  # a record of the game's own, before its opening (who deals)
        self.budgets = [rules.terms.budget] * 2
        self.recorder: record.GameRecorder | None = None
        self.verdict: Verdict | None = None  # how it ended, once it has
        self.fault: Fault | None = None  # the match's own reason for a forfeit, if it was one
        # Each seat's turns, in seconds on its clock (a tournament's move-time figures).
        self.turn_times: tuple[list[float], list[float]] = ([], [])

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
        if self.begun is not None:
            recorder.record(**self.begun)
        verdict = await self._told(rules.opening(self.state, self.number))
        while verdict is None:
            played = await self._turn()
            if isinstance(played, Verdict):
                verdict = played
                continue
            self.state = played.state
            if played.record is not None:
                recorder.record(event="move", **played.record)
            verdict = await self._told(played.tells)
        return await self._finish(recorder, verdict)

    async def _told(self, tells: Iterable[tuple[int, Any]]) -> Verdict | None:
        """Tell the players; then the seat that could not be told loses (with
        ``Terms.untold_leaves``), else the board decides (None: the game goes on)."""
        untold = await self._tell(tells)
        if untold is None:
            verdict = self.rules.verdict(self.state)
            if verdict is None:
                return None  # what a seat held goes out before the next wait (_turn)
            # Over: what was held goes out before the result, and a seat that cannot
            # take it has left, as it would have had each message been written at once.
            untold = await self._flush()
            if untold is None or not self.rules.terms.untold_leaves:
                return verdict
        return self._forfeit(untold, Fault.LEFT)

    def _forfeit(self, seat: int, fault: Fault) -> Verdict:
        """``seat`` loses by the match's own finding, kept for who asks why (a tournament)."""
        self.fault = fault
        return self.rules.forfeit(seat, fault)

    def abandon(self, reason: str, details: dict[str, Any] | None = None) -> None:
        """End the record of a game stopped as it stands, with no result."""
        if self.recorder is not None:
            self.recorder.end(reason, details=details)

    async def _tell(self, tells: Iterable[tuple[int, Any]]) -> int | None:
        """Send each message; the seat that could not be told, if that loses at once."""
        terms = self.rules.terms
        for seat, message in tells:
            told = await self.players[seat].send(message, terms.send_timeout)
            if not told and terms.untold_leaves:
                return seat
        return None

    async def _flush(self, mover: int | None = None) -> int | None:
        """Write what each seat held (the mover's last: its prompt ends it); the first seat
        that could not be told, if any. Before every wait for a connection's answer, and
        at the end: no player waits for a line the server holds."""
        timeout = self.rules.terms.send_timeout
        untold = None
        for seat in (0, 1) if mover is None else (1 - mover, mover):
            if not await self.players[seat].flush(timeout) and untold is None:
                untold = seat
        return untold

    async def _turn(self) -> Moved[S] | Verdict:
        """The mover's turn: its legal move, or how the game ended."""
        rules, state = self.rules, self.state
        terms = rules.terms
        seat = rules.to_move(state)
        mover = self.players[seat]
        prompt = rules.prompt(state, seat)
        limit = min(terms.move_time, self.budgets[seat]) if mover.clocked else math.inf
        clock: TurnClock | None = None
        refused = 0
        try:
            while True:
                if not await mover.send(prompt, terms.send_timeout):
                    return self._forfeit(seat, Fault.LEFT)
                # Before waiting for a connection's answer, what every seat holds goes out.
                # A built-in player's decision (not clocked) is the server's own work, as
                # judging is: the lines its moves bring join those held (one write a step).
                if mover.clocked:
                    untold = await self._flush(seat)
                    if untold == seat or (untold is not None and terms.untold_leaves):
                        return self._forfeit(untold, Fault.LEFT)
                clock = clock or TurnClock(limit)
                answer = await self._answer(seat, clock)
                if isinstance(answer, Verdict):
                    return answer
                if answer is TIMED_OUT:
                    return self._forfeit(seat, Fault.TIMED_OUT)
                if isinstance(answer, Closed):
                    return self._forfeit(seat, Fault.LEFT)
                judged = rules.judge(state, seat, answer)
                if isinstance(judged, Moved | Verdict):
                    return judged
                refused += 1
                if refused >= terms.attempts:
                    return self._forfeit(seat, Fault.REFUSED)
                untold = await self._tell(judged.tells)
                if untold is not None:
                    return self._forfeit(untold, Fault.LEFT)
        finally:
            if clock is not None and mover.clocked:
                used = clock.used()
                self.budgets[seat] -= used
                self.turn_times[seat].append(used)

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
                fault = await self.players[1 - seat].watch()
                if answer is None:
                    answer = self._forfeit(1 - seat, fault)
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            event = await within(clock, wait)
            if answer is None:
                answer = event
            nursery.cancel_scope.cancel()
        return answer

    async def _finish(self, recorder: record.GameRecorder, verdict: Verdict) -> Any:
        rules, names = self.rules, self.names
        self.verdict = verdict
        for seat, message in rules.farewell(verdict):
            await self.players[seat].send(message, rules.terms.send_timeout)
        await self._flush()
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
    """A server's matches: those under way, and the reports of the last that ended."""

    def __init__(
        self, on_end: Callable[[Any], object] | None = None, *, keep: int = REPORTS_KEPT
    ) -> None:
        self.running: set[Match[Any]] = set()
        self.reports: list[Any] = []
        self._keep = keep
        self.on_end = on_end
        # Called with each match as it begins, and once it has ended, whatever its end (a
        # tournament reads its seats, verdict, fault and turn times there).
        self.on_begin: Callable[[Match[Any]], object] | None = None
        self.on_match: Callable[[Match[Any]], object] | None = None

    async def play(self, match: Match[Any]) -> Any:
        """Run ``match``; its report."""
        self.running.add(match)
        if self.on_begin is not None:
            self.on_begin(match)
        try:
            report = await match.run()
        finally:
            self.running.discard(match)
            if self.on_match is not None:
                self.on_match(match)
        self.reports.append(report)
        del self.reports[: -self._keep]
        if self.on_end is not None:
            self.on_end(report)
        return report

    def stop(self, reason: str = SHUT_DOWN) -> None:
        """End the records of the games under way, as they stand (the server stops)."""
        for match in list(self.running):
            match.abandon(reason)
