"""FishNet (two-player Go Fish) as the server referees it: pure state, no I/O, no clock.

The sans-IO protocol turns each client message into one call here, each
``RuleError`` into ``error <reason>``, and each returned record into the
messages both players get, without re-deriving anything. A game is a
function of its seed (or stacked deck) and the calls made, nothing else.

The first part of the module is what every Go Fish shares, whether cards
carry suits or not (the later interactive Go Fish imports it): ranks, the
deck, and books. Cards there are anything with a rank; ``rank_of`` says how
to read it, and FishNet's cards are their ranks.

Rules beyond the handout (docs/protocols/fishnet.md "The game"):

- The deal alternates, one card at a time, starting with the first player.
  Books made during the deal are removed at once and recorded in order with
  the dealt cards (``deal_log``). A hand emptied mid-deal is refilled by the
  rest of the deal (seven cards always leave at least three), so the game
  cannot end during the deal.
- "Passed on its previous turn" means the player's last action was a pass;
  a request clears it, and each pass after a pass fishes. A pass, fishing
  or not, always hands the turn to the opponent.
- Once the deck is empty, passing fishes nothing; two players that only pass
  never end the game, so the server must bound that itself.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

# -- what every Go Fish shares ----------------------------------------------------

RANK_COUNT = 13
RANKS = range(RANK_COUNT)  # FishNet's ranks 0-12; the interactive game names them A..K
BOOK_SIZE = 4  # a book is all four cards of one rank
DECK_SIZE = RANK_COUNT * BOOK_SIZE

C = TypeVar("C")


def _itself(card: Any) -> int:
    return card


def is_rank(value: object) -> bool:
    """Whether ``value`` is a rank: an int 0-12 (and not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value in RANKS


def build_deck(make_card: Callable[[int, int], C]) -> list[C]:
    """All 52 cards, in rank order: ``make_card(rank, copy)`` for copy 0-3 (a suit index)."""
    return [make_card(rank, copy) for rank in RANKS for copy in range(BOOK_SIZE)]


def full_deck() -> list[int]:
    """The 52 suitless cards: four of each rank."""
    return build_deck(lambda rank, _copy: rank)


def shuffled(cards: Iterable[C], rng: random.Random) -> list[C]:
    """A shuffled copy of ``cards``; the order depends only on the cards and ``rng``."""
    deck = list(cards)
    rng.shuffle(deck)
    return deck


def rank_counts(cards: Iterable[C], rank_of: Callable[[C], int] = _itself) -> tuple[int, ...]:
    """How many cards of each rank, indexed by rank."""
    counts = [0] * RANK_COUNT
    for card in cards:
        counts[rank_of(card)] += 1
    return tuple(counts)


def books_in(cards: Iterable[C], rank_of: Callable[[C], int] = _itself) -> tuple[int, ...]:
    """The ranks of which ``cards`` hold all four, ascending."""
    return tuple(rank for rank, n in enumerate(rank_counts(cards, rank_of)) if n >= BOOK_SIZE)


def remove_books(hand: list[C], rank_of: Callable[[C], int] = _itself) -> tuple[int, ...]:
    """Take every book out of ``hand`` (in place); the ranks removed, ascending."""
    books = books_in(hand, rank_of)
    if books:
        hand[:] = [card for card in hand if rank_of(card) not in books]
    return books


# -- FishNet: two players, numbered 0 and 1 ---------------------------------------

PLAYERS = (0, 1)
HAND_SIZE = 7  # cards dealt to each player


class RuleError(Exception):
    """An action the rules refuse. ``reason`` has no spaces: ``error <reason>``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        assert reason and not any(c.isspace() for c in reason), reason
        super().__init__(reason)
        self.reason = reason
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else self.reason


class Result(enum.Enum):
    WIN = "win"
    LOSE = "lose"
    TIE = "tie"


@dataclass(frozen=True, slots=True)
class Dealt:
    """One card of the deal."""

    player: int
    rank: int


@dataclass(frozen=True, slots=True)
class BookMade:
    """``player`` completed the book of ``rank``; ``move`` 0 is the deal, n the nth action."""

    player: int
    rank: int
    move: int


@dataclass(frozen=True, slots=True)
class Requested:
    """What ``request`` did. ``given`` 0 means go fish; ``fished`` is None when
    nothing was fished (cards were given, or the deck was empty)."""

    player: int
    rank: int
    given: int
    fished: int | None
    books: tuple[int, ...]  # books the requester made, in the order made
    again: bool  # the requester has the next turn (unless the game is over)
    next_player: int | None  # None when the game is over
    over: bool


@dataclass(frozen=True, slots=True)
class Passed:
    """What ``pass_turn`` did: a pass after a pass fishes (``fished``)."""

    player: int
    fished: int | None
    books: tuple[int, ...]
    next_player: int | None
    over: bool


@dataclass(frozen=True, slots=True)
class PlayerView:
    """What one player may know: its own hand, and what is public."""

    player: int
    hand: tuple[int, ...]  # own cards by rank, indexed by rank
    books: tuple[int, ...]  # own books, in the order made
    opponent_books: tuple[int, ...]
    opponent_hand_size: int  # the opponent can be counted, not seen
    deck_size: int
    turn: int | None  # None when the game is over
    passed_last: bool  # a pass now would fish
    over: bool

    @property
    def ranks_held(self) -> tuple[int, ...]:
        """The ranks this player may request."""
        return tuple(rank for rank, n in enumerate(self.hand) if n)


def _check_player(player: object) -> int:
    if player not in PLAYERS or isinstance(player, bool):
        raise ValueError(f"a FishNet player is 0 or 1, not {player!r}")
    return player  # type: ignore[return-value]


class FishNetGame:
    """One two-player game, from the deal to the result.

    ``FishNetGame(seed)`` shuffles and picks the first player from the seed
    (``first`` overrides the pick, and leaves the deck as the seed made it);
    ``from_deck`` and ``from_position`` set up exact games for tests.
    """

    def __init__(self, seed: int | str, first: int | None = None) -> None:
        deck = shuffled(full_deck(), random.Random(f"fishnet-deck:{seed}"))
        if first is None:
            first = random.Random(f"fishnet-first:{seed}").randrange(len(PLAYERS))
        _check_player(first)
        self._reset()
        self._deal(deck, first)

    @classmethod
    def from_deck(cls, deck: Sequence[int], first: int) -> FishNetGame:
        """Deal ``deck`` from its start (one card each in turn, ``first`` first)."""
        _check_player(first)
        if sorted(deck) != full_deck():
            raise ValueError("a FishNet deck is four of each rank 0-12")
        game = cls.__new__(cls)
        game._reset()
        game._deal(list(deck), first)
        return game

    @classmethod
    def from_position(
        cls,
        hands: tuple[Sequence[int], Sequence[int]],
        stock: Sequence[int],
        books: tuple[Sequence[int], Sequence[int]] = ((), ()),
        turn: int = 0,
        passed: tuple[bool, bool] = (False, False),
    ) -> FishNetGame:
        """A game in mid-play: hands, the stock (next card first), books made so far."""
        _check_player(turn)
        booked = [rank for own in books for rank in own for _ in range(BOOK_SIZE)]
        if sorted([*hands[0], *hands[1], *stock, *booked]) != full_deck():
            raise ValueError("hands, stock and books must hold four of each rank 0-12")
        if books_in(hands[0]) or books_in(hands[1]):
            raise ValueError("a hand never holds a book")
        game = cls.__new__(cls)
        game._reset()
        game._hands = (list(hands[0]), list(hands[1]))
        game._stock = list(stock)
        game._books = (list(books[0]), list(books[1]))
        game._book_log = [BookMade(p, rank, 0) for p in PLAYERS for rank in books[p]]
        game._turn = turn
        game._passed = list(passed)
        game._check_over()
        return game

    def _reset(self) -> None:
        self._hands: tuple[list[int], list[int]] = ([], [])
        self._stock: list[int] = []  # the next card to fish is _stock[0]
        self._books: tuple[list[int], list[int]] = ([], [])
        self._book_log: list[BookMade] = []
        self._deal_log: list[Dealt | BookMade] = []
        self._first = 0
        self._turn = 0
        self._passed = [False, False]
        self._moves = 0
        self._over = False

    def _deal(self, deck: list[int], first: int) -> None:
        self._first = self._turn = first
        for i in range(HAND_SIZE * len(PLAYERS)):
            player = (first + i) % len(PLAYERS)
            self._hands[player].append(deck[i])
            self._deal_log.append(Dealt(player, deck[i]))
            for rank in self._take_books(player):
                self._deal_log.append(BookMade(player, rank, 0))
        self._stock = deck[HAND_SIZE * len(PLAYERS) :]
        self._check_over()  # cannot end here (see the module docstring), but be safe

    # -- read-only: the referee's view ----------------------------------------------

    @property
    def first_player(self) -> int:
        return self._first

    @property
    def turn(self) -> int | None:
        """Whose turn it is; None once the game is over."""
        return None if self._over else self._turn

    @property
    def over(self) -> bool:
        return self._over

    @property
    def deck_size(self) -> int:
        return len(self._stock)

    @property
    def deal_log(self) -> tuple[Dealt | BookMade, ...]:
        """The deal as it happened: each card dealt, and each book as it was made."""
        return tuple(self._deal_log)

    @property
    def book_log(self) -> tuple[BookMade, ...]:
        """Every book, in the order made."""
        return tuple(self._book_log)

    def stock(self) -> tuple[int, ...]:
        """The cards left to fish, the next first. Referee only: a secret."""
        return tuple(self._stock)

    def hand(self, player: int) -> tuple[int, ...]:
        """The player's cards by rank, indexed by rank. Referee only: a secret."""
        return rank_counts(self._hands[_check_player(player)])

    def hand_size(self, player: int) -> int:
        return len(self._hands[_check_player(player)])

    def books(self, player: int) -> tuple[int, ...]:
        """The player's books, in the order made."""
        return tuple(self._books[_check_player(player)])

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know, and nothing of the opponent's hand but its size."""
        opponent = 1 - _check_player(player)
        return PlayerView(
            player=player,
            hand=self.hand(player),
            books=self.books(player),
            opponent_books=self.books(opponent),
            opponent_hand_size=len(self._hands[opponent]),
            deck_size=self.deck_size,
            turn=self.turn,
            passed_last=self._passed[player],
            over=self._over,
        )

    def winner(self) -> int | None:
        """The player with more books once the game is over; None for a tie."""
        self._require_over()
        mine, theirs = (len(self._books[p]) for p in PLAYERS)
        return None if mine == theirs else (0 if mine > theirs else 1)

    def result(self, player: int) -> Result:
        """``player``'s result, by books, once the game is over."""
        _check_player(player)
        winner = self.winner()
        if winner is None:
            return Result.TIE
        return Result.WIN if winner == player else Result.LOSE

    # -- the two actions ------------------------------------------------------------

    def request(self, player: int, rank: int) -> Requested:
        """``player`` asks the opponent for every card of ``rank``."""
        self._check_turn(player)
        if not is_rank(rank):
            raise RuleError("bad_rank", f"a rank is 0-{RANK_COUNT - 1}, not {rank!r}")
        hand = self._hands[player]
        if rank not in hand:
            raise RuleError("rank_not_held", f"player {player} holds no {rank}s to ask for")
        self._moves += 1
        self._passed[player] = False
        opponent = 1 - player
        given = self._hands[opponent].count(rank)
        fished = None
        if given:
            self._hands[opponent][:] = [card for card in self._hands[opponent] if card != rank]
            hand.extend([rank] * given)
            again = True
        else:
            fished = self._fish(player)
            again = fished == rank
        books = self._take_books(player)
        if not again:
            self._turn = opponent
        self._check_over()
        return Requested(player, rank, given, fished, books, again, self.turn, self._over)

    def pass_turn(self, player: int) -> Passed:
        """``player`` forfeits its turn; if its last action was a pass too, it fishes."""
        self._check_turn(player)
        self._moves += 1
        fished = self._fish(player) if self._passed[player] else None
        self._passed[player] = True
        books = self._take_books(player)
        self._turn = 1 - player
        self._check_over()
        return Passed(player, fished, books, self.turn, self._over)

    def stop(self) -> None:
        """End the game where it stands; the result is by the books made so far.

        For the referee's own limits (a cap on moves: two players who only
        pass on an empty deck would never finish).
        """
        self._over = True

    @property
    def moves(self) -> int:
        """Requests and passes so far."""
        return self._moves

    # -- helpers --------------------------------------------------------------------

    def _check_turn(self, player: int) -> None:
        _check_player(player)
        if self._over:
            raise RuleError("game_over", "the game is over")
        if player != self._turn:
            raise RuleError("not_your_turn", f"it is player {self._turn}'s turn")

    def _fish(self, player: int) -> int | None:
        if not self._stock:
            return None
        card = self._stock.pop(0)
        self._hands[player].append(card)
        return card

    def _take_books(self, player: int) -> tuple[int, ...]:
        books = remove_books(self._hands[player])
        for rank in books:
            self._books[player].append(rank)
            self._book_log.append(BookMade(player, rank, self._moves))
        return books

    def _check_over(self) -> None:
        made = len(self._books[0]) + len(self._books[1])
        if not self._hands[0] or not self._hands[1] or made == RANK_COUNT:
            self._over = True

    def _require_over(self) -> None:
        if not self._over:
            raise RuleError("game_not_over", "the result is known only at the end")
