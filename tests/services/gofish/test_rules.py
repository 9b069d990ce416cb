"""Interactive Go Fish's rules without a terminal: cards, the deal, each rule alone, whole games.

Exact situations come from a stacked deck (``GoFishGame.from_deck``) or a
position in mid-play (``GoFishGame.from_position``); whole games come from
seeds, played by the computer strategy for every seat.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.fishnet.rules import BOOK_SIZE, DECK_SIZE, RANK_COUNT
from services.gofish.rules import (
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    USER,
    Asked,
    Book,
    Card,
    GoFishGame,
    RuleError,
    cards,
    full_deck,
    parse_rank,
)
from tests.helpers.gofish import position

SEVEN, NINE, KING = 6, 8, 12


def stacked(players: int, hands: list[str], pool: str = "") -> list[Card]:
    """A deck that deals ``hands`` (five cards each, user first) and then fishes ``pool`` first."""
    assert len(hands) == players
    dealt = [cards(hand) for hand in hands]
    assert all(len(hand) == HAND_SIZE for hand in dealt)
    deck = [dealt[p][i] for i in range(HAND_SIZE) for p in range(players)]
    deck += cards(pool)
    return deck + [card for card in full_deck() if card not in deck]


def refusal(game: GoFishGame, asker: int, target: int, rank: int) -> str:
    with pytest.raises(RuleError) as caught:
        game.ask(asker, target, rank)
    return caught.value.reason


def card_total(game: GoFishGame) -> int:
    in_hands = sum(game.hand_size(p) for p in range(game.players))
    booked = sum(len(game.books(p)) for p in range(game.players)) * BOOK_SIZE
    return in_hands + game.pool_size + booked


# -- cards --------------------------------------------------------------------------------


def test_cards_are_two_characters_rank_then_suit() -> None:
    assert str(Card(9, 3)) == "TS"
    assert str(Card(0, 2)) == "AH"
    assert [str(c) for c in cards("2c kd qh js")] == ["2C", "KD", "QH", "JS"]
    assert Card.parse("ts") == Card.parse("TS") == Card(9, 3)


@pytest.mark.parametrize("text", ["", "T", "TSX", "1S", "TX", "10S", "S T"])
def test_card_parse_refuses_what_is_not_a_card(text: str) -> None:
    with pytest.raises(ValueError):
        Card.parse(text)


def test_cards_sort_by_rank_ace_low_then_by_suit() -> None:
    assert [str(c) for c in sorted(cards("KS 2C AH TD AC TC"))] == [
        "AC",
        "AH",
        "2C",
        "TC",
        "TD",
        "KS",
    ]


def test_ranks_are_the_handouts_letters_in_either_case() -> None:
    assert [parse_rank(ch) for ch in "A23456789TJQK"] == list(range(RANK_COUNT))
    assert [parse_rank(ch) for ch in "atjqk"] == [0, 9, 10, 11, 12]
    for text in ["", "10", "1", "0", "X", "AA", " A"]:
        assert parse_rank(text) is None, text


def test_the_deck_is_the_52_cards_once_each() -> None:
    deck = full_deck()
    assert len(deck) == len(set(deck)) == DECK_SIZE
    assert deck == sorted(deck)
    assert Counter(c.rank for c in deck) == {rank: BOOK_SIZE for rank in range(RANK_COUNT)}


# -- the deal -----------------------------------------------------------------------------


@pytest.mark.parametrize("players", range(MIN_PLAYERS, MAX_PLAYERS + 1))
def test_deal_gives_five_each_user_first_rest_in_the_pool(players: int) -> None:
    game = GoFishGame(players, random.Random(1))
    assert game.turn == USER and not game.over
    assert card_total(game) == DECK_SIZE
    assert all(game.hand(p) == tuple(sorted(game.hand(p))) for p in range(players))
    dealt_books = len(game.deal_books)
    assert sum(game.hand_size(p) for p in range(players)) == HAND_SIZE * players - 4 * dealt_books
    assert game.pool_size == DECK_SIZE - HAND_SIZE * players


def test_deal_is_one_card_at_a_time_starting_with_the_user() -> None:
    deck = full_deck()
    game = GoFishGame.from_deck(3, deck)
    assert game.hand(0) == (deck[0], deck[3], deck[6], deck[9], deck[12])
    assert game.hand(1)[0] == deck[1]
    assert game.pool() == tuple(deck[15:])


def test_same_seed_same_deal() -> None:
    first, again = GoFishGame(4, random.Random(5)), GoFishGame(4, random.Random(5))
    assert [first.hand(p) for p in range(4)] == [again.hand(p) for p in range(4)]
    assert first.pool() == again.pool()


def test_a_book_in_the_deal_is_removed_at_once() -> None:
    game = GoFishGame.from_deck(2, stacked(2, ["7C 7D 7H 7S 2C", "3C 3D 4C 4D 5C"]))
    assert game.deal_books == (Book(USER, SEVEN, tuple(cards("7C 7D 7H 7S"))),)
    assert game.hand(USER) == tuple(cards("2C"))
    assert game.books(USER) == (SEVEN,)
    assert card_total(game) == DECK_SIZE and not game.over


@pytest.mark.parametrize("players", [0, 1, 7, True])
def test_two_to_six_players(players: int) -> None:
    with pytest.raises(ValueError):
        GoFishGame(players, random.Random(0))


def test_a_deck_must_be_the_52_cards() -> None:
    with pytest.raises(ValueError):
        GoFishGame.from_deck(2, full_deck()[:-1] + full_deck()[:1])


def test_a_position_must_hold_every_card_once_and_no_book_in_hand() -> None:
    with pytest.raises(ValueError):
        GoFishGame.from_position([cards("AC"), cards("AC")], full_deck()[1:])
    with pytest.raises(ValueError):
        position(["7C 7D 7H 7S", "2C"], "")
    with pytest.raises(ValueError):
        position(["7C", "2C"], "", books=[[SEVEN]])  # 7C both in a hand and a book


# -- asking -------------------------------------------------------------------------------


def test_asking_takes_every_card_of_the_rank_and_gives_another_turn() -> None:
    game = position(["7C 2C", "7D 7H 3C", "4C"], "5C")
    asked = game.ask(USER, 1, SEVEN)
    assert asked == Asked(USER, 1, SEVEN, tuple(cards("7D 7H")), None, (), True, USER, False)
    assert game.hand(USER) == tuple(cards("2C 7C 7D 7H"))
    assert game.hand(1) == tuple(cards("3C"))
    assert game.turn == USER
    assert game.pool_size == DECK_SIZE - 6  # nothing fished


def test_go_fish_draws_the_next_card_and_passes_the_turn_to_the_target() -> None:
    game = position(["7C 2C", "3C", "4C"], "5C 6C")
    asked = game.ask(USER, 2, SEVEN)
    assert asked.given == () and asked.fished == Card.parse("5C")
    assert not asked.again and asked.next_player == 2 == game.turn
    assert Card.parse("5C") in game.hand(USER)
    assert game.pool()[0] == Card.parse("6C")


def test_fishing_the_asked_rank_gives_another_turn() -> None:
    game = position(["7C 2C", "3C", "4C"], "7S 6C")
    asked = game.ask(USER, 1, SEVEN)
    assert asked.fished == Card.parse("7S") and asked.again
    assert game.turn == USER


def test_a_book_made_by_asking_is_shown_and_removed() -> None:
    game = position(["7C 7D 2C", "7H 7S 3C", "4C"], "5C")
    asked = game.ask(USER, 1, SEVEN)
    assert asked.books == (Book(USER, SEVEN, tuple(cards("7C 7D 7H 7S"))),)
    assert game.hand(USER) == tuple(cards("2C"))
    assert game.books(USER) == (SEVEN,)
    assert asked.again and not asked.over


def test_a_fished_card_can_complete_a_book_of_another_rank() -> None:
    game = position(["9C 9D 9H 2C", "3C", "4C"], "9S 6C")
    asked = game.ask(USER, 1, 1)
    assert asked.fished == Card.parse("9S")
    assert asked.books == (Book(USER, NINE, tuple(cards("9C 9D 9H 9S"))),)
    assert not asked.again and game.turn == 1


def test_a_hand_emptied_by_giving_ends_the_game_after_the_book_is_shown() -> None:
    game = position(["7C 7D 2C", "7H 7S", "4C"], "5C")
    asked = game.ask(USER, 1, SEVEN)
    assert asked.books == (Book(USER, SEVEN, tuple(cards("7C 7D 7H 7S"))),)
    assert asked.over and asked.next_player is None and game.turn is None
    assert game.hand_size(1) == 0


def test_a_hand_emptied_by_its_own_book_ends_the_game() -> None:
    game = position(["7C 7D 7H", "7S 3C", "4C"], "5C")
    asked = game.ask(USER, 1, SEVEN)
    assert asked.books and asked.over and game.hand(USER) == ()


def test_fishing_the_last_card_ends_the_game_even_with_another_turn() -> None:
    hands = [
        "7C AC 2C 3C 4C 5C 6C",
        "7D 7H AD 2D 3D 4D 5D 6D AS 2S 3S 4S 5S 6S",
        "AH 2H 3H 4H 5H 6H",
    ]
    eight_to_king = list(range(SEVEN + 1, RANK_COUNT))
    game = GoFishGame.from_position(
        [cards(hand) for hand in hands], cards("7S"), books=[eight_to_king, [], []]
    )
    asked = game.ask(USER, 2, SEVEN)
    assert asked.fished == Card.parse("7S") and asked.again
    assert asked.over and game.pool_size == 0 and game.turn is None


def test_the_shared_memory_records_the_last_asker_of_each_rank() -> None:
    game = position(["7C 2C", "7D 3C", "2D 4C"], "5C 6C")
    assert game.last_askers == (None,) * RANK_COUNT
    game.ask(USER, 1, SEVEN)
    game.ask(USER, 1, 1)  # go fish: player 2 (index 1) takes the turn
    game.ask(1, 2, 2)  # index 1 holds a 3 and asks index 2 for threes
    memory = game.last_askers
    assert memory[SEVEN] == USER and memory[1] == USER and memory[2] == 1
    assert memory.count(None) == RANK_COUNT - 3


def test_asks_the_rules_refuse() -> None:
    game = position(["7C 2C", "3C", "4C"], "5C 6C")
    assert refusal(game, 1, USER, 2) == "not_your_turn"
    assert refusal(game, USER, 3, SEVEN) == "no_such_player"
    assert refusal(game, USER, -1, SEVEN) == "no_such_player"
    assert refusal(game, USER, USER, SEVEN) == "ask_yourself"
    assert refusal(game, USER, 1, 13) == "bad_rank"
    assert refusal(game, USER, 1, KING) == "rank_not_held"
    assert game.last_askers == (None,) * RANK_COUNT  # a refused ask changes nothing
    over = position(["7C 7D 7H", "7S", "4C"], "5C")
    over.ask(USER, 1, SEVEN)
    assert refusal(over, USER, 2, 3) == "game_over"


def test_winners_by_books_ties_included() -> None:
    game = position(["7C 7D 7H", "7S", "4C"], "5C", books=[[1], [2, 5], []])
    with pytest.raises(RuleError):
        game.winners()
    game.ask(USER, 1, SEVEN)
    assert game.winners() == (USER, 1)  # two books each
    alone = position(["7C 7D 7H", "7S", "4C"], "5C", books=[[1, 9], [2, 5], []])
    alone.ask(USER, 1, SEVEN)
    assert alone.winners() == (USER,)


# -- the computer players -----------------------------------------------------------------


def test_a_computer_asks_the_last_asker_of_a_rank_it_holds() -> None:
    game = position(["7C 2C", "7D 3C", "3D 4C"], "5C", turn=2, last_askers=_memory({3: 0}))
    # Index 2 holds threes and fours; only fours (rank 3) were asked for, by the user.
    for seed in range(20):
        assert game.computer_choice(2, random.Random(seed)) == (USER, 3)


def test_a_computer_ignores_its_own_requests_and_ranks_it_does_not_hold() -> None:
    memory = _memory({2: 2, SEVEN: 1, KING: 0})
    game = position(["7C 2C", "7D 3C", "3D 4C"], "5C", turn=2, last_askers=memory)
    choices = {game.computer_choice(2, random.Random(seed)) for seed in range(60)}
    assert {rank for _, rank in choices} == {2, 3}  # threes and fours: random, not remembered
    assert {target for target, _ in choices} == {0, 1}


def test_a_computer_picks_among_several_remembered_ranks() -> None:
    game = position(["7C 2C", "7D 3C", "3D 4C"], "5C", turn=2, last_askers=_memory({2: 1, 3: 0}))
    choices = {game.computer_choice(2, random.Random(seed)) for seed in range(60)}
    assert choices == {(1, 2), (USER, 3)}


def _memory(asked: dict[int, int]) -> list[int | None]:
    return [asked.get(rank) for rank in range(RANK_COUNT)]


# -- whole games --------------------------------------------------------------------------


def expected_choices(game: GoFishGame, player: int) -> tuple[set[int], set[int] | None]:
    """The ranks the handout's rule allows ``player``, and the targets (None: any other)."""
    held = game.ranks_held(player)
    memory = game.last_askers
    remembered = {r for r in held if memory[r] is not None and memory[r] != player}
    if remembered:
        return remembered, None
    return set(held), {p for p in range(game.players) if p != player}


