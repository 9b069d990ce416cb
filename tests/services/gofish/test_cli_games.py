"""``ring gofish`` as a real OS process, in play: asking, books, and the end of a game.

Situations come from seeds (``tests/helpers/gofish.py`` says how they were found), and
each test asserts that its situation really happened. Whole games are played by
``policy``: ask player 2 for the lowest rank in hand.
"""

from __future__ import annotations

import re

from services.fishnet.rules import DECK_SIZE
from tests.helpers.gofish import (
    DEALT_A_BOOK_SIX_PLAYERS,
    ENDS_GIVEN_AWAY,
    ENDS_GIVEN_AWAY_TWO_PLAYERS,
    ENDS_IN_A_TIE,
    ENDS_OWN_HAND_EMPTY,
    ENDS_POOL_EMPTY,
    FIRST_ASK_FISHES_ITS_RANK,
    FIRST_ASK_HITS,
    FIRST_ASK_MISSES_THEN_MEMORY,
    HAND_RE,
    TIMEOUT,
    USER_MAKES_A_BOOK,
    LiveGame,
    end_listing,
    lines_before_game_over,
    play_one_game,
    ring_gofish,
)

# -- asking -------------------------------------------------------------------------------


def test_asking_a_player_who_holds_the_rank() -> None:
    out = ring_gofish("s", "a 2 2", seed=FIRST_ASK_HITS)
    hands = HAND_RE.findall(out)
    gave = re.search(
        r"^Player 2 gives you (\d) twos?: ((?:2[CDHS] ?)+)\.\nYou go again\.$", out, re.M
    )
    assert gave, out
    assert "You ask player 2 for twos.\n" in out
    given = gave.group(2).split()
    assert len(given) == int(gave.group(1))
    assert sorted(hands[1].split()) == sorted(hands[0].split() + given)


def test_go_fish_draws_and_passes_the_turn_to_the_player_who_said_it() -> None:
    out = ring_gofish("s", "a 2 a", seed=FIRST_ASK_MISSES_THEN_MEMORY)
    turn = out.split("gofish> ")[2]
    fished = re.search(r"^You fish ([A2-9TJQK][CDHS]) from the pool\.$", turn, re.M)
    assert fished and not fished.group(1).startswith("A"), turn
    assert turn.startswith(
        "You ask player 2 for aces.\nPlayer 2 says: Go Fish!\n"
        f"You fish {fished.group(1)} from the pool.\nThe turn passes to player 2.\n"
        "Player 2 asks "
    )
    assert re.search(r"The turn passes to you\.\nYour hand: [^\n]*\n$", turn)
    assert fished.group(1) in HAND_RE.findall(out)[1].split() or "You give" in turn


def test_fishing_the_asked_rank_gives_another_turn() -> None:
    out = ring_gofish("s", "a 2 3", seed=FIRST_ASK_FISHES_ITS_RANK)
    turn = out.split("gofish> ")[2]
    fished = re.search(
        r"^You fish (3[CDHS]) from the pool: a three, the rank you asked for\.$", turn, re.M
    )
    assert fished, turn
    assert turn.startswith("You ask player 2 for threes.\nPlayer 2 says: Go Fish!\n")
    assert "You go again.\nYour hand: " in turn and "Player 2 asks" not in turn
    assert fished.group(1) in HAND_RE.findall(out)[1]


def test_computers_ask_the_last_player_who_asked_for_a_rank_they_hold() -> None:
    """Player 2 said Go Fish to the user's aces, so it holds none; it asks player K for some
    rank R and hears Go Fish, so K holds no R. Then K's only remembered rank it can hold is
    aces, asked last by the user: if K holds an ace the rule leaves it no other choice."""
    out = ring_gofish("s", "a 2 A", "i", seed=FIRST_ASK_MISSES_THEN_MEMORY)
    turn = out.split("gofish> ")[2]
    first = re.search(
        r"^Player 2 asks player (\d) for (\w+)\.\nPlayer \1 says: Go Fish!\n"
        r"Player 2 fishes a card from the pool\.\nThe turn passes to player \1\.\n"
        r"Player \1 asks you for aces\.$",
        turn,
        re.M,
    )
    assert first, turn
    assert first.group(2) != "aces"


