"""Old Maid cards: the 53-card deck, canonical names and the pair rule.

Pure functions and values only; both the table (referee) and the peers use
them, so the two can never disagree on what a pair is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

VALUES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("spades", "clubs", "diamonds", "hearts")
BLACK = frozenset({"spades", "clubs"})


class Card(NamedTuple):
    """A card as it travels on the wire: ``[value, suit]``."""

    value: str
    suit: str

    def __str__(self) -> str:
        return "Old Maid" if self == JOKER else f"{self.value} of {self.suit}"


JOKER = Card("joker", "maid")

_CANONICAL = {(v.lower(), s): Card(v, s) for v in VALUES for s in SUITS}
_CANONICAL[("joker", "maid")] = JOKER


def parse_card(value: object, suit: object) -> Card:
    """The canonical card for a wire value and suit, in any letter case."""
    if isinstance(value, str) and isinstance(suit, str):
        card = _CANONICAL.get((value.lower(), suit.lower()))
        if card is not None:
            return card
    raise ValueError(f"unknown card [{value!r}, {suit!r}]")


def full_deck() -> list[Card]:
    """The 53 cards in a fixed order: 52 by value and suit, then the joker."""
    return [Card(v, s) for v in VALUES for s in SUITS] + [JOKER]


def colour(card: Card) -> str:
    return "black" if card.suit in BLACK else "red"


def is_pair(first: Card, second: Card) -> bool:
    """Two different cards of one value and one colour; the joker pairs with nothing."""
    return (
        first != second
        and first != JOKER
        and second != JOKER
        and first.value == second.value
        and colour(first) == colour(second)
    )


def pair_key(card: Card) -> tuple[str, str]:
    """Cards with equal keys form a pair; there are 26 keys."""
    return (card.value, colour(card))


def partner(card: Card) -> Card:
    """The one card that pairs with ``card``."""
    if card == JOKER:
        raise ValueError("the Old Maid has no partner")
    mate = {"spades": "clubs", "clubs": "spades", "diamonds": "hearts", "hearts": "diamonds"}
    return Card(card.value, mate[card.suit])


def split_pairs(hand: Iterable[Card]) -> tuple[list[Card], list[tuple[Card, Card]]]:
    """Remove every pair from a hand: (cards kept in their order, pairs found)."""
    cards = list(hand)
    by_key: dict[tuple[str, str], list[Card]] = {}
    for card in cards:
        if card != JOKER:
            by_key.setdefault(pair_key(card), []).append(card)
    pairs = [(group[0], group[1]) for group in by_key.values() if len(group) == 2]
    paired = {card for pair in pairs for card in pair}
    return [card for card in cards if card not in paired], pairs
