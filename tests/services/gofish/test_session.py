"""The Go Fish command interpreter without a terminal: every command, answer and error.

Exact games come in through the session's ``new_game`` hook (positions built
as in the rules tests); two-player positions make the computer's choices
forced, so whole transcripts can be compared line for line.
"""

from __future__ import annotations

import random

import pytest

from services.gofish.rules import RANK_COUNT, USER, GoFishGame, cards, full_deck
from services.gofish.session import HELP, PROMPT, Confirm, Reply, Session
from tests.helpers.gofish import position

SEVEN = 6


def fresh(seed: int = 1) -> Session:
    return Session(random.Random(seed))


def started(game: GoFishGame) -> tuple[Session, str]:
    """A session that has dealt ``game`` with ``s``, and what ``s`` said."""
    session = Session(random.Random(0), new_game=lambda _players, _rng: game)
    text = say(session, "s")
    assert session.game is game
    return session, text


def playing(game: GoFishGame) -> Session:
    return started(game)[0]


def say(session: Session, line: str) -> str:
    reply = session.handle(line + "\n")
    assert not reply.exit, f"{line!r} ended the program"
    return reply.text


def one_line(session: Session, line: str) -> str:
    text = say(session, line)
    assert text.count("\n") == 1 and text.endswith("\n"), text
    return text[:-1]


# -- outside a game -----------------------------------------------------------------------


def test_the_greeting_says_what_to_type_first() -> None:
    session = fresh()
    assert session.greeting() == (
        "Go Fish! You play against 3 computer opponents; the most books (four of a rank) wins.\n"
        "Type s to start a game, h for help, q to quit.\n"
    )
    assert session.prompt == PROMPT == "gofish> "


@pytest.mark.parametrize("line", ["", "   ", "\t\n"])
def test_a_blank_line_does_nothing(line: str) -> None:
    session = fresh()
    assert session.handle(line) == Reply("")
    assert session.prompt == PROMPT


@pytest.mark.parametrize("line", ["h", "H", "  h  "])
def test_help_lists_every_command(line: str) -> None:
    text = say(fresh(), line)
    assert text == HELP + "\n"
    for usage in ["  s ", "  a <X> <R> ", "  i ", "  n <int> ", "  h ", "  q "]:
        assert usage in text


@pytest.mark.parametrize("line", ["q", "Q", "q\n"])
def test_q_outside_a_game_quits_at_once(line: str) -> None:
    assert fresh().handle(line) == Reply("Goodbye.\n", exit=True)


@pytest.mark.parametrize("command", ["a 2 7", "A 3 T", "a"])
def test_a_outside_a_game_is_refused(command: str) -> None:
    assert one_line(fresh(), command) == "a works only during a game: type s to start one."


@pytest.mark.parametrize("command", ["i", "I"])
def test_i_outside_a_game_is_refused(command: str) -> None:
    assert one_line(fresh(), command) == "i works only during a game: type s to start one."


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("x", "x"),
        ("quit", "quit"),
        ("ask 2 7", "ask"),
        ("Hh", "Hh"),
        ("\x1b[2J", "\\x1b[2J"),
        ("z" * 50, "z" * 20 + "..."),
    ],
)
def test_unknown_commands_are_named_back(line: str, shown: str) -> None:
    assert one_line(fresh(), line) == f'Unknown command "{shown}": type h for help.'


@pytest.mark.parametrize("line", ["h 1", "q now", "s 4", "i x"])
def test_commands_without_arguments_refuse_them(line: str) -> None:
    session = fresh()
    assert one_line(session, line) == f"{line[0]} takes no arguments: type h for help."
    assert session.game is None


def test_end_of_input_says_goodbye() -> None:
    assert fresh().end_of_input() == "Goodbye.\n"


# -- n ------------------------------------------------------------------------------------


def test_n_sets_the_opponents_of_the_next_game_and_the_last_one_wins() -> None:
    session = fresh()
    assert session.next_opponents == 3
    assert one_line(session, "n 5") == "The next game will have 5 computer opponents."
    assert one_line(session, "N 1") == "The next game will have 1 computer opponent."
    say(session, "s")
    assert session.game is not None and session.game.players == 2


