"""Smarx's endgame search: the rest of a FishNet game, both hands known, searched exactly.

Pure functions of plain values (tuples of counts), so that a server can run
``endgame_values`` in a worker process (``ring.games.workers``) and a player in
one process can call it directly, with the same result to the last bit.
``services.fishnet.bots.Smarx`` asks it once the deck is down to two
cards, over every way the cards it cannot see may lie.

A hand is a tuple of 13 counts, the deck a tuple of counts (its order
unknown to both: each fish is any remaining card, equally likely). ``lead``
is the mover's books minus the other's; values are the mover's expected
result (win 1, tie 1/2).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence

from services.fishnet.rules import BOOK_SIZE, RANKS

Hand = tuple[int, ...]


def _result(lead: int) -> float:
    return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0


def _after_gain(hand: list[int], rank: int, lead: int) -> int:
    if hand[rank] == BOOK_SIZE:
        hand[rank] = 0
        return lead + 1
    return lead


def endgame_values(
    mine: Hand,
    known: Hand,
    unknown: Hand,
    lacks: frozenset[int],
    deck_size: int,
    opponent_hand_size: int,
    lead: int,
    passed: bool,
    opponent_passed: bool,
) -> dict[int | None, float] | None:
    """Smarx's endgame search: each request's (by rank) and the pass's (None) expected
    result, over every way the unknown cards can lie; None if no deal is consistent.

    A pure function of plain values, so a server can run it in a worker process.
    """
    decks = list(_deck_contents(unknown, deck_size, set(lacks)))
    if not decks:
        return None
    totals: dict[int | None, float] = {}
    for deck, weight in decks:
        theirs = tuple(known[r] + unknown[r] - deck[r] for r in RANKS)
        if sum(theirs) != opponent_hand_size:
            return None  # the accounting disagrees with the counts: play on heuristics
        values = _action_values(mine, theirs, deck, lead, passed, opponent_passed)
        for action, value in values.items():
            totals[action] = totals.get(action, 0.0) + weight * value
    return totals


def _deck_contents(
    unknown: Sequence[int], size: int, in_deck: set[int]
) -> Iterator[tuple[Hand, int]]:
    """Each way ``size`` of the unknown cards can be the deck, with how many deals give it.

    Ranks in ``in_deck`` (the opponent certainly lacks them) are wholly in the deck.
    """
    counts = [unknown[rank] if rank in in_deck else 0 for rank in RANKS]
    free = [rank for rank in RANKS if rank not in in_deck and unknown[rank]]

    def place(i: int, left: int, weight: int) -> Iterator[tuple[Hand, int]]:
        if left == 0:
            yield tuple(counts), weight
            return
        if i == len(free):
            return
        rank = free[i]
        for k in range(min(left, unknown[rank]) + 1):
            counts[rank] = k
            yield from place(i + 1, left - k, weight * math.comb(unknown[rank], k))
        counts[rank] = 0

    left = size - sum(counts)
    if left >= 0:
        yield from place(0, left, 1)


def _action_values(
    mover: Hand, other: Hand, deck: Hand, lead: int, passed: bool, other_passed: bool
) -> dict[int | None, float]:
    """The value of each request (by rank) and of passing (None) for the mover."""
    values: dict[int | None, float] = {
        rank: _request_value(mover, other, deck, lead, other_passed, rank)
        for rank in RANKS
        if mover[rank]
    }
    if sum(deck):  # with the deck empty, every request hits: passing never pays
        values[None] = _pass_value(mover, other, deck, lead, passed, other_passed)
    return values


@functools.lru_cache(maxsize=100_000)
def _solve(
    mover: Hand, other: Hand, deck: Hand, lead: int, passed: bool, other_passed: bool
) -> float:
    if not sum(deck):
        # Every rank left is split between the hands: the mover takes them all.
        return _result(lead + sum(1 for n in mover if n))
    return max(_action_values(mover, other, deck, lead, passed, other_passed).values())


def _request_value(
    mover: Hand, other: Hand, deck: Hand, lead: int, other_passed: bool, rank: int
) -> float:
    if other[rank]:
        hand, rest = list(mover), list(other)
        hand[rank] += rest[rank]
        rest[rank] = 0
        lead = _after_gain(hand, rank, lead)
        if not any(hand) or not any(rest):
            return _result(lead)
        return _solve(tuple(hand), tuple(rest), deck, lead, False, other_passed)
    if not sum(deck):
        return 1.0 - _solve(other, mover, deck, -lead, other_passed, False)
    return _fish_value(mover, other, deck, lead, other_passed, rank, passed=False)


def _pass_value(
    mover: Hand, other: Hand, deck: Hand, lead: int, passed: bool, other_passed: bool
) -> float:
    if passed:  # a pass after a pass fishes
        return _fish_value(mover, other, deck, lead, other_passed, None, passed=True)
    return 1.0 - _solve(other, mover, deck, -lead, other_passed, True)


def _fish_value(
    mover: Hand,
    other: Hand,
    deck: Hand,
    lead: int,
    other_passed: bool,
    asked: int | None,
    *,
    passed: bool,
) -> float:
    size = sum(deck)
    value = 0.0
    for card in RANKS:
        if not deck[card]:
            continue
        hand = list(mover)
        hand[card] += 1
        after = _after_gain(hand, card, lead)
        rest = list(deck)
        rest[card] -= 1
        if not any(hand):
            outcome = _result(after)
        elif card == asked:
            outcome = _solve(tuple(hand), other, tuple(rest), after, False, other_passed)
        else:
            outcome = 1.0 - _solve(other, tuple(hand), tuple(rest), -after, other_passed, passed)
        value += deck[card] / size * outcome
    return value
