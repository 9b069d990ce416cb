"""Where players sit, as the referee counts it: the seat order of a game, who drew which
card, and who is next to whom among the players still in.

The turn goes left, from a seat to the next (docs/protocols/oldmaid.md 5.5), and
a player that is out is skipped, so "next to" always means among the players
in. Pure functions of seat lists; the referee's parts (``facts``, ``scrutiny``,
``reports``) and the scenario verifier use them.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Sequence


def seating(nicks: Iterable[str], seed: int) -> list[str]:
    """The seat order of a game of these players with this seed: whatever order they
    joined in, so a seed replays a game (and a checker can seat its players)."""
    order = sorted(nicks)
    random.Random(f"seating:{seed}").shuffle(order)
    return order


def dealt_to(position: int, players: int) -> int:
    """The seat that drew the card at ``position`` of the deck: draws go in seat order."""
    return position % players


def dealt_count(seat: int, players: int, dealt: int) -> int:
    """How many of the first ``dealt`` cards went to ``seat``."""
    return len(range(seat, dealt, players))


def between(seats: Sequence[str], first: str, last: str) -> list[str]:
    """The seats strictly between ``first`` and ``last``, going left (the turn's way)."""
    count = len(seats)
    start, end = seats.index(first), seats.index(last)
    return [seats[(start + step) % count] for step in range(1, (end - start) % count)]


def out_run_to_the_right(seats: Sequence[str], out: Collection[str], nick: str) -> int:
    """How many players right next to ``nick`` on its right are out, with no one in between.

    A pass (an offer of num_cards 0) reaches ``nick`` only from one of them: it
    comes from a player that went out holding the turn, to the next player in.
    """
    count = len(seats)
    seat = seats.index(nick)
    run = 0
    for step in range(1, count):
        if seats[(seat - step) % count] not in out:
            break
        run += 1
    return run


def neighbours(seats: Sequence[str], out: Collection[str], one: str, other: str) -> bool:
    """Whether ``one`` and ``other`` are next to each other among the players in.

    Every exchange is between a player and the next player in to its left, so a
    peer can only report on a neighbour in this sense. Being out is final, so
    seats skipped then are out now.
    """
    return all(s in out for s in between(seats, one, other)) or all(
        s in out for s in between(seats, other, one)
    )
