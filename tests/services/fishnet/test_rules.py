"""FishNet's rules without sockets: the shared Go Fish parts, each rule alone, then whole games.

Exact situations come from a stacked deck (``stack``) or a position in
mid-play (``FishNetGame.from_position``); whole games come from seeds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.fishnet.rules import (
    BOOK_SIZE,
    DECK_SIZE,
    HAND_SIZE,
    RANK_COUNT,
    RANKS,
    BookMade,
    Dealt,
    FishNetGame,
    Passed,
    PlayerView,
    Requested,
    Result,
    RuleError,
    books_in,
    build_deck,
    full_deck,
    is_rank,
    rank_counts,
    remove_books,
    shuffled,
)


def stack(first_hand: list[int], second_hand: list[int], stock: Sequence[int] = ()) -> list[int]:
    """A deck that deals these hands (first player first) and then fishes ``stock`` first."""
    assert len(first_hand) == len(second_hand) == HAND_SIZE
    deck = [card for pair in zip(first_hand, second_hand, strict=True) for card in pair]
    deck += stock
    rest = full_deck()
    for card in deck:
        rest.remove(card)
    return deck + rest


def rule_error(call: Callable[..., object], *args: Any) -> str:
    with pytest.raises(RuleError) as caught:
        call(*args)
    return caught.value.reason


def snapshot(game: FishNetGame) -> tuple:
    return (
        game.hand(0),
        game.hand(1),
        game.books(0),
        game.books(1),
        game.deck_size,
        game.turn,
        game.over,
        game.view(0),
        game.view(1),
        game.book_log,
    )


def banked_books(made: int) -> tuple[list[int], list[int]]:
    """Books of the lowest ``made`` ranks, alternating between the players."""
    return [r for r in range(made) if r % 2 == 0], [r for r in range(made) if r % 2 == 1]


# -- what every Go Fish shares ----------------------------------------------------


def test_the_deck_is_four_of_each_rank_and_shuffles_by_seed() -> None:
    deck = full_deck()
    assert len(deck) == DECK_SIZE == 52
    assert rank_counts(deck) == (BOOK_SIZE,) * RANK_COUNT
    first = shuffled(deck, random.Random(7))
    assert first == shuffled(deck, random.Random(7)) != shuffled(deck, random.Random(8))
    assert sorted(first) == deck and deck == full_deck()  # a copy; the input is untouched
    suited = build_deck(lambda rank, copy: (rank, "CDHS"[copy]))
    assert len(set(suited)) == DECK_SIZE
    assert rank_counts(suited, lambda card: card[0]) == (BOOK_SIZE,) * RANK_COUNT


def test_books_are_found_and_removed_with_or_without_suits() -> None:
    hand = [3, 5, 3, 3, 9, 3, 5, 5, 5, 1]
    assert books_in(hand) == (3, 5)
    assert remove_books(hand) == (3, 5)
    assert hand == [9, 1]
    assert remove_books(hand) == ()
    suited = [(12, "C"), (12, "D"), (0, "S"), (12, "H"), (12, "S")]
    assert remove_books(suited, lambda card: card[0]) == (12,)
    assert suited == [(0, "S")]


def test_ranks_are_ints_0_to_12() -> None:
    assert [r for r in range(-2, 15) if is_rank(r)] == list(RANKS)
    assert not any(is_rank(bad) for bad in (True, False, "3", 3.0, None))


# -- the deal ---------------------------------------------------------------------


def test_a_seed_fixes_the_deal_and_the_first_player() -> None:
    games = [FishNetGame(seed) for seed in range(20)]
    assert all(snapshot(g) == snapshot(FishNetGame(s)) for s, g in enumerate(games))
    assert len({g.deal_log for g in games}) == 20
    assert {g.first_player for g in games} == {0, 1}
    for game in games:
        assert game.turn == game.first_player
        assert game.deck_size == DECK_SIZE - 2 * HAND_SIZE
        dealt = [e for e in game.deal_log if isinstance(e, Dealt)]
        assert [e.player for e in dealt] == [(game.first_player + i) % 2 for i in range(14)]


def test_books_made_in_the_deal_are_removed_and_recorded_in_order() -> None:
    # The handout's sample: you (player 0) get 2,2,3,4,4,9,12 (in the order
    # 3,4,2,4,9,12,2); Spot completes its 0s just before your seventh card.
    game = FishNetGame.from_deck(
        stack([3, 4, 2, 4, 9, 12, 2], [0, 0, 3, 0, 3, 0, 2], stock=[8, 2]), first=0
    )
    log = game.deal_log
    assert log[-3:] == (BookMade(1, 0, 0), Dealt(0, 2), Dealt(1, 2))
    assert [e.rank for e in log if isinstance(e, Dealt) and e.player == 0] == [3, 4, 2, 4, 9, 12, 2]
    assert game.books(1) == (0,) and game.books(0) == ()
    assert game.book_log == (BookMade(1, 0, 0),)
    assert game.hand_size(1) == 3 and game.hand_size(0) == HAND_SIZE
    assert not game.over and game.turn == 0


def test_the_handout_sample_game() -> None:
    game = FishNetGame.from_deck(
        stack([3, 4, 2, 4, 9, 12, 2], [0, 0, 3, 0, 3, 0, 2], stock=[8, 2]), first=0
    )
    assert game.request(0, 3) == Requested(0, 3, 2, None, (), True, 0, False)
    assert game.request(0, 12) == Requested(0, 12, 0, 8, (), False, 1, False)
    assert game.request(1, 2) == Requested(1, 2, 2, None, (), True, 1, False)
    assert game.request(1, 2) == Requested(1, 2, 0, 2, (2,), True, None, True)
    assert game.hand_size(1) == 0
    assert game.books(1) == (0, 2)
    assert game.book_log[-1] == BookMade(1, 2, 4)
    assert (game.result(0), game.result(1), game.winner()) == (Result.LOSE, Result.WIN, 1)


def test_a_hand_emptied_in_the_deal_is_refilled_and_play_starts() -> None:
    game = FishNetGame.from_deck(stack([5, 5, 5, 5, 1, 2, 3], [6] * 3 + [7] * 4), first=1)
    log = game.deal_log
    assert BookMade(1, 5, 0) in log and BookMade(0, 7, 0) in log  # player 1 was dealt first
    assert log.index(BookMade(1, 5, 0)) == 7  # right after the fourth 5, the 7th card dealt
    assert game.hand_size(0) == 3 and game.hand_size(1) == 3
    assert not game.over and game.turn == 1


def test_bad_decks_and_positions_are_refused() -> None:
    with pytest.raises(ValueError):
        FishNetGame.from_deck(full_deck()[:-1], first=0)
    with pytest.raises(ValueError):
        FishNetGame.from_deck(full_deck(), first=2)
    with pytest.raises(ValueError):
        FishNetGame.from_position(([0, 0, 0, 0], [1]), stock=full_deck()[5:])


# -- requests ---------------------------------------------------------------------


def test_illegal_requests_are_refused_and_change_nothing() -> None:
    game = FishNetGame.from_deck(stack([1, 2, 3, 4, 5, 6, 7], [1, 1, 8, 9, 10, 11, 12]), first=0)
    before = snapshot(game)
    assert rule_error(game.request, 1, 8) == "not_your_turn"
    assert rule_error(game.pass_turn, 1) == "not_your_turn"
    assert rule_error(game.request, 0, 8) == "rank_not_held"
    for bad in (-1, 13, True, "1", 1.0, None):
        assert rule_error(game.request, 0, bad) == "bad_rank"
    assert rule_error(game.request, 1, 13) == "not_your_turn"  # out of turn comes first
    assert rule_error(game.winner) == "game_not_over"
    assert rule_error(game.result, 0) == "game_not_over"
    with pytest.raises(ValueError):
        game.request(2, 1)
    with pytest.raises(ValueError):
        game.view(-1)
    assert snapshot(game) == before


def test_the_opponent_gives_every_card_of_the_rank_and_the_requester_goes_again() -> None:
    game = FishNetGame.from_deck(stack([1, 2, 3, 4, 5, 6, 7], [1, 1, 8, 9, 10, 11, 12]), first=0)
    deck_size = game.deck_size
    assert game.request(0, 1) == Requested(0, 1, 2, None, (), True, 0, False)
    assert game.hand(0)[1] == 3 and game.hand(1)[1] == 0
    assert game.deck_size == deck_size  # no fishing when cards are given
    assert game.turn == 0


def test_a_gift_that_completes_a_book_removes_it() -> None:
    game = FishNetGame.from_deck(stack([1, 1, 1, 4, 5, 6, 7], [1, 2, 8, 9, 10, 11, 12]), first=0)
    assert game.request(0, 1) == Requested(0, 1, 1, None, (1,), True, 0, False)
    assert game.hand(0)[1] == 0 and game.books(0) == (1,)
    assert game.book_log == (BookMade(0, 1, 1),)


def test_fishing_the_requested_rank_gives_another_turn() -> None:
    game = FishNetGame.from_deck(
        stack([1, 2, 3, 4, 5, 6, 7], [8, 8, 9, 9, 10, 11, 12], stock=[2, 0]), first=0
    )
    assert game.request(0, 2) == Requested(0, 2, 0, 2, (), True, 0, False)
    assert game.hand(0)[2] == 2 and game.deck_size == DECK_SIZE - 15


def test_fishing_another_rank_passes_the_turn() -> None:
    game = FishNetGame.from_deck(
        stack([1, 2, 3, 4, 5, 6, 7], [8, 8, 9, 9, 10, 11, 12], stock=[0, 2]), first=0
    )
    assert game.request(0, 2) == Requested(0, 2, 0, 0, (), False, 1, False)
    assert game.hand(0)[0] == 1 and game.turn == 1
    assert game.view(0).turn == game.view(1).turn == 1


def test_a_fished_card_can_complete_a_book() -> None:
    game = FishNetGame.from_deck(
        stack([1, 2, 2, 2, 5, 6, 7], [8, 8, 9, 9, 10, 11, 12], stock=[2]), first=0
    )
    assert game.request(0, 1) == Requested(0, 1, 0, 2, (2,), False, 1, False)
    assert game.books(0) == (2,)


def test_the_last_card_of_the_deck_and_then_an_empty_deck() -> None:
    game = FishNetGame.from_position(
        ([9, 10, 10, 10, 11, 11, 11, 12], [9, 9, 9, 10, 12, 12, 12]),
        stock=[11],
        books=banked_books(9),  # ranks 0-8; 9-12 are in play
    )
    assert game.request(0, 11) == Requested(0, 11, 0, 11, (11,), True, 0, False)
    assert game.deck_size == 0
    # With an empty deck every unbooked card is in a hand, so a request always
    # finds the rest of the rank and completes a book; nothing is fished.
    assert game.request(0, 9) == Requested(0, 9, 3, None, (9,), True, 0, False)
    assert game.request(0, 10) == Requested(0, 10, 1, None, (10,), True, 0, False)
    assert game.request(0, 12) == Requested(0, 12, 3, None, (12,), True, None, True)
    assert game.books(0) == (0, 2, 4, 6, 8, 11, 9, 10, 12)
    assert game.winner() == 0


# -- passing ----------------------------------------------------------------------


def test_a_pass_forfeits_the_turn_and_a_second_pass_in_a_row_fishes() -> None:
    game = FishNetGame.from_deck(
        stack([1, 2, 3, 4, 5, 6, 7], [8, 8, 9, 9, 10, 11, 12], stock=[0, 1, 2, 3]), first=0
    )
    assert game.pass_turn(0) == Passed(0, None, (), 1, False)
    assert game.view(0).passed_last and game.deck_size == DECK_SIZE - 14
    assert game.pass_turn(1) == Passed(1, None, (), 0, False)
    assert game.pass_turn(0) == Passed(0, 0, (), 1, False)  # passed last turn too: fish
    assert game.request(1, 8) == Requested(1, 8, 0, 1, (), False, 0, False)  # clears 1's pass
    assert game.pass_turn(0) == Passed(0, 2, (), 1, False)  # every pass after a pass fishes
    assert not game.view(1).passed_last
    assert game.pass_turn(1) == Passed(1, None, (), 0, False)


def test_a_request_clears_the_pass_and_a_pass_after_a_gift_hands_over_the_turn() -> None:
    game = FishNetGame.from_deck(stack([1, 2, 3, 4, 5, 6, 7], [1, 8, 9, 9, 10, 11, 12]), first=0)
    game.pass_turn(0)
    game.pass_turn(1)
    game.request(0, 1)  # a gift: player 0 goes again
    assert game.pass_turn(0) == Passed(0, None, (), 1, False)  # not a pass in a row


def test_a_fishing_pass_can_make_a_book_and_with_an_empty_deck_fishes_nothing() -> None:
    game = FishNetGame.from_position(
        ([0, 0, 0, 1], [1, 1, 1, 2, 2, 2]),
        stock=[0, 2],
        books=([3, 5, 7, 9, 11], [4, 6, 8, 10, 12]),
        passed=(True, False),
    )
    assert game.pass_turn(0) == Passed(0, 0, (0,), 1, False)
    assert game.pass_turn(1) == Passed(1, None, (), 0, False)
    assert game.pass_turn(0) == Passed(0, 2, (), 1, False)
    assert game.deck_size == 0
    for _ in range(10):  # passing forever with an empty deck: the server must bound it
        assert game.pass_turn(game.turn).fished is None
    assert not game.over


# -- the end ----------------------------------------------------------------------


def test_the_game_ends_when_the_opponent_gives_away_its_last_cards() -> None:
    books = banked_books(10)
    game = FishNetGame.from_position(
        ([10, 11, 11], [10, 10, 10]), stock=[12] * 4 + [11] * 2, books=books
    )
    assert game.request(0, 10) == Requested(0, 10, 3, None, (10,), True, None, True)
    assert game.hand_size(1) == 0 and game.turn is None
    assert rule_error(game.request, 0, 11) == "game_over"
    assert rule_error(game.pass_turn, 1) == "game_over"
    assert game.books(0) == (0, 2, 4, 6, 8, 10)
    assert (game.result(0), game.result(1)) == (Result.WIN, Result.LOSE)


def test_the_game_ends_when_the_requester_books_its_last_cards() -> None:
    books = banked_books(10)
    game = FishNetGame.from_position(
        ([10, 10, 10], [10, 11, 11, 12]), stock=[11, 11, 12, 12, 12], books=books, turn=0
    )
    assert game.request(0, 10) == Requested(0, 10, 1, None, (10,), True, None, True)
    assert game.hand_size(0) == 0 and game.winner() == 0


def test_the_game_ends_with_all_13_books() -> None:
    zeros, ones = banked_books(12)  # 6 books each; rank 12 is split
    game = FishNetGame.from_position(([12, 12], [12, 12]), stock=[], books=(zeros, ones), turn=1)
    assert game.request(1, 12) == Requested(1, 12, 2, None, (12,), True, None, True)
    assert len(game.books(0)) + len(game.books(1)) == RANK_COUNT
    assert game.winner() == 1


def test_equal_books_at_the_end_is_a_tie() -> None:
    zeros, ones = banked_books(11)  # 6 books to 5; ranks 11 and 12 in play
    game = FishNetGame.from_position(
        ([12, 12, 12], [12, 11, 11, 11]), stock=[11], books=(zeros, ones), turn=1
    )
    assert game.request(1, 12) == Requested(1, 12, 3, None, (12,), True, None, True)
    assert (len(game.books(0)), len(game.books(1))) == (6, 6)
    assert (game.result(0), game.result(1), game.winner()) == (Result.TIE, Result.TIE, None)


def test_a_position_with_an_empty_hand_is_already_over() -> None:
    game = FishNetGame.from_position(([], [12, 12, 12]), stock=[12], books=banked_books(12))
    assert game.over and game.turn is None and game.winner() is None


# -- what a player sees -----------------------------------------------------------


def test_a_players_view_shows_its_own_hand_and_only_the_size_of_the_other() -> None:
    books = banked_books(8)
    hands = ([8, 9, 9], [10, 11, 12])
    rest = [8] * 3 + [9] * 2 + [10] * 3 + [11] * 3 + [12] * 3
    game = FishNetGame.from_position(hands, stock=rest, books=books, turn=1)
    other = FishNetGame.from_position(
        (hands[0], [8, 8, 8]), stock=[10, 11, 12, *rest[3:]], books=books, turn=1
    )
    view = game.view(0)
    assert view == other.view(0)  # a different opponent hand looks the same
    assert view.hand == rank_counts([8, 9, 9]) and view.ranks_held == (8, 9)
    assert (view.books, view.opponent_books) == (tuple(books[0]), tuple(books[1]))
    assert (view.opponent_hand_size, view.deck_size, view.turn) == (3, 14, 1)
    assert set(PlayerView.__slots__) == {
        "player", "hand", "books", "opponent_books", "opponent_hand_size",
        "deck_size", "turn", "passed_last", "over",
    }  # fmt: skip


# -- whole games ------------------------------------------------------------------

# A bound on requests in any game: a miss fishes (at most 38 cards to fish;
# with an empty deck every unbooked card is in a hand, so no request misses),
# and a gift joins a rank split between the hands; a rank is split at most
# once by the deal and once per card fished. So misses <= 38, gifts <= 13 + 38.
MAX_REQUESTS = 38 + 13 + 38


def check_invariants(game: FishNetGame) -> None:
    stock = rank_counts(game.stock())
    counts = [game.hand(0)[r] + game.hand(1)[r] + stock[r] for r in RANKS]
    booked = [*game.books(0), *game.books(1)]
    for rank in booked:
        counts[rank] += BOOK_SIZE
    assert counts == [BOOK_SIZE] * RANK_COUNT  # so no rank is booked twice either
    assert len(game.stock()) == game.deck_size == game.view(0).deck_size
    for player in (0, 1):  # the log holds every book, in the order each player made them
        assert tuple(b.rank for b in game.book_log if b.player == player) == game.books(player)
    assert len(game.book_log) == len(booked)
    for player in (0, 1):
        assert all(n < BOOK_SIZE for n in game.hand(player))
        assert sum(game.hand(player)) == game.hand_size(player)
    assert game.over == (
        game.hand_size(0) == 0 or game.hand_size(1) == 0 or len(booked) == RANK_COUNT
    )
    assert (game.turn is None) == game.over


def try_illegal(game: FishNetGame, rng: random.Random) -> None:
    """An action the rules must refuse, if one is at hand; it must change nothing."""
    before = snapshot(game)
    if game.over:
        call, args, reason = game.request, (rng.randrange(2), rng.randrange(13)), "game_over"
    else:
        player = game.turn
        missing = [r for r in RANKS if game.hand(player)[r] == 0]
        choice = rng.randrange(3)
        if choice == 0:
            call, args, reason = game.request, (1 - player, rng.randrange(13)), "not_your_turn"
        elif choice == 1 and missing:
            call, args, reason = game.request, (player, rng.choice(missing)), "rank_not_held"
        else:
            call, args, reason = game.request, (player, rng.choice([-1, 13, 99])), "bad_rank"
    assert rule_error(call, *args) == reason
    assert snapshot(game) == before


def play(game: FishNetGame, rng: random.Random) -> tuple[int, int]:
    """Random legal play to the end; the numbers of requests and passes."""
    requests = passes = 0
    while not game.over:
        assert requests + passes < 1000, "the game does not end"
        if rng.random() < 0.1:
            try_illegal(game, rng)
        player = game.turn
        view = game.view(player)
        before = (game.books(player), game.hand(1 - player), game.deck_size)
        # Pass now and then, but not to fish an empty deck (that is endless).
        if rng.random() < 0.15 and (game.deck_size or not view.passed_last):
            outcome = game.pass_turn(player)
            passes += 1
            assert (outcome.fished is not None) == bool(view.passed_last and before[2])
            assert outcome.next_player == game.turn
        else:
            rank = rng.choice(view.ranks_held)
            outcome = game.request(player, rank)
            requests += 1
            assert outcome.given == before[1][rank]
            assert (outcome.fished is None) == (outcome.given > 0 or before[2] == 0)
            assert outcome.again == (outcome.given > 0 or outcome.fished == rank)
            assert outcome.next_player == game.turn
            if not game.over:
                assert game.turn == (player if outcome.again else 1 - player)
        assert outcome.over == game.over
        assert before[0] + outcome.books == game.books(player)
        check_invariants(game)
    try_illegal(game, rng)
    return requests, passes


@settings(max_examples=200, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32), play_seed=st.integers(0, 2**32))
def test_random_games_keep_every_card_and_end_with_a_result_by_books(
    seed: int, play_seed: int
) -> None:
    game = FishNetGame(seed)
    check_invariants(game)
    requests, passes = play(game, random.Random(play_seed))
    assert requests <= MAX_REQUESTS
    assert passes <= requests + 2 + 38  # non-fishing passes need a request between them
    books = (len(game.books(0)), len(game.books(1)))
    expected = {True: Result.WIN, False: Result.LOSE}
    for player in (0, 1):
        mine, theirs = books[player], books[1 - player]
        assert game.result(player) == (Result.TIE if mine == theirs else expected[mine > theirs])
    assert game.winner() == (None if books[0] == books[1] else int(books[1] > books[0]))
    assert [b for b in game.deal_log if isinstance(b, BookMade)] == [
        b for b in game.book_log if b.move == 0
    ]
