"""What a verified game's reports prove on their own (protocol 14.6): macs and commitments.

Pure checks the ledger (``services.oldmaid.verified.ledger``) makes of one report: whose
mac an offer carries, whether a pick was signed by its picker, whether a commitment,
opened with its offerer's salts, is that offerer's hand. Each needs only the secrets
(or the one hand) it is given.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping

from ring.oldmaid import exchanges
from ring.oldmaid.cards import Card
from services.oldmaid.verified.entries import Gave, Lie, Received


def offer_mac_ok(secrets: Mapping[str, str], got: Received, receiver: str) -> bool:
    """Whether the offer ``receiver`` reports carries its sender's mac of an offer to it."""
    secret = secrets.get(got.sender)
    if secret is None:
        return False
    mac = exchanges.offer_mac(
        secret, seq=got.seq, sender=got.sender, to=receiver, num_cards=got.num_cards,
        hashes=got.hashes,
    )  # fmt: skip
    return exchanges.same(mac, got.mac)


def pick_signed(
    secrets: Mapping[str, str], picker: str, offerer: str, seq: int, card_num: int, mac: object
) -> bool:
    """Whether ``mac`` is ``picker``'s of its pick ``card_num`` from ``offerer``'s offer
    ``seq``: only the picker's secret writes it."""
    secret = secrets.get(picker)
    if secret is None or not isinstance(mac, str):
        return False
    expected = exchanges.pick_mac(
        secret, picker=picker, offerer=offerer, seq=seq, card_num=card_num
    )
    return exchanges.same(mac, expected)


def signed_pick(secrets: Mapping[str, str], gave: Gave, offerer: str, seq: int) -> bool:
    """Whether ``gave`` carries a pick its receiver signed, from exchange ``seq`` of
    ``offerer``'s: so its receiver took part."""
    if gave.pick is None:
        return False
    card_num, mac = gave.pick
    return pick_signed(secrets, gave.to, offerer, seq, card_num, mac)


def commitment_lie(
    hand: collections.Counter[Card],
    sender: str,
    receiver: str,
    got: Received,
    salts: tuple[str, ...] | None,
) -> Lie | None:
    """Whether the offer ``receiver`` took, opened with the salts of ``sender``'s own
    ``gave``, is ``sender``'s ``hand``: one card a position, each card it holds exactly
    as often as it holds it. The hashes carry its mac and the salts are its report, so a
    commitment that is not its hand is its lie, whichever position was picked."""
    k = got.seq
    if salts is None or len(salts) != len(got.hashes):
        count = "no salts" if salts is None else f"{len(salts)} salts"
        return Lie(
            "false_report",
            f"{sender}'s gave of exchange {k} carries {count} for an offer of "
            f"{len(got.hashes)} cards (one a position, protocol 14.6)",
            sender,
        )
    held = [card for card, times in hand.items() if times > 0]
    opened: collections.Counter[Card] = collections.Counter()
    for position, (salt, digest) in enumerate(zip(salts, got.hashes, strict=True)):
        card = exchanges.opened_card(digest, salt, held)
        if card is None:
            return Lie(
                "card_not_held",
                f"{sender}'s commitment to {receiver} (exchange {k}) opens no card at "
                f"position {position} with the salt its gave reports",
                sender,
            )
        opened[card] += 1
    for card, times in sorted(opened.items()):
        if times > hand[card]:
            held = "does not hold it" if hand[card] == 0 else f"holds it {hand[card]} time"
            return Lie(
                "card_not_held",
                f"{sender} committed the {card} at {times} "
                f"position{'s' if times > 1 else ''} of its offer to {receiver} (exchange "
                f"{k}), and {held}",
                sender,
            )
    return None
