"""A link to a neighbour in a game the table may witness (protocol 14.6, "The table as witness").

``WitnessedLink`` has the ``Connection``'s interface, so the peer's exchange code
(``Links``, ``Picks``) runs on it unchanged: it is the ``Connection`` itself as long
as the exchanges on it go well. When the neighbour leaves us waiting in an exchange
for the peer timeout, the link asks the table (through ``Witnessing``) to witness
that exchange; from then on what the peer sends becomes a ``move`` and what it
receives comes from the table's ``witnessed`` notices. ``Exchange`` is one exchange
as far as it has gone, as both keep it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import trio

from ring.oldmaid.messages import (
    Answer,
    Move,
    Offer,
    OfferSeen,
    Pick,
    PickSeen,
    Reply,
    Witnessed,
    YourTurn,
)
from ring.oldmaid.protocol import Answered, Closed, Invalid, RemoteProtocolError, Role
from ring.wire.transport import Connection

# After asking, how long to wait for each of the table's notices: the player that owes
# a move has 2 s (the table's MOVE_TIMEOUT) before the table names it, and the notice
# of that takes a moment more.
NOTICE_WAIT = 4.0
CLOCK_SLACK = 0.01  # seconds: a caller's deadline and ours may differ by this much

OFFER, ANSWER, PICK, CARD = "offer", "answer", "pick", "card"


@dataclass
class Exchange:
    """One exchange this peer is in, as far as it has gone."""

    role: Role  # OFFERER: ours to offer; PICKER: we received the offer
    other: str
    offer: Offer
    ack: str | None = None  # the receiver's ok's ack
    answer: str | None = None  # the receiver's answer: "ok" or "out"
    out_ack: str | None = None  # an out's ack the table did not count, for the table to see
    pick: Pick | None = None
    card: Any = None
    salt: str | None = None
    witnessed: bool = False
    refused: bool = False  # the table would not witness it: never asked again
    patient: bool = False  # ask the table only after the link's own timeout
    step: int = 0  # the last notice's
    latest: Witnessed | None = None  # the exchange as the table last said it stands
    arrived: trio.Event | None = None  # set by the next notice, while one is awaited
    waiting: trio.CancelScope | None = None  # a direct wait to cut short

    @property
    def seq(self) -> int:
        assert self.offer.seq is not None
        return self.offer.seq

    def move(self, kind: str) -> Move | None:
        """Our move of ``kind`` (``OFFER``, ``ANSWER``, ``PICK`` or ``CARD``) as the exchange
        holds it, the same bytes as made directly; None if we have not made it."""
        if kind == OFFER and self.role is Role.OFFERER:
            return Move(seq=self.seq, offer=self.seen())
        if kind == ANSWER and self.answer in ("ok", "out") and self.ack is not None:
            answer = Answer(result=self.answer, ack=self.ack)  # type: ignore[arg-type]
            return Move(seq=self.seq, answer=answer)
        if kind == PICK and self.pick is not None and self.pick.mac:
            return Move(seq=self.seq, pick=PickSeen(self.pick.card_num, self.pick.mac))
        if kind == CARD and self.card is not None and self.salt is not None:
            return Move(seq=self.seq, card=self.card, salt=self.salt)
        return None

    def seen(self) -> OfferSeen:
        assert self.offer.sender and self.offer.hashes is not None and self.offer.mac
        return OfferSeen(
            sender=self.offer.sender,
            seq=self.seq,
            num_cards=self.offer.num_cards,
            hashes=self.offer.hashes,
            mac=self.offer.mac,
        )


class Desk(Protocol):
    """What a link asks of the peer's ``Witnessing`` (which makes the links)."""

    on: bool
    witness_after: float
    game_over: trio.Event | None
    exchanges: dict[int, Exchange]

    def begin(self, exchange: Exchange) -> Exchange: ...
    def may_ask(self, exchange: Exchange) -> bool: ...
    async def ask(self, exchange: Exchange) -> bool: ...
    async def move(self, move: Move) -> None: ...


