"""Interactive Go Fish as the handout plays it: pure state, no I/O, no clock.

Two to six players, numbered 0 to 5 here (the user is player 0; the terminal
calls the players 1 to N). Cards carry suits, but only ranks matter for the
play; ranks, the deck and books are shared with FishNet
(``services.fishnet.rules``), read through ``Card.rank``.

Rules as implemented, including where the handout is silent:

- The shuffled deck is dealt one card at a time, the user first, five cards
  each; the rest is the fishing pool. A book dealt to a player (five cards
  can hold one) is removed at once and recorded (``deal_books``); no hand is
  ever emptied by the deal.
- The user has the first turn. Asking takes every card of the rank from the
  target and the asker goes again; otherwise the asker fishes the top card of
  the pool and goes again only if it is the asked rank, else the turn goes to
  the player who said Go Fish.
- Books are taken out of the asker's hand as soon as they are complete; only
  the asker's hand can complete one.
- The game is over as soon as any hand is empty (the asker's, after its
  book, or the target's, after giving everything away) or the pool is empty
  (right after its last card is fished), whoever's turn it would be.
- One memory, shared by all computer players, holds who last asked for each
  rank; every ask updates it, the user's included.
- A computer player first looks for ranks it holds that another player asked
  for last; if there are any, it picks one of them at random and asks that
  player. Otherwise it picks a random rank it holds and a random other player.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.fishnet.rules import (
    RANK_COUNT,
    RANKS,
    books_in,
    build_deck,
    is_rank,
    rank_counts,
    remove_books,
    shuffled,
)

RANK_LETTERS = "A23456789TJQK"  # index = rank: A is 0, K is 12
SUIT_LETTERS = "CDHS"  # clubs, diamonds, hearts, spades; also the sort order within a rank
HAND_SIZE = 5
MIN_PLAYERS = 2
MAX_PLAYERS = 6
USER = 0


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card; cards sort by rank (A..K), then suit (C D H S)."""

    rank: int
    suit: int

    def __post_init__(self) -> None:
        if not is_rank(self.rank) or self.suit not in range(len(SUIT_LETTERS)):
            raise ValueError(f"no such card: rank {self.rank!r}, suit {self.suit!r}")

    def __str__(self) -> str:
        return RANK_LETTERS[self.rank] + SUIT_LETTERS[self.suit]

    @classmethod
    def parse(cls, text: str) -> Card:
        """``"TS"`` or ``"ah"``: a rank letter then a suit letter, either case."""
        rank = parse_rank(text[:1])
        suit = SUIT_LETTERS.find(text[1:].upper()) if len(text) == 2 else -1
        if rank is None or suit < 0:
            raise ValueError(f"not a card: {text!r}")
        return cls(rank, suit)


def _rank_of(card: Card) -> int:
    return card.rank


def parse_rank(text: str) -> int | None:
    """The rank named by one letter of ``A23456789TJQK`` (either case), or None."""
    if len(text) != 1:
        return None
    index = RANK_LETTERS.find(text.upper())
    return index if index >= 0 else None


def cards(text: str) -> list[Card]:
    """Cards from their names separated by spaces: ``cards("TS ah 2c")``."""
    return [Card.parse(name) for name in text.split()]


def full_deck() -> list[Card]:
    """The 52 cards, sorted."""
    return build_deck(Card)


