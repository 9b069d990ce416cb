"""The exchange that follows an accepted offer, from either side: the pick and its card.

The offerer (``serve_pick``) answers picks from the hand it offered until one
gets its card; the picker (``take_pick``) picks until the card comes, pausing
first for an offerer that reads one message a recv (protocol 13.2). A picker
that keeps picking outside the offer is accused (``bad_picks``, 5.9): the
offerer dialled it, so it knows who it is. The peer (``ring.oldmaid.peer``) owns
one ``Picks`` beside its links: the links carry the connection, the picks do the
exchange on it.
"""

from __future__ import annotations

import collections
import functools
from typing import Protocol

import trio

from ring.games.events import EventLog
from ring.oldmaid.cards import Card
from ring.oldmaid.messages import Offer, Pick, Reply, error
from ring.oldmaid.protocol import Answered, Closed, Invalid, RemoteProtocolError
from ring.oldmaid.reporting import Reporting
from ring.oldmaid.stand_ins import StandIns
from ring.oldmaid.table_side import TableSide
from ring.oldmaid.turns import MAX_BAD_PICKS, Turns, accusation, fault, wire
from ring.wire.transport import Connection

# The pause between ok and pick for an offerer that reads one message a recv
# grows with how slowly such offerers answer our picks (a loaded machine
# wakes their threads late): PICK_PAUSE_FACTOR times the slowest of the last
# PICK_SAMPLES answers, between the configured pause and PICK_PAUSE_MAX.
PICK_PAUSE_FACTOR = 3.0
PICK_PAUSE_MAX = 0.5
PICK_SAMPLES = 16


class PickConfig(Protocol):
    timeout: float
    pick_pause: float
    stand_ins: StandIns


