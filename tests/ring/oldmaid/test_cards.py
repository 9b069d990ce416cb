from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ring.oldmaid.cards import (
    JOKER,
    Card,
    full_deck,
    is_pair,
    pair_key,
    parse_card,
    partner,
    split_pairs,
)
from ring.oldmaid.hand import Hand, seats_after

DECK = full_deck()


def test_deck_is_26_pairs_and_the_joker() -> None:
    assert len(DECK) == 53 and len(set(DECK)) == 53
    keys = Counter(pair_key(c) for c in DECK if c != JOKER)
    assert len(keys) == 26 and set(keys.values()) == {2}


@pytest.mark.parametrize(
    ("a", "b", "paired"),
    [
        (Card("3", "spades"), Card("3", "clubs"), True),
        (Card("K", "diamonds"), Card("K", "hearts"), True),
        (Card("3", "spades"), Card("3", "hearts"), False),
        (Card("3", "spades"), Card("4", "clubs"), False),
        (Card("3", "spades"), Card("3", "spades"), False),
        (JOKER, JOKER, False),
    ],
)
def test_pair_rule(a: Card, b: Card, paired: bool) -> None:
    assert is_pair(a, b) is paired and is_pair(b, a) is paired


def test_parse_card_is_case_insensitive_and_strict() -> None:
    assert parse_card("j", "HEARTS") == Card("J", "hearts")
    assert parse_card("Joker", "Maid") == JOKER
    for value, suit in [("1", "spades"), ("10", "spade"), (10, "spades"), ("joker", "spades")]:
        with pytest.raises(ValueError, match="unknown card"):
            parse_card(value, suit)


def test_every_card_but_the_joker_has_one_partner() -> None:
    for card in DECK[:-1]:
        assert is_pair(card, partner(card))
    with pytest.raises(ValueError):
        partner(JOKER)


@given(st.permutations(DECK), st.integers(0, 53))
def test_split_pairs_leaves_no_pair_and_loses_no_card(deck: list[Card], size: int) -> None:
    hand = deck[:size]
    kept, pairs = split_pairs(hand)
    assert all(is_pair(a, b) for a, b in pairs)
    assert sorted(kept + [c for p in pairs for c in p]) == sorted(hand)
    assert not any(is_pair(a, b) for i, a in enumerate(kept) for b in kept[i + 1 :])
    assert kept == [c for c in hand if c in kept]  # order kept


@given(st.integers(), st.permutations(DECK))
def test_hand_is_seeded_and_conserves_cards(seed: int, deck: list[Card]) -> None:
    def play(hand: Hand) -> tuple[tuple[Card, ...], list[Card]]:
        gone: list[Card] = []
        for card in deck[:20]:
            hand.receive(card)
            gone.extend(c for pair in hand.remove_pairs() for c in pair)
            if len(hand) > 3:
                gone.append(hand.give(hand.choose_pick(len(hand))))
        return hand.cards, gone

    cards, gone = play(Hand(random.Random(seed)))
    assert (cards, gone) == play(Hand(random.Random(seed)))
    assert sorted([*cards, *gone]) == sorted(deck[:20])


def test_give_refuses_bad_indexes() -> None:
    hand = Hand(random.Random(1))
    hand.receive(JOKER)
    for index in (-1, 1, 99):
        with pytest.raises(IndexError, match="between 0 and 0"):
            hand.give(index)
    assert hand.give(0) == JOKER


def test_seats_after_goes_left_and_wraps() -> None:
    assert seats_after(2, 4) == [3, 0, 1]
    assert seats_after(0, 2) == [1]
