"""Go Fish for the tests: a game in mid-play, set up card by card; and ``ring gofish`` as a
real OS process, played through its stdin and stdout.

Situations come from seeds. The seeds below were found by searching with the pure session
(run this module: ``python -m tests.helpers.gofish``) and each test asserts that its
situation really happened, so a change to the shuffle or the computer's choices fails
loudly instead of testing nothing.

Whole games are played by ``policy``: ask player 2 for the lowest rank in hand.
``LiveGame`` drives the process one prompt at a time, reading the hand from each prompt,
with every wait bounded by one deadline.

Used by the Go Fish tests (``tests/services/gofish/``).
"""

from __future__ import annotations

import os
import random
import re
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from services.fishnet.rules import DECK_SIZE
from services.gofish.rules import GoFishGame, cards, full_deck


def position(hands: list[str], pool: str, books: list[list[int]] | None = None, **kw) -> GoFishGame:
    """A game in mid-play; ranks not in a hand, the pool or a book go to the pool's end."""
    held = [cards(hand) for hand in hands]
    booked = {rank for own in books or [] for rank in own}
    placed = {card for hand in held for card in hand} | set(cards(pool))
    rest = [c for c in full_deck() if c not in placed and c.rank not in booked]
    return GoFishGame.from_position(held, cards(pool) + rest, books, **kw)


# -- ring gofish as a process ----------------------------------------------------------

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
