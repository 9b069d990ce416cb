"""A verified game under way (protocol 14.6): the ledger's verdicts, and its two timers.

``VerifiedPlay`` judges; this is the Trio side around it for one game: it
aborts the game on a lie, ends a game whose ledger has waited too long for a
report (``watch``), and holds back the announcement of a game decided while
the last exchange's reports are still on their way (``hold_the_end``), so
that a lie in them, or a report that never comes, ends it instead.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import trio

from ring.oldmaid.cards import Card
from ring.oldmaid.messages import (
    Accuse,
    CheckOffer,
    DrawTurn,
    Gave,
    Move,
    OfferSeen,
    Received,
    Reply,
    Witness,
    Witnessed,
    error,
    ok,
)
from services.oldmaid.referee.events import Dealt
from services.oldmaid.referee.rules import GameState, RefereeEvent, TableGame
from services.oldmaid.verified.draw_clock import DrawClock
from services.oldmaid.verified.ledger import Lie
from services.oldmaid.verified.play import VerifiedPlay, abort_reason
from services.oldmaid.verified.witness import (
    MOVE_TIMEOUT,
    Exchange,
    Refused,
    WitnessDesk,
)

# A verified game whose ledger waits this long for a report (at most the turn
# timeout) ends naming who it waits for; honest players report within
# milliseconds.
REPORT_TIMEOUT = 5.0
# A witnessed game in which nothing moves this long (no draw, discard, report or witness
# request) ends naming who the table knows to hold the turn: every wait an honest player
# has goes through the table within its peer timeout (ring peer: 10 s), and this is below
# the peers' idle timeout (ring peer: 120 s), whose give_up would name no one.
WITNESSED_TURN_TIMEOUT = 30.0
# A verified game decided while a report is still on its way waits this long for it
# (honest reports come within milliseconds; a loaded machine may hold one back a while).
REPORT_GRACE = 3.0
# An accusation that names no one waits at least this long for the reports that may
# explain it: a peer queues its reports for up to 50 ms (protocol 14.6), so they can
# come after the accusation they explain.
HOLD_AT_LEAST = 0.5


class VerifiedGame:
    """The ledger of one verified game, and what the table does on its word."""

    def __init__(
        self,
        play: VerifiedPlay,
        referee: TableGame,
        *,
        report_timeout: float,
        ended: trio.Event,
        on_decided: Callable[[], Awaitable[None]],
        witness: Callable[[str, Witnessed | DrawTurn], None] | None = None,
        nursery: trio.Nursery | None = None,
    ) -> None:
        self.play = play
        self._referee = referee
        # A witnessed game (every player joined with witness): the table's desk, how a
        # notice reaches a player, and where the deadline of each owed move runs.
        self.desk: WitnessDesk | None = None
        self.draws: DrawClock | None = None  # and of its draw turns
        self._timed: set[tuple[int, int]] = set()  # (seq, step) whose move is being timed
        self._notify = witness
        self._nursery = nursery
        if witness is not None and nursery is not None:
            self.desk = play.witness_desk(lambda: referee.status().out)
            self.draws = DrawClock(referee, self._tell)
            referee.witnessed = True
        self._report_timeout = report_timeout
        self._ended = ended
        self._on_decided = on_decided  # record the decisions and announce the end
        referee.reports_exchanges = True
        self._waits_since: float | None = None  # since when the ledger waits for a report
        # watch()'s timer: its deadline is report_timeout after the ledger began to wait.
        self._timer = trio.CancelScope(deadline=math.inf)
        self._idle = trio.Event()  # set while the ledger waits for no report
        self._idle.set()
        self._holding = False  # the end is decided, and held for the last reports
        self._announced = False
        # An accusation about exchange ``_held_seq`` that names no one, held while the
        # ledger waits for other reports: they may show who caused what the accuser saw
        # (a second turn a cheater handed an honest offerer), and then that player is
        # named instead of two suspects. Not for the accuser's own report of that
        # exchange: it refused the card, so that report never comes.
        self._held: Lie | None = None
        self._held_seq = 0
        self._held_until = math.inf  # the earliest moment it is weighed
        self._reported = trio.Event()  # set (and renewed) by each report
        self.held_from: str | None = None  # its accuser, who may leave meanwhile

    def let_go(self) -> None:
        """The table is done with the game (its record has ended, its players gone): drop
        the way back to it, so that the game and its ledger are freed at once rather than
        by a garbage collection, which stops every game on the server."""
        self._on_decided = _decided_too_late
        self._notify = None  # a witnessed game's notices went through the table game too
        self.draws = None  # its clock sends them through us

    # -- what reaches the ledger -------------------------------------------------

    def saw(self, event: RefereeEvent) -> None:
        if isinstance(event, Dealt) and self.draws is not None:
            self.draws.drew()
        self.act_on(self.play.saw(event))

    def _tell(self, nick: str, notice: Witnessed | DrawTurn) -> None:
        if self._notify is not None:
            self._notify(nick, notice)

    async def hand_on_draws(self) -> None:
        """In a witnessed game, hand on each draw turn that sits (``DrawClock``); the
        table starts it once the join replies are out."""
        if self.draws is not None and await self.draws.run():
            await self._on_decided()

    def report(self, nick: str, report: Received | Gave) -> None:
        self.act_on(self.play.report(nick, report))
        self._reported.set()  # wakes an owed offer's wait for the turn's reports
        self._reported = trio.Event()
        if isinstance(report, Gave) and self.desk is not None:
            seen = self.play.unacked_pass(nick, report)
            if seen is not None and self._referee.state is GameState.PLAYING:
                self._witness_pass(nick, report.to, seen)

    def _witness_pass(self, offerer: str, receiver: str, seen: OfferSeen) -> None:
        """A pass reported with an ack not its receiver's: witnessed, as if its offerer had
        asked (protocol 14.6), unless the table cannot (it is judged already: the
        receiver's own report is in)."""
        assert self.desk is not None
        try:
            exchange, lie = self.desk.ask(offerer, Witness(to=receiver, offer=seen))
        except Refused:
            return
        self._witnessed(exchange, lie)

    def claimed(self, nick: str, cards: tuple[Card, Card]) -> None:
        self.act_on(self.play.claimed(nick, cards))

    def proves(self, nick: str, request: Accuse) -> bool:
        """Whether an accusation is proved (and acted on); False: only the accuser's word."""
        if self._referee.state is not GameState.PLAYING:
            return False
        proved = self.play.accusation(nick, request, self._referee.status().out)
        if proved is None or (proved.culprit is None and self.desk is not None):
            # A word, or two suspects: in a witnessed game neither ends it (the referee
            # notes it), else the held suspects below may end it naming no one.
            return False
        seq = request.evidence.get("seq")
        if proved.culprit is None and isinstance(seq, int):
            if self._held is None:  # weighed once the other reports are in (weigh_held)
                self._held, self._held_seq, self.held_from = proved, seq, nick
                self._held_until = trio.current_time() + HOLD_AT_LEAST
            return True
        self.act_on(proved)
        return True

    @property
    def witnessing(self) -> bool:
        """Whether the table's own deadlines name whoever stops the game now: an exchange
        it witnesses is under way, or it is the draw phase of a witnessed game, whose
        turns the table hands on (``DrawClock``)."""
        if self.desk is None:
            return False
        return bool(self.desk.open) or self._referee.turn is not None

    def take(self, nick: str, request: Received | Gave | CheckOffer | Witness | Move) -> tuple[
        Reply, bool
    ]:
        """One of a verified game's requests: its reply, and whether the game moved (a report,
        or an exchange the table witnesses going on)."""
        if isinstance(request, Received | Gave):
            self.report(nick, request)
            return ok(), True
        if isinstance(request, CheckOffer):
            return self.check_offer(nick, request), False
        reply = self.witness(nick, request)
        return reply, reply.ok

    def _open_desk(self) -> tuple[WitnessDesk | None, Reply]:
        """The desk, while a witnessed game is played; else None and the error reply."""
        if self.desk is None or self._notify is None or self._nursery is None:
            return None, error(
                "this game is not witnessed: only a game whose every player joined with "
                '"verify":true and "witness":true is (protocol 14.6)'
            )
        if self._referee.state is not GameState.PLAYING:
            return None, error("the game is over")
        return self.desk, ok()

    def witness(self, nick: str, request: Witness | Move) -> Reply:
        """A request to witness an exchange, or a move in one (protocol 14.6)."""
        desk, refused = self._open_desk()
        if desk is None:
            return refused
        try:
            if isinstance(request, Witness):
                exchange, lie = desk.ask(nick, request)
            else:
                exchange, lie = desk.move(nick, request)
        except Refused as exc:
            return error(str(exc))
        self._witnessed(exchange, lie)
        return ok()

    def check_offer(self, nick: str, request: CheckOffer) -> Reply:
        """A receiver's check of an offer before it answers it (protocol 14.6, "Checking
        an offer"): ``ok`` if it carries its offerer's mac; else an ``error``, and, if it
        may be a turn of this game, the offerer owes it through the table."""
        desk, refused = self._open_desk()
        if desk is None:
            return refused
        try:
            exchange = desk.check(nick, request.offer)
        except Refused as exc:
            return error(f"do not take it: {exc}")
        if exchange is None:
            return ok()
        self._witnessed(exchange, None)
        return error(
            f"do not take it: the offer does not carry {exchange.offerer}'s mac of an offer "
            f"to {nick}; {exchange.offerer} owes exchange {exchange.seq} through the table"
        )

    def _witnessed(self, exchange: Exchange, lie: Lie | None) -> None:
        """Tell both players how the exchange stands; act on its lie, or time its move."""
        assert self._notify is not None and self._nursery is not None
        notice = exchange.notice()
        for player in (exchange.offerer, exchange.receiver):
            self._tell(player, notice)
        if lie is not None:
            self.act_on(lie)
        elif exchange.owes is not None:
            timed = (exchange.seq, exchange.step)
            if timed not in self._timed:  # a request asked again times nothing anew
                self._timed.add(timed)
                self._nursery.start_soon(self._expire, *timed)

    async def _expire(self, seq: int, step: int) -> None:
        """Name the player that owes step ``step`` of exchange ``seq`` if it is still owed
        ``MOVE_TIMEOUT`` after the notice."""
        await trio.sleep(MOVE_TIMEOUT)
        assert self.desk is not None
        # An offer owed on its receiver's word names its offerer only if the reports show
        # it held the turn: they may be a moment behind (14.6: up to the report timeout).
        with trio.move_on_after(self._report_timeout):
            while self.desk.undecided(seq, step):
                await self._reported.wait()
        if self.desk.undecided(seq, step):
            self.desk.drop(seq)
        self._timed.discard((seq, step))
        lie = self.desk.overdue(seq, step)
        referee = self._referee
        if lie is None or referee.state is not GameState.PLAYING:
            return
        if referee.abort(abort_reason(lie), culprit=lie.culprit, rule=lie.rule):
            await self._on_decided()

    def _weighable(self) -> bool:
        return trio.current_time() >= self._held_until and not self.play.ledger.waits_beyond(
            self.held_from or "", self._held_seq
        )

    async def weigh_held_later(self) -> None:
        """Act on the held accusation ``HOLD_AT_LEAST`` after it came, if no other report
        is awaited then (later reports weigh it through ``act_on``; the report timeout
        ends a game that waits for ever). The table starts it as the accusation comes."""
        await trio.sleep(HOLD_AT_LEAST)
        if self._held is None or not self._weighable():
            return
        self.act_on(None)
        if self._referee.state is not GameState.PLAYING:
            await self._on_decided()

    def act_on(self, lie: Lie | None) -> None:
        """Abort on a lie the ledger found; note whether it waits for a report."""
        referee = self._referee
        if lie is not None:
            reason = abort_reason(lie)
            if (
                not referee.abort(reason, culprit=lie.culprit, rule=lie.rule)
                and not self._announced
            ):
                referee.void(reason, culprit=lie.culprit, rule=lie.rule)  # found as it ended
        elif self._held is not None and self._weighable():
            held, self._held, self.held_from = self._held, None, None
            self.act_on(held)  # the reports before it named no one: the suspects stand
        elif not self.play.ledger.waiting:
            self._waits_since = None
            self._timer.deadline = math.inf
            self._idle.set()
        elif self._waits_since is None:
            self._waits_since = trio.current_time()
            self._timer.deadline = self._waits_since + self._report_timeout
            self._idle = trio.Event()

    # -- the timers ----------------------------------------------------------------

    async def watch(self) -> None:
        """End the game once the ledger has waited ``report_timeout`` for a report: the
        game could go on without it, but the table could no longer check it."""
        while not self._ended.is_set() and self._referee.state is GameState.PLAYING:
            with self._timer:
                await self._ended.wait()
            # Cancelled: the deadline set when the ledger began to wait has passed.
            self._timer = trio.CancelScope(deadline=math.inf)
            if self._waits_since is None or self._referee.state is not GameState.PLAYING:
                continue
            if self.witnessing:
                # The exchange the ledger waits on may be the one the table witnesses: its
                # own deadline names whoever stops it, so the report's wait starts again.
                self._waits_since = trio.current_time()
                self._timer.deadline = self._waits_since + self._report_timeout
                continue
            lie = self.play.stalled()
            reason = f"a report was missing for {self._report_timeout:g} s: {abort_reason(lie)}"
            if self._referee.abort(reason, culprit=lie.culprit, rule=lie.rule):
                await self._on_decided()

    def hold_the_end(self, nursery: trio.Nursery) -> bool:
        """Whether the announcement of a game decided over must wait for reports."""
        if self._holding:
            return True
        if not self.play.ledger.waiting:
            self._announced = True
            return False
        self._holding = True
        nursery.start_soon(self._end_when_reported)
        return True

    async def _end_when_reported(self) -> None:
        """Announce once the ledger has checked every report (the last exchange's are
        normally a moment away), or, after ``REPORT_GRACE``, end naming who it waits for;
        no later than the report timeout the ledger's wait began under would have named it
        (a short game can end long after a report went missing)."""
        grace = REPORT_GRACE
        if self._waits_since is not None:
            due = self._waits_since + self._report_timeout - trio.current_time()
            grace = max(0.0, min(grace, due))
        with trio.move_on_after(grace):
            # Woken by the ledger going idle, it may wait again already: a report that
            # completed one exchange may be followed at once by the first report of the
            # next (the other side's is a moment away). So wait while it waits.
            while self.play.ledger.waiting:
                await self._idle.wait()
        if self.play.ledger.waiting and self._referee.state is GameState.OVER:
            lie = self.play.stalled()
            reason = f"the game ended with a report missing: {abort_reason(lie)}"
            self._referee.void(reason, culprit=lie.culprit, rule=lie.rule)
        self._holding = False
        self._announced = True
        await self._on_decided()


async def _decided_too_late() -> None:
    """Nothing to record or announce: the game's record has ended."""