def test_a_book_is_shown_with_its_four_cards_and_leaves_the_hand() -> None:
    transcript = play_one_game(USER_MAKES_A_BOOK)
    made = re.search(
        r"^You make a book of (\w+): (([A2-9TJQK])[CDHS] (?:\3[CDHS] ?){3})\.$", transcript, re.M
    )
    assert made, transcript
    rank = made.group(3)
    hand_before = HAND_RE.findall(transcript[: made.start()])[-1].split()
    hand_after = HAND_RE.search(transcript, made.end())
    assert hand_after, "the game goes on after this book"
    assert any(card[0] == rank for card in hand_before)
    assert all(card[0] != rank for card in hand_after.group(1).split())
    assert f"Player 1 (you): 1 book ({rank}); cards left: " in transcript


# -- the end of a game --------------------------------------------------------------------


def test_a_hand_emptied_by_giving_ends_the_game_after_the_receivers_book() -> None:
    transcript = play_one_game(ENDS_GIVEN_AWAY)
    gave, book = lines_before_game_over(transcript, 2)
    giver = re.match(r"(Player \d|You) gives? (player \d|you) \d \w+: ", gave)
    assert giver, gave
    receiver = giver.group(2).capitalize()
    assert book.startswith(f"{receiver} make")  # "You make" or "Player 3 makes"
    assert " a book of " in book
    who = giver.group(1).lower()
    has = "have" if who == "you" else "has"
    assert f"Game over: {who} {has} no cards left.\n" in transcript
    listing = end_listing(transcript)
    giver_number = 1 if who == "you" else int(who.split()[1])
    assert listing.cards_left[giver_number] == []


def test_two_players_end_by_a_hand_given_away_too() -> None:
    transcript = play_one_game(ENDS_GIVEN_AWAY_TWO_PLAYERS, opponents=1)
    assert "the computer plays player 2." in transcript
    gave = lines_before_game_over(transcript, 2)[0]
    assert re.match(r"(Player \d|You) gives? ", gave), gave
    assert sorted(end_listing(transcript).books) == [1, 2]


def test_a_hand_emptied_by_its_own_book_ends_the_game() -> None:
    transcript = play_one_game(ENDS_OWN_HAND_EMPTY)
    book = lines_before_game_over(transcript, 1)[0]
    maker = re.match(r"(Player \d|You) makes? a book of ", book)
    assert maker, book
    who = maker.group(1).lower()
    assert f"Game over: {who} {'have' if who == 'you' else 'has'} no cards left.\n" in transcript
    listing = end_listing(transcript)
    assert listing.cards_left[1 if who == "you" else int(who.split()[1])] == []


def test_the_game_ends_when_the_pool_is_empty() -> None:
    transcript = play_one_game(ENDS_POOL_EMPTY)
    assert "Game over: the fishing pool is empty.\n" in transcript
    last_fish = r"^(You fish [A2-9TJQK][CDHS]|Player \d fishes (a card|[A2-9TJQK][CDHS])) from "
    assert any(re.match(last_fish, line) for line in lines_before_game_over(transcript, 2))
    listing = end_listing(transcript)
    held = sum(len(cards) for cards in listing.cards_left.values())
    assert 4 * sum(len(own) for own in listing.books.values()) + held == DECK_SIZE
    assert all(listing.cards_left.values())  # no hand ran out: the pool did


def test_a_tie_is_said() -> None:
    listing = end_listing(play_one_game(ENDS_IN_A_TIE))
    assert listing.verdict.startswith("A tie: ")


def test_after_the_game_a_and_i_are_refused_and_a_new_game_can_start() -> None:
    game = LiveGame(ENDS_POOL_EMPTY)
    try:
        game.send("s")
        game.play_to_the_end()
        assert game.send("a 2 A").startswith("a works only during a game: type s to start one.")
        assert game.send("i").startswith("i works only during a game: type s to start one.")
        assert game.send("s").startswith("New game: ")  # no question: the game was over
        assert game.send("q").endswith("(y/n) ")  # but this one is on
        out, err = game.process.communicate(b"y\n", timeout=TIMEOUT)
    finally:
        if game.process.poll() is None:
            game.process.kill()
            game.process.wait(timeout=TIMEOUT)
    assert (game.process.returncode, out, err) == (0, b"Goodbye.\n", b"")


def test_a_dealt_book_is_shown_at_the_start() -> None:
    out = ring_gofish("n 5", "s", "i", seed=DEALT_A_BOOK_SIX_PLAYERS)
    dealt = re.search(
        r"^(Player (\d)|You) (?:was|were) dealt a book of \w+: ([A2-9TJQK])[CDHS]( \3[CDHS]){3}\.$",
        out,
        re.M,
    )
    assert dealt, out
    number = int(dealt.group(2) or 1)
    assert re.search(
        rf"^Player {number}(?: \(you\))?: 1 card, 1 book \({dealt.group(3)}\)$", out, re.M
    )
