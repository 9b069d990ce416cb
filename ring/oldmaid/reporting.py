"""A peer's side of verified exchanges (protocol 14.6): commit, prove, check and report.

When the join reply says ``"report": true`` (every player of the game joined
with ``verify``), this peer

- numbers and commits each offer it makes (``offer_to``: ``seq``, ``hashes``,
  ``mac``) and gives the picked position's ``salt`` with the card (``salt``);
- acks each offer it takes (``ack``) and says ``out`` with an ack (``out_ack``),
  and authenticates each draw turn it hands on (``your_turn_to``);
- checks a picked card against the commitment before it takes it
  (``check_card``: a card that opens another position, or none, is refused and
  the offerer accused of ``wrong_card``);
- reports both sides of each exchange to the table (``received``, ``gave``),
  posted without waiting for the reply, before anything else it tells the
  table about its hand (its discards, going out), so that the table's ledger
  sees them in the order they happened.

In any other game every method leaves the messages as they are.
"""

from __future__ import annotations

import msgspec

from ring.oldmaid import exchanges
from ring.oldmaid.cards import Card
from ring.oldmaid.messages import Gave, Offer, Pick, PickSeen, Received, Reply, YourTurn
from ring.oldmaid.stand_ins import StandIns
from ring.oldmaid.table_side import TableSide
from ring.oldmaid.turns import PeerError, Turns, accusation, wire


