"""Stacked decks and chosen seats for ``ring check oldmaid``: a situation on purpose.

A shuffled deck brings the situations a peer must handle (a neighbour out
from the start, an offer of no cards, being left with the Old Maid) only
sometimes. A stacked deck brings them every time: ``stacked_deck`` deals
each seat exactly the single cards it must hold when the last card has been
drawn, and whole pairs for the rest, so the offer phase opens with hands
the case chose. ``seed_seating`` finds the seed that seats the players in
the order the case wants (the table seats by seed, protocol 5.1).

Pure functions: the table (``TableConfig.deck``) and the tests use them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from ring.oldmaid.cards import JOKER, SUITS, Card, full_deck, pair_key, partner
from services.oldmaid.referee.rules import DECK_SIZE, seating

# How far seed_seating looks: 6 players have 720 orders, each as likely as the next.
SEATING_TRIES = 100_000
_SUIT_LETTERS = {suit[0]: suit for suit in SUITS}


def card(text: str) -> Card:
    """``"2s"``, ``"10h"``, ``"Qc"``, ``"joker"``: a card, written short."""
    if text == "joker":
        return JOKER
    return Card(text[:-1], _SUIT_LETTERS[text[-1]])


def cards(texts: str) -> tuple[Card, ...]:
    """``"2s 3s joker"``: several cards, written short."""
    return tuple(card(text) for text in texts.split())


def draws_per_seat(players: int) -> list[int]:
    """How many cards each seat draws: seat k draws cards k, k + players, ... (7.3)."""
    return [len(range(seat, DECK_SIZE, players)) for seat in range(players)]


def stacked_deck(players: int, singles: Mapping[int, Sequence[Card]]) -> tuple[Card, ...]:
    """A deck, in draw order, after which seat ``s`` holds exactly ``singles[s]``.

    Every other card a seat draws comes with its partner, so its pairs are
    discarded as they complete. A seat draws its singles first: one that
    keeps none ends the draw phase with an empty hand, and if it draws the
    deck's last card, that card completes its last pair. ``ValueError`` for
    singles that cannot be dealt so: a single whose partner is not another
    seat's single, a seat whose other draws are odd in number, or the Old
    Maid kept by no one.
    """
    kept = [c for seat in range(players) for c in singles.get(seat, ())]
    if len(set(kept)) != len(kept):
        raise ValueError("a card is kept twice")
    if JOKER not in kept:
        raise ValueError("the Old Maid pairs with nothing: some seat must keep it")
    seat_of = {c: seat for seat in range(players) for c in singles.get(seat, ())}
    for c in kept:
        if c != JOKER and seat_of.get(partner(c)) in (None, seat_of[c]):
            raise ValueError(f"{c} is kept, so its partner must be another seat's single")
    used = {pair_key(c) for c in kept if c != JOKER}
    pairs = [
        (c, partner(c))
        for c in full_deck()
        if c != JOKER and c.suit in ("spades", "diamonds") and pair_key(c) not in used
    ]
    hands: list[list[Card]] = []
    for seat, count in enumerate(draws_per_seat(players)):
        rest = count - len(singles.get(seat, ()))
        if rest < 0 or rest % 2:
            raise ValueError(f"seat {seat} draws {count} cards: its singles leave {rest}")
        taken, pairs = pairs[: rest // 2], pairs[rest // 2 :]
        hands.append([*singles.get(seat, ()), *itertools.chain.from_iterable(taken)])
    assert not pairs, "every card is dealt once the counts add up"
    deck: list[Card] = []
    for position in range(DECK_SIZE):
        deck.append(hands[position % players][position // players])
    return tuple(deck)


def seed_seating(order: Sequence[str], start: int) -> int:
    """The first seed from ``start`` at which the table seats these players in ``order``."""
    for seed in range(start, start + SEATING_TRIES):
        if seating(order, seed) == list(order):
            return seed
    raise ValueError(f"no seed from {start} seats {list(order)} in that order")
