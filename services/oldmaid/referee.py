"""The Old Maid rules as the table referees them: pure state, no I/O, no clock.

The Trio layer (``services.oldmaid.table``) turns each request into one call
here and each ``RefereeError`` into an error reply. Keeping the rules free of
sockets and time lets the tests play thousands of whole games in a second,
and makes a game a function of its seed and its requests alone.

What the table can and cannot know (WIRE.md): it deals every card, so it
knows which cards have been drawn and which are discarded, but picks between
peers are invisible to it. It therefore cannot check who holds a card: any
player may discard any pair of drawn, not yet discarded cards.
"""

from __future__ import annotations

import enum
import random
import re
from dataclasses import dataclass
from typing import ClassVar

from ring.oldmaid.cards import JOKER, Card, full_deck, is_pair

MIN_PLAYERS = 2
MAX_PLAYERS = 8
PAIRS = 26
DECK_SIZE = 2 * PAIRS + 1
NICK_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")

Address = tuple[str, int]

_DECK = frozenset(full_deck())


class GameState(enum.Enum):
    WAITING = "waiting"
    PLAYING = "playing"
    OVER = "over"
    ABORTED = "aborted"


class RefereeError(Exception):
    """A request the rules refuse; the text is sent to the client as is."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, slots=True)
class Seat:
    nick: str
    address: Address


# Referee events: what the transcript records about each decision. The field
# names are the transcript's (docs/logs.md), so the table writes them as is.


@dataclass(frozen=True, slots=True)
class Started:
    EVENT: ClassVar[str] = "started"
    players: list[str]
    addresses: list[Address]


@dataclass(frozen=True, slots=True)
class Dealt:
    EVENT: ClassVar[str] = "dealt"
    nick: str
    card: Card
    last: bool


@dataclass(frozen=True, slots=True)
class Discarded:
    EVENT: ClassVar[str] = "discarded"
    nick: str
    cards: list[Card]


@dataclass(frozen=True, slots=True)
class WentOut:
    EVENT: ClassVar[str] = "out"
    nick: str
    place: int  # 1 = the winner


@dataclass(frozen=True, slots=True)
class Left:
    EVENT: ClassVar[str] = "left"
    nick: str  # a player who was already out closed its table connection


@dataclass(frozen=True, slots=True)
class Over:
    EVENT: ClassVar[str] = "over"
    loser: str
    out: list[str]
    undiscarded: int  # pairs never discarded (0 when every player discarded every pair)


@dataclass(frozen=True, slots=True)
class Aborted:
    EVENT: ClassVar[str] = "aborted"
    reason: str
    # The player the reason names as the one at fault, where there is one.
    culprit: str | None = None


RefereeEvent = Started | Dealt | Discarded | WentOut | Left | Over | Aborted


@dataclass(frozen=True, slots=True)
class Standing:
    """What ``status`` reports; ``in_`` because ``in`` is a keyword."""

    state: GameState
    in_: tuple[str, ...]
    out: tuple[str, ...]
    loser: str | None = None
    reason: str | None = None
    undiscarded: int = 0  # pairs never discarded; reported once the game is over


def show(card: Card) -> str:
    """A card as the client wrote it on the wire, so error messages match its request."""
    return f'["{card.value}","{card.suit}"]'


class TableGame:
    """One game at one table, from the first join to game over (or abort).

    Seating and the deck depend only on the seed and on who joined, not on
    the order the joins arrived in, so a seed replays a game exactly.
    """

    def __init__(self, players_needed: int, seed: int) -> None:
        if not MIN_PLAYERS <= players_needed <= MAX_PLAYERS:
            raise ValueError(f"an Old Maid game has {MIN_PLAYERS} to {MAX_PLAYERS} players")
        self.players_needed = players_needed
        self.seed = seed
        self.state = GameState.WAITING
        self.loser: str | None = None
        self.reason: str | None = None
        self.culprit: str | None = None  # the player an abort names as at fault
        self._joined: dict[str, Address] = {}  # in join order
        self._seats: list[Seat] = []
        self._seat_of: dict[str, int] = {}
        self._deck: list[Card] = []
        self._position: dict[Card, int] = {}  # where each card lies in the deck
        self._dealt = 0
        self._discarded: dict[Card, str] = {}  # card -> who discarded it
        self._out: list[str] = []
        self._left: set[str] = set()  # out players whose table connection closed
        self._events: list[RefereeEvent] = []

    # -- what the table may read -------------------------------------------

    @property
    def joined(self) -> tuple[str, ...]:
        return tuple(self._joined)

    @property
    def is_full(self) -> bool:
        return len(self._joined) >= self.players_needed

    @property
    def seats(self) -> tuple[Seat, ...]:
        return tuple(self._seats)

    @property
    def out(self) -> tuple[str, ...]:
        return tuple(self._out)

    @property
    def undrawn(self) -> int:
        return len(self._deck) - self._dealt

    @property
    def drawn(self) -> tuple[Card, ...]:
        """Every card dealt so far, in the order dealt."""
        return tuple(self._deck[: self._dealt])

    @property
    def discarded(self) -> dict[Card, str]:
        return dict(self._discarded)

    @property
    def turn(self) -> str | None:
        """Whose turn it is to draw; None when there is nothing to draw."""
        if self.state is not GameState.PLAYING or self.undrawn == 0:
            return None
        return self._seats[self._dealt % len(self._seats)].nick

    @property
    def undiscarded_pairs(self) -> int:
        return PAIRS - len(self._discarded) // 2

    @property
    def decided(self) -> bool:
        """The deck is empty and one player is left in, but some pairs are not discarded.

        Usually the loser is about to discard the pair its last pick made;
        a player that went out without discarding its last pair never will.
        The table waits a moment for the pairs (``discard`` still works),
        then calls ``end_without_pairs``.
        """
        return self.state is GameState.PLAYING and self._one_left_in()

    def take_events(self) -> list[RefereeEvent]:
        """The decisions made since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    def status(self) -> Standing:
        if not self._seats:
            return Standing(self.state, tuple(self._joined), (), reason=self.reason)
        still_in = tuple(seat.nick for seat in self._seats if seat.nick not in self._out)
        undiscarded = self.undiscarded_pairs if self.state is GameState.OVER else 0
        return Standing(
            self.state, still_in, tuple(self._out), self.loser, self.reason, undiscarded
        )

    # -- before the start ---------------------------------------------------

    def join(self, nick: str, address: Address) -> None:
        self._require(GameState.WAITING)
        if not NICK_RE.fullmatch(nick):
            raise RefereeError(f"nick {nick!r} must be 1-32 of A-Z a-z 0-9 _ -")
        if nick in self._joined:
            raise RefereeError(f"nick {nick!r} is taken at this table; choose another")
        for other, taken in self._joined.items():
            if taken == address:
                raise RefereeError(
                    f"address {address[0]}:{address[1]} has already joined (as {other}); "
                    "each host and port may join once"
                )
        if self.is_full:
            raise RefereeError(f"the table is full ({self.players_needed} players)")
        self._joined[nick] = address

    def leave(self, nick: str) -> None:
        """A player's table connection closed: a free seat, nothing, or the end of the game.

        A player who is out no longer matters to the game, so it may leave
        (WIRE.md); the loser leaving once the game is decided ends it. Any
        other player still in leaving aborts the game.
        """
        if nick not in self._joined:
            raise RefereeError(f"{nick} has not joined")
        if self.state is GameState.WAITING:
            del self._joined[nick]
        elif self.state is GameState.PLAYING:
            if nick in self._out:
                self._left.add(nick)
                self._events.append(Left(nick))
            elif self.decided:
                self.end_without_pairs()
            else:
                self.abort(f"{nick} left the table", culprit=nick)

    def start(self) -> tuple[Seat, ...]:
        self._require(GameState.WAITING)
        if len(self._joined) < MIN_PLAYERS:
            raise RefereeError(
                f"a game needs at least {MIN_PLAYERS} players; {len(self._joined)} joined"
            )
        # Sorting first makes the seating independent of the join order; two
        # separate generators keep the deck the same whoever joined.
        nicks = sorted(self._joined)
        random.Random(f"seating:{self.seed}").shuffle(nicks)
        deck = full_deck()
        random.Random(f"deck:{self.seed}").shuffle(deck)
        self._seats = [Seat(nick, self._joined[nick]) for nick in nicks]
        self._seat_of = {seat.nick: i for i, seat in enumerate(self._seats)}
        self._deck = deck
        self._position = {card: i for i, card in enumerate(deck)}
        self.state = GameState.PLAYING
        self._events.append(
            Started([s.nick for s in self._seats], [s.address for s in self._seats])
        )
        return self.seats

    # -- the game ------------------------------------------------------------

    def draw(self, nick: str) -> tuple[Card, bool]:
        """The next card for ``nick`` and whether it was the last one."""
        self._require(GameState.PLAYING)
        seat = self._seat(nick)
        if self.undrawn == 0:
            raise RefereeError(f"the deck is empty: all {DECK_SIZE} cards have been dealt")
        turn = self._dealt % len(self._seats)
        if seat != turn:
            raise RefereeError(
                f"it is {self._seats[turn].nick}'s turn to draw, not {nick}'s "
                "(draws go in seat order, one card a turn)"
            )
        card = self._deck[self._dealt]
        self._dealt += 1
        last = self.undrawn == 0
        self._events.append(Dealt(nick, card, last))
        return card, last

    def discard(self, nick: str, first: Card, second: Card, declares_out: bool = False) -> None:
        self._require(GameState.PLAYING)
        self._seat(nick)
        if nick in self._out:
            raise RefereeError(f"{nick} is out of the game and holds no cards")
        for card in (first, second):
            if card not in _DECK:
                raise RefereeError(f"unknown card {show(card)}")
        if first == second:
            raise RefereeError(f"the same card twice: {show(first)}")
        if JOKER in (first, second):
            raise RefereeError("the Old Maid pairs with nothing and is never discarded")
        if not is_pair(first, second):
            raise RefereeError(
                f"{show(first)} and {show(second)} are not a pair: a pair is one value in "
                "one colour (spades with clubs, diamonds with hearts)"
            )
        for card in (first, second):
            if self._position.get(card, DECK_SIZE) >= self._dealt:
                raise RefereeError(f"{show(card)} has not been drawn yet")
        for card in (first, second):
            if card in self._discarded:
                raise RefereeError(
                    f"{show(card)} was already discarded (by {self._discarded[card]})"
                )
        if declares_out:
            self._check_may_go_out(nick)
        self._discarded[first] = self._discarded[second] = nick
        self._events.append(Discarded(nick, [first, second]))
        if declares_out:
            self._count_out(nick)
        self._check_over()

    def out_of_cards(self, nick: str) -> bool:
        """Whether this counted ``nick`` out; early and repeated notices change nothing."""
        if self.state is GameState.OVER:
            self._seat(nick)
            return False
        self._require(GameState.PLAYING)
        self._seat(nick)
        self._check_may_go_out(nick)
        counted = self._count_out(nick)
        self._check_over()
        return counted

    def left_with_turn(self, reporter: str, nick: str) -> str:
        """A peer reports that ``nick`` took the turn, went out and left without passing it.

        Nobody holds the turn any more, so the game cannot go on; it is
        aborted naming ``nick``. The report is believed only as far as the
        table can check it: ``nick`` must be out and gone from the table.
        Returns the reason the game was aborted with.
        """
        self._require(GameState.PLAYING)
        self._seat(reporter)
        self._seat(nick)
        if nick not in self._out:
            raise RefereeError(f"{nick} is still in the game, so it cannot have left with the turn")
        if nick not in self._left:
            raise RefereeError(f"{nick} is out but still connected to the table")
        reason = (
            f"{nick} went out holding the turn and left without passing it (a player who "
            f"goes out holding the turn must pass it on with an offer of num_cards 0); "
            f"reported by {reporter}"
        )
        self.abort(reason, culprit=nick)
        return reason

    def give_up(self, reporter: str, nick: str | None, reason: str) -> str:
        """``reporter`` cannot go on and is about to leave, because of ``nick``.

        A player who is in and leaves aborts the game anyway; its last word
        lets the abort name the player who fell silent or broke the protocol
        towards it, rather than the one who waited for it. The table cannot
        see messages between peers, so the reason says whose word it is.
        Returns the reason the game was aborted with.
        """
        self._require(GameState.PLAYING)
        self._seat(reporter)
        reason = " ".join(reason.split()) or "gave no reason"
        if nick is None:
            text = f"{reporter} gave up: {reason}"
            self.abort(text)
            return text
        self._seat(nick)
        if nick == reporter:
            raise RefereeError("a player cannot give up because of itself; leave instead")
        text = f"{nick} {reason} (reported by {reporter}, which gave up waiting)"
        self.abort(text, culprit=nick)
        return text

    def end_without_pairs(self) -> None:
        """End a decided game although pairs were never discarded (see ``decided``)."""
        if not self.decided:
            raise RefereeError("the game is not decided")
        self._end()

    def abort(self, reason: str, *, culprit: str | None = None) -> bool:
        """End the game without a loser; False if it had already ended."""
        if self.state not in (GameState.WAITING, GameState.PLAYING):
            return False
        self.state = GameState.ABORTED
        self.reason = reason
        self.culprit = culprit
        self._events.append(Aborted(reason, culprit))
        return True

    # -- helpers --------------------------------------------------------------

    def _require(self, state: GameState) -> None:
        if self.state is state:
            return
        if self.state is GameState.WAITING:
            raise RefereeError("the game has not started")
        if self.state is GameState.PLAYING:
            raise RefereeError("the game has already started")
        if self.state is GameState.OVER:
            raise RefereeError("the game is over")
        raise RefereeError(f"the game was aborted: {self.reason}")

    def _seat(self, nick: str) -> int:
        seat = self._seat_of.get(nick)
        if seat is None:
            raise RefereeError(f"{nick} is not playing in this game")
        return seat

    def _check_may_go_out(self, nick: str) -> None:
        # The last player in holds the Old Maid (it is never discarded), so a
        # claim of an empty hand from it is false; accepting it would leave
        # the game with no loser.
        if self.undrawn == 0 and nick not in self._out and len(self._out) == len(self._seats) - 1:
            raise RefereeError(
                f"{nick} is the last player in and so holds the Old Maid: it cannot be out of cards"
            )

    def _count_out(self, nick: str) -> bool:
        # A hand can empty during the draw and fill again, so only an empty
        # hand after the last card was dealt counts (WIRE.md).
        if self.undrawn > 0 or nick in self._out:
            return False
        self._out.append(nick)
        self._events.append(WentOut(nick, len(self._out)))
        return True

    def _one_left_in(self) -> bool:
        return self.undrawn == 0 and len(self._out) == len(self._seats) - 1

    def _check_over(self) -> None:
        if self._one_left_in() and self.undiscarded_pairs == 0:
            self._end()

    def _end(self) -> None:
        self.loser = next(s.nick for s in self._seats if s.nick not in self._out)
        self.state = GameState.OVER
        self._events.append(Over(self.loser, list(self._out), self.undiscarded_pairs))