def test_n_during_a_game_waits_for_the_next_game() -> None:
    session = fresh()
    say(session, "s")
    game = session.game
    assert game is not None and game.players == 4
    assert one_line(session, "n 5") == (
        "The next game will have 5 computer opponents; this one keeps its 3."
    )
    say(session, "n 2")
    assert session.game is game and game.players == 4
    assert [line[:8] for line in say(session, "i").splitlines()[:5]] == [
        "Player 1",
        "Player 2",
        "Player 3",
        "Player 4",
        "Fishing ",
    ]
    say(session, "s")
    say(session, "y")
    assert session.game is not game and session.game.players == 3


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("n", "n takes one number of computer opponents, 1 to 5: e.g. n 4."),
        ("n 1 2", "n takes one number of computer opponents, 1 to 5: e.g. n 4."),
        ("n x", '"x" is not a number: n takes one number of computer opponents, 1 to 5.'),
        ("n -1", '"-1" is not a number: n takes one number of computer opponents, 1 to 5.'),
        ("n 2.5", '"2.5" is not a number: n takes one number of computer opponents, 1 to 5.'),
        ("n \u0663", '"\u0663" is not a number: n takes one number of computer opponents, 1 to 5.'),
        ("n 0", "0 is out of range: n takes one number of computer opponents, 1 to 5."),
        ("n 6", "6 is out of range: n takes one number of computer opponents, 1 to 5."),
        (
            "n " + "9" * 5000,
            "9" * 20 + "... is out of range: n takes one number of computer opponents, 1 to 5.",
        ),
    ],
)
def test_n_errors(line: str, message: str) -> None:
    session = fresh()
    assert one_line(session, line) == message
    assert session.next_opponents == 3


def test_n_accepts_leading_zeros() -> None:
    session = fresh()
    say(session, "n 02")
    assert session.next_opponents == 2


# -- s and q: starting, confirming --------------------------------------------------------


def test_s_deals_and_shows_the_sorted_hand_in_the_prompt() -> None:
    session = fresh(3)
    text = say(session, "S")
    game = session.game
    assert game is not None and game.turn == USER and game.players == 4
    assert text.startswith(
        "New game: you are player 1, the computer plays players 2 to 4. "
        "5 cards each, 32 cards in the fishing pool.\n"
    )
    hand = game.hand(USER)
    assert list(hand) == sorted(hand)
    assert session.prompt == f"Your hand: {' '.join(map(str, hand))}\n{PROMPT}"
    assert text.endswith(f"e.g. a 2 {str(hand[0])[0]}.\n")


def test_s_names_the_computer_players_for_each_table_size() -> None:
    for opponents, who in [(1, "player 2"), (2, "players 2 and 3"), (5, "players 2 to 6")]:
        session = fresh()
        say(session, f"n {opponents}")
        assert f"the computer plays {who}." in say(session, "s")


def test_a_dealt_book_is_shown() -> None:
    top = cards("7C 2C 7D 3C 7H 4C 7S 5C 8C 6C")  # one at a time, the user first
    session, text = started(GoFishGame.from_deck(2, top + [c for c in full_deck() if c not in top]))
    assert "You were dealt a book of sevens: 7C 7D 7H 7S.\n" in text
    assert session.prompt == f"Your hand: 8C\n{PROMPT}"
    top = cards("2C 7C 3C 7D 4C 7H 5C 7S 6C 8C")
    _, text = started(GoFishGame.from_deck(2, top + [c for c in full_deck() if c not in top]))
    assert "Player 2 was dealt a book of sevens: 7C 7D 7H 7S.\n" in text


def test_s_during_a_game_asks_first() -> None:
    session = fresh()
    say(session, "s")
    game = session.game
    assert session.handle("s") == Reply("")
    assert session.confirming is Confirm.NEW_GAME
    assert session.prompt == "Drop this game and start a new one? (y/n) "
    assert one_line(session, "N") == "The game goes on."
    assert session.game is game and session.confirming is None
    say(session, "s")
    assert say(session, "Yes").startswith("Game dropped.\nNew game: ")
    assert session.game is not None and session.game is not game


def test_q_during_a_game_asks_first() -> None:
    session = fresh()
    say(session, "s")
    game = session.game
    assert session.handle("Q") == Reply("")
    assert session.prompt == "Quit in the middle of this game? (y/n) "
    assert one_line(session, "no") == "The game goes on."
    assert session.game is game
    session.handle("q")
    assert session.handle("YES\n") == Reply("Goodbye.\n", exit=True)


@pytest.mark.parametrize("answer", ["", "maybe", "h", "a 2 7", "q", "yy", "y y"])
def test_a_question_is_asked_again_until_answered(answer: str) -> None:
    session = fresh()
    say(session, "s")
    game = session.game
    session.handle("q")
    assert one_line(session, answer) == "Please answer y or n."
    assert session.confirming is Confirm.QUIT and session.game is game
    assert session.handle(" y ").exit


