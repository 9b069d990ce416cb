"""A player's hand: where received cards go, and which pairs leave it.

Pure and seeded: given the same cards in the same order and the same
``random.Random``, a hand makes the same choices, so a peer's whole game can
be replayed from its seed.
"""

from __future__ import annotations

import random

from ring.oldmaid.cards import Card, split_pairs


class Hand:
    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._cards: list[Card] = []

    def __len__(self) -> int:
        return len(self._cards)

    @property
    def cards(self) -> tuple[Card, ...]:
        return tuple(self._cards)

    def receive(self, card: Card) -> None:
        """Put a card at a random place (handout: so picks reveal nothing)."""
        self._cards.insert(self._rng.randint(0, len(self._cards)), card)

    def give(self, index: int) -> Card:
        """The card a neighbour picked; ``IndexError`` outside 0..len-1."""
        if not 0 <= index < len(self._cards):
            raise IndexError(f"card_num {index} is not between 0 and {len(self._cards) - 1}")
        return self._cards.pop(index)

    def remove_pairs(self) -> list[tuple[Card, Card]]:
        self._cards, pairs = split_pairs(self._cards)
        return pairs

    def choose_pick(self, offered: int) -> int:
        """Which of ``offered`` face-down cards to take."""
        return self._rng.randrange(offered)


def seats_after(seat: int, players: int) -> list[int]:
    """Every other seat, in the order the turn travels (left, wrapping)."""
    return [(seat + step) % players for step in range(1, players)]