class Reporting:
    """One peer's commitments and reports, over its turn machine and table connection."""

    def __init__(self, turns: Turns, table: TableSide) -> None:
        self._turns = turns
        self._table = table
        self.on = False
        self._secret = ""
        self.held_seq = 0  # the exchange that gave us the turn (0: we drew the last card)
        self._commitments: dict[str, exchanges.Commitment] = {}  # by receiver, this turn
        # The pick we served last to each receiver: (seq, card_num, mac), for the
        # evidence of a second pick (protocol 14.6).
        self._served: dict[str, tuple[int, int, str | None]] = {}
        # ring check's stand-ins (``StandIns.bad_mac_to``, in a witnessed game): an offer
        # garbled on the way (``on_the_wire``).
        self.stand_ins = StandIns()

    def take(self, secret: str | None, report: bool | None) -> None:
        """The join reply's ``secret`` and ``report`` (protocol 5.1)."""
        self.on = bool(report) and secret is not None
        self._secret = secret or ""

    # -- offering --------------------------------------------------------------

    def your_turn_to(self, request: YourTurn, to: str) -> YourTurn:
        if not self.on:
            return request
        mac = exchanges.turn_mac(self._secret, self._turns.nick, to)
        return YourTurn(sender=request.sender, proof=request.proof, mac=mac)

    def offer_to(self, offer: Offer, to: str) -> Offer:
        """``offer`` as sent to ``to``: committed to the hand as it is now."""
        if not self.on:
            return offer
        commitment = self._commitments.get(to)
        if commitment is None or commitment.seq != self.held_seq + 1:
            cards = self._turns.hand.cards if offer.num_cards else []
            commitment = exchanges.commit(
                self._secret, seq=self.held_seq + 1, sender=self._turns.nick, to=to, cards=cards
            )
            self._commitments[to] = commitment
        mac = commitment.mac
        return Offer(
            num_cards=offer.num_cards,
            sender=offer.sender,
            proof=offer.proof,
            stream=offer.stream,
            seq=commitment.seq,
            hashes=list(commitment.hashes),
            mac=mac,
        )

    def on_the_wire(self, request: YourTurn | Offer, to: str) -> YourTurn | Offer:
        """``request`` as it goes on the wire to ``to``: as it is, but for ring check's
        garbled offers of cards (``StandIns.bad_mac_to``), whose mac is wrong until one is
        refused (its check with the table refuses it; the offer we meant goes through the
        table)."""
        offer = isinstance(request, Offer) and request.num_cards
        if not (offer and isinstance(request, Offer) and self.stand_ins.garbles_offer_to(to)):
            return request
        assert request.mac is not None
        return msgspec.structs.replace(request, mac=format(int(request.mac, 16) ^ 1, "032x"))

    def salt(self, to: str, position: int) -> str | None:
        """The salt of the picked ``position`` of our offer to ``to``."""
        commitment = self._commitments.get(to)
        if not self.on or commitment is None or not 0 <= position < len(commitment.salts):
            return None
        return commitment.salt_of(position)

    def served(self, to: str, pick: Pick) -> dict[str, object]:
        """We gave ``to`` the card of ``pick``: kept, should it pick again. In a verified
        game, the exchange and the pick's mac, for the log (the offerer cannot check a
        pick's mac; a checker that knows every secret can)."""
        commitment = self._commitments.get(to)
        if not self.on or commitment is None:
            return {}
        self._served[to] = (commitment.seq, pick.card_num, pick.mac)
        return {"seq": commitment.seq, "mac": pick.mac}

    def repeats_served(self, by: str, again: Pick) -> bool:
        """Whether ``again`` is a copy of the pick of ``by``'s that we served, mac and all,
        in a verified game: a resend changes nothing, so we refuse it and play on; only
        two different signed picks prove a second pick (protocol 14.6)."""
        first = self._served.get(by)
        return (
            self.on
            and first is not None
            and first[1] == again.card_num
            and exchanges.same(first[2], again.mac)
        )

    def second_pick(self, by: str, again: Pick) -> dict[str, object]:
        """The evidence of a second pick from our offer to ``by``: both picks with their
        macs, where both are signed and differ (only the picker can have written them);
        else nothing, and the table has only our word."""
        first = self._served.get(by)
        if not self.on or first is None or again.mac is None or first[2] is None:
            return {}
        seq, card_num, mac = first
        if card_num == again.card_num:
            return {}  # the same pick twice proves nothing: we could have copied it
        return {"seq": seq, "picks": [[card_num, mac], [again.card_num, again.mac]]}

    def bad_picks(self, by: str, picks: list[Pick]) -> dict[str, object]:
        """The evidence of ``by``'s picks outside our offer to it: the offer, and each pick
        its mac signs (only the picker writes those macs: protocol 14.6); else nothing."""
        commitment = self._commitments.get(by)
        signed = [[pick.card_num, pick.mac] for pick in picks if pick.mac]
        if not self.on or commitment is None or not signed:
            return {}
        return {"seq": commitment.seq, "num_cards": len(commitment.hashes),
                "hashes": list(commitment.hashes), "mac": commitment.mac,
                "picks": signed}  # fmt: skip

    def sign(self, pick: Pick, offer: Offer) -> Pick:
        """Our pick from ``offer``, signed in a verified game."""
        if not self.on or offer.seq is None or not offer.sender:
            return pick
        mac = exchanges.pick_mac(
            self._secret,
            picker=self._turns.nick,
            offerer=offer.sender,
            seq=offer.seq,
            card_num=pick.card_num,
        )
        return Pick(card_num=pick.card_num, mac=mac)

    async def gave(self, to: str, taken: Reply) -> None:
        """Report that ``to`` took our offer (its ``ok`` was ``taken``)."""
        commitment = self._commitments.pop(to, None)
        self._commitments.clear()
        if not self.on or commitment is None:
            return
        served = self._served.get(to)
        picked = served is not None and served[0] == commitment.seq and served[2]
        report = Gave(
            to=to,
            seq=commitment.seq,
            mac=commitment.mac,
            ack=taken.ack,
            salts=list(commitment.salts),
            pick=PickSeen(served[1], served[2]) if picked and served else None,
        )
        await self._table.post(report)

    def turn_evidence(self, turn: YourTurn | Offer) -> dict[str, object]:
        """What of a turn lets the table tell who wrote it (its mac), in a verified game."""
        if not self.on or turn.mac is None:
            return {}
        evidence: dict[str, object] = {"from": turn.sender, "mac": turn.mac}
        if isinstance(turn, Offer):
            evidence.update(seq=turn.seq, num_cards=turn.num_cards, hashes=turn.hashes)
        return evidence

    # -- taking ------------------------------------------------------------------

    def ack(self, answer: Reply, offer: Offer) -> Reply:
        """``answer`` to ``offer``, with our ack (``ok``) or our word that we are out."""
        if not self.on:
            return answer
        if answer.ok and offer.mac is not None:
            answer.ack = exchanges.ack_mac(self._secret, offer.mac)
        elif answer.result == "out" and offer.sender is not None:
            answer.ack = exchanges.out_ack(self._secret, offer.sender)
        return answer

    def out_ack(self, answer: Reply, asker: str | None) -> Reply:
        if self.on and answer.result == "out" and asker is not None:
            answer.ack = exchanges.out_ack(self._secret, asker)
        return answer

    def missing(self, offer: Offer) -> str | None:
        """What an offer lacks in a game that reports its exchanges, or None."""
        if not self.on:
            return None
        if offer.seq is None or offer.hashes is None or offer.mac is None or not offer.sender:
            return (
                "this game reports its exchanges (protocol 14.6): an offer needs from, seq, "
                "hashes and mac"
            )
        return None

    def check_card(self, offer: Offer, card_num: int, card: Card, salt: str | None) -> None:
        """Raise ``wrong_card`` if the card we got is not what the offer committed to."""
        if not self.on or offer.hashes is None:
            return
        position = card_num
        if position == offer.num_cards:  # older pickers' inclusive index (13.3): the last card
            position -= 1
        if exchanges.opens(offer.hashes, position, card, salt):
            return
        raise self._wrong_card(offer, position, card, salt)

    def opens_another(self, offer: Offer, card: Card, salt: str | None) -> bool:
        """Whether a card that did not open the position we picked opens another one: then
        our refusal proves the offerer answered with another committed card (14.6)."""
        hashes = offer.hashes or []
        return any(exchanges.opens(hashes, i, card, salt) for i in range(len(hashes)))

    def _wrong_card(self, offer: Offer, position: int, card: Card, salt: str | None) -> PeerError:
        return accusation(
            offer.sender,
            "wrong_card",
            f"answered {self._turns.nick}'s pick of card {position} with the {card}, which is "
            "not the card its offer committed to there",
            **{"from": offer.sender},
            seq=offer.seq,
            hashes=offer.hashes,
            mac=offer.mac,
            card_num=position,
            card=wire(card),
            salt=salt,
        )

    async def received(
        self,
        offer: Offer,
        card_num: int | None = None,
        card: Card | None = None,
        salt: str | None = None,
    ) -> None:
        """Report the offer we took (and what we picked); we hold exchange ``seq`` now."""
        if not self.on or offer.seq is None:
            return
        self.held_seq = offer.seq
        assert offer.sender is not None and offer.hashes is not None and offer.mac is not None
        position = card_num
        if position is not None and position == offer.num_cards:
            position -= 1
        report = Received(
            sender=offer.sender,
            seq=offer.seq,
            num_cards=offer.num_cards,
            hashes=offer.hashes,
            mac=offer.mac,
            card_num=position,
            card=card,
            salt=salt,
        )
        await self._table.post(report)
