"""Finding the next player who is in (docs/protocols/oldmaid.md 7.7): the turn holder's walk.

Seat after seat to the left, never ourselves: a seat that said ``out`` to us
before, or that a status reply of the table listed as out, is skipped without
a word (being out is final); any other is asked (``Links.ask``: dialled if
need be, and skipped as gone or silent where the table lists it as out). The
first ``ok`` takes the turn. A first ``out`` from a seat is checked with the
table before the walk goes on (``Suspicion.said_out``): that status also lists
the seats beyond that are out, so late in a game one answer spares the walk
a dial and a question for each of them.
"""

from __future__ import annotations

import time

import trio

from ring.games.events import EventLog
from ring.oldmaid.links import OUT_GRACE, Links
from ring.oldmaid.messages import Offer, Reply, YourTurn
from ring.oldmaid.suspicion import Suspicion
from ring.oldmaid.turns import GONE, SILENT, PeerError, Turns

# What a draw turn the table hands on stands in for: its receiver's ok (14.6).
HANDED_ON = Reply(result="ok", message="the table handed the draw turn on (14.6)")
# The seat that took the turn, when it was asked (``time.monotonic()``), and its ``ok``.
Taker = tuple[int, float, Reply]


class Walk:
    """One peer's walk round the ring, over its turn machine, links and checks."""

    def __init__(self, turns: Turns, links: Links, suspicion: Suspicion, log: EventLog) -> None:
        self._turns = turns
        self._links = links
        self._suspicion = suspicion
        self._log = log

    async def find_taker(self, request: YourTurn | Offer) -> Taker | None:
        """Ask seat after seat to take ``request``; None if no other player is in.

        In a verified game each seat gets the request made out to it (14.6).
        """
        turns, log = self._turns, self._log
        phase = "draw" if isinstance(request, YourTurn) else "offer"
        reporting = self._links.reporting
        for seat in turns.seats_to_ask():
            to = turns.nick_of(seat)
            if seat in turns.said_out:  # it told us so before: out for good
                log.write("skip", over=to, phase=phase, known=True)
                continue
            if self._suspicion.listed_out(to):  # the table's word: out for good
                log.write("skip", over=to, phase=phase, listed=True)
                continue
            asked = time.monotonic()
            if isinstance(request, YourTurn):
                sent: YourTurn | Offer = reporting.your_turn_to(request, to)
            else:
                sent = reporting.offer_to(request, to)
            if isinstance(sent, YourTurn) and self._links.witnessing.on:
                reply = await self._hand_draw_turn(seat, sent)
            else:
                reply = await self._links.ask(seat, sent)
            if (
                isinstance(sent, Offer)
                and reply is not GONE
                and reply is not SILENT
                and reply.result == "out"
                and self._links.witnessing.on
                and await self._suspicion.counted_in(seat)
            ):
                # An out the table does not count (its ack may be missing or not its
                # own, which we cannot tell): the receiver answers again through the
                # table, which names it if it says out again, or never answers (14.6).
                reply = await self._links.answer_again(seat) or reply
            if turns.took(seat, request, reply):
                return seat, asked, reply
            if reply is not GONE and reply is not SILENT:
                turns.said_out.add(seat)
                # Checked before the next seat is asked: the status also lists the
                # seats after this one that are out, skipped then without an ask.
                await self._suspicion.said_out(seat, ack=reply.ack)
            self._log_skip(seat, reply, phase)
        return None

    async def _hand_draw_turn(self, seat: int, sent: YourTurn) -> Reply:
        """Our draw turn to ``seat`` in a witnessed game: its ``ok``, or ``HANDED_ON``.
        Whatever keeps the receiver from answering ``ok`` (silence, an error, a closed or
        undiallable link, an ``out`` while the table counts it in), the table hands the
        turn on (protocol 14.6, "The draw turn"): we never give up on it. An accusation
        is proved, and goes on up."""
        to = self._turns.nick_of(seat)
        try:
            reply = await self._ask_handing(seat, sent)
        except PeerError as exc:
            if exc.rule is not None:
                raise
            return await self._handed_on(seat, str(exc))
        if reply is HANDED_ON:  # a draw_turn notice, or the turn back, before an answer
            return await self._handed_on(seat, "no answer before the turn moved on")
        if reply.result == "error":
            return await self._handed_on(seat, f"{to} refused it: {reply.message}")
        if reply.result == "out" and await self._suspicion.counted_in(seat):
            # No one is out in the draw phase. An out with an ack goes to the table,
            # which names it if the ack is its own (false_out); one without proves nothing.
            if reply.ack is not None:
                await self._suspicion.report_out(seat, reply.ack)
            return await self._handed_on(seat, f"{to} answered out, and is in")
        return reply

    async def _ask_handing(self, seat: int, sent: YourTurn) -> Reply:
        """Hand ``seat`` our draw turn: its answer, or ``HANDED_ON`` if the table's
        draw_turn notice for it, or a turn reaching us, comes first
        (``Witnessing.handing``): dialling and waiting alike end there."""
        handing = self._links.witnessing.handing
        to = self._turns.nick_of(seat)
        with trio.CancelScope() as scope:
            handing[to] = scope
            try:
                return await self._links.ask(seat, sent)
            finally:
                if handing.get(to) is scope:
                    del handing[to]
        return HANDED_ON

    async def _handed_on(self, seat: int, why: str) -> Reply:
        """Our turn is over: the table hands the draw turn to ``seat``, or did, or it drew.
        The link to it had a request unanswered: the next request goes on a fresh one."""
        self._log.write("handed_on", to=self._turns.nick_of(seat), why=why)
        await self._links.retire(seat)
        return HANDED_ON

    def _log_skip(self, seat: int, reply: Reply, phase: str) -> None:
        over = self._turns.nick_of(seat)
        if reply is SILENT:
            self._log.write("skip", over=over, phase=phase, silent=True, waited=OUT_GRACE)
        elif reply is GONE:
            self._log.write("skip", over=over, phase=phase, **{self._turns.gone[seat]: True})
        else:
            self._log.write("skip", over=over, phase=phase)
