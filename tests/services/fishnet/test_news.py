"""FishNet's news without sockets: what each seat is told, paired with client links."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from services.fishnet.news import News
from services.fishnet.protocol import (
    END_MESSAGES,
    Fish,
    Link,
    OppGives,
    OppMakes,
    Pass,
    Play,
    Request,
    Role,
    TieGame,
    YouLose,
    YouMake,
    YourTurn,
    YouWin,
)
from services.fishnet.rules import BOOK_SIZE, DECK_SIZE, FishNetGame
from tests.helpers.fishnet import sample_game


def test_sample_session_as_the_handout_shows_it() -> None:
    news = News(sample_game())
    to_client = [t.message for t in news.deal() if t.seat == 0]
    assert to_client == [
        Fish(3),
        Fish(4),
        Fish(2),
        Fish(4),
        Fish(9),
        Fish(12),
        OppMakes(0),
        Fish(2),
    ]
    assert news.game.turn == 0
    assert [t.message for t in news.act(0, Request(3)) if t.seat == 0] == [OppGives(2, 3)]
    assert news.game.turn == 0
    assert [t.message for t in news.act(0, Request(12)) if t.seat == 0] == [Fish(8)]
    assert news.game.turn == 1
    # Spot holds one 2: it asks for it, gets the client's two, asks again and fishes the last.
    first = news.act(1, Request(2))
    assert [(t.seat, t.message) for t in first] == [(1, OppGives(2, 2)), (0, Request(2))]
    second = news.act(1, Request(2))
    assert [(t.seat, t.message) for t in second] == [
        (1, Fish(2)),
        (0, Request(2)),
        (0, OppMakes(2)),
    ]
    assert news.game.over
    assert [(t.seat, t.message) for t in news.ending()] == [(0, YouLose()), (1, YouWin())]


def test_youmake_tells_the_maker_before_the_opponent() -> None:
    news = News(sample_game(), youmake=True)
    deal = news.deal()
    assert [(t.seat, t.message) for t in deal if not isinstance(t.message, Fish)] == [
        (1, YouMake(0)),
        (0, OppMakes(0)),
    ]


def test_a_pass_after_a_pass_fishes_and_the_opponent_hears_pass() -> None:
    news = News(FishNetGame("pass", first=0))
    news.deal()
    assert [(t.seat, t.message) for t in news.act(0, Pass())] == [(1, Pass())]
    news.act(1, Pass())
    tells = news.act(0, Pass())
    assert isinstance(tells[0].message, Fish) and tells[0].seat == 0
    assert tells[1].seat == 1 and tells[1].message == Pass()


def test_a_stopped_game_ends_by_its_books() -> None:
    news = News(sample_game())
    news.deal()  # spot has the book of 0s
    news.game.stop()
    assert [t.message for t in news.ending()] == [YouLose(), YouWin()]


class SeatTracker:
    """What a client can know from its messages alone: its hand, books, the counts."""

    def __init__(self) -> None:
        self.hand: Counter[int] = Counter()
        self.my_books: list[int] = []
        self.their_books: list[int] = []
        self.asked: int | None = None

    def hear(self, message: object) -> None:
        if isinstance(message, Fish):
            self.hand[message.rank] += 1
        elif isinstance(message, OppGives):
            self.hand[message.rank] += message.count
        elif isinstance(message, Request):
            self.hand[message.rank] = 0  # the opponent took them all
        elif isinstance(message, OppMakes):
            self.their_books.append(message.rank)
        for rank, count in list(self.hand.items()):
            if count == BOOK_SIZE:
                del self.hand[rank]
                self.my_books.append(rank)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), choice_seed=st.integers(0, 10**6))
def test_random_legal_play_every_line_is_valid_and_cards_are_conserved(
    seed: int, choice_seed: int
) -> None:
    """Random legal moves: both seats' links accept every line, the messages
    rebuild each hand exactly, 52 cards are always accounted for, and each
    result matches the books."""
    choices = random.Random(choice_seed)
    game = FishNetGame(seed)
    news = News(game, youmake=choices.random() < 0.5)
    servers, clients = (
        [Link(Role.SERVER), Link(Role.SERVER)],
        [Link(Role.CLIENT), Link(Role.CLIENT)],
    )
    trackers = [SeatTracker(), SeatTracker()]

    def deliver(seat: int, message: object) -> None:
        clients[seat].receive_data(servers[seat].send(message))
        heard = clients[seat].next_event()
        assert heard == message
        trackers[seat].hear(heard)

    for seat in (0, 1):
        servers[seat].receive_data(clients[seat].send(Play(f"p{seat}", f"p{1 - seat}")))
        assert servers[seat].next_event() == Play(f"p{seat}", f"p{1 - seat}")
    for tell in news.deal():
        deliver(tell.seat, tell.message)

    moves = 0
    while not game.over and moves < 600:
        moves += 1
        seat = game.turn
        deliver(seat, YourTurn())
        held = game.view(seat).ranks_held
        move = Pass() if choices.random() < 0.1 else Request(choices.choice(held))
        servers[seat].receive_data(clients[seat].send(move))
        assert servers[seat].next_event() == move
        for tell in news.act(seat, move):
            deliver(tell.seat, tell.message)
        for s in (0, 1):
            assert tuple(trackers[s].hand[r] for r in range(13)) == game.hand(s)
            assert sorted(trackers[s].my_books) == sorted(game.books(s))
        cards = sum(game.hand_size(s) for s in (0, 1)) + game.deck_size
        cards += BOOK_SIZE * sum(len(game.books(s)) for s in (0, 1))
        assert cards == DECK_SIZE
    if not game.over:
        game.stop()  # random passing on an empty deck: the server's move cap
    endings = news.ending()
    for tell in endings:
        deliver(tell.seat, tell.message)
        assert isinstance(tell.message, END_MESSAGES)
    mine, theirs = len(game.books(0)), len(game.books(1))
    if mine == theirs:
        assert [t.message for t in endings] == [TieGame(), TieGame()]
    else:
        winner = 0 if mine > theirs else 1
        assert endings[winner].message == YouWin()
        assert endings[1 - winner].message == YouLose()