# -- a: the user's ask --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("a", "a takes a player (2 to 3) and a rank: e.g. a 2 T."),
        ("a 2", "a takes a player (2 to 3) and a rank: e.g. a 2 T."),
        ("a 2 7 7", "a takes a player (2 to 3) and a rank: e.g. a 2 T."),
        ("a x 7", '"x" is not a player: ask a player from 2 to 3.'),
        ("a -2 7", '"-2" is not a player: ask a player from 2 to 3.'),
        ("a 1 7", "You are player 1: ask another player, from 2 to 3."),
        ("a 0 7", "There is no player 0 in this game: ask a player from 2 to 3."),
        ("a 4 7", "There is no player 4 in this game: ask a player from 2 to 3."),
        ("a 2 X", '"X" is not a rank: use one of A 2 3 4 5 6 7 8 9 T J Q K.'),
        ("a 2 77", '"77" is not a rank: use one of A 2 3 4 5 6 7 8 9 T J Q K.'),
        ("a 2 10", '"10" is not a rank (T is ten): use one of A 2 3 4 5 6 7 8 9 T J Q K.'),
        ("a 2 K", "You hold no kings: ask for a rank in your hand."),
        ("a 3 6", "You hold no sixes: ask for a rank in your hand."),
    ],
)
def test_ask_errors_change_nothing(line: str, message: str) -> None:
    session = playing(position(["7C 2C", "7D 3C", "4C"], "5C"))
    game = session.game
    assert game is not None
    before = (game.hand(USER), game.hand(1), game.pool_size, game.last_askers)
    assert one_line(session, line) == message
    assert (game.hand(USER), game.hand(1), game.pool_size, game.last_askers) == before
    assert game.turn == USER


def test_asking_gets_the_cards_and_another_turn() -> None:
    session = playing(position(["7C 2C", "7D 7H 3C", "4C"], "5C"))
    assert say(session, "a 2 7") == (
        "You ask player 2 for sevens.\nPlayer 2 gives you 2 sevens: 7D 7H.\nYou go again.\n"
    )
    assert session.prompt == f"Your hand: 2C 7C 7D 7H\n{PROMPT}"


def test_ranks_and_commands_in_either_case() -> None:
    lower = playing(position(["TC 2C", "TD 3C", "4C"], "5C"))
    upper = playing(position(["TC 2C", "TD 3C", "4C"], "5C"))
    assert say(lower, "a 2 t") == say(upper, "A 2 T")
    assert "Player 2 gives you 1 ten: TD.\n" in say(
        playing(position(["TC", "TD 3C"], "5C")), "a 2 t"
    )


def test_go_fish_then_the_computer_plays_until_the_users_turn() -> None:
    # Two players: the computer's target is forced, and it holds only threes.
    session = playing(position(["7C 2C", "3C"], "5C 3D 9C"))
    assert say(session, "a 2 7") == (
        "You ask player 2 for sevens.\n"
        "Player 2 says: Go Fish!\n"
        "You fish 5C from the pool.\n"
        "The turn passes to player 2.\n"
        "Player 2 asks you for threes.\n"
        "You say: Go Fish!\n"
        "Player 2 fishes 3D from the pool: a three, the rank it asked for.\n"
        "Player 2 goes again.\n"
        "Player 2 asks you for threes.\n"
        "You say: Go Fish!\n"
        "Player 2 fishes a card from the pool.\n"  # 9C: not shown
        "The turn passes to you.\n"
    )
    assert session.prompt == f"Your hand: 2C 5C 7C\n{PROMPT}"
    game = session.game
    assert game is not None and game.hand(1) == tuple(cards("3C 3D 9C"))


def test_fishing_the_asked_rank_is_shown_with_another_turn() -> None:
    session = playing(position(["7C 2C", "3C"], "7D 9C"))
    assert say(session, "a 2 7") == (
        "You ask player 2 for sevens.\n"
        "Player 2 says: Go Fish!\n"
        "You fish 7D from the pool: a seven, the rank you asked for.\n"
        "You go again.\n"
    )


