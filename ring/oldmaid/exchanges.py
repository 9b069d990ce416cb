"""Verified exchanges (protocol 14.6): what an offer commits to, and how each side proves it.

In a game where every player joined with ``verify`` the table's join reply
says ``"report": true``, and every exchange of the offer phase is told to
the table by both sides, so the table knows where every card is:

- the offerer numbers its offer (``seq``: the exchange that gave it the turn,
  plus one; 1 for the player that drew the last card), commits to its hand's
  order with one hash a card (``hashes``), and authenticates the whole with
  an HMAC under its game secret (``mac``), which the receiver cannot forge;
- the receiver's ``ok`` carries an ``ack``, its own HMAC of that ``mac``;
- the answer to a pick carries the picked position's ``salt``, so the picker
  checks the card against the commitment before it takes it;
- afterwards the picker reports ``received`` (the offer as it came, the
  index, card and salt) and the offerer reports ``gave`` (with the ack), off
  the handoff's critical path.

Only what the sender could have written can be held against it: the picker
cannot write the offerer's ``mac``, nor find a salt for another card, and
the offerer cannot write the picker's ``ack``. This module is the arithmetic
both sides share (pure: no I/O); the peer's side is ``Commitments``, the
table's is ``services.oldmaid.verified.ledger``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ring.oldmaid.cards import Card, full_deck

DIGITS = 32  # hex digits of every hash, salt and mac: 128 bits


def _mac(secret: str, text: str) -> str:
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()[:DIGITS]


def card_hash(salt: str, card: Card) -> str:
    """The commitment to one card at one position: SHA-256 of ``salt|value|suit``."""
    return hashlib.sha256(f"{salt}|{card.value}|{card.suit}".encode()).hexdigest()[:DIGITS]


def salts_for(secret: str, seq: int, count: int) -> tuple[str, ...]:
    """The salts of the first ``count`` positions of offer ``seq``. Any unpredictable 32
    hex digits do; ``ring peer`` derives them from its secret, so that a game replays from
    its seed, with one SHAKE-256 of the secret and the offer's number, read as far as the
    hand goes (a keyed XOF: no one without the secret can tell them; one call an offer,
    not one HMAC a card, as an offer's commitment is on the handoff's path)."""
    stream = hashlib.shake_256(f"{secret}|salts|{seq}".encode()).digest(16 * count)
    return tuple(stream[16 * i : 16 * (i + 1)].hex() for i in range(count))


def salt_for(secret: str, seq: int, position: int) -> str:
    """The salt of ``position`` in offer ``seq`` (``salts_for``: it reads on as far)."""
    return salts_for(secret, seq, position + 1)[position]


def offer_mac(
    secret: str, *, seq: int, sender: str, to: str, num_cards: int, hashes: Sequence[str]
) -> str:
    """The offerer's HMAC of everything its offer says."""
    return _mac(secret, f"offer|{seq}|{sender}|{to}|{num_cards}|{','.join(hashes)}")


def pick_mac(secret: str, *, picker: str, offerer: str, seq: int, card_num: int) -> str:
    """The picker's HMAC of one pick from offer ``seq``: only the picker can write it, so
    two different ones from one offer prove that it picked twice."""
    return _mac(secret, f"pick|{picker}|{offerer}|{seq}|{card_num}")


def ack_mac(secret: str, offer_mac_text: str) -> str:
    """The receiver's HMAC of the offer's ``mac``: "I took this offer"."""
    return _mac(secret, f"ack|{offer_mac_text}")


def turn_mac(secret: str, sender: str, to: str) -> str:
    """The mac of a draw turn (``your_turn``) from ``sender`` to ``to``: in the draw
    phase no one is out, so a draw turn to anyone but the next seat is a lie."""
    return _mac(secret, f"your_turn|{sender}|{to}")


def out_ack(secret: str, asker: str) -> str:
    """The ack in an ``out`` answer to ``asker``'s turn: "I am out". Being out is for
    good, so it needs no exchange number: it is a lie whenever the table has not
    counted the player out."""
    return _mac(secret, f"out|{asker}")


def same(first: str | None, second: str | None) -> bool:
    """Whether two hex strings are equal (in constant time; None never equals)."""
    if first is None or second is None:
        return False
    return hmac.compare_digest(first.lower(), second.lower())


@dataclass(frozen=True)
class Commitment:
    """One offer as its offerer sent it: the fields of protocol 14.6, and the salts it keeps."""

    seq: int
    sender: str
    to: str
    cards: tuple[Card, ...]
    salts: tuple[str, ...]
    hashes: tuple[str, ...]
    mac: str

    def salt_of(self, position: int) -> str:
        return self.salts[position]


def commit(secret: str, *, seq: int, sender: str, to: str, cards: Sequence[Card]) -> Commitment:
    """The commitment of an offer of ``cards`` (in the order offered) from ``sender`` to ``to``."""
    salts = salts_for(secret, seq, len(cards))
    hashes = tuple(card_hash(salt, card) for salt, card in zip(salts, cards, strict=True))
    mac = offer_mac(secret, seq=seq, sender=sender, to=to, num_cards=len(cards), hashes=hashes)
    return Commitment(seq, sender, to, tuple(cards), salts, hashes, mac)


def opens(hashes: Sequence[str], position: int, card: Card, salt: str | None) -> bool:
    """Whether ``card`` with ``salt`` is what ``hashes`` committed at ``position``."""
    if salt is None or not 0 <= position < len(hashes):
        return False
    return same(card_hash(salt, card), hashes[position])


_EVERY_CARD = tuple(full_deck())


def opened_card(digest: str, salt: str, likely: Iterable[Card] = ()) -> Card | None:
    """The card that ``salt`` opens ``digest`` to, if any: the table opens a whole
    commitment with the salts of the offerer's ``gave``. The ``likely`` cards (the
    offerer's hand) are tried first, so an honest commitment costs a few hashes a
    position, and only a lie all 53."""
    likely = tuple(likely)
    for card in (*likely, *(c for c in _EVERY_CARD if c not in likely)):
        if same(card_hash(salt, card), digest):
            return card
    return None


def opened_position(hashes: Sequence[str], card: Card, salt: str | None) -> int | None:
    """Which committed position ``card`` with ``salt`` opens, if any."""
    if salt is None:
        return None
    digest = card_hash(salt, card)
    return next((i for i, h in enumerate(hashes) if same(digest, h)), None)
