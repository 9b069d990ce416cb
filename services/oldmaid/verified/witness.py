"""The table as witness of a verified game's exchanges (protocol 14.6, "The table as witness").

With macs alone, a quarrel about what passed on one connection is one side's
word against the other's: a receiver that never answers, an answer without
its ack, a card that opens nothing, a pick that never comes. A player that
cannot finish an exchange directly asks the table to witness it (``ask``);
from then on every move of that exchange goes through the table (``move``),
which knows whose move it is and names the player that does not make it in
time (``overdue``) or makes one only it could have written and that is
wrong. Each change is a ``Witnessed`` notice for both players.

Pure: no I/O, no clock. The Trio side (``VerifiedGame``) sends the notices
and keeps the one deadline of each open exchange.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from ring.oldmaid import exchanges
from ring.oldmaid.cards import Card
from ring.oldmaid.messages import Move, OfferSeen, PickSeen, Witness, Witnessed
from services.oldmaid.verified.entries import Lie
from services.oldmaid.verified.ledger import Ledger

# How long the player that owes a move of a witnessed exchange has to make it.
MOVE_TIMEOUT = 2.0
KEPT = 8  # exchanges done, remembered

OFFER, ANSWER, PICK, CARD, DONE = "offer", "answer", "pick", "card", "done"
_WHAT = {
    OFFER: "offer through the table",
    ANSWER: "answer the offer",
    PICK: "pick from the offer",
    CARD: "give the picked card",
}


class Refused(Exception):
    """A witness request or move the table cannot take: the error reply's words."""


@dataclass
class Exchange:
    """One witnessed exchange, as far as it has gone."""

    offer: OfferSeen  # while the offer is owed (OFFER): as its receiver brought it
    offerer: str
    receiver: str
    asker: str
    move: str  # OFFER, ANSWER, PICK, CARD or DONE: the move owed next
    step: int = 1
    answer: str | None = None  # "ok" or "out"
    ack: str | None = None
    pick: PickSeen | None = None
    card: Card | None = None
    salt: str | None = None

    @property
    def seq(self) -> int:
        return self.offer.seq

    @property
    def owes(self) -> str | None:
        return {
            OFFER: self.offerer, ANSWER: self.receiver, PICK: self.receiver, CARD: self.offerer
        }.get(self.move)

    def notice(self) -> Witnessed:
        return Witnessed(
            seq=self.seq,
            step=self.step,
            offerer=self.offerer,
            receiver=self.receiver,
            offer=self.offer,
            owes=self.owes,
            move=self.move,
            answer=self.answer,
            ack=self.ack,
            pick=self.pick,
            card=self.card,
            salt=self.salt,
        )


