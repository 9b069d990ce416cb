"""The arithmetic of verified exchanges (protocol 14.6): commitments open only as made."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ring.oldmaid import exchanges
from ring.oldmaid.cards import full_deck

SECRET = "0123456789abcdef0123456789abcdef"
hands = st.lists(st.sampled_from(full_deck()), min_size=1, max_size=12, unique=True)


@given(cards=hands, seq=st.integers(1, 60))
def test_every_position_opens_with_its_salt_and_no_other(cards, seq) -> None:
    offer = exchanges.commit(SECRET, seq=seq, sender="p1", to="p2", cards=cards)
    assert len(offer.hashes) == len(cards) and all(len(h) == exchanges.DIGITS for h in offer.hashes)
    for position, card in enumerate(cards):
        salt = offer.salt_of(position)
        assert exchanges.opens(offer.hashes, position, card, salt)
        assert exchanges.opened_position(offer.hashes, card, salt) == position
        for other in cards:
            if other != card:
                assert not exchanges.opens(offer.hashes, position, other, salt)
        assert not exchanges.opens(offer.hashes, position, card, None)
        assert not exchanges.opens(offer.hashes, len(cards), card, salt)


@given(cards=hands, seq=st.integers(1, 60))
def test_the_mac_covers_every_field_of_the_offer(cards, seq) -> None:
    offer = exchanges.commit(SECRET, seq=seq, sender="p1", to="p2", cards=cards)
    fields = {
        "seq": seq,
        "sender": "p1",
        "to": "p2",
        "num_cards": len(cards),
        "hashes": offer.hashes,
    }
    assert exchanges.offer_mac(SECRET, **fields) == offer.mac
    for name, other in [
        ("seq", seq + 1), ("sender", "p3"), ("to", "p3"), ("num_cards", len(cards) + 1),
        ("hashes", offer.hashes[::-1] if len(cards) > 1 else ("0" * 32,)),
    ]:  # fmt: skip
        assert exchanges.offer_mac(SECRET, **(fields | {name: other})) != offer.mac
    assert exchanges.offer_mac("another secret", **fields) != offer.mac


def test_acks_and_turn_macs_belong_to_their_secret_and_words() -> None:
    mac = "f" * 32
    assert exchanges.ack_mac(SECRET, mac) != exchanges.ack_mac("other", mac)
    assert exchanges.ack_mac(SECRET, mac) != exchanges.ack_mac(SECRET, "e" * 32)
    assert exchanges.turn_mac(SECRET, "p1", "p2") != exchanges.turn_mac(SECRET, "p2", "p1")
    assert exchanges.out_ack(SECRET, "p1") != exchanges.out_ack(SECRET, "p2")


def test_same_compares_hex_without_case_and_never_matches_none() -> None:
    assert exchanges.same("ABCdef", "abcDEF")
    assert not exchanges.same("abc", "abd")
    assert not exchanges.same(None, None)
    assert not exchanges.same("abc", None)
