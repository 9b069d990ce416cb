"""The table's rules, without sockets: each rule alone, then whole games.

The referee cannot see the cards players pass to each other, so the
property tests simulate the players' hands themselves (``Simulation``) and
check the referee against what really happened at the table.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ring.oldmaid.cards import JOKER, Card, full_deck, is_pair, partner, split_pairs
from services.oldmaid.referee import (
    DECK_SIZE,
    PAIRS,
    REPORT_QUIET,
    Aborted,
    Accused,
    Dealt,
    Discarded,
    GameState,
    Left,
    Over,
    RefereeError,
    Started,
    TableGame,
    WentOut,
)

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


# -- going out and the end -----------------------------------------------------------


def test_going_out_counts_only_once_the_deck_is_empty() -> None:
    game = started(2)
    order = nicks(game)
    assert game.out_of_cards(order[0]) is False  # an early notice is ok, and ignored
    game.draw(order[0])
    assert game.out_of_cards(order[0]) is False
    deal_all(game)
    empty_hand(game, order[1])
    while game.undiscarded_pairs > 1:
        game.discard(order[0], *drawn_pair(game))
    game.take_events()
    assert game.out_of_cards(order[1]) is True
    assert game.take_events() == [WentOut(order[1], 1)]
    assert game.out_of_cards(order[1]) is False  # repeated: nothing changes
    assert game.out == (order[1],)


def test_a_true_flag_on_a_discard_counts_as_out_only_after_the_draw() -> None:
    game = started(3)
    order = nicks(game)
    # Deal until some pair is drawn; the flag then says "my hand is empty".
    while not split_pairs(game.drawn)[1]:
        game.draw(game.turn)
    first, second = split_pairs(game.drawn)[1][0]
    game.discard(order[0], first, second, declares_out=True)
    assert game.out == ()
    deal_all(game)
    game.discard(order[1], *drawn_pair(game))
    while game.least_held(order[1])[0] > 2:
        game.discard(order[1], *drawn_pair(game))
    first, second = drawn_pair(game)
    game.take_events()
    game.discard(order[1], first, second, declares_out=True)
    assert game.out == (order[1],)
    assert game.take_events() == [Discarded(order[1], [first, second]), WentOut(order[1], 1)]
    first, second = drawn_pair(game)
    assert "out of the game" in error_text(game.discard, order[1], first, second)


def test_the_last_player_in_holds_the_old_maid() -> None:
    for declares in (False, True):
        game = started(3)
        order = nicks(game)
        out_but(game, order[1], missing=1)
        assert game.decided
        discarded = game.discarded
        if declares:
            text = error_text(game.discard, order[1], *drawn_pair(game), declares_out=True)
        else:
            text = error_text(game.out_of_cards, order[1])
        # Someone lies: the claimant, or a player out holding the Old Maid.
        assert text.startswith(f"the Old Maid vanished: {order[1]}, the last player in")
        assert order[0] in text and order[2] in text
        assert (game.state, game.culprit, game.rule) == (
            GameState.ABORTED,
            None,
            "old_maid_vanished",
        )
        assert game.discarded == discarded  # the refused discard changed nothing


def test_an_empty_hand_that_must_hold_cards_names_the_liar() -> None:
    game = started(2)
    order = nicks(game)
    deal_all(game)
    least, why = game.least_held(order[0])
    assert least >= 24 and "dealt it 2" in why
    text = error_text(game.out_of_cards, order[0])
    assert text.startswith(f"{order[0]} claimed an empty hand, but it holds at least {least}")
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[0], "hand_not_empty")


def test_what_an_empty_hand_may_still_hold() -> None:
    # A pass from each player out right next to it, and the first offer turn of
    # the last card's drawer, let a player give a card it never picked.
    game = started(4)
    order = nicks(game)
    deal_all(game)
    last = order[(DECK_SIZE - 1) % 4]
    for nick in order:
        game.discard(nick, *drawn_pair(game))
    before = {nick: game.least_held(nick)[0] for nick in order}
    right = order[(order.index(last) - 1) % 4]
    empty_hand(game, right)
    game.out_of_cards(right)
    assert game.least_held(last)[0] == before[last] - 1  # a pass may come from the right
    left = order[(order.index(last) + 1) % 4]
    assert game.least_held(left)[0] == before[left]  # the last drawer is in, to its right


def test_status_before_during_and_after() -> None:
    game = TableGame(3, seed=2)
    game.join("zoe", address(1))
    game.join("amy", address(2))
    standing = game.status()
    assert (standing.state, standing.in_, standing.out) == (GameState.WAITING, ("zoe", "amy"), ())
    game.join("max", address(3))
    game.start()
    order = nicks(game)
    assert game.status().in_ == tuple(order)
    out_but(game, order[1], missing=3, others=[order[2], order[0]])
    standing = game.status()
    assert standing.state is GameState.PLAYING
    assert standing.in_ == (order[1],)
    assert standing.out == (order[2], order[0])  # winner first
    assert standing.loser is None
    while len(game.discarded) < 2 * PAIRS:
        game.discard(order[1], *drawn_pair(game))
    standing = game.status()
    assert standing.state is GameState.OVER
    assert standing.loser == order[1]
    assert standing.out == (order[2], order[0])
    assert game.take_events()[-1] == Over(order[1], [order[2], order[0]], 0)
    # After the end: out_of_cards is still ok; play is refused.
    assert game.out_of_cards(order[0]) is False
    assert "game is over" in error_text(game.draw, order[0])
    assert "game is over" in error_text(game.discard, order[1], THREE_S, THREE_C)
    assert "game is over" in error_text(game.join, "late", address(9))
    game.leave(order[0])
    assert game.state is GameState.OVER
    assert game.abort("too late") is False


def test_over_needs_every_pair_and_all_but_one_out() -> None:
    game = started(2)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    while len(game.discarded) < 2 * PAIRS:
        game.discard(order[0], *drawn_pair(game))
    assert game.state is GameState.PLAYING  # pairs done, but nobody is out yet
    game.out_of_cards(order[1])
    assert game.state is GameState.OVER
    assert game.loser == order[0]


def test_an_out_player_may_leave_and_the_game_goes_on() -> None:
    game = started(3)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[0])
    game.out_of_cards(order[0])
    game.take_events()
    game.leave(order[0])
    assert game.state is GameState.PLAYING
    assert game.take_events() == [Left(order[0])]
    assert game.status().out == (order[0],)
    game.leave(order[1])  # a player still in: the end
    assert game.state is GameState.ABORTED
    assert game.reason == f"{order[1]} left the table"


def test_leaving_after_an_early_out_of_cards_still_aborts() -> None:
    # out_of_cards during the draw counts for nothing, so the player is still in.
    game = started(2)
    order = nicks(game)
    game.out_of_cards(order[1])
    game.leave(order[1])
    assert game.state is GameState.ABORTED


def test_one_player_left_in_with_pairs_missing_is_decided_not_over() -> None:
    game = started(3)
    order = nicks(game)
    out_but(game, order[1], missing=3)  # two went out by out_of_cards, and one pick's pair
    assert game.decided
    assert game.state is GameState.PLAYING
    assert game.undiscarded_pairs == 3
    # The pairs may still come; the last one ends the game as usual.
    while len(game.discarded) < 2 * PAIRS:
        game.discard(order[1], *drawn_pair(game))
    assert not game.decided
    assert game.state is GameState.OVER
    assert game.take_events()[-1] == Over(order[1], [order[0], order[2]], 0)
    assert game.status().undiscarded == 0


def test_a_decided_game_ends_without_the_missing_pairs() -> None:
    game = started(2)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    while len(game.discarded) < 2 * PAIRS - 2:
        game.discard(order[0], *drawn_pair(game))
    assert "not decided" in error_text(game.end_without_pairs)
    game.out_of_cards(order[1])  # went out holding its last pair
    assert game.decided
    game.take_events()
    game.end_without_pairs()
    assert (game.state, game.loser) == (GameState.OVER, order[0])
    assert game.take_events() == [Over(order[0], [order[1]], 1)]
    standing = game.status()
    assert (standing.loser, standing.undiscarded) == (order[0], 1)
    assert "game is over" in error_text(game.discard, order[0], *drawn_pair(game))


def test_the_loser_leaving_a_decided_game_ends_it() -> None:
    game = started(3)
    order = nicks(game)
    out_but(game, order[2], missing=2)
    game.leave(order[2])
    assert (game.state, game.loser) == (GameState.OVER, order[2])
    assert game.status().undiscarded == 2


def test_more_pairs_missing_than_honest_players_leave_cannot_end_a_game() -> None:
    # One player out by out_of_cards may keep a pair, and the loser's last pick may
    # make one: three missing when one is left in is more than that.
    game = started(2)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    while game.undiscarded_pairs > 3:
        game.discard(order[0], *drawn_pair(game))
    game.out_of_cards(order[1])
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, None, "pairs_vanished")
    assert game.reason is not None and game.reason.startswith("pairs vanished: 3 pairs")
    # Two missing waits for the loser's pair; the grace ends it with one kept pair at most.
    game = started(2)
    deal_all(game)
    empty_hand(game, order[1])
    while game.undiscarded_pairs > 2:
        game.discard(order[0], *drawn_pair(game))
    game.out_of_cards(order[1])
    assert game.decided
    game.end_without_pairs()
    assert (game.state, game.rule) == (GameState.ABORTED, "pairs_vanished")


def test_left_with_turn_aborts_naming_the_player_and_the_rule() -> None:
    game = started(4)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    game.out_of_cards(order[1])
    assert "still in the game" in error_text(game.left_with_turn, order[0], order[2])
    assert "still connected" in error_text(game.left_with_turn, order[0], order[1])
    assert "not playing" in error_text(game.left_with_turn, "ghost", order[1])
    assert "not playing" in error_text(game.left_with_turn, order[0], "ghost")
    assert "itself" in error_text(game.left_with_turn, order[1], order[1])
    game.leave(order[1])
    assert game.state is GameState.PLAYING
    # Only the player that handed it the turn, right of it with no one in between, can know.
    text = error_text(game.left_with_turn, order[3], order[1])
    assert f"{order[3]} cannot have handed {order[1]} the turn: {order[0]} sits" in text
    # A game that moved a moment ago is not stalled.
    assert "moved 0.10 s ago" in error_text(game.left_with_turn, order[0], order[1], quiet=0.1)
    assert game.state is GameState.PLAYING
    reason = game.left_with_turn(order[0], order[1], quiet=REPORT_QUIET)
    assert game.state is GameState.ABORTED
    assert (game.reason, game.culprit, game.rule) == (reason, order[1], "left_with_turn")
    assert reason.startswith(f"{order[1]} went out holding the turn and left without passing it")
    assert "num_cards 0" in reason
    assert reason.endswith(f"reported by {order[0]}")
    assert "aborted" in error_text(game.left_with_turn, order[0], order[1])


def test_left_with_turn_is_refused_once_the_game_moved_after_the_player_went_out() -> None:
    game = started(3)
    order = nicks(game)
    deal_all(game)
    for nick in order[:2]:
        empty_hand(game, nick)
    while game.undiscarded_pairs > 2:
        game.discard(order[2], *drawn_pair(game))
    game.out_of_cards(order[1])
    game.leave(order[1])
    game.out_of_cards(order[0])  # the one that handed it the turn: its last card was picked
    game.take_events()
    assert game.state is GameState.PLAYING
    game.discard(order[2], *drawn_pair(game))  # someone else moved: the turn went on
    text = error_text(game.left_with_turn, order[0], order[1])
    assert text.startswith(f"the game moved after {order[1]} went out ({order[2]} discarded")
    assert game.state is GameState.PLAYING


def test_give_up_aborts_naming_the_player_it_blames_not_the_reporter() -> None:
    game = started(4)
    order = nicks(game)
    assert "not playing" in error_text(game.give_up, "ghost", order[1], "did not answer")
    assert "not playing" in error_text(game.give_up, order[0], "ghost", "did not answer")
    assert "because of itself" in error_text(game.give_up, order[0], order[0], "did not answer")
    assert game.state is GameState.PLAYING
    reason = game.give_up(order[0], order[1], "did not answer offer\nwithin 10 s")
    assert reason == (
        f"{order[1]} did not answer offer within 10 s (reported by {order[0]}, "
        "which gave up waiting)"
    )
    assert (game.state, game.reason, game.culprit) == (GameState.ABORTED, reason, order[1])
    assert game.take_events()[-1] == Aborted(reason, culprit=order[1], rule="give_up")
    assert "aborted" in error_text(game.give_up, order[1], order[3], "did not pick")


def test_give_up_names_no_one_where_the_report_cannot_be_true() -> None:
    # A player deals only with its neighbours among the players in, and one that is
    # out only answers out: a report about anyone else is the reporter's word alone.
    game = started(4)
    order = nicks(game)
    reason = game.give_up(order[0], order[2], "did not answer offer within 10 s")
    assert reason.startswith(f"{order[0]} gave up, saying {order[2]} did not answer offer")
    assert f"{order[2]} is not next to {order[0]}" in reason
    assert (game.state, game.culprit) == (GameState.ABORTED, None)
    game = started(3)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    game.out_of_cards(order[1])
    reason = game.give_up(order[0], order[1], "sent garbage")
    assert f"{order[1]} is out" in reason and game.culprit is None


def test_give_up_without_a_culprit_names_no_one_else() -> None:
    game = started(3)
    order = nicks(game)
    reason = game.give_up(order[1], None, "heard nothing for 120 s")
    assert reason == f"{order[1]} gave up: heard nothing for 120 s"
    assert game.culprit is None


def test_abort_once() -> None:
    game = TableGame(2, seed=1)
    assert game.abort("the table shut down") is True
    assert game.abort("again") is False
    standing = game.status()
    assert (standing.state, standing.reason) == (GameState.ABORTED, "the table shut down")
    assert "aborted" in error_text(game.join, "a", address(1))


def test_players_needed_is_checked() -> None:
    for bad in (1, 9):
        with pytest.raises(ValueError):
            TableGame(bad, seed=1)


# -- whole games, simulated ---------------------------------------------------------


class Simulation:
    """The players' side of a game: hands, picks and the turn.

    It plays as WIRE.md's peers do: draw in seat order, discard pairs as
    soon as they are held, hand the turn to the next player who is in, and
    say so when a hand is empty. It checks the referee after every step.
    """

    def __init__(self, game: TableGame, rng: random.Random) -> None:
        self.game = game
        self.rng = rng
        self.seats = nicks(game)
        self.hands: dict[str, list[Card]] = {nick: [] for nick in self.seats}
        self.went_out: list[str] = []
        self.steps = 0

    def check(self) -> None:
        held = [card for hand in self.hands.values() for card in hand]
        discarded = self.game.discarded
        assert len(held) + len(discarded) + self.game.undrawn == DECK_SIZE
        # No card is in two places, and every card held or discarded was dealt.
        assert {*held, *discarded} == set(self.game.drawn)
        assert list(self.game.out) == self.went_out
        self.steps += 1

    def receive(self, nick: str, card: Card) -> None:
        hand = self.hands[nick]
        hand.insert(self.rng.randint(0, len(hand)), card)

    def discard_pairs(self, nick: str, *, offer_phase: bool) -> None:
        self.hands[nick], pairs = split_pairs(self.hands[nick])
        for i, (first, second) in enumerate(pairs):
            empties = not self.hands[nick] and i == len(pairs) - 1
            # In the draw phase a random flag tests that it cannot count.
            flag = empties and (offer_phase or self.rng.random() < 0.5)
            self.game.discard(nick, first, second, declares_out=flag)
            if flag and offer_phase:
                self.went_out.append(nick)
            self.check()

    def go_out(self, nick: str) -> None:
        counted = self.game.out_of_cards(nick)
        assert counted == (nick not in self.went_out)
        if counted:
            self.went_out.append(nick)
        if self.rng.random() < 0.2:
            assert self.game.out_of_cards(nick) is False  # a repeat changes nothing
        self.check()

    def next_in(self, holder: str) -> str | None:
        start = self.seats.index(holder)
        for step in range(1, len(self.seats)):
            nick = self.seats[(start + step) % len(self.seats)]
            if not self.hands[nick]:
                self.go_out(nick)  # out_of_cards before answering "out"
                continue
            return nick
        return None

    def play(self) -> str:
        """The loser, as the players see it."""
        game = self.game
        holder = self.seats[0]
        while game.turn is not None:
            holder = game.turn
            if not self.hands[holder] and self.rng.random() < 0.3:
                assert game.out_of_cards(holder) is False  # empty mid-draw: not out
            card, last = game.draw(holder)
            self.receive(holder, card)
            self.check()
            self.discard_pairs(holder, offer_phase=last)
        while True:
            assert self.steps < 20_000, "the game does not end"
            if not self.hands[holder]:
                self.go_out(holder)
            picker = self.next_in(holder)
            if picker is None:
                return holder
            if not self.hands[holder]:
                holder = picker  # a pass: the turn moves on without a pick
                continue
            card = self.hands[holder].pop(self.rng.randrange(len(self.hands[holder])))
            self.receive(picker, card)
            self.check()
            if not self.hands[holder]:
                self.go_out(holder)
            self.discard_pairs(picker, offer_phase=True)
            holder = picker


@settings(max_examples=200, deadline=None)
@given(players=st.integers(2, 8), seed=st.integers(0, 2**32), pick_seed=st.integers(0, 2**32))
def test_whole_games_end_with_one_loser_who_holds_the_old_maid(
    players: int, seed: int, pick_seed: int
) -> None:
    picks = random.Random(pick_seed)  # join order, card placement, picks, flags
    game = TableGame(players, seed)
    for i in picks.sample(range(players), players):
        game.join(f"player{i}", address(i))
    game.start()
    simulation = Simulation(game, picks)
    loser = simulation.play()

    assert game.state is GameState.OVER
    assert game.loser == loser
    assert simulation.hands[loser] == [JOKER]
    assert all(not hand for nick, hand in simulation.hands.items() if nick != loser)
    assert len(game.discarded) == 2 * PAIRS
    assert JOKER not in game.discarded
    assert list(game.out) == simulation.went_out
    assert sorted([*game.out, loser]) == sorted(simulation.seats)
    standing = game.status()
    assert (standing.loser, standing.in_, standing.out) == (loser, (loser,), game.out)
    events = game.take_events()
    assert sum(isinstance(e, Dealt) for e in events) == DECK_SIZE
    assert sum(isinstance(e, Discarded) for e in events) == PAIRS
    assert [e.nick for e in events if isinstance(e, WentOut)] == list(game.out)
    assert [e.place for e in events if isinstance(e, WentOut)] == list(range(1, players))
    assert events[-1] == Over(loser, list(game.out), 0)


# -- anything at all, in any order ---------------------------------------------------

NICKS = ["ann", "bob", "cy", "dee"]
CARDS = [*full_deck(), Card("1", "spades"), Card("3", "stars")]

actions = st.one_of(
    st.tuples(st.just("join"), st.sampled_from([*NICKS, "bad nick"]), st.integers(0, 4)),
    # Leaving aborts a game under way (unless the player is out); rare, so
    # that games get somewhere.
    st.tuples(st.just("leave"), st.sampled_from(NICKS), st.integers(0, 9)),
    st.tuples(st.just("start")),
    st.tuples(st.just("draw"), st.sampled_from(NICKS)),
    st.tuples(st.just("draw_in_turn")),
    st.tuples(st.just("deal_the_rest")),
    st.tuples(
        st.just("discard"),
        st.sampled_from(NICKS),
        st.sampled_from(CARDS),
        st.sampled_from(CARDS),
        st.booleans(),
    ),
    st.tuples(st.just("discard_drawn_pair"), st.sampled_from(NICKS), st.booleans()),
    st.tuples(st.just("discard_every_pair"), st.sampled_from(NICKS)),
    st.tuples(st.just("out_of_cards"), st.sampled_from(NICKS)),
    st.tuples(st.just("all_out_but"), st.integers(0, 3)),
    st.tuples(st.just("status")),
    st.tuples(st.just("abort"), st.integers(0, 9)),
    st.tuples(st.just("end_without_pairs")),
    st.tuples(st.just("left_with_turn"), st.sampled_from(NICKS), st.sampled_from(NICKS)),
)


def apply(game: TableGame, action: tuple) -> None:
    kind, *args = action
    if kind == "join":
        nick, port = args
        game.join(nick, ("10.0.0.9", 40000 + port))
    elif kind == "leave":
        if args[1] == 0 or game.state is GameState.WAITING:
            game.leave(args[0])
    elif kind == "start":
        game.start()
    elif kind == "draw":
        game.draw(args[0])
    elif kind == "draw_in_turn":
        if game.turn is not None:
            game.draw(game.turn)
    elif kind == "deal_the_rest":
        while game.turn is not None:
            game.draw(game.turn)
    elif kind == "discard":
        nick, first, second, flag = args
        game.discard(nick, first, second, declares_out=flag)
    elif kind == "discard_drawn_pair":
        nick, flag = args
        _, pairs = split_pairs(c for c in game.drawn if c not in game.discarded)
        if pairs:
            game.discard(nick, *pairs[0], declares_out=flag)
    elif kind == "discard_every_pair":
        _, pairs = split_pairs(c for c in game.drawn if c not in game.discarded)
        for pair in pairs:
            game.discard(args[0], *pair)
    elif kind == "out_of_cards":
        game.out_of_cards(args[0])
    elif kind == "all_out_but":
        # As a game would go: the others empty their hands, the loser discards all
        # but one pair for each of them (each may keep its last), and they go out.
        others = [
            s.nick for i, s in enumerate(game.seats) if i != args[0] and s.nick not in game.out
        ]
        if game.state is GameState.PLAYING and game.undrawn == 0 and len(game.seats) > args[0]:
            for nick in others:
                while game.least_held(nick)[0] > 0 and _some_pair(game):
                    game.discard(nick, *drawn_pair(game))
            while game.undiscarded_pairs > len(others) and _some_pair(game):
                game.discard(game.seats[args[0]].nick, *drawn_pair(game))
        for nick in others:
            if len(game.out) < len(game.seats) - 1:
                game.out_of_cards(nick)
    elif kind == "status":
        game.status()
    elif kind == "abort" and args[0] == 0:
        game.abort("testing")
    elif kind == "end_without_pairs":
        game.end_without_pairs()
    elif kind == "left_with_turn":
        game.left_with_turn(*args)


def _some_pair(game: TableGame) -> bool:
    return bool(split_pairs(c for c in game.drawn if c not in game.discarded)[1])


def check_consistent(game: TableGame, events: list) -> None:
    seated = nicks(game)
    assert len(set(game.joined)) == len(game.joined) <= game.players_needed
    assert len(game.drawn) + game.undrawn == (DECK_SIZE if seated else 0)
    assert len(set(game.drawn)) == len(game.drawn)
    discarded = game.discarded
    assert set(discarded) <= set(game.drawn)
    assert JOKER not in discarded
    for card in discarded:
        assert any(is_pair(card, other) for other in discarded)
    assert len(set(game.out)) == len(game.out)
    assert set(game.out) <= set(seated)
    if game.out:
        assert game.undrawn == 0
    standing = game.status()
    assert standing.state is game.state
    if seated:
        assert sorted([*standing.in_, *standing.out]) == sorted(seated)
    overs = [e for e in events if isinstance(e, Over)]
    if game.state is GameState.OVER:
        assert game.undrawn == 0
        assert len(game.out) == len(seated) - 1
        assert game.loser is not None and game.loser not in game.out
        # Over is recorded once, with the pairs that were never discarded.
        assert [(e.loser, e.undiscarded) for e in overs] == [
            (game.loser, PAIRS - len(discarded) // 2)
        ]
        assert standing.undiscarded == PAIRS - len(discarded) // 2
    else:
        assert game.loser is None
        assert overs == []
    # Decided: one player left in with the deck dealt, and pairs still missing.
    assert game.decided == (
        game.state is GameState.PLAYING
        and game.undrawn == 0
        and len(game.out) == len(seated) - 1
        and len(discarded) < 2 * PAIRS
    )
    left = {e.nick for e in events if isinstance(e, Left)}
    assert left <= set(game.out)  # only players who are out leave without an abort
    assert sum(isinstance(e, Dealt) for e in events) == len(game.drawn)
    assert sum(isinstance(e, Discarded) for e in events) * 2 == len(discarded)
    assert [e.nick for e in events if isinstance(e, WentOut)] == list(game.out)


@settings(max_examples=300, deadline=None)
@given(
    players=st.integers(2, 4),
    seed=st.integers(0, 2**32),
    head_start=st.integers(0, 4),
    script=st.lists(actions, max_size=120),
)
def test_any_sequence_of_requests_is_accepted_or_refused_cleanly(
    players: int, seed: int, head_start: int, script: list[tuple]
) -> None:
    game = TableGame(players, seed)
    # Random scripts seldom get far on their own, so some start with a game
    # seated, dealt, with every pair discarded, or decided.
    if head_start >= 1:
        for i in range(players):
            game.join(NICKS[i], ("10.0.0.9", 40000 + i))
        game.start()
    if head_start >= 2:
        apply(game, ("deal_the_rest",))
    if head_start == 3:
        apply(game, ("discard_every_pair", NICKS[0]))
    if head_start == 4:  # decided: one player left in, no pair discarded
        apply(game, ("all_out_but", 0))
    events: list = game.take_events()
    for action in script:
        before = (game.state, game.drawn, game.discarded, game.out, game.joined)
        try:
            apply(game, action)
        except RefereeError as exc:
            assert exc.message  # every refusal says why
            # A refusal changes nothing, but for a claim the table knows is false: that
            # ends the game (and a script's first steps may have gone through).
            if game.state is GameState.ABORTED and before[0] is GameState.PLAYING:
                assert game.rule is not None and exc.message == game.reason
            elif action[0] != "all_out_but":
                assert (game.state, game.drawn, game.discarded, game.out, game.joined) == before
        events.extend(game.take_events())
        check_consistent(game, events)
    event(f"ended {game.state.value}")
    if game.state is GameState.OVER:
        event("over, pairs undiscarded" if game.status().undiscarded else "over, all pairs")


# -- accusations (protocol 5.9) -------------------------------------------------------


def test_an_accusation_from_a_dialled_connection_names_the_accused_after_its_window() -> None:
    game = started(4)
    order = nicks(game)
    game.take_events()
    evidence = {"num_cards": 5, "card_nums": [1, 3]}
    answer = game.accuse(order[0], order[1], "second_pick", evidence)
    assert "in a moment naming" in answer and game.pending is not None
    assert game.state is GameState.PLAYING
    game.leave(order[0])  # the accuser leaves once it has said it: no abort naming it
    assert game.state is GameState.PLAYING
    game.settle()
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[1], "second_pick")
    assert game.reason is not None
    assert game.reason.startswith(f"{order[1]} picked twice from one offer of {order[0]}'s")
    assert game.reason.endswith(f"reported by {order[0]}")
    events = game.take_events()
    assert events[0] == Accused(order[0], order[1], "second_pick", "pending")
    assert events[-1] == Aborted(game.reason, order[1], "second_pick")


def test_the_accused_leaving_settles_the_accusation_at_once() -> None:
    game = started(3)
    order = nicks(game)
    game.accuse(order[0], order[1], "bad_picks", {})
    game.leave(order[1])
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[1], "bad_picks")


def test_an_accusation_that_contradicts_the_table_is_refused_and_the_game_goes_on() -> None:
    game = started(4)
    order = nicks(game)
    # A picker is the next player in to the left, not one further on.
    text = error_text(game.accuse, order[0], order[2], "second_pick", {})
    assert f"{order[2]} is not the player {order[0]} offers to: {order[1]} sits" in text
    assert "unknown rule" in error_text(game.accuse, order[0], order[1], "cheating", {})
    assert "names the accused" in error_text(game.accuse, order[0], None, "false_out", {})
    assert "itself" in error_text(game.accuse, order[0], order[0], "duplicate_card", {})
    deal_all(game)
    empty_hand(game, order[1])
    game.out_of_cards(order[1])
    assert "is out, so it answers out" in error_text(
        game.accuse, order[0], order[1], "false_out", {}
    )
    assert game.state is GameState.PLAYING and game.pending is None
    # With order[1] out, order[2] is the one order[0] offers to.
    game.accuse(order[0], order[2], "second_pick", {})
    assert game.pending is not None


def test_two_players_accusing_each_other_are_both_left_unblamed() -> None:
    game = started(2)
    order = nicks(game)
    game.accuse(order[0], order[1], "false_out", {})
    game.accuse(order[0], order[1], "second_pick", {})  # more of the same: noted
    assert game.state is GameState.PLAYING
    text = game.accuse(order[1], order[0], "second_pick", {})
    assert text.startswith(f"{order[0]} and {order[1]} accuse each other")
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, None, "mutual")
    game.settle()  # nothing pending any more
    assert game.reason == text


def test_an_accusation_about_what_reached_the_accuser_names_no_one() -> None:
    for rule in ("duplicate_card", "second_joker", "not_neighbour", "pass_while_in"):
        game = started(3)
        order = nicks(game)
        text = game.accuse(order[1], order[0], rule, {"what": "got  a card\nit holds"})
        assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, None, rule)
        assert f"from {order[0]}, as {order[1]} was told" in text and "names no one" in text
        assert "(got a card it holds)" in text
        game = started(3)
        game.accuse(nicks(game)[1], None, rule, {})
        assert (game.state, game.culprit) == (GameState.ABORTED, None)


def test_impersonation_names_the_one_player_that_sends_no_proofs() -> None:
    game = TableGame(4, 1)
    for i in range(4):
        game.join(f"p{i}", address(i))
    game.verified.update({"p0", "p1", "p2"})
    game.start()
    started_event = game.take_events()[-1]
    assert sorted(started_event.verified or []) == ["p0", "p1", "p2"]
    # Only a verified player can tell; two that send no proofs cannot be told apart.
    assert "did not join with verify" in error_text(game.accuse, "p3", "p0", "impersonation", {})
    game.accuse("p0", "p3", "impersonation", {"what": "a turn as p1 without a proof"})
    game.settle()
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, "p3", "impersonation")


def test_impersonation_with_two_older_clients_names_no_one() -> None:
    game = started(4)
    game.verified.update({"p0", "p1"})
    assert "neither do" in error_text(game.accuse, "p0", "p3", "impersonation", {})
    game.accuse("p0", None, "impersonation", {})
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, None, "impersonation")
