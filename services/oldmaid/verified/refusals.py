"""A picker's refusal of a card in a verified game (``wrong_card``, protocol 14.6), weighed.

The refusal carries the offer as it came (its mac is the offerer's or not), the
position picked, and the card and salt that came back: which position that
card opens, if any, tells whether the offerer answered with another card, the
picker refused its own, or either could have made it up.
"""

from __future__ import annotations

from collections.abc import Mapping

from ring.oldmaid import exchanges
from ring.oldmaid.cards import Card
from services.oldmaid.verified.entries import Lie


def refused_card(
    secrets: Mapping[str, str], picker: str, evidence: Mapping[str, object]
) -> Lie:
    """A picker's ``wrong_card`` accusation: the offer, the index and what came (14.6)."""
    try:
        sender = str(evidence["from"])
        seq = int(evidence["seq"])  # type: ignore[call-overload]
        hashes = tuple(str(h) for h in evidence["hashes"])  # type: ignore[attr-defined]
        mac = str(evidence["mac"])
        card_num = int(evidence["card_num"])  # type: ignore[call-overload]
        card = evidence["card"]
        salt = evidence.get("salt")
    except (KeyError, TypeError, ValueError):
        return Lie(
            "wrong_card", f"{picker} refused a card, with evidence the table cannot read", None
        )
    if not isinstance(card, Card) or sender not in secrets:
        return Lie("wrong_card", f"{picker} refused a card from {sender}", None, (picker,))
    expected = exchanges.offer_mac(
        secrets[sender],
        seq=seq,
        sender=sender,
        to=picker,
        num_cards=len(hashes),
        hashes=hashes,
    )
    if not exchanges.same(expected, mac):
        return Lie(
            "wrong_card",
            f"{picker} refused a card from {sender}, showing an offer without {sender}'s mac",
            None,
            (sender, picker),
        )
    position = exchanges.opened_position(hashes, card, salt if isinstance(salt, str) else None)
    if position == card_num:
        return Lie(
            "false_accusation",
            f"{picker} refused the {card} from {sender}, which is the card its "
            f"pick of card {card_num} committed to",
            picker,
        )
    if position is not None:
        return Lie(
            "wrong_card",
            f"{sender} answered {picker}'s pick of card {card_num} with card {position} "
            f"(the {card})",
            sender,
        )
    return Lie(
        "wrong_card",
        f"{picker} refused the {card} from {sender}, which opens no card of the offer "
        f"({sender} sent it, or {picker} made it up)",
        None,
        (sender, picker),
    )
