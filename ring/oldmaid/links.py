"""The Old Maid peer's connections to the other players, and the exchanges on them.

- Right: the peer listens; whoever holds the turn to its right dials in, or a
  seat further right when the players between are out. ``ring.oldmaid.inbound``
  reads each such connection (``Links.inbound``).
- Left: one link per seat the peer asks, dialled when first needed (the left
  neighbour at once), with retries: older clients listen only after their
  own join reply (protocol 13.1).
- The exchanges: a turn request and its reply under the peer timeout, where
  an out seat that left or fell silent is skipped (7.7), and a second pick
  for an offer already served is caught (``second_pick``); the pick that
  follows an accepted offer is in ``ring.oldmaid.picks``.

The links know the players through the turn machine (``Turns``: the seats,
and which are gone); they ask the table who is out (``TableSide``).
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any, Protocol

import msgspec
import trio

from ring.games.events import EventLog
from ring.oldmaid.inbound import Inbound, InboundConfig, wrapped
from ring.oldmaid.messages import Offer, Reply, Status, YourTurn, error
from ring.oldmaid.proofs import Identity
from ring.oldmaid.protocol import (
    Answered,
    Closed,
    ExtraPick,
    Link,
    Role,
    request_name,
)
from ring.oldmaid.reporting import Reporting
from ring.oldmaid.table_side import NETWORK_ERRORS, TableSide
from ring.oldmaid.turns import (
    GONE,
    SILENT,
    PeerError,
    Turns,
    accusation,
    fault,
)
from ring.oldmaid.witnessing import Witnessing
from ring.wire.net import dial
from ring.wire.transport import Connection

# Dialling a seat that refuses: the first retry after this long, each next
# one after twice as long, up to DIAL_RETRY_MAX, until the peer timeout.
DIAL_RETRY_FIRST = 0.01
DIAL_RETRY_MAX = 0.2
# A seat that has not answered a turn request within this long is looked up
# in the table's status (and again every OUT_GRACE after): if the table lists
# it as out, it is skipped as if it had answered "out". Some older clients,
# once out, keep their listener open but never accept another connection, or
# accept and never answer; the kernel completes the handshake for them, so
# only silence tells. A seat still in keeps the whole peer timeout. Our own
# peers answer within milliseconds, so a healthy ring never waits this long.
OUT_GRACE = 0.2


class LinkConfig(InboundConfig, Protocol):
    """The settings the links read, both sides; ``PeerConfig`` has them all."""

    witness_after: float | None
    pick_pause: float


class Links:
    """The peer's listener (``inbound``), its links to the seats it asks, and the
    exchanges on both.

    ``seated`` is set once the join reply has given the players; until then
    an inbound turn waits.
    """

    def __init__(
        self,
        config: LinkConfig,
        turns: Turns,
        table: TableSide,
        log: EventLog,
        *,
        seated: trio.Event,
    ) -> None:
        self._config = config
        self._turns = turns
        self._table = table
        self._log = log
        self.identity = Identity()  # our proofs, once seated (protocol 14.5)
        self.reporting = Reporting(turns, table)  # verified exchanges (protocol 14.6)
        # The table as witness of an exchange a neighbour leaves us waiting in (14.6).
        self.witnessing = Witnessing(turns, log, config.witness_after or config.timeout)
        self._links: dict[int, Connection] = {}
        self._answered: set[int] = set()  # seats whose link has carried a reply
        self.inbound = Inbound(
            config, turns, table, log, seated=seated, identity=self.identity,
            reporting=self.reporting, witnessing=self.witnessing,
        )  # fmt: skip

    async def aclose(self) -> None:
        for link in self._links.values():
            await link.aclose()
        self.witnessing.let_go()

    # -- the left side: connections we dial ------------------------------------

    def connection(self, seat: int) -> Connection:
        """The open link to ``seat``, which has just answered a request on it."""
        return self._links[seat]

    async def link_to(self, seat: int) -> Connection | None:
        """The open link to ``seat``, dialled if need be; None if the seat has left the game.

        Older clients start listening only after their join reply, so a
        refused dial is tried again, with a short backoff, until the peer
        timeout. A seat that cannot be reached but that the table lists as
        out has left after going out (allowed): it is skipped from then on.
        """
        if seat in self._turns.gone:
            return None
        link = self._links.get(seat)
        if link is not None and not getattr(link, "retired", False):
            return link
        if link is not None:  # its last exchange went through the table: a fresh one
            del self._links[seat]
            await link.aclose()
        timeout = self._config.timeout
        (host, port), nick = self._turns.players[seat]
        deadline = trio.current_time() + timeout
        delay = DIAL_RETRY_FIRST
        for attempt in itertools.count(1):
            try:
                remaining = max(deadline - trio.current_time(), 0.0)
                stream = await dial(host, port, timeout=remaining)
                break
            except (OSError, trio.TooSlowError) as exc:
                failure = exc
            if await self._left_the_game(seat):
                return None
            if self._table.game_over.is_set():  # e.g. aborted: that seat's player died
                raise PeerError(f"cannot reach {nick} at {host}:{port}, and the game has ended")
            if trio.current_time() + delay >= deadline:
                raise PeerError(
                    f"cannot reach {nick} at {host}:{port} within {timeout:g} s "
                    f"({attempt} attempts): {failure or 'timed out'}",
                    culprit=nick,
                    clause=f"could not be reached at {host}:{port} for {timeout:g} s "
                    f"({attempt} attempts)",
                ) from None
            await trio.sleep(delay)
            delay = min(2 * delay, DIAL_RETRY_MAX)
        if attempt > 1:
            self._log.write("dialled", to=nick, attempts=attempt)
        link = self.witnessing.wrap(
            Connection(wrapped(self._config, stream), Link(Role.OFFERER), timeout=timeout),
            Role.OFFERER,
            nick,
        )
        self._links[seat] = link
        return link

    async def _left_the_game(self, seat: int) -> bool:
        """Whether ``seat``, which failed us, is out by the table's status: then it is gone."""
        if not await self._listed_out(seat):
            return False
        await self._drop_seat(seat, "left")
        return True

    async def _listed_out(self, seat: int) -> bool:
        reply = await self._table.request(Status())
        return reply.ok and reply.out is not None and self._turns.nick_of(seat) in reply.out

    async def retire(self, seat: int) -> None:
        """Close our link to ``seat``: a request on it was never answered (a draw turn the
        table handed on, 14.6), so the next goes on a fresh one."""
        link = self._links.pop(seat, None)
        if link is not None:
            await link.aclose()

    async def _drop_seat(self, seat: int, why: str) -> None:
        """Skip ``seat`` from now on: it is out by the table and left (or fell silent)."""
        self._turns.drop(seat, why)
        link = self._links.pop(seat, None)
        if link is not None:
            await link.aclose()
        self._log.write("gone", nick=self._turns.nick_of(seat), why=why)

    # -- a turn request and its reply ------------------------------------------

    async def ask(self, seat: int, request: YourTurn | Offer) -> Reply:
        """Send one request to ``seat``; its reply, ``GONE``, ``SILENT``, or ``PeerError``.

        A link that closes instead of answering belongs to a player who left
        (skipped if the table lists it as out), or was closed unread by the
        listener (evicted at its connection cap while idle, or past its
        first-message timeout): a link that never carried a reply gets the
        request once more on a fresh connection.
        """
        nick = self._turns.nick_of(seat)
        proof = self.identity.proof_to(nick)
        if proof is not None:
            request = msgspec.structs.replace(request, proof=proof)
        for attempt in range(2):
            try:
                link = await self.link_to(seat)
            except PeerError:
                # Unreachable (its listener closed, or never answering a dial): in a
                # witnessed game the offer goes through the table, which names the
                # receiver if it does not answer there either (14.6).
                if not (self.witnessing.on and isinstance(request, Offer)):
                    raise
                link = self._links[seat] = self.witnessing.through_table(nick)
            if link is None:
                return GONE
            event = await self._exchange(link, request, seat)
            if event is SILENT:
                await self._drop_seat(seat, "silent")
                return SILENT
            if not isinstance(event, Closed):
                break
            self._links.pop(seat, None)
            await link.aclose()
            if await self._left_the_game(seat):
                return GONE
            if attempt or seat in self._answered:
                if not (self.witnessing.on and isinstance(request, Offer)):
                    raise fault(
                        nick,
                        f"closed the connection instead of answering {request_name(request)}",
                    )
                # A witnessed game: the offer again, through the table (14.6).
                link = self._links[seat] = self.witnessing.through_table(nick)
                event = await self._exchange(link, request, seat)
                break
        odd = not isinstance(event, Answered | ExtraPick | Closed)
        over = self.witnessing.game_over is not None and self.witnessing.game_over.is_set()
        refused = isinstance(event, Answered) and event.reply.result == "error" and not over
        met = isinstance(event, Answered) and event.reply.result != "out"
        stand_ins = self.reporting.stand_ins
        cards = isinstance(request, Offer) and request.num_cards
        if met and cards and stand_ins.garbles_offer_to(nick):
            stand_ins.garbled_offer_met()  # ring check's garbled offer was met: done
            exchange = getattr(link, "current", None)
            if event.reply.ok and not (exchange is not None and exchange.witnessed):
                # Taken directly, so unchecked: its check would have refused it (14.6).
                self._log.write("bad_mac_taken", to=nick)
        if (odd or refused) and self.witnessing.on and isinstance(request, Offer):
            # Not an answer (a request where its reply belongs), or a refusal (its check
            # with the table found the mac bad, it says): in a witnessed game the offer
            # goes through the table, on which the receiver answers or is named (14.6).
            self._links.pop(seat, None)
            await link.aclose()
            link = self._links[seat] = self.witnessing.through_table(nick)
            event = await self._exchange(link, request, seat)
        if isinstance(event, Answered):
            self._answered.add(seat)
            return event.reply
        if isinstance(event, ExtraPick):
            # This link is the seat's own listener, dialled by us: we know who picked.
            with contextlib.suppress(*NETWORK_ERRORS):
                await link.send(error("a second pick for an offer whose card was given"))
            raise accusation(
                nick,
                "second_pick",
                f"picked twice from one offer of {self._turns.nick}'s (card_num "
                f"{event.pick.card_num} after the card was given)",
                card_num=event.pick.card_num,
                **self.reporting.second_pick(nick, event.pick),
            )
        raise fault(nick, f"sent {event!r} instead of a reply")

    async def answer_again(self, seat: int) -> Reply | None:
        """The answer to our offer to ``seat`` through the table (``Witnessing``)."""
        link = self._links.get(seat)
        return None if link is None else await self.witnessing.answer_again(link)

    async def _exchange(self, link: Connection, request: YourTurn | Offer, seat: int) -> Any:
        """The event that answers ``request``: a reply, ``Closed``, ``SILENT``, or something odd.

        A seat still in has the whole peer timeout to answer; one that the
        table lists as out is skipped once it has been silent for OUT_GRACE
        after an offer.
        """
        timeout = self._config.timeout

        def too_slow() -> PeerError:
            clause = f"did not answer {request_name(request)} within {timeout:g} s"
            return fault(self._turns.nick_of(seat), clause)

        deadline = trio.current_time() + timeout
        # your_turn goes out while the deck still holds cards, and the table
        # counts no one out before it is empty: only an offer can find a seat out.
        grace = OUT_GRACE if isinstance(request, Offer) else timeout
        try:
            wire = self.reporting.on_the_wire(request, self._turns.nick_of(seat))
            if wire is request:
                await link.send(request)
            else:  # ring check's garbled offer: the link keeps the one we meant
                await link.send(wire, meant=request)
            while True:
                wait = min(grace, deadline - trio.current_time())
                try:
                    event = await link.receive(timeout=max(wait, 0.0))
                    if isinstance(event, ExtraPick) and self.reporting.repeats_served(
                        self._turns.nick_of(seat), event.pick
                    ):
                        await link.send(error("a copy of a pick already answered: ignored"))
                        continue
                    return event
                except trio.TooSlowError:
                    if trio.current_time() >= deadline:
                        raise too_slow() from None
                if await self._listed_out(seat):
                    return SILENT
        except trio.TooSlowError:
            raise too_slow() from None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return Closed()