@settings(max_examples=150, deadline=None)
@given(
    players=st.integers(MIN_PLAYERS, MAX_PLAYERS),
    seed=st.integers(0, 2**32),
)
def test_whole_games_keep_every_rule(players: int, seed: int) -> None:
    rng = random.Random(seed)
    game = GoFishGame(players, rng)
    for book in game.deal_books:
        assert {c.rank for c in book.cards} == {book.rank} and len(book.cards) == BOOK_SIZE
    asks = 0
    while not game.over:
        player = game.turn
        assert player is not None
        ranks, targets = expected_choices(game, player)
        memory = game.last_askers
        target, rank = game.computer_choice(player, rng)
        assert target != player and rank in game.ranks_held(player)
        assert rank in ranks
        if targets is None:
            assert target == memory[rank]
        else:
            assert target in targets
        pool_before = game.pool_size
        asked = game.ask(player, target, rank)
        asks += 1
        assert card_total(game) == DECK_SIZE
        for p in range(players):
            hand = game.hand(p)
            assert hand == tuple(sorted(hand))
            assert max(Counter(c.rank for c in hand).values(), default=0) < BOOK_SIZE
        for book in asked.books:
            assert book.player == player and len(set(book.cards)) == BOOK_SIZE
            assert {c.rank for c in book.cards} == {book.rank}
        assert game.last_askers[rank] == player
        if asked.given:
            assert asked.fished is None and asked.again and game.pool_size == pool_before
        else:
            assert game.pool_size == pool_before - 1
            assert asked.again == (asked.fished.rank == rank)
        ends = game.pool_size == 0 or any(game.hand_size(p) == 0 for p in range(players))
        assert asked.over == ends == game.over
        assert game.turn == (None if ends else player if asked.again else target)
        assert asks <= DECK_SIZE * DECK_SIZE, "a game must end"
    assert set(game.winners()) <= set(range(players))
