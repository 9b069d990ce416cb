"""The Old Maid rules as the table referees them: pure state, no I/O, no clock.

The Trio layer (``services.oldmaid.table.server``) turns each request into one call
here and each ``RefereeError`` into an error reply. Keeping the rules free of
sockets and time lets the tests play thousands of whole games in a second,
and makes a game a function of its seed and its requests alone.

What the table can and cannot know (docs/protocols/oldmaid.md 5.3): it deals
every card, so it knows which cards have been drawn and which are discarded,
but picks between peers are invisible to it. Once cards pass between players it cannot tell
who holds one, so any player may then discard any pair of drawn, not yet
discarded cards. What it can still check (a discard before any card could
have passed, a claim of an empty hand that must hold more, a card claimed
twice, an ending that cannot be, a report it can test) is in
``services.oldmaid.referee.scrutiny`` and ``services.oldmaid.referee.accusations``; the
abort then names the liar and the rule, or, where the table cannot tell
which of two players lies, names both and blames neither (protocol 14).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ring.oldmaid.cards import JOKER, Card, full_deck, is_pair
from services.oldmaid.referee import scrutiny
from services.oldmaid.referee.accusations import Accusation
from services.oldmaid.referee.events import (
    Aborted,
    Accused,
    Address,
    Dealt,
    Discarded,
    GameState,
    Left,
    Over,
    RefereeError,
    RefereeEvent,
    Seat,
    Standing,
    Started,
    WentOut,
)
from services.oldmaid.referee.reports import REPORT_QUIET, Reports
from services.oldmaid.referee.scrutiny import Claims, show

MIN_PLAYERS = 2
MAX_PLAYERS = 8
PAIRS = 26
DECK_SIZE = 2 * PAIRS + 1
NICK_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")
_DECK = frozenset(full_deck())

__all__ = [
    "DECK_SIZE",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PAIRS",
    "REPORT_QUIET",
    "Aborted",
    "Accused",
    "Address",
    "Dealt",
    "Discarded",
    "GameState",
    "Left",
    "Over",
    "RefereeError",
    "RefereeEvent",
    "Seat",
    "Standing",
    "Started",
    "TableGame",
    "WentOut",
    "seating",
    "show",
]


class TableGame(Reports, Claims):
    """One game at one table, from the first join to game over (or abort).

    Seating and the deck depend only on the seed and on who joined, not on
    the order the joins arrived in, so a seed replays a game exactly.
    """

    def __init__(
        self, players_needed: int, seed: int, *, deck: Sequence[Card] | None = None
    ) -> None:
        if not MIN_PLAYERS <= players_needed <= MAX_PLAYERS:
            raise ValueError(f"an Old Maid game has {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if deck is not None and sorted(deck) != sorted(_DECK):
            raise ValueError("a stacked deck holds each of the 53 cards once")
        self.players_needed = players_needed
        self.seed = seed
        # A stacked deck, in the order the cards are drawn, instead of the seed's
        # shuffle: ring check stages its situations with one.
        self.stacked = tuple(deck) if deck is not None else None
        self.state = GameState.WAITING
        self.loser: str | None = None
        self.reason: str | None = None
        self.culprit: str | None = None  # the player an abort names as at fault
        self.rule: str | None = None  # the rule an abort says was broken (protocol 14)
        self._joined: dict[str, Address] = {}  # in join order
        self._seats: list[Seat] = []
        self._seat_of: dict[str, int] = {}
        self._deck: list[Card] = []
        self._position: dict[Card, int] = {}  # where each card lies in the deck
        self._dealt = 0
        self._discarded: dict[Card, str] = {}  # card -> who discarded it
        self._pairs_by: Counter[str] = Counter()  # pairs each player discarded
        self._out: list[str] = []
        self._bare_outs: set[str] = set()  # out by out_of_cards: may have kept a pair (13.5)
        self._left: set[str] = set()  # out players whose table connection closed
        # Who made each move (a draw, a discard, a player going out), in order,
        # and whether it was a player going out by out_of_cards.
        self._moves: list[tuple[str, bool]] = []
        self._out_at: dict[str, int] = {}  # how many moves were made when each player went out
        self._last_move: str | None = None  # what the table last saw a player do
        self._pending: Accusation | None = None  # an accusation waiting for its verdict
        self.verified: set[str] = set()  # players that joined with verify (protocol 14.5)
        self.reports_exchanges = False  # every player verified: a ledger (protocol 14.6)
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
    def last_move(self) -> str | None:
        """What the table last saw a player do, as words: who it last knew held the turn."""
        return self._last_move

    @property
    def pending(self) -> Accusation | None:
        """An accusation the table will act on once its window has passed (``settle``)."""
        return self._pending if self.state is GameState.PLAYING else None

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
        (docs/protocols/oldmaid.md 5.7); the loser leaving once the game is
        decided ends it. Any other player still in leaving aborts the game, but while an
        accusation waits for its verdict (a player that accused someone
        leaves once it has said so), only the accused leaving settles it.
        """
        if nick not in self._joined:
            raise RefereeError(f"{nick} has not joined")
        if self.state is GameState.WAITING:
            del self._joined[nick]
        elif self.state is GameState.PLAYING:
            if nick in self._out:
                self._left.add(nick)
                self._events.append(Left(nick))
            elif self._pending is not None:
                if nick == self._pending.accused:
                    self.settle()
            elif self.decided:
                self.end_without_pairs()
            else:
                self.abort(f"{nick} left the table", culprit=nick, rule="left")

    def start(self) -> tuple[Seat, ...]:
        self._require(GameState.WAITING)
        if len(self._joined) < MIN_PLAYERS:
            raise RefereeError(
                f"a game needs at least {MIN_PLAYERS} players; {len(self._joined)} joined"
            )
        # Sorting first makes the seating independent of the join order; two
        # separate generators keep the deck the same whoever joined.
        nicks = seating(self._joined, self.seed)
        if self.stacked is not None:
            deck = list(self.stacked)
        else:
            deck = full_deck()
            random.Random(f"deck:{self.seed}").shuffle(deck)
        self._seats = [Seat(nick, self._joined[nick]) for nick in nicks]
        self._seat_of = {seat.nick: i for i, seat in enumerate(self._seats)}
        self._deck = deck
        self._position = {card: i for i, card in enumerate(deck)}
        self.state = GameState.PLAYING
        self._events.append(
            Started(
                [s.nick for s in self._seats],
                [s.address for s in self._seats],
                [s.nick for s in self._seats if s.nick in self.verified] or None,
            )
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
        if last:
            self._moved(
                nick, f"{nick} drew the last card (so it held the first turn of the offers)"
            )
        else:
            self._moved(nick, f"{nick} drew card {self._dealt} (and was to pass the draw turn on)")
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
            self._check_unclaimed(nick, card, (first, second))
        if self.undrawn > 0:
            for card in (first, second):
                self._check_own_deal(nick, card)
        # A true flag counts only once the deck is empty (protocol 5.3), like out_of_cards.
        goes_out = declares_out and self.undrawn == 0
        if goes_out:
            self._check_claim(nick, pairs=self._pairs_by[nick] + 1)
        self._discarded[first] = self._discarded[second] = nick
        self._pairs_by[nick] += 1
        self._events.append(Discarded(nick, [first, second]))
        self._moved(
            nick,
            f"{nick} discarded a pair (a player discards as it draws or picks, so {nick} "
            "held the turn then)",
        )
        if goes_out:
            self._count_out(nick, bare=False)
        self._check_over()

    def out_of_cards(self, nick: str) -> bool:
        """Whether this counted ``nick`` out; early and repeated notices change nothing."""
        if self.state is GameState.OVER:
            self._seat(nick)
            return False
        self._require(GameState.PLAYING)
        self._seat(nick)
        # A hand can empty during the draw and fill again, so only an empty
        # hand after the last card was dealt counts (docs/protocols/oldmaid.md 5.4).
        if self.undrawn > 0 or nick in self._out:
            return False
        self._check_claim(nick, pairs=self._pairs_by[nick])
        self._count_out(nick, bare=True)
        self._check_over()
        return True

    def abort(self, reason: str, *, culprit: str | None = None, rule: str | None = None) -> bool:
        """End the game without a loser; False if it had already ended."""
        if self.state not in (GameState.WAITING, GameState.PLAYING):
            return False
        self.state = GameState.ABORTED
        self.reason = reason
        self.culprit = culprit
        self.rule = rule
        self._pending = None
        self._events.append(Aborted(reason, culprit, rule))
        return True

    def void(self, reason: str, *, culprit: str | None, rule: str) -> bool:
        """Abort a game whose end is decided but not yet announced: a verified game in
        which a lie, or a missing report, came to light as it ended (protocol 14.6)."""
        if self.state is not GameState.OVER:
            return False
        self.state, self.loser = GameState.PLAYING, None
        return self.abort(reason, culprit=culprit, rule=rule)

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

    def _nicks(self) -> list[str]:
        return [seat.nick for seat in self._seats]

    def _in_between(self, first: str, last: str) -> list[str]:
        """The players still in strictly between ``first`` and ``last``, going left."""
        return [s for s in scrutiny.between(self._nicks(), first, last) if s not in self._out]

    def _moved(self, nick: str, what: str, *, bare_out: bool = False) -> None:
        self._moves.append((nick, bare_out))
        self._last_move = what

    def _count_out(self, nick: str, *, bare: bool) -> None:
        self._out.append(nick)
        self._out_at[nick] = len(self._moves) + 1
        if bare:
            self._bare_outs.add(nick)
        self._events.append(WentOut(nick, len(self._out)))
        self._moved(nick, f"{nick} went out", bare_out=bare)

    def _one_left_in(self) -> bool:
        return self.undrawn == 0 and len(self._out) == len(self._seats) - 1

    def _end(self) -> None:
        self.loser = next(s.nick for s in self._seats if s.nick not in self._out)
        self.state = GameState.OVER
        self._events.append(Over(self.loser, list(self._out), self.undiscarded_pairs))


def seating(nicks: Iterable[str], seed: int) -> list[str]:
    """The seat order of a game of these players with this seed: whatever order they
    joined in, so a seed replays a game (and a checker can seat its players)."""
    order = sorted(nicks)
    random.Random(f"seating:{seed}").shuffle(order)
    return order
