"""The table's rules, without sockets, each rule alone: joining and seating, drawing,
discarding.

Going out and the end, whole games and accusations are tested beside it
(``test_referee_end.py``, ``test_referee_games.py``, ``test_referee_accusations.py``).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ring.oldmaid.cards import JOKER, Card, full_deck, partner, split_pairs
from services.oldmaid.referee.rules import (
    DECK_SIZE,
    Aborted,
    Dealt,
    Discarded,
    GameState,
    Started,
    TableGame,
)
from tests.helpers.oldmaid_referee import (
    THREE_C,
    THREE_H,
    THREE_S,
    address,
    deal_all,
    drawn_pair,
    error_text,
    nicks,
    started,
)

# -- joining and seating ----------------------------------------------------------


def test_join_requires_a_unique_valid_nick_and_a_unique_address() -> None:
    game = TableGame(4, seed=1)
    game.join("alice", address(1))
    assert "taken" in error_text(game.join, "alice", address(2))
    assert "10.0.0.1:40001" in error_text(game.join, "bob", address(1))
    assert "alice" in error_text(game.join, "bob", address(1))
    assert "nick" in error_text(game.join, "no spaces", address(3))
    assert "nick" in error_text(game.join, "", address(3))
    assert "nick" in error_text(game.join, "x" * 33, address(3))
    game.join("B-o_b9", address(2))
    assert game.joined == ("alice", "B-o_b9")


def test_a_full_table_refuses_more_players() -> None:
    game = TableGame(2, seed=1)
    game.join("a", address(1))
    game.join("b", address(2))
    assert game.is_full
    assert "full" in error_text(game.join, "c", address(3))


def test_no_join_after_the_start() -> None:
    game = started(2)
    assert "already started" in error_text(game.join, "late", address(9))


def test_leaving_before_the_start_frees_the_seat() -> None:
    game = TableGame(2, seed=1)
    game.join("a", address(1))
    game.leave("a")
    assert game.joined == ()
    game.join("a", address(1))  # nick and address are free again
    assert game.status().in_ == ("a",)
    assert "has not joined" in error_text(game.leave, "ghost")


def test_leaving_during_play_aborts_and_names_the_player() -> None:
    game = started(3)
    game.leave("p1")
    assert game.state is GameState.ABORTED
    assert game.reason == "p1 left the table"
    assert game.take_events() == [Aborted("p1 left the table", culprit="p1", rule="left")]
    assert "aborted: p1 left the table" in error_text(game.draw, "p0")


def test_a_game_needs_two_players() -> None:
    game = TableGame(3, seed=1)
    assert "at least 2" in error_text(game.start)
    game.join("a", address(1))
    assert "at least 2" in error_text(game.start)
    game.join("b", address(2))
    game.start()  # fewer than players_needed is fine (--start-after)
    assert "already started" in error_text(game.start)


@given(seed=st.integers(0, 2**32), order=st.permutations(["ann", "bo", "cy", "di", "ed"]))
def test_seating_and_deck_depend_on_the_seed_not_the_join_order(
    seed: int, order: list[str]
) -> None:
    reference = TableGame(5, seed)
    for i, nick in enumerate(sorted(order)):
        reference.join(nick, address(i))
    game = TableGame(5, seed)
    for i, nick in enumerate(order):
        game.join(nick, address(i))
    assert game.seats == ()  # nobody is seated before the start
    assert [s.nick for s in game.start()] == [s.nick for s in reference.start()]
    assert deal_all(game) == deal_all(reference)
    assert sorted(game.drawn) == sorted(full_deck())


def test_seats_carry_the_join_addresses_and_the_started_event() -> None:
    game = TableGame(2, seed=5)
    game.join("a", ("10.0.0.5", 40001))
    game.join("b", ("10.0.0.6", 40002))
    seats = game.start()
    by_nick = {seat.nick: seat.address for seat in seats}
    assert by_nick == {"a": ("10.0.0.5", 40001), "b": ("10.0.0.6", 40002)}
    assert game.take_events() == [
        Started([s.nick for s in seats], [s.address for s in seats]),
    ]


def test_different_seeds_shuffle_differently() -> None:
    decks = set()
    for seed in range(5):
        game = started(2, seed)
        deal_all(game)
        decks.add(game.drawn)
    assert len(decks) == 5


# -- drawing --------------------------------------------------------------------


def test_draws_go_in_seat_order_starting_with_player1() -> None:
    game = started(3)
    order = nicks(game)
    assert game.turn == order[0]
    text = error_text(game.draw, order[1])
    assert f"it is {order[0]}'s turn" in text
    for i in range(7):
        assert game.turn == order[i % 3]
        game.draw(order[i % 3])
    assert f"{order[1]}'s turn" in error_text(game.draw, order[0])


def test_the_last_card_is_flagged_and_then_the_deck_is_empty() -> None:
    game = started(2)
    flags = []
    while game.turn is not None:
        _, last = game.draw(game.turn)
        flags.append(last)
    assert flags == [False] * (DECK_SIZE - 1) + [True]
    assert game.undrawn == 0
    assert "deck is empty" in error_text(game.draw, nicks(game)[0])
    assert "deck is empty" in error_text(game.draw, nicks(game)[1])


def test_draw_needs_a_running_game_and_a_seated_player() -> None:
    game = TableGame(2, seed=1)
    game.join("a", address(1))
    assert "not started" in error_text(game.draw, "a")
    game.join("b", address(2))
    game.start()
    assert "not playing" in error_text(game.draw, "zed")


def test_dealt_events_record_each_draw() -> None:
    game = started(2)
    first = nicks(game)[0]
    card, last = game.draw(first)
    assert game.take_events() == [Dealt(first, card, last)]


# -- discarding -------------------------------------------------------------------


def test_discard_rejects_what_is_not_a_drawn_pair() -> None:
    game = started(2)
    nick = nicks(game)[0]
    assert "not been drawn" in error_text(game.discard, nick, THREE_S, THREE_C)
    deal_all(game)
    game.take_events()
    assert "not a pair" in error_text(game.discard, nick, THREE_S, THREE_H)
    assert "not a pair" in error_text(game.discard, nick, THREE_S, Card("4", "clubs"))
    assert "same card twice" in error_text(game.discard, nick, THREE_S, THREE_S)
    assert "Old Maid" in error_text(game.discard, nick, JOKER, THREE_S)
    assert "Old Maid" in error_text(game.discard, nick, THREE_S, JOKER)
    assert "unknown card" in error_text(game.discard, nick, Card("1", "spades"), THREE_S)
    assert "unknown card" in error_text(game.discard, nick, THREE_S, Card("3", "stars"))
    assert game.discarded == {}
    assert game.take_events() == []  # a refusal records nothing


def test_one_drawn_card_is_not_enough() -> None:
    for seed in range(3):
        game = started(2, seed)
        first = nicks(game)[0]
        card, _ = game.draw(first)
        if card != JOKER:
            assert "not been drawn" in error_text(game.discard, first, card, partner(card))


def test_a_pair_is_discarded_once_by_anyone() -> None:
    game = started(3)
    deal_all(game)
    game.take_events()
    first, second = drawn_pair(game)
    someone = nicks(game)[2]
    game.discard(someone, first, second)  # the table cannot know who holds them
    assert game.take_events() == [Discarded(someone, [first, second])]
    text = error_text(game.discard, someone, second, first)
    assert "already discarded" in text and someone in text  # its own again: refused
    assert game.state is GameState.PLAYING
    assert game.discarded == {first: someone, second: someone}


def test_a_card_claimed_twice_names_both_claimants_and_blames_neither() -> None:
    game = started(3)
    deal_all(game)
    first, second = drawn_pair(game)
    one, other = nicks(game)[2], nicks(game)[0]
    game.discard(one, first, second)
    game.take_events()
    text = error_text(game.discard, other, second, first)
    assert text.startswith("a card claimed twice: ") and one in text and other in text
    assert (game.state, game.reason, game.culprit, game.rule) == (
        GameState.ABORTED,
        text,
        None,
        "claimed_twice",
    )
    assert game.take_events() == [Aborted(text, None, "claimed_twice")]
    assert game.discarded == {first: one, second: one}


def test_a_discard_of_another_players_deal_before_the_deck_is_empty_names_the_liar() -> None:
    for seed in range(20):
        game = started(3, seed)
        order = nicks(game)
        while True:
            game.draw(game.turn)
            _, pairs = split_pairs(game.drawn)
            owners = {
                nick
                for pair in pairs
                for card in pair
                for nick in order
                if order.index(nick) == game.drawn.index(card) % 3
            }
            if pairs and len(owners) == 1:
                break
        liar = next(nick for nick in order if nick not in owners)
        text = error_text(game.discard, liar, *pairs[0])
        assert text.startswith(f"{liar} discarded ") and "dealt to" in text
        assert (game.state, game.culprit, game.rule) == (
            GameState.ABORTED,
            liar,
            "dealt_to_another",
        )
        return


def test_discard_before_start_and_after_abort() -> None:
    game = TableGame(2, seed=1)
    game.join("a", address(1))
    assert "not started" in error_text(game.discard, "a", THREE_S, THREE_C)
    game.join("b", address(2))
    game.start()
    game.abort("testing")
    assert "aborted: testing" in error_text(game.discard, "a", THREE_S, THREE_C)
    assert "aborted" in error_text(game.out_of_cards, "a")
