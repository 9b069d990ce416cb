"""``ring gofish`` as a real OS process, through its stdin and stdout (and once a pty):
starting, help, quitting, ``n``, errors and case, signals and terminals. (Asking and the
end of a game: ``test_cli_games.py``.)

Situations come from seeds (``tests/helpers/gofish.py`` says how they were found), and
each test asserts that its situation really happened. ``LiveGame`` drives the process
one prompt at a time, with every wait bounded by one deadline.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time

from services.gofish.rules import RANK_LETTERS, Card
from tests.helpers.gofish import (
    CARD_RE,
    COMMAND,
    FIRST_ASK_HITS,
    FIRST_ASK_MISSES_THEN_MEMORY,
    HAND_RE,
    ROOT,
    TIMEOUT,
    LiveGame,
    ring_gofish,
)

# -- starting, help, quitting -------------------------------------------------------------


def test_start_greets_and_end_of_input_exits_cleanly() -> None:
    out = ring_gofish()
    assert out == (
        "Go Fish! You play against 3 computer opponents; the most books (four of a rank) wins.\n"
        "Type s to start a game, h for help, q to quit.\n"
        "gofish> \n"
        "Goodbye.\n"
    )


def test_end_of_input_in_a_game_and_in_a_question_exits_cleanly() -> None:
    assert ring_gofish("s").endswith("\ngofish> \nGoodbye.\n")
    assert ring_gofish("s", "q").endswith("Quit in the middle of this game? (y/n) \nGoodbye.\n")


def test_help_in_either_case() -> None:
    out = ring_gofish("h", "H")
    assert out.count("Commands (upper or lower case):") == 2
    for usage in ["  s ", "  a <X> <R> ", "  i ", "  n <int> ", "  h ", "  q "]:
        assert out.count("\n" + usage) == 2


def test_q_without_a_game_exits_at_once() -> None:
    out = ring_gofish("Q", "h")
    assert out.endswith("gofish> Goodbye.\n") and "Commands" not in out


def test_q_in_a_game_asks_and_no_keeps_the_game() -> None:
    out = ring_gofish("s", "q", "maybe", "n", "q", "y", "h")
    hand = HAND_RE.findall(out)
    assert out.count("Quit in the middle of this game? (y/n) ") == 3
    assert "(y/n) Please answer y or n.\n" in out
    assert "(y/n) The game goes on.\nYour hand: " in out
    assert hand[0] == hand[1]  # the same game went on
    assert out.endswith("(y/n) Goodbye.\n") and "Commands" not in out


def test_s_in_a_game_asks_and_yes_deals_a_new_game() -> None:
    out = ring_gofish("s", "s", "N", "S", "YES", "i")
    assert out.count("Drop this game and start a new one? (y/n) ") == 2
    assert "(y/n) The game goes on.\n" in out
    assert "(y/n) Game dropped.\nNew game: " in out
    assert out.count("New game: ") == 2
    assert "Player 1 (you): 5 cards, 0 books" in out.split("Game dropped.")[1]


def test_s_deals_five_sorted_cards_with_suits_and_the_user_goes_first() -> None:
    out = ring_gofish("s", "i")
    assert "New game: you are player 1, the computer plays players 2 to 4. " in out
    assert "5 cards each, 32 cards in the fishing pool.\n" in out
    assert "\nYour turn: ask a player for a rank you hold, e.g. a 2 " in out
    names = HAND_RE.findall(out)[0].split()
    assert len(names) == 5 and all(CARD_RE.fullmatch(name) for name in names)
    hand = [Card.parse(name) for name in names]
    assert hand == sorted(hand)  # A..K, then C D H S
    assert "gofish> Player 1 (you): 5 cards, 0 books\n" in out
    for player in range(2, 5):
        assert f"\nPlayer {player}: 5 cards, 0 books\n" in out
    assert "Fishing pool: 32 cards." in out


def test_the_same_seed_plays_the_same_game() -> None:
    lines = ["s", "a 2 3", "i"]  # with seed 5 the user holds a three and player 2 none
    first = ring_gofish(*lines, seed=5)
    assert "Player 2 says: Go Fish!\nYou fish " in first and "Player 3 asks " in first
    assert ring_gofish(*lines, seed=5) == first
    assert HAND_RE.findall(ring_gofish("s", seed=5)) != HAND_RE.findall(ring_gofish("s", seed=6))


def test_without_a_seed_it_still_plays() -> None:
    out = ring_gofish("s", "i", "q", "y", seed=None)
    assert "New game: " in out and out.endswith("Goodbye.\n")


# -- n ------------------------------------------------------------------------------------


def test_n_takes_effect_at_the_next_game_and_the_last_one_given_wins() -> None:
    out = ring_gofish("n 5", "n 1", "s", "i", "N 4", "n 2", "i", "s", "y", "i")
    games = out.split("New game: ")
    assert len(games) == 3
    before, first, second = games
    assert "The next game will have 5 computer opponents.\n" in before
    assert "The next game will have 1 computer opponent.\n" in before
    assert first.startswith("you are player 1, the computer plays player 2. ")
    assert "The next game will have 4 computer opponents; this one keeps its 1.\n" in first
    assert "The next game will have 2 computer opponents; this one keeps its 1.\n" in first
    assert first.count("Player 2: 5 cards") == 2 and "Player 3" not in first
    assert second.startswith("you are player 1, the computer plays players 2 and 3. ")
    assert "Player 3: 5 cards" in second and "Player 4" not in second


# -- errors, case ---------------------------------------------------------------------------


def test_every_error_has_a_message_and_changes_nothing() -> None:
    lines = [
        "x",
        "a 2 A",
        "i",
        "n",
        "n 0",
        "n 6",
        "n two",
        "n 1 2",
        "h please",
        "s",
        "a",
        "a 2",
        "a two A",
        "a 1 A",
        "a 5 A",
        "a 2 Z",
        "a 2 10",
        "i now",
    ]
    out = ring_gofish(*lines, seed=3)
    hand = HAND_RE.findall(out)[0].split()
    missing = next(letter for letter in RANK_LETTERS if letter not in {c[0] for c in hand})
    out = ring_gofish(*lines, f"a 2 {missing}", "i", seed=3)
    expected = [
        'Unknown command "x": type h for help.',
        "a works only during a game: type s to start one.",
        "i works only during a game: type s to start one.",
        "n takes one number of computer opponents, 1 to 5: e.g. n 4.",
        "0 is out of range: n takes one number of computer opponents, 1 to 5.",
        "6 is out of range: n takes one number of computer opponents, 1 to 5.",
        '"two" is not a number: n takes one number of computer opponents, 1 to 5.',
        "n takes one number of computer opponents, 1 to 5: e.g. n 4.",
        "h takes no arguments: type h for help.",
        "a takes a player (2 to 4) and a rank: e.g. a 2 T.",
        "a takes a player (2 to 4) and a rank: e.g. a 2 T.",
        '"two" is not a player: ask a player from 2 to 4.',
        "You are player 1: ask another player, from 2 to 4.",
        "There is no player 5 in this game: ask a player from 2 to 4.",
        '"Z" is not a rank: use one of A 2 3 4 5 6 7 8 9 T J Q K.',
        '"10" is not a rank (T is ten): use one of A 2 3 4 5 6 7 8 9 T J Q K.',
        "i takes no arguments: type h for help.",
    ]
    position = 0
    for message in expected:
        position = out.index(message + "\n", position)
    assert "You hold no " in out[position:]
    assert set(HAND_RE.findall(out)) == {" ".join(hand)}  # nothing moved
    assert "Fishing pool: 32 cards." in out and "A: nobody" in out


def test_bytes_that_are_not_text_are_an_unknown_command() -> None:
    done = subprocess.run(
        [*COMMAND, "--seed", "1"],
        input=b"\xff\xfe\nq\n",
        capture_output=True,
        timeout=TIMEOUT,
        cwd=ROOT,
    )
    assert done.returncode == 0 and done.stderr == b""
    assert b"Unknown command" in done.stdout and done.stdout.endswith(b"Goodbye.\n")


def test_commands_and_ranks_in_either_case() -> None:
    lower = ring_gofish("s", "i", "a 2 a", "h", "n 2", "s", "y", seed=FIRST_ASK_MISSES_THEN_MEMORY)
    upper = ring_gofish("S", "I", "A 2 A", "H", "N 2", "S", "Y", seed=FIRST_ASK_MISSES_THEN_MEMORY)
    assert lower == upper
    assert "You ask player 2 for aces." in lower and "Commands" in lower
    assert "Game dropped.\nNew game: you are player 1, the computer plays players 2 and 3" in lower


# -- signals and terminals ----------------------------------------------------------------


def test_ctrl_c_exits_130_with_one_line() -> None:
    game = LiveGame(1)
    try:
        game.send("s")
        game.process.send_signal(signal.SIGINT)
        out, err = game.process.communicate(timeout=TIMEOUT)
    finally:
        if game.process.poll() is None:
            game.process.kill()
            game.process.wait(timeout=TIMEOUT)
    assert game.process.returncode == 130
    assert out == b"\nInterrupted.\n" and err == b""


def test_a_session_through_a_pseudo_terminal() -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*COMMAND, "--seed", str(FIRST_ASK_HITS)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=ROOT,
        close_fds=True,
    )
    os.close(terminal)
    deadline = time.monotonic() + TIMEOUT
    seen = ""

    def read_until(*endings: str) -> str:
        nonlocal seen
        data = b""
        while True:
            text = data.decode(errors="replace").replace("\r\n", "\n")
            if text.endswith(endings):
                seen += text
                return text
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"waited for {endings!r}, got {text[-300:]!r}"
            ready, _, _ = select.select([controller], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # EIO: the program closed the terminal by exiting
                    chunk = b""
                if not chunk:
                    seen += text
                    return text
                data += chunk

    try:
        assert read_until("gofish> ").startswith("Go Fish! ")
        os.write(controller, b"s\n")
        started = read_until("gofish> ")
        assert started.startswith("s\nNew game: ")  # the terminal echoes what is typed
        os.write(controller, b"A 2 2\n")
        asked = read_until("gofish> ")
        assert "Player 2 gives you" in asked and "You go again." in asked
        os.write(controller, b"q\n")
        assert read_until("(y/n) ").endswith("Quit in the middle of this game? (y/n) ")
        os.write(controller, b"y\n")
        assert read_until("Goodbye.\n").endswith("y\nGoodbye.\n")
        assert process.wait(timeout=max(0.1, deadline - time.monotonic())) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=TIMEOUT)
        os.close(controller)
    assert "Traceback" not in seen