class WitnessDesk:
    """The witnessed exchanges of one verified game.

    ``seats`` in order (the turn goes to the next seat in); ``secrets`` every
    player's; the ``ledger`` says which exchanges are judged (and spent);
    ``out`` is asked for the players the table counts out.
    """

    def __init__(
        self,
        seats: Sequence[str],
        secrets: Mapping[str, str],
        ledger: Ledger,
        out: Callable[[], Collection[str]],
    ) -> None:
        self._seats = tuple(seats)
        self._secrets = dict(secrets)
        self._ledger = ledger
        self._out = out
        self.open: dict[int, Exchange] = {}  # by seq: one exchange is current at a time
        # The last ones done: asked about again (a player whose wait ran out as the last
        # notice reached it), the table says how they ended rather than start them anew.
        self.done: collections.OrderedDict[int, Exchange] = collections.OrderedDict()

    # -- asking ------------------------------------------------------------------

    def ask(self, asker: str, request: Witness) -> tuple[Exchange, Lie | None]:
        """Witness ``asker``'s exchange with ``request.to`` from where it stands: the
        exchange (its notice goes to both), and the lie what the asker brings proves (an
        ``out`` with the receiver's ack while the table counts it in). ``Refused`` if the
        table cannot check it."""
        offer, other = request.offer, request.to
        if other == asker or other not in self._secrets:
            raise Refused(f"{other!r} is not another player of this game")
        if offer.sender == asker:
            offerer, receiver = asker, other
        elif offer.sender == other:
            offerer, receiver = other, asker
        else:
            raise Refused(f"the offer is from {offer.sender!r}: neither you nor {other}")
        ended = self.done.get(offer.seq)
        if ended is not None and (ended.offerer, ended.receiver) == (offerer, receiver):
            if not exchanges.same(ended.offer.mac, offer.mac):
                raise Refused(f"exchange {offer.seq} went through the table with another offer")
            return ended, None  # its last notice, again
        self._check_offer(offer, offerer, receiver)
        current = self.open.get(offer.seq)
        if current is not None:
            if (current.offerer, current.receiver) != (offerer, receiver):
                raise Refused(f"exchange {offer.seq} is witnessed between other players")
            before = current.move
            self._carry(current, asker, request)
            if current.move != before:
                current.step += 1
            return current, None
        exchange = Exchange(offer, offerer, receiver, asker, ANSWER)
        lie = self._false_out(exchange, asker, request)
        if lie is not None:
            self._close(exchange)
            return exchange, lie
        self._carry(exchange, asker, request)
        if exchange.move == DONE:
            raise Refused("nothing is owed in this exchange: the receiver's ack shows it took it")
        if asker == receiver and exchange.move != CARD:
            raise Refused("ask with your pick: the offerer owes you a card once you have picked")
        self.open[offer.seq] = exchange
        return exchange, None

    def check(self, receiver: str, offer: OfferSeen) -> Exchange | None:
        """A receiver's check of an offer as it came (protocol 14.6, "Checking an offer").
        None: it carries its offerer's mac, take it. Else ``Refused``; and if it could be a
        turn of this game (an exchange not judged yet, to the next player in after its
        offerer), the offerer owes it through the table (the exchange returned: its notice
        goes to both), and is named if it does not bring it while it holds the turn."""
        offerer = offer.sender
        if offerer == receiver or offerer not in self._secrets:
            raise Refused(f"the offer's from {offerer!r} is not another player of this game")
        bad = self._bad_mac(offer, offerer, receiver)
        if bad is None:
            # Its offerer's own: take it. Whether it is a turn is the ledger's to judge from
            # the reports (a second turn names its giver), not the table's count at this
            # moment, which may lag what the players know (an out not yet counted).
            return None
        # A bad mac: the offerer owes it through the table only if it could be a turn; the
        # check is its receiver's word (it could replay an old offer), so no one is named.
        try:
            self._may_be_turn(offer.seq, offerer, receiver)
        except Refused as exc:
            raise Refused(f"{bad}; {exc}") from None
        if offer.seq in self.open or offer.seq in self.done:
            raise Refused(f"{bad}; exchange {offer.seq} goes through the table already")
        exchange = Exchange(offer, offerer, receiver, receiver, OFFER)
        self.open[offer.seq] = exchange
        return exchange

    def holds_turn(self, exchange: Exchange) -> bool | None:
        """Whether the ledger shows the offerer of ``exchange`` holding its turn (it took the
        exchange before, or drew the last card): None while its reports may still show it."""
        ledger = self._ledger
        if ledger.seq < exchange.seq - 1:
            return None
        return ledger.seq == exchange.seq - 1 and ledger.holder == exchange.offerer

    def _false_out(self, exchange: Exchange, asker: str, request: Witness) -> Lie | None:
        """An ``out`` the offerer brings: if its ack is the receiver's and the table counts
        the receiver in, that is the lie; else (no ack of its) the receiver answers again."""
        answer = request.answer
        if answer is None or answer.result != "out" or asker != exchange.offerer:
            return None
        secret = self._secrets[exchange.receiver]
        if not exchanges.same(answer.ack, exchanges.out_ack(secret, exchange.offerer)):
            return None
        return self._take_answer(exchange, "out", answer.ack)

    def _bad_mac(self, offer: OfferSeen, offerer: str, receiver: str) -> str | None:
        """Why ``offer`` is not its offerer's own word to ``receiver``; None if it is."""
        mac = exchanges.offer_mac(
            self._secrets[offerer], seq=offer.seq, sender=offerer, to=receiver,
            num_cards=offer.num_cards, hashes=offer.hashes,
        )  # fmt: skip
        if not exchanges.same(mac, offer.mac):
            return f"the offer does not carry {offerer}'s mac of an offer to {receiver}"
        if len(offer.hashes) != offer.num_cards:
            return f"the offer has {len(offer.hashes)} hashes for {offer.num_cards} cards"
        return None

    def _check_offer(self, offer: OfferSeen, offerer: str, receiver: str) -> None:
        bad = self._bad_mac(offer, offerer, receiver)
        if bad is not None:
            raise Refused(bad)
        self._may_be_turn(offer.seq, offerer, receiver)

    def _may_be_turn(self, seq: int, offerer: str, receiver: str) -> None:
        # Whether the offerer held the turn is the ledger's to judge, from the reports, as
        # for any exchange (a second turn names its giver): its reports may still be on
        # their way. An exchange it has judged already is spent.
        if seq <= self._ledger.seq:
            raise Refused(f"exchange {seq} is judged already")
        following = self.next_in(offerer)
        if receiver != following:
            raise Refused(f"{receiver} is not the next player in after {offerer} ({following} is)")

    def next_in(self, nick: str) -> str | None:
        """The next player in after ``nick`` (the turn's way), the table's count of who is
        out; a player that went out still offers its last pass to it."""
        out = set(self._out())
        seat = self._seats.index(nick)
        for step in range(1, len(self._seats)):
            other = self._seats[(seat + step) % len(self._seats)]
            if other not in out:
                return other
        return None

    def _carry(self, exchange: Exchange, asker: str, request: Witness) -> None:
        """What the asker brings: the receiver's ack (either of them may have it: the
        offerer in the receiver's ok, the receiver its own), and the receiver's pick."""
        if exchange.move == OFFER:
            if asker != exchange.offerer:
                raise Refused(f"exchange {exchange.seq} waits for {exchange.offerer}'s offer")
            exchange.offer, exchange.move = request.offer, ANSWER  # checked by ask
        if request.ack is not None and exchange.move == ANSWER:
            try:
                self._take_answer(exchange, "ok", request.ack)
            except Refused:
                if asker != exchange.offerer:
                    raise  # the receiver's own ack: its mistake
                # The offerer cannot check the ack its receiver sent: one that is not the
                # receiver's leaves the receiver owing its answer, through the table.
        if request.pick is not None and exchange.move in (ANSWER, PICK):
            if asker != exchange.receiver:
                raise Refused("only the receiver brings a pick")
            if exchange.move == ANSWER:  # it picked, so it took the offer
                exchange.answer, exchange.move = "ok", PICK
            self._take_pick(exchange, request.pick)

    # -- moving ------------------------------------------------------------------

    def move(self, mover: str, request: Move) -> tuple[Exchange, Lie | None]:
        """``mover``'s move in witnessed exchange ``request.seq``: the exchange after it,
        and the lie it proves, if any. ``Refused`` for a move the table cannot take."""
        exchange = self.open.get(request.seq)
        if exchange is None or mover not in (exchange.offerer, exchange.receiver):
            raise Refused(f"you have no witnessed exchange {request.seq}")
        if exchange.owes != mover:
            raise Refused(f"the move in exchange {request.seq} is not yours ({exchange.move})")
        lie = None
        if exchange.move == OFFER:
            if request.offer is None:
                raise Refused("you owe your offer: offer {from, seq, num_cards, hashes, mac}")
            offer = request.offer
            if offer.sender != mover or offer.seq != exchange.seq:
                raise Refused(f"that is not an offer of yours numbered {exchange.seq}")
            self._check_offer(offer, mover, exchange.receiver)
            exchange.offer, exchange.move = offer, ANSWER
        elif exchange.move == ANSWER:
            if request.answer is None:
                raise Refused("you owe your answer to the offer: answer {result, ack}")
            lie = self._take_answer(exchange, request.answer.result, request.answer.ack)
        elif exchange.move == PICK:
            if request.pick is None:
                raise Refused("you owe your pick: pick {card_num, mac}")
            self._take_pick(exchange, request.pick)
        else:
            lie = self._take_card(exchange, request)
        exchange.step += 1
        if exchange.move == DONE or lie is not None:
            self._close(exchange)
        return exchange, lie

    def _close(self, exchange: Exchange) -> None:
        self.open.pop(exchange.seq, None)
        self.done[exchange.seq] = exchange
        while len(self.done) > KEPT:
            self.done.popitem(last=False)

    def _take_answer(self, exchange: Exchange, result: str, ack: str) -> Lie | None:
        secret = self._secrets[exchange.receiver]
        if result == "ok":
            if not exchanges.same(ack, exchanges.ack_mac(secret, exchange.offer.mac)):
                raise Refused(f"that is not {exchange.receiver}'s ack of this offer")
            exchange.answer, exchange.ack = "ok", ack
            exchange.move = PICK if exchange.offer.num_cards else DONE
            return None
        if not exchanges.same(ack, exchanges.out_ack(secret, exchange.offerer)):
            raise Refused(f"that is not {exchange.receiver}'s out ack to {exchange.offerer}")
        exchange.answer, exchange.ack, exchange.move = "out", ack, DONE
        if exchange.receiver in self._out():
            return None
        return Lie(
            "false_out",
            f"{exchange.receiver} answered {exchange.offerer}'s witnessed offer (exchange "
            f"{exchange.seq}) with out, and the table has not counted it out",
            exchange.receiver,
        )

    def _take_pick(self, exchange: Exchange, pick: PickSeen) -> None:
        if not 0 <= pick.card_num < exchange.offer.num_cards:
            raise Refused(f"card_num {pick.card_num} is not a position of an offer of "
                          f"{exchange.offer.num_cards} cards (0 to num_cards - 1)")  # fmt: skip
        mac = exchanges.pick_mac(
            self._secrets[exchange.receiver], picker=exchange.receiver,
            offerer=exchange.offerer, seq=exchange.seq, card_num=pick.card_num,
        )  # fmt: skip
        if not exchanges.same(mac, pick.mac):
            raise Refused(f"that pick does not carry {exchange.receiver}'s mac")
        exchange.pick, exchange.move = pick, CARD

    def _take_card(self, exchange: Exchange, request: Move) -> Lie | None:
        if request.card is None or request.salt is None:
            raise Refused("you owe the picked card: card [value, suit] and its salt")
        assert exchange.pick is not None
        card: Card = request.card  # type: ignore[assignment]  # parsed by Move
        exchange.card, exchange.salt, exchange.move = card, request.salt, DONE
        position = exchange.pick.card_num
        if exchanges.opens(exchange.offer.hashes, position, card, request.salt):
            return None
        return Lie(
            "wrong_card",
            f"{exchange.offerer} gave {exchange.receiver} the {card} for card {position} of "
            f"its witnessed offer (exchange {exchange.seq}), which does not open that position",
            exchange.offerer,
        )

    # -- time ----------------------------------------------------------------------

    def undecided(self, seq: int, step: int) -> bool:
        """Whether exchange ``seq``, its offer owed since ``step``, waits for the reports
        that show whether its offerer held the turn (``overdue`` names no one yet)."""
        exchange = self.open.get(seq)
        return (
            exchange is not None
            and exchange.step == step
            and exchange.move == OFFER
            and self.holds_turn(exchange) is None
        )

    def drop(self, seq: int) -> None:
        """Forget an exchange whose owed offer no report ever showed to be a turn."""
        self.open.pop(seq, None)

    def overdue(self, seq: int, step: int) -> Lie | None:
        """The lie of a witnessed exchange whose owed move was not made in time: None if
        it moved on since ``step`` (or is over)."""
        exchange = self.open.get(seq)
        if exchange is None or exchange.step != step or exchange.owes is None:
            return None
        if exchange.move == OFFER and not self.holds_turn(exchange):
            # Only its receiver's word says it offered: named only if the reports show it
            # held the turn (``VerifiedGame`` asks again while they may still show it).
            if self.holds_turn(exchange) is False:
                self.open.pop(seq, None)
            return None
        self._close(exchange)
        return Lie(
            "no_answer",
            f"{exchange.owes} did not {_WHAT[exchange.move]} (exchange {exchange.seq}, "
            f"witnessed for {exchange.asker}) within {MOVE_TIMEOUT:g} s of the table's notice",
            exchange.owes,
        )
