"""The Go Fish command interpreter, sans-IO: one input line in, the text to show out.

``Session.handle(line)`` runs one command and returns a ``Reply``: the lines to
print and whether the program should exit. ``Session.prompt`` is what to show
before the next line is read; during a game it starts with the user's hand.
The terminal loop (``services.gofish.cli``) only moves text; the tests drive
a ``Session`` directly.

Choices the handout leaves open (docs/gofish.md is the user's version):

- Commands are one letter, either case, arguments separated by blanks; a
  blank line does nothing. Extra or missing arguments are errors.
- The user's hand is sorted by rank (A 2 ... T J Q K), then suit (C D H S).
- ``q`` and ``s`` during a game ask for confirmation: y/yes or n/no in any
  case; any other answer asks again. Nothing else runs until it is answered.
- ``n`` is remembered for the next ``s`` whether or not a game is on.
- Whatever happens is told, the computer players' turns included, but a
  computer's fished card stays hidden unless it is the rank it asked for (it
  shows it to earn its extra turn). Cards handed over are shown: that happens
  across the table.
- Once a game is over ``a`` and ``i`` say there is no game, until ``s``.
- At the end of input the program says goodbye; a game in play is dropped.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from services.gofish.rules import (
    HAND_SIZE,
    RANK_LETTERS,
    USER,
    Asked,
    Book,
    Card,
    GoFishGame,
    RuleError,
    parse_rank,
)

MIN_OPPONENTS = 1
MAX_OPPONENTS = 5
DEFAULT_OPPONENTS = 3
PROMPT = "gofish> "

RANK_NAMES = (
    "ace",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
)
RANK_PLURALS = tuple(name + ("es" if name == "six" else "s") for name in RANK_NAMES)
RANK_LIST = " ".join(RANK_LETTERS)

HELP = f"""\
Commands (upper or lower case):
  s          start a new game (asks first if a game is on)
  a <X> <R>  ask player X for every card of rank R; X is 2 to N (you are player 1),
             R one of {RANK_LIST} and in your hand; e.g. a 3 t
  i          cards and books of each player, and who last asked for each rank
  n <int>    number of computer opponents from the next game on, 1 to 5 (default 3)
  h          this help
  q          quit (asks first if a game is on)
