"""``ring gofish`` as a real OS process, through its stdin and stdout (and once a pty).

Situations come from seeds. The seeds below were found by searching with the
pure session (run this module: ``python -m tests.services.test_gofish_cli``)
and each test asserts that its situation really happened, so a change to the
shuffle or the computer's choices fails loudly instead of testing nothing.

Whole games are played by ``policy``: ask player 2 for the lowest rank in
hand. ``LiveGame`` drives the process one prompt at a time, reading the hand
from each prompt, with every wait bounded by one deadline.
"""

from __future__ import annotations

import os
import pty
import random
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from services.fishnet.rules import DECK_SIZE
from services.gofish.rules import RANK_LETTERS, Card

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "ring", "gofish"]
TIMEOUT = 10.0  # per process, start to exit
PROMPTS = (b"gofish> ", b"(y/n) ")
HAND_RE = re.compile(r"^Your hand: (.*)$", re.MULTILINE)
CARD_RE = re.compile(r"[A2-9TJQK][CDHS]")
LISTING_RE = re.compile(
    r"^  Player (\d)( \(you\))?: (\d+) books?(?: \(([^)]*)\))?; cards left: (.*)$", re.MULTILINE
)

# Seeds found with the search at the bottom of this module (3 opponents unless said).
FIRST_ASK_HITS = 2  # "a 2 2" at once: player 2 holds twos
FIRST_ASK_FISHES_ITS_RANK = 17  # "a 2 3" at once: Go Fish, and the fished card is a three
FIRST_ASK_MISSES_THEN_MEMORY = 0  # "a 2 A": Go Fish; later a computer must ask the user for aces
USER_MAKES_A_BOOK = 2
ENDS_GIVEN_AWAY = 7  # a hand emptied by giving, the receiver's book shown first
ENDS_GIVEN_AWAY_TWO_PLAYERS = 0  # the same with n 1
ENDS_OWN_HAND_EMPTY = 3  # the asker's own book empties its hand
ENDS_POOL_EMPTY = 0
ENDS_IN_A_TIE = 8
DEALT_A_BOOK_SIX_PLAYERS = 98  # with n 5, someone is dealt a book


def ring_gofish(*lines: str, seed: int | None = 1) -> str:
    """Run the program on ``lines`` then end of input; its stdout, after checking it exited well."""
    seeded = [] if seed is None else ["--seed", str(seed)]
    done = subprocess.run(
        [*COMMAND, *seeded],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
    )
    assert done.returncode == 0, done
    assert done.stderr == ""
    return done.stdout


def policy(prompt_text: str) -> str:
    """The test player's move: ask player 2 for the lowest rank in the hand of the last prompt."""
    hands = HAND_RE.findall(prompt_text)
    assert hands, f"no hand in {prompt_text[-200:]!r}"
    return f"a 2 {hands[-1].split()[0][0]}"