def test_a_computer_ask_the_user_answers_and_a_book_ends_the_game() -> None:
    session = playing(position(["7C 3C 3D 3H", "3S"], "5C 9C"))
    assert say(session, "a 2 7") == (
        "You ask player 2 for sevens.\n"
        "Player 2 says: Go Fish!\n"
        "You fish 5C from the pool.\n"
        "The turn passes to player 2.\n"
        "Player 2 asks you for threes.\n"
        "You give player 2 3 threes: 3C 3D 3H.\n"
        "Player 2 makes a book of threes: 3C 3D 3H 3S.\n"
        "Game over: player 2 has no cards left.\n"
        "  Player 1 (you): 0 books; cards left: 5C 7C\n"
        "  Player 2: 1 book (3); cards left: none\n"
        "Player 2 wins with 1 book.\n"
        "Type s to play again, n <1-5> first to change the number of opponents.\n"
    )
    assert session.game is None and session.prompt == PROMPT


def test_a_hand_given_away_ends_the_game_after_the_book() -> None:
    session = playing(position(["7C 7D 2C", "7H 7S", "4C"], "5C", books=[[], [], [2, 9]]))
    assert say(session, "a 2 7") == (
        "You ask player 2 for sevens.\n"
        "Player 2 gives you 2 sevens: 7H 7S.\n"
        "You make a book of sevens: 7C 7D 7H 7S.\n"
        "Game over: player 2 has no cards left.\n"
        "  Player 1 (you): 1 book (7); cards left: 2C\n"
        "  Player 2: 0 books; cards left: none\n"
        "  Player 3: 2 books (3 T); cards left: 4C\n"
        "Player 3 wins with 2 books.\n"
        "Type s to play again, n <1-5> first to change the number of opponents.\n"
    )


def test_the_last_card_fished_ends_the_game_and_a_tie_is_said() -> None:
    hands = [cards("AC AD 7C 7D 7S"), cards("AH AS")]
    books = [[1, 2, 3, 4, 5], [7, 8, 9, 10, 11, 12]]
    session = playing(GoFishGame.from_position(hands, cards("7H"), books))
    assert say(session, "a 2 7") == (
        "You ask player 2 for sevens.\n"
        "Player 2 says: Go Fish!\n"
        "You fish 7H from the pool: a seven, the rank you asked for.\n"
        "You make a book of sevens: 7C 7D 7H 7S.\n"
        "Game over: the fishing pool is empty.\n"
        "  Player 1 (you): 6 books (2 3 4 5 6 7); cards left: AC AD\n"
        "  Player 2: 6 books (8 9 T J Q K); cards left: AH AS\n"
        "A tie: you and player 2 have 6 books each.\n"
        "Type s to play again, n <1-5> first to change the number of opponents.\n"
    )


def test_the_user_winning_and_both_hands_emptied() -> None:
    session = playing(position(["7C 7D", "7H 7S", "4C"], "5C"))
    text = say(session, "a 2 7")
    assert "Game over: you and player 2 have no cards left.\n" in text
    assert "You win with 1 book!\n" in text


def test_after_the_game_a_and_i_are_refused_and_s_starts_again() -> None:
    session = playing(position(["7C 7D 2C", "7H 7S", "4C"], "5C"))
    say(session, "a 2 7")
    assert one_line(session, "a 3 4") == "a works only during a game: type s to start one."
    assert one_line(session, "i") == "i works only during a game: type s to start one."
    assert session.handle("q") == Reply("Goodbye.\n", exit=True)  # no game: no question


# -- i --------------------------------------------------------------------------------------


def test_i_shows_cards_books_the_pool_and_the_shared_memory() -> None:
    session = playing(position(["7C 2C", "3C", "4C 4D"], "5C 6C 8C", books=[[], [9], []]))
    say(session, "a 3 7")  # go fish: player 3 takes the turn and asks player 1 or 2
    game = session.game
    assert game is not None
    memory = game.last_askers
    assert memory[SEVEN] == USER
    expected = [f"Player {p + 1}{' (you)' if p == USER else ''}: " for p in range(3)]
    lines = say(session, "i").splitlines()
    assert len(lines) == 7
    for p, line in enumerate(lines[:3]):
        assert line.startswith(expected[p])
        count = game.hand_size(p)
        assert f"{count} card{'' if count == 1 else 's'}, " in line
    assert lines[1].endswith("1 book (T)")
    assert lines[3] == f"Fishing pool: {game.pool_size} cards."
    assert lines[4] == "Who last asked for each rank:"
    shown = lines[5].split() + lines[6].split()
    names = {None: ["nobody"], USER: ["you"], 1: ["player", "2"], 2: ["player", "3"]}
    expected_memory = []
    for rank, letter in enumerate("A23456789TJQK"):
        expected_memory += [f"{letter}:", *names[memory[rank]]]
    assert shown == expected_memory
    assert sum(p is not None for p in memory) >= 2 and len(memory) == RANK_COUNT