class RuleError(Exception):
    """An ask the rules refuse; ``reason`` is a short code the session words for the user."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Book:
    """A book ``player`` completed: the four cards of ``rank``, sorted."""

    player: int
    rank: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Asked:
    """What one ask did.

    ``given`` is empty when the target said Go Fish; ``fished`` is then the
    card the asker drew (None only when cards were given). ``books`` are the
    books the asker completed (at most one). ``next_player`` is None once the
    game is over.
    """

    asker: int
    target: int
    rank: int
    given: tuple[Card, ...]
    fished: Card | None
    books: tuple[Book, ...]
    again: bool
    next_player: int | None
    over: bool


class GoFishGame:
    """One game from the deal to the end.

    ``GoFishGame(players, rng)`` shuffles with ``rng``; ``from_deck`` and
    ``from_position`` set up exact games for tests.
    """

    def __init__(self, players: int, rng: random.Random) -> None:
        self._setup(players)
        self._deal(shuffled(full_deck(), rng))

    @classmethod
    def from_deck(cls, players: int, deck: Sequence[Card]) -> GoFishGame:
        """Deal ``deck`` from its start; the pool is what is left, next card first."""
        if sorted(deck) != full_deck():
            raise ValueError("a deck is the 52 cards, each once")
        game = cls.__new__(cls)
        game._setup(players)
        game._deal(list(deck))
        return game

    @classmethod
    def from_position(
        cls,
        hands: Sequence[Iterable[Card]],
        pool: Iterable[Card],
        books: Sequence[Iterable[int]] | None = None,
        turn: int = USER,
        last_askers: Sequence[int | None] | None = None,
    ) -> GoFishGame:
        """A game in mid-play: hands, the pool (next card first), the ranks booked so far."""
        game = cls.__new__(cls)
        game._setup(len(hands))
        game._hands = [sorted(hand) for hand in hands]
        game._pool = list(pool)
        booked_ranks = [list(own) for own in books] if books else [[] for _ in hands]
        if len(booked_ranks) != len(hands):
            raise ValueError("one list of books per player")
        booked = [
            Card(rank, suit)
            for own in booked_ranks
            for rank in own
            for suit in range(len(SUIT_LETTERS))
        ]
        if sorted([*game._pool, *booked, *(c for hand in game._hands for c in hand)]) != (
            full_deck()
        ):
            raise ValueError("hands, pool and books must hold the 52 cards, each once")
        if any(books_in(hand, _rank_of) for hand in game._hands):
            raise ValueError("a hand never holds a book")
        game._books = booked_ranks
        game._turn = game._check_player(turn)
        if last_askers is not None:
            if len(last_askers) != RANK_COUNT:
                raise ValueError("one last asker per rank")
            game._last_askers = [None if p is None else game._check_player(p) for p in last_askers]
        game._check_over()
        return game

    def _setup(self, players: int) -> None:
        if isinstance(players, bool) or players not in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            raise ValueError(f"a game has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players!r}")
        self._players = players
        self._hands: list[list[Card]] = [[] for _ in range(players)]
        self._pool: list[Card] = []  # the next card to fish is _pool[0]
        self._books: list[list[int]] = [[] for _ in range(players)]
        self._deal_books: tuple[Book, ...] = ()
        self._last_askers: list[int | None] = [None] * RANK_COUNT
        self._turn = USER
        self._over = False

    def _deal(self, deck: list[Card]) -> None:
        dealt = HAND_SIZE * self._players
        for index, card in enumerate(deck[:dealt]):
            self._hands[index % self._players].append(card)
        self._pool = deck[dealt:]
        # Books are looked for once the deal is done: five cards hold at most one,
        # and whether it is taken out card by card or at the end changes nothing.
        self._deal_books = tuple(
            book for player in range(self._players) for book in self._take_books(player)
        )
        for hand in self._hands:
            hand.sort()
        self._check_over()  # never true after a deal (see the module docstring)

    # -- what anyone may read -------------------------------------------------------

    @property
    def players(self) -> int:
        return self._players

    @property
    def turn(self) -> int | None:
        """Whose turn it is; None once the game is over."""
        return None if self._over else self._turn

    @property
    def over(self) -> bool:
        return self._over

    @property
    def pool_size(self) -> int:
        return len(self._pool)

    @property
    def deal_books(self) -> tuple[Book, ...]:
        """Books made by the deal itself, in player order."""
        return self._deal_books

    @property
    def last_askers(self) -> tuple[int | None, ...]:
        """The shared memory: who last asked for each rank (None: nobody yet), by rank."""
        return tuple(self._last_askers)

    def hand(self, player: int) -> tuple[Card, ...]:
        """``player``'s cards, sorted."""
        return tuple(self._hands[self._check_player(player)])

    def hand_size(self, player: int) -> int:
        return len(self._hands[self._check_player(player)])

    def books(self, player: int) -> tuple[int, ...]:
        """The ranks ``player`` has booked, in the order made."""
        return tuple(self._books[self._check_player(player)])

    def pool(self) -> tuple[Card, ...]:
        """The cards left to fish, the next first (for tests and checks)."""
        return tuple(self._pool)

    def ranks_held(self, player: int) -> tuple[int, ...]:
        """The ranks ``player`` may ask for, ascending."""
        counts = rank_counts(self._hands[self._check_player(player)], _rank_of)
        return tuple(rank for rank in RANKS if counts[rank])

    def winners(self) -> tuple[int, ...]:
        """The players with the most books, ascending (more than one: a tie)."""
        if not self._over:
            raise RuleError("game_not_over", "the winners are known only at the end")
        most = max(len(own) for own in self._books)
        return tuple(p for p in range(self._players) if len(self._books[p]) == most)

    # -- the one action ---------------------------------------------------------------

    def ask(self, asker: int, target: int, rank: int) -> Asked:
        """``asker`` asks ``target`` for every card of ``rank``."""
        self.check_ask(asker, target, rank)
        self._last_askers[rank] = asker
        hand = self._hands[asker]
        given = tuple(card for card in self._hands[target] if card.rank == rank)
        fished = None
        if given:
            self._hands[target] = [card for card in self._hands[target] if card.rank != rank]
            hand.extend(given)
            again = True
        else:
            fished = self._pool.pop(0)
            hand.append(fished)
            again = fished.rank == rank
        hand.sort()
        books = self._take_books(asker)
        if not again:
            self._turn = target
        self._check_over()
        return Asked(asker, target, rank, given, fished, books, again, self.turn, self._over)

    def check_ask(self, asker: int, target: int, rank: int) -> None:
        """Raise ``RuleError`` unless ``asker`` may ask ``target`` for ``rank`` now."""
        self._check_player(asker)
        if self._over:
            raise RuleError("game_over", "the game is over")
        if asker != self._turn:
            raise RuleError("not_your_turn", f"it is player {self._turn}'s turn")
        if isinstance(target, bool) or target not in range(self._players):
            raise RuleError("no_such_player", f"players are 0 to {self._players - 1}")
        if target == asker:
            raise RuleError("ask_yourself", "a player asks another player")
        if not is_rank(rank):
            raise RuleError("bad_rank", f"a rank is 0 to {RANK_COUNT - 1}, not {rank!r}")
        if rank not in self.ranks_held(asker):
            raise RuleError("rank_not_held", "a player asks only for a rank it holds")

    def computer_choice(self, player: int, rng: random.Random) -> tuple[int, int]:
        """The ``(target, rank)`` a computer ``player`` asks for, by the handout's memory rule."""
        held = self.ranks_held(player)
        remembered = [rank for rank in held if self._last_askers[rank] not in (None, player)]
        if remembered:
            rank = rng.choice(remembered)
            return self._last_askers[rank], rank  # type: ignore[return-value]
        rank = rng.choice(held)
        target = rng.choice([p for p in range(self._players) if p != player])
        return target, rank

    # -- helpers ----------------------------------------------------------------------

    def _check_player(self, player: int) -> int:
        if isinstance(player, bool) or player not in range(self._players):
            raise ValueError(f"players are 0 to {self._players - 1}, not {player!r}")
        return player

    def _take_books(self, player: int) -> tuple[Book, ...]:
        hand = self._hands[player]
        before = list(hand)
        ranks = remove_books(hand, _rank_of)
        self._books[player].extend(ranks)
        return tuple(
            Book(player, rank, tuple(sorted(c for c in before if c.rank == rank))) for rank in ranks
        )

    def _check_over(self) -> None:
        if not self._pool or not all(self._hands):
            self._over = True