Cards are a rank then a suit (C D H S): TS is the ten of spades, AH the ace of hearts.
A book is all four cards of a rank; the most books wins."""

GREETING = """\
Go Fish! You play against {opponents}; the most books (four of a rank) wins.
Type s to start a game, h for help, q to quit."""


class Confirm(enum.Enum):
    """A question waiting for a yes or no; the value is its prompt."""

    QUIT = "Quit in the middle of this game? (y/n) "
    NEW_GAME = "Drop this game and start a new one? (y/n) "


YES = frozenset({"y", "yes"})
NO = frozenset({"n", "no"})


@dataclass(frozen=True, slots=True)
class Reply:
    """What one input line produced: ``text`` to print (each line ends in a newline)."""

    text: str
    exit: bool = False


def _lines(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def _name(player: int) -> str:
    return "you" if player == USER else f"player {player + 1}"


def _subject(player: int) -> str:
    return "You" if player == USER else f"Player {player + 1}"


def _listed(player: int) -> str:
    return "Player 1 (you)" if player == USER else f"Player {player + 1}"


def _verb(player: int, plain: str, third_person: str) -> str:
    return plain if player == USER else third_person


def _names(players: Iterable[int]) -> str:
    """``you``, ``you and player 3``, ``players 2, 3 and 4``-style lists."""
    names = [_name(p) for p in players]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(n: int, rank: int) -> str:
    return f"{n} {RANK_NAMES[rank] if n == 1 else RANK_PLURALS[rank]}"


def _a_rank(rank: int) -> str:
    name = RANK_NAMES[rank]
    return ("an " if name[0] in "ae" else "a ") + name


def _opponents(n: int) -> str:
    return f"{n} computer opponent{'' if n == 1 else 's'}"


def _cards(hand: Iterable[Card]) -> str:
    return " ".join(str(card) for card in hand) or "none"


def _card_count(n: int) -> str:
    return f"{n} card{'' if n == 1 else 's'}"


def _book_count(n: int) -> str:
    return f"{n} book{'' if n == 1 else 's'}"


def _books(ranks: Iterable[int]) -> str:
    ranks = list(ranks)
    text = _book_count(len(ranks))
    return text + (f" ({' '.join(RANK_LETTERS[r] for r in ranks)})" if ranks else "")


def _shown(text: str) -> str:
    """User text to quote back: short, and without control characters."""
    if not text.isprintable():
        text = ascii(text)[1:-1]
    return text if len(text) <= 20 else text[:20] + "..."


def _whole_number(text: str) -> int | None:
    """ASCII digits as a number, or None. Past nine digits it is only "too big": no
    need to build (or refuse, past Python's limit) a huge int."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= 9 else 10**9


class Session:
    """The whole program's state between input lines; ``rng`` drives every shuffle and choice."""

    def __init__(
        self,
        rng: random.Random,
        new_game: Callable[[int, random.Random], GoFishGame] = GoFishGame,
    ) -> None:
        self._rng = rng
        self._make_game = new_game  # tests set up exact deals through it
        self._game: GoFishGame | None = None  # only while a game is in play
        self._next_opponents = DEFAULT_OPPONENTS
        self._confirming: Confirm | None = None

    @property
    def game(self) -> GoFishGame | None:
        """The game in play, or None before the first and after each one ends."""
        return self._game

    @property
    def next_opponents(self) -> int:
        return self._next_opponents

    @property
    def confirming(self) -> Confirm | None:
        return self._confirming

    def greeting(self) -> str:
        return _lines(GREETING.format(opponents=_opponents(self._next_opponents)))

    @property
    def prompt(self) -> str:
        if self._confirming is not None:
            return self._confirming.value
        if self._game is not None:
            return f"Your hand: {_cards(self._game.hand(USER))}\n{PROMPT}"
        return PROMPT

    def end_of_input(self) -> str:
        return _lines("Goodbye.")

    def handle(self, line: str) -> Reply:
        """Run one input line (its newline optional)."""
        if self._confirming is not None:
            return self._answer(line.strip().lower())
        words = line.split()
        if not words:
            return Reply("")
        command, arguments = words[0].lower(), words[1:]
        if command == "a":
            return self._ask(arguments)
        if command == "n":
            return self._set_opponents(arguments)
        if command not in ("q", "h", "s", "i"):
            return Reply(_lines(f'Unknown command "{_shown(words[0])}": type h for help.'))
        if arguments:
            return Reply(_lines(f"{command} takes no arguments: type h for help."))
        if command == "h":
            return Reply(_lines(HELP))
        if command == "i":
            return self._info()
        if self._game is not None:
            self._confirming = Confirm.QUIT if command == "q" else Confirm.NEW_GAME
            return Reply("")
        if command == "q":
            return Reply(_lines("Goodbye."), exit=True)
        return Reply(self._start_game())

    # -- commands -------------------------------------------------------------------

    def _answer(self, answer: str) -> Reply:
        if answer not in YES | NO:
            return Reply(_lines("Please answer y or n."))
        question, self._confirming = self._confirming, None
        if question is Confirm.QUIT:
            if answer in YES:
                return Reply(_lines("Goodbye."), exit=True)
            return Reply(_lines("The game goes on."))
        if answer in YES:
            return Reply(_lines("Game dropped.") + self._start_game())
        return Reply(_lines("The game goes on."))

    def _set_opponents(self, arguments: list[str]) -> Reply:
        usage = f"n takes one number of computer opponents, {MIN_OPPONENTS} to {MAX_OPPONENTS}"
        if len(arguments) != 1:
            return Reply(_lines(f"{usage}: e.g. n 4."))
        count = _whole_number(arguments[0])
        if count is None:
            return Reply(_lines(f'"{_shown(arguments[0])}" is not a number: {usage}.'))
        if not MIN_OPPONENTS <= count <= MAX_OPPONENTS:
            return Reply(_lines(f"{_shown(arguments[0])} is out of range: {usage}."))
        self._next_opponents = count
        text = f"The next game will have {_opponents(count)}"
        if self._game is not None:
            text += f"; this one keeps its {self._game.players - 1}"
        return Reply(_lines(text + "."))

    def _ask(self, arguments: list[str]) -> Reply:
        game = self._game
        if game is None:
            return Reply(_lines("a works only during a game: type s to start one."))
        last = game.players
        if len(arguments) != 2:
            return Reply(_lines(f"a takes a player (2 to {last}) and a rank: e.g. a 2 T."))
        player_text, rank_text = arguments
        number = _whole_number(player_text)
        if number is None:
            return Reply(
                _lines(f'"{_shown(player_text)}" is not a player: ask a player from 2 to {last}.')
            )
        rank = parse_rank(rank_text)
        if rank is None:
            hint = " (T is ten)" if rank_text == "10" else ""
            return Reply(
                _lines(f'"{_shown(rank_text)}" is not a rank{hint}: use one of {RANK_LIST}.')
            )
        try:
            game.check_ask(USER, number - 1, rank)
        except RuleError as refused:
            if refused.reason == "ask_yourself":
                text = f"You are player 1: ask another player, from 2 to {last}."
            elif refused.reason == "no_such_player":
                text = (
                    f"There is no player {_shown(player_text)} in this game: "
                    f"ask a player from 2 to {last}."
                )
            elif refused.reason == "rank_not_held":
                text = f"You hold no {RANK_PLURALS[rank]}: ask for a rank in your hand."
            else:  # the session keeps the game at the user's turn: anything else is a bug
                raise
            return Reply(_lines(text))
        lines = self._describe(game.ask(USER, number - 1, rank))
        while game.turn not in (None, USER):
            target, rank = game.computer_choice(game.turn, self._rng)
            lines += self._describe(game.ask(game.turn, target, rank))
        if game.over:
            lines += self._final_listing(game)
            self._game = None
        return Reply(_lines(*lines))

    def _info(self) -> Reply:
        game = self._game
        if game is None:
            return Reply(_lines("i works only during a game: type s to start one."))
        lines = [
            f"{_listed(p)}: {_card_count(game.hand_size(p))}, {_books(game.books(p))}"
            for p in range(game.players)
        ]
        lines.append(f"Fishing pool: {_card_count(game.pool_size)}.")
        lines.append("Who last asked for each rank:")
        memory = [
            f"{RANK_LETTERS[rank]}: {'nobody' if p is None else _name(p):<8}"
            for rank, p in enumerate(game.last_askers)
        ]
        lines.append("  " + "  ".join(memory[:7]).rstrip())
        lines.append("  " + "  ".join(memory[7:]).rstrip())
        return Reply(_lines(*lines))

    # -- the game's story -----------------------------------------------------------

    def _start_game(self) -> str:
        game = self._game = self._make_game(self._next_opponents + 1, self._rng)
        players = game.players
        computers = {2: "player 2", 3: "players 2 and 3"}.get(players, f"players 2 to {players}")
        lines = [
            f"New game: you are player 1, the computer plays {computers}. "
            f"{HAND_SIZE} cards each, {_card_count(game.pool_size)} in the fishing pool."
        ]
        for book in game.deal_books:
            dealt = _verb(book.player, "were", "was")
            lines.append(self._book_line(book, f"{dealt} dealt"))
        first_rank = RANK_LETTERS[game.hand(USER)[0].rank]
        lines.append(f"Your turn: ask a player for a rank you hold, e.g. a 2 {first_rank}.")
        return _lines(*lines)

    @staticmethod
    def _book_line(book: Book, how: str) -> str:
        return (
            f"{_subject(book.player)} {how} a book of {RANK_PLURALS[book.rank]}: "
            f"{_cards(book.cards)}."
        )

    def _describe(self, asked: Asked) -> list[str]:
        asker, target, rank = asked.asker, asked.target, asked.rank
        lines = [
            f"{_subject(asker)} {_verb(asker, 'ask', 'asks')} {_name(target)} "
            f"for {RANK_PLURALS[rank]}."
        ]
        if asked.given:
            lines.append(
                f"{_subject(target)} {_verb(target, 'give', 'gives')} {_name(asker)} "
                f"{_count(len(asked.given), rank)}: {_cards(asked.given)}."
            )
        else:
            lines.append(f"{_subject(target)} {_verb(target, 'say', 'says')}: Go Fish!")
            lines.append(self._fish_line(asked))
        for book in asked.books:
            lines.append(self._book_line(book, _verb(asker, "make", "makes")))
        # Once the game is over the final listing says why, not whose turn it would be.
        if asked.next_player is not None:
            if asked.again:
                lines.append(f"{_subject(asker)} {_verb(asker, 'go', 'goes')} again.")
            else:
                lines.append(f"The turn passes to {_name(asked.next_player)}.")
        return lines

    @staticmethod
    def _fish_line(asked: Asked) -> str:
        asker, fished = asked.asker, asked.fished
        assert fished is not None
        lucky = f": {_a_rank(fished.rank)}, the rank {_verb(asker, 'you', 'it')} asked for"
        if asker == USER:
            return f"You fish {fished} from the pool{lucky if asked.again else ''}."
        if asked.again:
            return f"{_subject(asker)} fishes {fished} from the pool{lucky}."
        return f"{_subject(asker)} fishes a card from the pool."

    @staticmethod
    def _final_listing(game: GoFishGame) -> list[str]:
        emptied = [p for p in range(game.players) if not game.hand_size(p)]
        reasons = []
        if emptied:
            has = "has" if len(emptied) == 1 and emptied[0] != USER else "have"
            reasons.append(f"{_names(emptied)} {has} no cards left")
        if not game.pool_size:
            reasons.append("the fishing pool is empty")
        lines = [f"Game over: {' and '.join(reasons)}."]
        for p in range(game.players):
            lines.append(
                f"  {_listed(p)}: {_books(game.books(p))}; cards left: {_cards(game.hand(p))}"
            )
        winners = game.winners()
        books = _book_count(len(game.books(winners[0])))
        if len(winners) > 1:
            lines.append(f"A tie: {_names(winners)} have {books} each.")
        elif winners[0] == USER:
            lines.append(f"You win with {books}!")
        else:
            lines.append(f"{_subject(winners[0])} wins with {books}.")
        lines.append("Type s to play again, n <1-5> first to change the number of opponents.")
        return lines
