"""The Old Maid referee (``services.oldmaid.referee.rules``) for the tests: a game started
without sockets, dealt, and played to its end as the tests need.

Used by the referee's tests (``tests/services/oldmaid/test_referee*.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ring.oldmaid.cards import Card, split_pairs
from services.oldmaid.referee.rules import RefereeError, TableGame

THREE_S, THREE_C, THREE_H = Card("3", "spades"), Card("3", "clubs"), Card("3", "hearts")


def address(i: int) -> tuple[str, int]:
    return ("10.0.0.1", 40000 + i)


def started(players: int = 3, seed: int = 1) -> TableGame:
    game = TableGame(players, seed)
    for i in range(players):
        game.join(f"p{i}", address(i))
    game.start()
    game.take_events()
    return game


def nicks(game: TableGame) -> list[str]:
    return [seat.nick for seat in game.seats]


def deal_all(game: TableGame) -> dict[str, list[Card]]:
    """Every card drawn in turn; what each player got."""
    got: dict[str, list[Card]] = {nick: [] for nick in nicks(game)}
    while game.turn is not None:
        nick = game.turn
        card, _ = game.draw(nick)
        got[nick].append(card)
    return got


def drawn_pair(game: TableGame) -> tuple[Card, Card]:
    """Some pair of drawn cards that is still on the table."""
    discarded = game.discarded
    drawn = [card for card in game.drawn if card not in discarded]
    _, pairs = split_pairs(drawn)
    return pairs[0]


def empty_hand(game: TableGame, nick: str) -> None:
    """After the deal, discard pairs as ``nick`` (the table cannot tell whose they are once
    cards may have passed) until the table can believe that its hand is empty."""
    while game.least_held(nick)[0] > 0:
        game.discard(nick, *drawn_pair(game))


def out_but(game: TableGame, loser: str, missing: int = 0, others: list[str] | None = None) -> None:
    """Deal the whole deck, and count every player but ``loser`` out (in the order of
    ``others``), with ``missing`` pairs never discarded (the loser discards the others)."""
    deal_all(game)
    if others is None:
        others = [nick for nick in nicks(game) if nick != loser]
    for nick in others:
        empty_hand(game, nick)
    while game.undiscarded_pairs > missing:
        game.discard(loser, *drawn_pair(game))
    for nick in others:
        game.out_of_cards(nick)


def error_text(call: Callable[..., object], *args: Any, **kwargs: Any) -> str:
    with pytest.raises(RefereeError) as caught:
        call(*args, **kwargs)
    return caught.value.message
