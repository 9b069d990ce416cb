"""What an ``accuse`` proves in a verified game (``services.oldmaid.verified.play``): a
second pick, by two different picks from one offer, each signed by the picker."""

from __future__ import annotations

import random
from typing import Any

from ring.oldmaid import exchanges, proofs
from ring.oldmaid.cards import full_deck
from ring.oldmaid.messages import Accuse, Gave, Offer, Pick, PickSeen, Reply
from ring.oldmaid.reporting import Reporting
from ring.oldmaid.turns import Turns
from services.oldmaid.verified.play import VerifiedPlay

KEY = proofs.game_key(7)
SEATS = ["ann", "bob", "cy"]


def signed(picker: str, offerer: str, seq: int, card_num: int) -> list[Any]:
    secret = proofs.secret_for(KEY, picker)
    mac = exchanges.pick_mac(secret, picker=picker, offerer=offerer, seq=seq, card_num=card_num)
    return [card_num, mac]


def accuse(evidence: dict[str, Any]) -> Any:
    play = VerifiedPlay(SEATS, KEY)
    request = Accuse(rule="second_pick", accused="bob", evidence=evidence)
    return play.accusation("ann", request, out=[])


def test_two_different_picks_signed_by_the_picker_name_it() -> None:
    lie = accuse({"seq": 4, "picks": [signed("bob", "ann", 4, 2), signed("bob", "ann", 4, 0)]})
    assert lie is not None and (lie.rule, lie.culprit) == ("second_pick", "bob")


def test_anything_less_is_only_the_accusers_word() -> None:
    good = signed("bob", "ann", 4, 2)
    for picks in (
        [good, good],  # the same pick twice: the accuser could have copied it
        [good, signed("ann", "ann", 4, 0)],  # a mac the accuser wrote itself
        [good, signed("bob", "ann", 5, 0)],  # signed for another offer
        [good, signed("bob", "cy", 4, 0)],  # a pick from someone else's offer
        [good, [0, "00" * 16]],
        [good],
    ):
        assert accuse({"seq": 4, "picks": picks}) is None, picks
    assert accuse({"seq": "4", "picks": [good, signed("bob", "ann", 4, 0)]}) is None
    assert accuse({}) is None


def test_ring_peers_picks_are_signed_as_the_table_checks() -> None:
    """A ``ring peer`` picking in a verified game signs each pick (``Reporting.sign``):
    two of its picks from one offer are the proof above."""
    reporting = Reporting(Turns("bob", random.Random(1)), table=None)  # type: ignore[arg-type]
    reporting.take(proofs.secret_for(KEY, "bob"), report=True)
    offer = Offer(num_cards=3, sender="ann", seq=4, hashes=["ab" * 16] * 3, mac="cd" * 16)
    picks = [reporting.sign(Pick(card_num=n), offer) for n in (2, 0)]
    lie = accuse({"seq": 4, "picks": [[pick.card_num, pick.mac] for pick in picks]})
    assert lie is not None and lie.culprit == "bob"
    # In a game that does not report its exchanges, a pick goes unsigned, as ever.
    reporting.take(None, report=False)
    assert reporting.sign(Pick(card_num=2), offer).mac is None


def bad_picks(evidence: dict[str, Any]) -> Any:
    play = VerifiedPlay(SEATS, KEY)
    return play.accusation("ann", Accuse(rule="bad_picks", accused="bob", evidence=evidence), [])


def offer_of(num_cards: int, *, sender: str = "ann", to: str = "bob") -> dict[str, Any]:
    hashes = ["ab" * 16] * num_cards
    mac = exchanges.offer_mac(proofs.secret_for(KEY, sender), seq=4, sender=sender, to=to,
                              num_cards=num_cards, hashes=hashes)  # fmt: skip
    return {"seq": 4, "num_cards": num_cards, "hashes": hashes, "mac": mac}


def test_a_signed_pick_outside_the_offer_names_the_picker() -> None:
    lie = bad_picks({**offer_of(3), "picks": [signed("bob", "ann", 4, 7)]})
    assert lie is not None and (lie.rule, lie.culprit) == ("bad_picks", "bob")
    assert "card_num 7" in lie.what


def test_a_bad_pick_the_table_cannot_hold_to_the_picker_is_a_word() -> None:
    inside = signed("bob", "ann", 4, 2)
    last = signed("bob", "ann", 4, 3)  # card_num == num_cards: served as the last card (13.3)
    outside = signed("bob", "ann", 4, 7)
    for evidence in (
        {**offer_of(3), "picks": [inside, last]},
        {**offer_of(3), "picks": [signed("ann", "ann", 4, 7)]},  # the accuser's own mac
        {**offer_of(3), "picks": [[7, "00" * 16]]},
        {**offer_of(3, sender="cy"), "picks": [outside]},  # an offer that is not ann's
        {**offer_of(3), "num_cards": 9, "picks": [outside]},  # its mac says 3 cards
        {"seq": 4, "picks": [outside]},
    ):
        assert bad_picks(evidence) is None, evidence


async def test_ring_peers_gave_carries_the_pick_it_served() -> None:
    """The offerer's report carries its receiver's signed pick (14.6): proof the receiver
    took the exchange even when the ack in its ok was not its own."""
    posted: list[Any] = []

    class Table:
        async def post(self, report: Any) -> None:
            posted.append(report)

    turns = Turns("ann", random.Random(3))
    turns.take_seat([(("127.0.0.1", 1), "ann"), (("127.0.0.1", 2), "bob")])
    for card in full_deck()[:3]:
        turns.hand.receive(card)
    reporting = Reporting(turns, table=Table())  # type: ignore[arg-type]
    reporting.take(proofs.secret_for(KEY, "ann"), report=True)
    offer = reporting.offer_to(Offer(num_cards=3, sender="ann"), "bob")
    pick = Pick(card_num=1, mac=signed("bob", "ann", offer.seq or 0, 1)[1])
    reporting.served("bob", pick)
    await reporting.gave("bob", Reply(result="ok", ack="ab" * 16))
    [gave] = posted
    assert gave.pick == PickSeen(1, pick.mac) and gave.seq == offer.seq


def test_a_pass_reported_with_an_ack_not_its_receivers_is_witnessed() -> None:
    """The passer cannot check its receiver's ack; one not the receiver's would leave two
    suspects at the stall, so a witnessed game's table witnesses that pass (14.6)."""
    play = VerifiedPlay(SEATS, KEY)
    mac = exchanges.offer_mac(proofs.secret_for(KEY, "ann"), seq=9, sender="ann", to="bob",
                              num_cards=0, hashes=[])  # fmt: skip
    good = exchanges.ack_mac(proofs.secret_for(KEY, "bob"), mac)
    passed = Gave(to="bob", seq=9, mac=mac, ack="ab" * 16, salts=[])
    seen = play.unacked_pass("ann", passed)
    assert seen is not None and (seen.sender, seen.seq, seen.num_cards, seen.mac) == (
        "ann", 9, 0, mac
    )
    assert play.unacked_pass("ann", Gave(to="bob", seq=9, mac=mac, ack=None, salts=[]))
    assert play.unacked_pass("ann", Gave(to="bob", seq=9, mac=mac, ack=good, salts=[])) is None
    cards = Gave(to="bob", seq=9, mac=mac, ack="ab" * 16, salts=["cd" * 16])
    assert play.unacked_pass("ann", cards) is None  # an exchange of cards: its pick proves it
