"""The peer's side of the table as witness (protocol 14.6, "The table as witness").

In a witnessed game every link to a neighbour is a ``WitnessedLink``
(``ring.oldmaid.witnessed_link``): the ``Connection`` itself, as long as the
exchanges on it go well; when the neighbour leaves us waiting in an exchange
(for the answer to our offer, a pick after its ``ok``, the card after our
pick) for the peer timeout, the link asks the table, here, to witness it.

``Witnessing`` keeps every exchange this peer is in by its number, so that a
notice about one the neighbour asked the table to witness finds it: the
direct wait is cut short, a move already made directly is made again
through the table (the same bytes), and an offer that never came directly
is taken as a turn of its own. The offerer drops a link whose exchange went
through the table (its protocol state no longer matches what passed), and
dials afresh for the next.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ring.games.events import EventLog
from ring.oldmaid.messages import (
    Answer,
    CheckOffer,
    DrawTurn,
    Move,
    Offer,
    OfferSeen,
    PickSeen,
    Reply,
    Witness,
    Witnessed,
)
from ring.oldmaid.protocol import Answered, Role
from ring.oldmaid.turns import Turns
from ring.oldmaid.witnessed_link import ANSWER, CARD, OFFER, Exchange, WitnessedLink
from ring.wire.transport import Connection

KEPT = 16  # exchanges remembered, for a notice about one we are done with


class Witnessing:
    """Every exchange this peer is in, and the table as witness of them."""

    def __init__(self, turns: Turns, log: EventLog, timeout: float) -> None:
        self._turns = turns
        self.on = False  # the join reply said witness: true
        self._log = log
        self.witness_after = timeout  # the peer timeout: how long a neighbour may take
        self.exchanges: collections.OrderedDict[int, Exchange] = collections.OrderedDict()
        # Set by the peer: its table requests, whether the game is over, and how a
        # turn that came only through the table is taken (with the link it came by).
        self.request: Callable[..., Awaitable[Reply]] | None = None
        self.post: Callable[..., Awaitable[None]] | None = None
        self.game_over: trio.Event | None = None
        self.take: Callable[[WitnessedLink, Offer], Awaitable[None]] | None = None
        self.draw_turn: Callable[[DrawTurn], None] | None = None  # the table hands us one
        self.nursery: trio.Nursery | None = None
        # Handing a draw turn on, by its receiver (``Walk``): a draw_turn notice for that
        # receiver ends it (the table has handed the turn on), and so does a turn for us.
        self.handing: dict[str, trio.CancelScope] = {}
        # Offers the table says we owe through it (our receiver's check found a bad mac)
        # before we made them: made through the table when we do (``begin``).
        self.owed_offers: dict[int, Witnessed] = {}

    def let_go(self) -> None:
        """The game is over for us: drop the ways back to the peer (its requests, its turn
        taking) and the exchanges, so that the peer is freed at once, not by a garbage
        collection."""
        self.request = self.post = self.take = self.draw_turn = None
        self.game_over = self.nursery = None
        self.exchanges.clear()
        self.handing.clear()
        self.owed_offers.clear()

    @property
    def nick(self) -> str:
        return self._turns.nick

    def through_table(self, other: str) -> WitnessedLink:
        """A link to ``other`` that only the table carries: for an offer to a receiver
        that cannot be reached directly (its first send asks the table)."""
        return WitnessedLink(self, None, Role.OFFERER, other)

    def wrap(self, conn: Connection, role: Role, other: str | None = None) -> Any:
        """``conn`` as a link to a neighbour. Wrapped whether or not the game is witnessed:
        a neighbour may dial us before our join reply says so; until it does, the link
        passes everything straight through."""
        return WitnessedLink(self, conn, role, other)

    def begin(self, exchange: Exchange) -> Exchange:
        known = self.exchanges.get(exchange.seq)
        if known is not None and known.role is exchange.role and known.other == exchange.other:
            known.offer = exchange.offer  # a retry of the same exchange
            return known
        owed = self.owed_offers.pop(exchange.seq, None)
        if owed is not None and exchange.role is Role.OFFERER and owed.receiver == exchange.other:
            exchange.witnessed, exchange.step, exchange.latest = True, owed.step, owed
        self.exchanges[exchange.seq] = exchange
        while len(self.exchanges) > KEPT:
            self.exchanges.popitem(last=False)
        return exchange

    # -- the table's notices ---------------------------------------------------------

    def noticed(self, notice: Witnessed | DrawTurn) -> None:
        """A ``witnessed`` or ``draw_turn`` notice from the table (the table connection's
        reader calls it)."""
        if isinstance(notice, DrawTurn):
            self._draw_turn(notice)
            return
        if self.nick not in (notice.offerer, notice.receiver):
            return
        exchange = self.exchanges.get(notice.seq)
        if exchange is None or (exchange.role is Role.PICKER and exchange.other != notice.offerer):
            if notice.receiver == self.nick and notice.move == ANSWER:
                self._take_from_table(notice)
            elif notice.offerer == self.nick and notice.move == OFFER:
                self.owed_offers[notice.seq] = notice  # made through the table, if we make it
                while len(self.owed_offers) > KEPT:
                    del self.owed_offers[next(iter(self.owed_offers))]
            return
        if notice.step <= exchange.step:
            return  # overtaken by a later one
        exchange.step = notice.step
        exchange.witnessed = True
        exchange.latest = notice
        if exchange.arrived is not None:
            exchange.arrived.set()
        if exchange.waiting is not None:
            exchange.waiting.cancel()  # the direct wait: the exchange is the table's now
        if notice.owes == self.nick and self.nursery is not None:
            self.nursery.start_soon(self._again, exchange, notice)

    def _draw_turn(self, notice: DrawTurn) -> None:
        """The table hands a draw turn on: ours to take, or ours it handed on for us."""
        if notice.to == self.nick and self.draw_turn is not None:
            self.draw_turn(notice)
        elif notice.sender == self.nick:
            waiting = self.handing.get(notice.to)
            if waiting is not None:
                waiting.cancel()

    def turn_came_back(self) -> None:
        """A turn reached us: whoever we handed our last draw turn to has drawn, so our
        wait for its ok is over (it may have drawn without answering; the table hands on
        a draw turn that sits, 14.6)."""
        for waiting in self.handing.values():
            waiting.cancel()

    def _take_from_table(self, notice: Witnessed) -> None:
        """An offer that reached us only through the table: a turn like any other."""
        if self.take is None or self.nursery is None:
            return
        seen = notice.offer
        offer = Offer(num_cards=seen.num_cards, sender=seen.sender, seq=seen.seq,
                      hashes=list(seen.hashes), mac=seen.mac)  # fmt: skip
        link = WitnessedLink(self, None, Role.PICKER, seen.sender)
        exchange = self.begin(Exchange(Role.PICKER, seen.sender, offer, witnessed=True))
        exchange.step, exchange.latest = notice.step, notice
        link.current = exchange
        self._log.write("witnessed", seq=notice.seq, move=notice.move, owes=notice.owes)
        self.nursery.start_soon(self.take, link, offer)

    async def _again(self, exchange: Exchange, notice: Witnessed) -> None:
        """A move we owe and made directly already: the same, through the table."""
        move = exchange.move(notice.move)
        if move is not None:
            await self.move(move)

    # -- requests to the table -----------------------------------------------------------

    async def check_offer(self, link: Any, offer: Offer) -> str | None:
        """The table's word on an offer as it came, before we take it (protocol 14.6,
        "Checking an offer"): None to take it, else why not. A refused offer is forgotten:
        its offerer owes it through the table, which brings it to us if it comes."""
        if not self.on or self.request is None:
            return None
        exchange = getattr(link, "current", None)
        if exchange is not None and exchange.witnessed:
            return None  # it came through the table, which checked it
        assert offer.sender and offer.seq is not None and offer.hashes is not None
        seen = OfferSeen(sender=offer.sender, seq=offer.seq, num_cards=offer.num_cards,
                         hashes=list(offer.hashes), mac=offer.mac or "")  # fmt: skip
        # Ahead of our queued reports: on a good mac the check changes nothing at the table,
        # and on a bad one the table waits for the reports that show whose turn it was.
        reply = await self.request(CheckOffer(offer=seen), ahead_of_reports=True)
        if reply.ok:
            return None
        message = reply.message or "the table did not pass it"
        self._log.write("offer_refused", seq=offer.seq, message=message,
                        **{"from": offer.sender})  # fmt: skip
        known = self.exchanges.get(offer.seq)
        if known is not None and known.role is Role.PICKER and known.other == offer.sender:
            del self.exchanges[offer.seq]
            latest = known.latest
            if latest is not None and latest.owes == self.nick and latest.move == ANSWER:
                # Its offerer asked the table meanwhile: the offer it brought is the one
                # to answer (its notice found this exchange, so it took nothing yet).
                self._take_from_table(latest)
        return message

    def may_ask(self, exchange: Exchange) -> bool:
        """Whether we may still ask the table about ``exchange``: not once it said no, nor
        once the game is over (a link then waits as it would without the table)."""
        over = self.game_over is not None and self.game_over.is_set()
        return self.request is not None and not exchange.refused and not over

    async def ask(self, exchange: Exchange) -> bool:
        """Ask the table to witness ``exchange`` (from where we stand in it); whether it
        takes it (it may wait for the reports before it, protocol 14.6)."""
        assert self.request is not None
        if not self.may_ask(exchange):
            return False
        request = Witness(to=exchange.other, offer=exchange.seen())
        if exchange.ack is not None and exchange.answer == "ok":
            request.ack = exchange.ack  # the receiver's: in its ok, or our own
        if exchange.role is Role.PICKER and exchange.pick is not None and exchange.pick.mac:
            request.pick = PickSeen(exchange.pick.card_num, exchange.pick.mac)
        if exchange.out_ack is not None:
            request.answer = Answer(result="out", ack=exchange.out_ack)
        reply = await self.request(request)
        if reply.ok:
            exchange.witnessed = True
            self._log.write("witness", to=exchange.other, seq=exchange.seq)
            return True
        exchange.refused = True
        self._log.write("witness_refused", to=exchange.other, seq=exchange.seq,
                        message=reply.message)  # fmt: skip
        return False

    async def answer_again(self, link: Any) -> Reply | None:
        """The receiver's answer to our offer through the table, the one that came directly
        not being one we can take (an ``out`` the table does not count). None if the game
        is not witnessed, or the table cannot witness it, or ends first."""
        exchange = getattr(link, "current", None)
        if not self.on or exchange is None or exchange.role is not Role.OFFERER:
            return None
        if exchange.answer == "out" and exchange.ack:
            exchange.out_ack = exchange.ack
        exchange.answer, exchange.ack = None, None
        event = await self._through_table(link, exchange, ANSWER)
        return event.reply if isinstance(event, Answered) else None

    async def card_again(self, link: Any) -> tuple[Any, str | None] | None:
        """The card of our pick through the table, the one that came directly not opening
        the position we picked: the offerer gives it again where the table sees it (and
        the table names it if that one does not open the position either). None if the
        game is not witnessed, or the table cannot witness it."""
        exchange = getattr(link, "current", None)
        if not self.on or exchange is None or exchange.pick is None:
            return None
        exchange.card, exchange.salt = None, None
        event = await self._through_table(link, exchange, CARD)
        if isinstance(event, Answered) and event.reply.card is not None:
            return event.reply.card, event.reply.salt
        return None

    async def _through_table(self, link: Any, exchange: Exchange, awaiting: str) -> Any:
        """Ask the table about ``exchange``, whose direct ``awaiting`` we could not take,
        and the event its notices bring for it; None if the table would not."""
        exchange.latest, link.awaiting = None, awaiting
        if not await self.ask(exchange):
            return None
        return await link.from_table(exchange)

    async def move(self, move: Move) -> None:
        """A move, in its place among our reports (posted, not waited for: the ``gave``
        that follows it must not be overtaken by a report of the next exchange)."""
        assert self.post is not None
        await self.post(move, at_once=True)