class WitnessedLink:
    """A link to a neighbour with the table as witness: the ``Connection``'s interface."""

    def __init__(self, desk: Desk, conn: Connection | None, role: Role, other: str | None) -> None:
        self._desk = desk
        self.conn = conn
        self._role = role
        self._other = other
        self.current: Exchange | None = None
        self.awaiting: str | None = None  # what we wait for from the neighbour
        self._since = 0.0

    @property
    def retired(self) -> bool:
        """Our link, as offerer, whose last exchange went through the table: its protocol
        state no longer matches what passed on it, so ``Links`` dials afresh."""
        exchange = self.current
        return self._role is Role.OFFERER and exchange is not None and exchange.witnessed

    @property
    def timeout(self) -> float | None:
        return self.conn.timeout if self.conn is not None else self._desk.witness_after

    @property
    def remote_address(self) -> tuple[str, int] | None:
        return self.conn.remote_address if self.conn is not None else None

    async def aclose(self) -> None:
        if self.conn is not None:
            await self.conn.aclose()

    async def send_or_close(self, message: Any, **kw: Any) -> bool:
        if self.conn is None:
            return False
        return await self.conn.send_or_close(message, **kw)

    # -- sending ---------------------------------------------------------------------------

    async def send(
        self, message: Any, *, timeout: float | None = None, meant: Any = None, **kw: Any
    ) -> None:
        """Send ``message``; ``meant``: the one the exchange keeps, if what goes on the wire
        differs (ring check's offer garbled on the way)."""
        if not self._desk.on:
            assert self.conn is not None
            await self.conn.send(message, timeout=timeout, **kw)
            return
        exchange = self._sent(message if meant is None else meant)
        if meant is not None and exchange is not None:
            # ring check's garbled offer: the program must meet it, so we do not ask the
            # table about it before our own timeout (its answer, or its check, comes first).
            exchange.patient = True
        if self.conn is None and exchange is not None and not exchange.witnessed:
            # No link to send it on: the table carries it, or (refused) it is as closed.
            if not await self._desk.ask(exchange):
                raise trio.ClosedResourceError("the table would not witness it")
            return
        if exchange is not None and exchange.witnessed:
            await self._move(exchange, message)
            return
        assert self.conn is not None
        await self.conn.send(message, timeout=timeout, **kw)

    async def send_together(self, *messages: Any, timeout: float | None = None) -> None:
        await self._send_all(messages, timeout, together=True)

    async def send_each(self, *messages: Any, timeout: float | None = None) -> None:
        await self._send_all(messages, timeout, together=False)

    async def _send_all(self, messages: Any, timeout: float | None, *, together: bool) -> None:
        exchanges = [self._sent(message) for message in messages] if self._desk.on else []
        if any(e is not None and e.witnessed for e in exchanges):
            for exchange, message in zip(exchanges, messages, strict=True):
                assert exchange is not None
                await self._move(exchange, message)
            return
        assert self.conn is not None
        send = self.conn.send_together if together else self.conn.send_each
        await send(*messages, timeout=timeout)

    def _sent(self, message: Any) -> Exchange | None:
        """Follow the exchange by what we send; the exchange it belongs to."""
        now = trio.current_time()
        if isinstance(message, Offer) and message.seq is not None and self._other is not None:
            self.current = self._desk.begin(Exchange(Role.OFFERER, self._other, message))
            self.awaiting, self._since = ANSWER, now
            return self.current
        if isinstance(message, YourTurn):
            self.current, self.awaiting = None, None
            return None
        exchange = self.current
        if exchange is None:
            return None
        if isinstance(message, Pick):
            exchange.pick = message
            self.awaiting, self._since = CARD, now
        elif isinstance(message, Reply) and self._role is Role.PICKER:
            exchange.answer = message.result if message.result in ("ok", "out") else None
            exchange.ack = message.ack
        elif isinstance(message, Reply) and message.ok and message.card is not None:
            exchange.card, exchange.salt = message.card, message.salt
            self.awaiting = None
        return exchange

    async def _move(self, exchange: Exchange, message: Any) -> None:
        """What we just sent (``_sent`` noted it in the exchange), as our move."""
        if isinstance(message, Offer):
            kind = OFFER
        elif isinstance(message, Pick):
            kind = PICK
        else:
            kind = ANSWER if self._role is Role.PICKER else CARD
        move = exchange.move(kind)
        if move is not None:  # else nothing the table takes (an error reply)
            await self._desk.move(move)

    # -- receiving ---------------------------------------------------------------------------

    async def receive(self, *, timeout: float | None = None) -> Any:
        if not self._desk.on:
            assert self.conn is not None
            return await self.conn.receive(timeout=timeout)
        exchange = self.current
        if exchange is not None and exchange.witnessed and self.awaiting is not None:
            return await self.from_table(exchange)
        assert self.conn is not None
        wait = self.conn.timeout if timeout is None else timeout
        if exchange is None or self.awaiting is None or not self._desk.may_ask(exchange):
            while True:
                event = await self.conn.receive(timeout=timeout)
                if not (isinstance(event, Answered) and exchange is not None
                        and exchange.witnessed):  # fmt: skip
                    return self._got(event)
                # A reply that came by the link after its exchange went through the table.
        now = trio.current_time()
        after = self._desk.witness_after
        if exchange.patient and self.conn.timeout is not None:
            after = max(after, self.conn.timeout)
        ask_at = self._since + after
        # One cancel scope, ours, rather than the link's and ours: its deadline is the
        # caller's wait or our time to ask, whichever comes first, and a notice about the
        # exchange cancels it too (``Witnessing.noticed``): a handoff waits on one scope.
        closed = False
        with trio.CancelScope(deadline=min(now + (wait or math.inf), ask_at)) as scope:
            exchange.waiting = scope
            try:
                while True:
                    try:
                        event = await self.conn.receive(timeout=math.inf)
                    except RemoteProtocolError:
                        event = Closed()  # a reply we cannot read: this link is done with
                    if isinstance(event, Invalid) and self.awaiting in (ANSWER, CARD):
                        continue  # not the reply, and not one we can answer: wait on
                    if not isinstance(event, Closed):
                        return self._got(event)
                    closed = True  # no answer will come this way: the table, at once
                    break
            finally:
                exchange.waiting = None
        if exchange.latest is not None and exchange.witnessed:
            return await self.from_table(exchange)  # the neighbour asked the table
        if closed:
            if not await self._desk.ask(exchange):
                return self._got(Closed())
            return await self.from_table(exchange)
        # The caller's own, shorter wait: it goes on waiting. (Its deadline counts from a
        # moment before our send, so one that ends with ours is ours: asked.)
        if trio.current_time() < ask_at - CLOCK_SLACK or not await self._desk.ask(exchange):
            raise trio.TooSlowError
        return await self.from_table(exchange)

    async def from_table(self, exchange: Exchange) -> Any:
        """The event the table's notices bring for what we await; ``Closed`` if the game
        ends first (the table named someone)."""
        game_over = self._desk.game_over
        while True:
            # Each notice is the whole exchange as it stands: the latest answers all we
            # may still await (an ok and a pick can come in one, when both asked at once).
            event = None if exchange.latest is None else self._event(exchange, exchange.latest)
            if event is not None:
                return self._got(event)
            arrived = exchange.arrived = trio.Event()
            with trio.move_on_after(NOTICE_WAIT):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_wait_then_cancel, arrived, nursery.cancel_scope)
                    if game_over is not None:
                        nursery.start_soon(_wait_then_cancel, game_over, nursery.cancel_scope)
            if game_over is not None and game_over.is_set():
                return Closed()
            if not arrived.is_set():
                raise trio.TooSlowError

    def _event(self, exchange: Exchange, notice: Witnessed) -> Any:
        """The notice as the event we await, or None if it is not that yet."""
        if self.awaiting == ANSWER and notice.answer is not None:
            reply = Reply(result=notice.answer, ack=notice.ack)  # type: ignore[arg-type]
            return Answered(exchange.offer, reply)
        if self.awaiting == PICK and notice.pick is not None:
            return Pick(card_num=notice.pick.card_num, mac=notice.pick.mac)
        if self.awaiting == CARD and notice.card is not None and exchange.pick is not None:
            reply = Reply(result="ok", card=notice.card, salt=notice.salt)
            return Answered(exchange.pick, reply)
        return None

    def _got(self, event: Any) -> Any:
        """Follow the exchange by what we receive."""
        now = trio.current_time()
        exchange = self.current
        if isinstance(event, Offer) and event.seq is not None and event.sender:
            known = self._desk.exchanges.get(event.seq)
            if known is not None and known.witnessed and known.other == event.sender:
                # It came late, by the link, after the table had it done: not a new turn.
                return Invalid(f"exchange {event.seq} went through the table")
            self._other = event.sender
            self.current = self._desk.begin(Exchange(Role.PICKER, event.sender, event))
            self.awaiting = None
        elif isinstance(event, YourTurn):
            self.current, self.awaiting = None, None
        elif isinstance(event, Answered) and exchange is not None:
            if isinstance(event.request, Offer):
                exchange.answer, exchange.ack = event.reply.result, event.reply.ack
                picking = event.reply.ok and exchange.offer.num_cards > 0
                self.awaiting, self._since = (PICK, now) if picking else (None, now)
            elif isinstance(event.request, Pick):
                if event.reply.ok:
                    exchange.card, exchange.salt = event.reply.card, event.reply.salt
                self.awaiting = None
        elif isinstance(event, Pick) and exchange is not None:
            exchange.pick = event
            self.awaiting = None
        return event


async def _wait_then_cancel(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
