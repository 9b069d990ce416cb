"""A turn handed to this peer (docs/protocols/oldmaid.md 6, 7.3, 7.6): checked,
answered, and queued for the peer's turn loop.

The inbound side of the peer: every ``your_turn`` and ``offer`` that reaches its
listener (or, in a witnessed game, the table's notices: an offer that came only
through the table, a draw turn the table hands on) comes here. A ``your_turn`` is
answered at once and queued as a draw; an offer is answered, picked from and its
card checked here, then queued as the offer turn. The turn loop (``ring.oldmaid.peer``)
takes what is queued, one turn at a time, so the two never touch the hand at once.
"""

from __future__ import annotations

import enum

import trio

from ring.games.events import EventLog
from ring.oldmaid.draw_turns import DrawTurns
from ring.oldmaid.links import Links
from ring.oldmaid.messages import DrawTurn, Offer, YourTurn, error
from ring.oldmaid.picks import Picks
from ring.oldmaid.stand_ins import StandIns
from ring.oldmaid.suspicion import Suspicion
from ring.oldmaid.table_side import TableSide
from ring.oldmaid.turns import PeerError, Phase, Turns, wire
from ring.oldmaid.watch import StallWatch
from ring.wire.transport import Connection


class Turn(enum.Enum):
    """A turn handed to this peer: what it must do with it."""

    DRAW = "draw"
    OFFER = "offer"


def log_phase_change(turns: Turns, log: EventLog, before: Phase) -> None:
    if turns.phase is not before:
        log.write("phase", phase=turns.phase.value)


class Taking:
    """The turns handed to one peer, queued on ``queue`` for its turn loop."""

    def __init__(
        self,
        turns: Turns,
        links: Links,
        picks: Picks,
        table: TableSide,
        suspicion: Suspicion,
        watch: StallWatch,
        log: EventLog,
        *,
        seated: trio.Event,
        queue: trio.MemorySendChannel[Turn | None],
    ) -> None:
        self._turns = turns
        self._links = links
        self._picks = picks
        self._table = table
        self._suspicion = suspicion
        self._watch = watch
        self._log = log
        self._seated = seated
        self._queue = queue
        self.draw_turns = DrawTurns()  # which draw turns we act on (the table's too, 14.6)
        self.last_draw_turn: YourTurn | None = None  # the last your_turn handed to us
        # ring check's stand-ins (``StandIns.withhold_ok_from``): an ok lost on the way.
        self.stand_ins = StandIns()

    async def serve_right(self, stream: trio.SocketStream) -> None:
        """One connection dialled in to us (``ring.wire.net.listen`` runs one a connection)."""
        await self._links.inbound.handle(stream, self.take_request)

    async def take_request(
        self, link: Connection, request: YourTurn | Offer, known: str | None
    ) -> None:
        """A turn handed to us; ``known``: its sender, where its proof makes that certain."""
        self._watch.note_progress()
        # Whoever we handed our last draw turn to has drawn: a turn came round (14.6).
        self._links.witnessing.turn_came_back()
        try:
            if isinstance(request, YourTurn):
                await self.answer_your_turn(link, request, known)
            elif isinstance(request, Offer):
                await self.answer_offer(link, request, known)
        except PeerError as exc:
            await self._table.give_up(exc, seated=self._seated.is_set())

    async def answer_your_turn(
        self, link: Connection, request: YourTurn, known: str | None
    ) -> None:
        answer = self._links.reporting.out_ack(self._turns.answer(), request.sender)
        if answer.ok:
            await self._suspicion.refuse_turn(link, request, known)
        withheld = self._links.witnessing.on and self.stand_ins.withholds_ok(request.sender)
        if withheld:  # drawn on, never answered: its sender must wait on
            self._log.write("withheld_ok", to=request.sender)
        else:
            await link.send(answer)
        if answer.ok:
            self.last_draw_turn = request
            if self.draw_turns.by_your_turn():
                self.queue_draw()

    def draw_turn_from_table(self, notice: DrawTurn) -> None:
        """The table hands us the draw turn (protocol 14.6, "The draw turn"): ours to act
        on unless we are drawing that card already, or have drawn it."""
        if self.draw_turns.by_table(notice.draw):
            self._log.write("draw_turn", draw=notice.draw, **{"from": notice.sender})
            self._watch.note_progress()
            self.queue_draw()

    def queue_draw(self) -> None:
        """A draw turn for the turn loop. If it is still waiting for the ok to the last
        draw turn we handed on, that is over: the turn went round, so its receiver drew."""
        self._links.witnessing.turn_came_back()
        self._queue.send_nowait(Turn.DRAW)

    async def answer_offer(self, link: Connection, offer: Offer, known: str | None) -> None:
        turns, reporting = self._turns, self._links.reporting
        missing = reporting.missing(offer)
        if missing is not None:
            await link.send(error(missing))
            return
        phase = turns.phase
        turns.enter_offer_phase()
        log_phase_change(turns, self._log, phase)
        if turns.out_of_cards:
            await self._table.go_out()
        answer = reporting.ack(turns.answer(), offer)
        if answer.ok and not reporting.on:  # in a verified game the table's ledger judges
            await self._suspicion.refuse_turn(link, offer, known)
        if answer.ok and offer.num_cards:
            # In a witnessed game the table checks an offer of cards before we take it: a
            # bad mac is refused, and its offerer owes it through the table (14.6). A pass
            # moves no card: its offerer's gave settles its mac.
            refused = await self._links.witnessing.check_offer(link, offer)
            if refused is not None:
                await link.send(error(f"refused: {refused}"))
                return
        if not answer.ok or offer.num_cards == 0:
            await link.send(answer)  # else take_pick sends it, with or before its pick
        if not answer.ok:
            return
        if offer.num_cards == 0:
            turns.passes += 1
            self._log.write("turn", **{"from": offer.sender})
            await reporting.received(offer)
            self._queue.send_nowait(Turn.OFFER)
            return
        picked = await self._picks.take_pick(link, offer, answer)
        if picked is None:
            return  # the end: the turn loop hears it from the table
        card_num, card, salt = picked
        self._log.write(
            "pick",
            card_num=card_num,
            card=wire(card),
            num_cards=offer.num_cards,
            stream=offer.stream,
            **{"from": offer.sender},
        )
        try:
            reporting.check_card(offer, card_num, card, salt)
        except PeerError:
            # Not what the offer committed to. A card of another position: our refusal
            # proves it. Else, in a witnessed game, the offerer gives it again through the
            # table, which names it if that one is wrong too (14.6).
            if reporting.opens_another(offer, card, salt):
                raise
            again = await self._links.witnessing.card_again(link)
            if again is None:
                raise
            card, salt = again
            reporting.check_card(offer, card_num, card, salt)
        problem = self._suspicion.card(card, offer)
        if problem is not None and reporting.on:
            # The offer committed to this card: the ledger names its giver (14.6).
            await reporting.received(offer, card_num, card, salt)
            await self._table.wait_for_verdict()
        if problem is not None:
            raise problem
        await reporting.received(offer, card_num, card, salt)
        turns.picked(card)
        await self._table.discard_pairs()
        self._queue.send_nowait(Turn.OFFER)