class Picks:
    """The peer's pick exchanges, on whichever link an offer came by or went out on."""

    def __init__(
        self,
        config: PickConfig,
        turns: Turns,
        table: TableSide,
        log: EventLog,
        reporting: Reporting,
    ) -> None:
        self._config = config
        self._turns = turns
        self._table = table
        self._log = log
        self.reporting = reporting
        # How long older offerers took to answer our picks (see PICK_PAUSE_FACTOR).
        self.slow_answers: collections.deque[float] = collections.deque(maxlen=PICK_SAMPLES)

    async def serve_pick(self, link: Connection, seat: int, offered: int) -> None:
        """Answer ``seat``'s picks from the ``offered`` cards until one gets its card."""
        timeout = self._config.timeout
        nick = self._turns.nick_of(seat)
        bad: list[Pick] = []
        for _ in range(MAX_BAD_PICKS):
            try:
                event = await link.receive(timeout=timeout)
            except trio.TooSlowError:
                raise fault(nick, f"did not pick within {timeout:g} s") from None
            if isinstance(event, Pick):
                served = event
                cheat = self._config.stand_ins.serve_other  # ring check's cheating offerer
                if cheat and offered > 1 and 0 <= event.card_num < offered:
                    served = Pick(card_num=(event.card_num + 1) % offered, mac=event.mac)
                reply = self._turns.give(served, offered)
                if reply.ok:  # the position's salt, in a verified game (protocol 14.6)
                    position = offered - 1 if served.card_num == offered else served.card_num
                    reply.salt = self.reporting.salt(nick, position)
                await link.send(reply)
                if not reply.ok:
                    bad.append(event)
                    self._log.write("bad_pick", by=nick, card_num=event.card_num, num_cards=offered)
                    continue
                assert reply.card is not None
                signed = self.reporting.served(nick, event)
                self._log.write(
                    "gave",
                    to=nick,
                    card_num=event.card_num,
                    num_cards=offered,
                    card=wire(reply.card),
                    **signed,
                )
                return
            if isinstance(event, Invalid):
                await link.send(error(event.reason))
                continue
            if isinstance(event, Closed):
                raise fault(nick, "closed the connection instead of picking")
            raise fault(nick, f"sent {event!r} instead of a pick")
        if len(bad) == MAX_BAD_PICKS:
            card_nums = [pick.card_num for pick in bad]
            # In a verified game, the picks' macs prove who made them (14.6): the offer they
            # were made from (its num_cards too, the same) and each signed pick.
            evidence = {"num_cards": offered, "card_nums": card_nums}
            evidence.update(self.reporting.bad_picks(nick, bad))
            raise accusation(
                nick,
                "bad_picks",
                f"made {MAX_BAD_PICKS} bad picks in a row from an offer of {offered} cards "
                f"(card_num {', '.join(map(str, card_nums))})",
                **evidence,
            )
        raise fault(nick, f"made {MAX_BAD_PICKS} bad picks in a row")

    async def take_pick(
        self, link: Connection, offer: Offer, accepted: Reply
    ) -> tuple[int, Card, str | None] | None:
        """Accept an offer (``accepted``, our ``ok``) and pick until the card comes: its
        index, the card, and the salt that came with it (protocol 14.6).

        None if the offerer closed the link because the game is over. An
        offerer that may read one message a recv gets a pause before the
        pick, and how long it takes to answer is kept (see ``pick_pause``).
        """
        timeout = self._config.timeout
        card_num = self._turns.choose_pick(offer.num_cards)
        blame = functools.partial(self._table.offerer_fault, offer.sender)
        together = self._config.stand_ins.pick_with_ok  # ring check's hasty picker: one write
        if not together and not offer.stream:
            await link.send(accepted)
            # It may read one message per recv: ok and pick must not arrive together.
            await trio.sleep(self.pick_pause())
        for attempt in range(MAX_BAD_PICKS):
            # We accepted the offer, so the turn is ours once the card comes:
            # if it never does, nobody else will notice, so this is the end.
            try:
                pick = self.reporting.sign(Pick(card_num=card_num), offer)
                if attempt == 0 and together:
                    await link.send_together(accepted, pick)
                    self._log.write("ok_and_pick", stream=offer.stream, **{"from": offer.sender})
                elif attempt == 0 and offer.stream:
                    # It reads a stream: the pick goes right after the ok, in a write
                    # of its own, with nothing run between (its signature is ready).
                    await link.send_each(accepted, pick)
                else:
                    await link.send(pick)
                asked = trio.current_time()
                event = await link.receive()
                if not offer.stream:
                    self.slow_answers.append(trio.current_time() - asked)
            except trio.TooSlowError:
                nick = self._turns.nick
                raise await blame(f"did not answer {nick}'s pick within {timeout:g} s") from None
            except RemoteProtocolError as exc:
                # Not a reply we can read: the offerer's, on the link we took its offer by.
                raise await blame(f"answered the pick with something unreadable ({exc})") from None
            if isinstance(event, Closed):
                if await self._table.game_is_over():
                    return None
                raise await blame("closed the connection instead of giving the picked card")
            if not isinstance(event, Answered):
                raise await blame(f"sent {event!r} instead of the picked card")
            if event.reply.ok:
                assert event.reply.card is not None
                return card_num, event.reply.card, event.reply.salt
            self._log.write(
                "pick_refused",
                by=offer.sender,
                card_num=card_num,
                num_cards=offer.num_cards,
                message=event.reply.message,
            )
            card_num = self._turns.choose_pick(offer.num_cards)
        raise await blame(f"refused {MAX_BAD_PICKS} picks in a row")

    def pick_pause(self) -> float:
        """The pause between ``ok`` and ``pick`` for an offerer that reads one message a recv.

        The pause must outlast the moment its thread takes to wake up and read
        the ``ok``; on a loaded machine that moment grows, and so does the
        time it takes to answer a pick, which we can see. So the pause follows
        the slowest recent answer, never below the configured pause (the 2013
        clients' own 50 ms). Peers that say they read a stream get no pause.
        """
        slowest = max(self.slow_answers, default=0.0)
        return min(PICK_PAUSE_MAX, max(self._config.pick_pause, PICK_PAUSE_FACTOR * slowest))