class LiveGame:
    """The program as a process, one prompt at a time."""

    def __init__(self, seed: int) -> None:
        self.deadline = time.monotonic() + TIMEOUT
        self.process = subprocess.Popen(
            [*COMMAND, "--seed", str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        self.transcript = ""
        self.greeting = self.read_to_prompt()

    def read_to_prompt(self) -> str:
        """Everything up to and including the next prompt (the program then waits for a line)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        data = b""
        while not data.endswith(PROMPTS):
            remaining = self.deadline - time.monotonic()
            assert remaining > 0, f"no prompt in time; got {data[-300:]!r}"
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, f"stdout closed before a prompt; got {data[-300:]!r}"
                data += chunk
        text = data.decode()
        self.transcript += text
        return text

    def send(self, line: str) -> str:
        assert self.process.stdin is not None
        self.transcript += line + "\n"
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        return self.read_to_prompt()

    def play_to_the_end(self) -> str:
        """Play ``policy`` until the game is over; what was said from then on."""
        text = self.transcript
        for _ in range(DECK_SIZE * 4):
            if "Game over:" in text:
                return text[text.index("Game over:") :]
            text = self.send(policy(text))
        raise AssertionError("the game did not end")

    def quit(self) -> str:
        """``q`` with no game on: the process must exit 0 and say nothing on stderr."""
        remaining = max(0.1, self.deadline - time.monotonic())
        out, err = self.process.communicate(b"q\n", timeout=remaining)
        assert self.process.returncode == 0 and err == b""
        return out.decode()


def play_one_game(seed: int, opponents: int | None = None) -> str:
    """From ``s`` to the end of the game by ``policy``; the transcript from ``Game over:`` on."""
    game = LiveGame(seed)
    try:
        if opponents is not None:
            game.send(f"n {opponents}")
        game.send("s")
        ending = game.play_to_the_end()
        assert ending.endswith("\ngofish> ") and "Your hand" not in ending
        assert game.quit() == "Goodbye.\n"
        return game.transcript
    finally:
        if game.process.poll() is None:
            game.process.kill()
            game.process.wait(timeout=TIMEOUT)


@dataclass
class Listing:
    """The end-of-game listing: books and cards left per player, and the last lines."""

    books: dict[int, list[str]]
    cards_left: dict[int, list[str]]
    verdict: str


def end_listing(transcript: str) -> Listing:
    """Parse the one end-of-game listing and check it is whole and consistent."""
    assert transcript.count("Game over:") == 1
    ending = transcript[transcript.index("Game over:") :]
    books: dict[int, list[str]] = {}
    cards_left: dict[int, list[str]] = {}
    for number, you, count, ranks, left in LISTING_RE.findall(ending):
        player = int(number)
        assert bool(you) == (player == 1)
        books[player] = ranks.split() if ranks else []
        assert len(books[player]) == int(count)
        cards_left[player] = [] if left == "none" else left.split()
        assert all(CARD_RE.fullmatch(card) for card in cards_left[player])
    assert sorted(books) == list(range(1, len(books) + 1)) and len(books) >= 2
    listed = sum(len(cards) for cards in cards_left.values())
    assert 4 * sum(len(own) for own in books.values()) + listed <= DECK_SIZE
    lines = ending.splitlines()
    verdict = lines[1 + len(books)]
    most = max(len(own) for own in books.values())
    leaders = [p for p, own in books.items() if len(own) == most]
    book_word = "book" if most == 1 else "books"
    if len(leaders) > 1:
        assert verdict.startswith("A tie: ") and verdict.endswith(f"{most} {book_word} each.")
    elif leaders == [1]:
        assert verdict == f"You win with {most} {book_word}!"
    else:
        assert verdict == f"Player {leaders[0]} wins with {most} {book_word}."
    assert lines[2 + len(books)].startswith("Type s to play again")
    return Listing(books, cards_left, verdict)


def lines_before_game_over(transcript: str, count: int) -> list[str]:
    return transcript[: transcript.index("Game over:")].splitlines()[-count:]


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


# -- the seed search (not a test) ----------------------------------------------------------


def _search(limit: int = 400) -> dict[str, int]:  # pragma: no cover - a helper for people
    """The first seed for each situation, played by ``policy`` with the pure session."""
    from services.gofish.session import Session

    found: dict[str, int] = {}
    for seed in range(limit):
        for opponents in (3, 1, 5):
            session = Session(random.Random(seed))
            text = ""
            for line in (f"n {opponents}", "s"):
                text += session.handle(line).text + session.prompt
            first = True
            while session.game is not None:
                said = session.handle(policy(text)).text
                text += said + session.prompt
                if first and opponents == 3:
                    first = False
                    kind = (
                        "hits"
                        if "gives you" in said
                        else "fishes its rank"
                        if "the rank you" in said
                        else "misses"
                    )
                    found.setdefault(f"first ask {kind}", seed)
            situations = {
                "user makes a book": "You make a book of" in text,
                "dealt a book": "dealt a book" in text,
                "tie": "A tie:" in text,
                "pool empty": "Game over: the fishing pool is empty." in text,
            }
            before = text[: text.index("Game over:")].splitlines()
            if "no cards left" in text.split("Game over:")[1].splitlines()[0]:
                given = any(" give" in line for line in before[-2:])
                situations["given away" if given else "own hand empty"] = True
            for name, happened in situations.items():
                if happened:
                    found.setdefault(f"{name}, {opponents} opponents", seed)
    return found


if __name__ == "__main__":  # pragma: no cover
    for situation, seed in sorted(_search().items()):
        print(f"{seed:4}  {situation}")
