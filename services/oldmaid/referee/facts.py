"""What the table knows of one game for certain: the facts every decision of the referee
rests on, and the few ways they change.

The table deals every card and hears every discard and every player going
out; the picks between players it never sees (docs/protocols/oldmaid.md 5.3).
``TableFacts`` holds what it saw, in the order it saw it, and the end of the
game once there is one. The referee's three parts read them: the rules of
play (``rules.TableGame``), the checks of claims players make about their
own hands (``scrutiny.Scrutiny``) and the answers to reports about others
(``reports.Reports``). Each part changes the facts only through the methods
here, so a reader finds in one file every way a game moves and ends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ring.oldmaid.cards import Card
from services.oldmaid.referee.events import (
    Aborted,
    Address,
    GameState,
    Over,
    RefereeError,
    RefereeEvent,
    Seat,
    WentOut,
)
from services.oldmaid.referee.seats import between

PAIRS = 26


class TableFacts:
    """One game's facts, from the first join to its end; no I/O, no clock."""

    def __init__(self, players_needed: int, seed: int, stacked: Sequence[Card] | None) -> None:
        self.players_needed = players_needed
        self.seed = seed
        # A stacked deck, in the order the cards are drawn, instead of the seed's
        # shuffle: ring check stages its situations with one.
        self.stacked = tuple(stacked) if stacked is not None else None
        self.state = GameState.WAITING
        self.loser: str | None = None
        self.reason: str | None = None
        self.culprit: str | None = None  # the player an abort names as at fault
        self.rule: str | None = None  # the rule an abort says was broken (protocol 14)
        self.joined: dict[str, Address] = {}  # in join order
        self.seats: list[Seat] = []
        self.seat_of: dict[str, int] = {}
        self.deck: list[Card] = []
        self.position: dict[Card, int] = {}  # where each card lies in the deck
        self.dealt = 0
        self.discarded: dict[Card, str] = {}  # card -> who discarded it
        self.pairs_by: Counter[str] = Counter()  # pairs each player discarded
        self.out: list[str] = []
        self.bare_outs: set[str] = set()  # out by out_of_cards: may have kept a pair (13.5)
        self.left: set[str] = set()  # out players whose table connection closed
        # Who made each move (a draw, a discard, a player going out), in order,
        # and whether it was a player going out by out_of_cards.
        self.moves: list[tuple[str, bool]] = []
        self.out_at: dict[str, int] = {}  # how many moves were made when each player went out
        self.last_move: str | None = None  # what the table last saw a player do, as words
        self.verified: set[str] = set()  # players that joined with verify (protocol 14.5)
        self.reports_exchanges = False  # every player verified: a ledger (protocol 14.6)
        # Every player joined with witness too: the table names silence itself, so a
        # player's word (give_up, an accusation it cannot prove) ends nothing (14.6).
        self.witnessed = False
        self.events: list[RefereeEvent] = []  # decisions not yet taken by the table

    # -- reading --------------------------------------------------------------

    @property
    def undrawn(self) -> int:
        return len(self.deck) - self.dealt

    @property
    def undiscarded_pairs(self) -> int:
        return PAIRS - len(self.discarded) // 2

    def nicks(self) -> list[str]:
        return [seat.nick for seat in self.seats]

    def seat(self, nick: str) -> int:
        """``nick``'s seat; refused if it does not play in this game."""
        seat = self.seat_of.get(nick)
        if seat is None:
            raise RefereeError(f"{nick} is not playing in this game")
        return seat

    def require(self, state: GameState) -> None:
        """Refuse a request that needs the game in ``state``, saying where it is."""
        if self.state is state:
            return
        if self.state is GameState.WAITING:
            raise RefereeError("the game has not started")
        if self.state is GameState.PLAYING:
            raise RefereeError("the game has already started")
        if self.state is GameState.OVER:
            raise RefereeError("the game is over")
        raise RefereeError(f"the game was aborted: {self.reason}")

    def in_between(self, first: str, last: str) -> list[str]:
        """The players still in strictly between ``first`` and ``last``, going left."""
        return [s for s in between(self.nicks(), first, last) if s not in self.out]

    def one_left_in(self) -> bool:
        return self.undrawn == 0 and len(self.out) == len(self.seats) - 1

    def still_in(self) -> list[str]:
        return [seat.nick for seat in self.seats if seat.nick not in self.out]

    def deck_last_drawer(self) -> str | None:
        """Who drew the last card, once the deck is empty: it holds the first offer turn."""
        if self.undrawn > 0 or not self.seats:
            return None
        return self.seats[(len(self.deck) - 1) % len(self.seats)].nick

    # -- changing -------------------------------------------------------------

    def moved(self, nick: str, what: str, *, bare_out: bool = False) -> None:
        """``nick`` made a move the table saw; ``what`` says it in words."""
        self.moves.append((nick, bare_out))
        self.last_move = what

    def count_out(self, nick: str, *, bare: bool) -> None:
        """``nick`` went out (``bare``: by out_of_cards, maybe keeping its last pair)."""
        self.out.append(nick)
        self.out_at[nick] = len(self.moves) + 1
        if bare:
            self.bare_outs.add(nick)
        self.events.append(WentOut(nick, len(self.out)))
        self.moved(nick, f"{nick} went out", bare_out=bare)

    def end(self) -> None:
        """The game is over: the one player still in is the loser."""
        self.loser = self.still_in()[0]
        self.state = GameState.OVER
        self.events.append(Over(self.loser, list(self.out), self.undiscarded_pairs))

    def abort(self, reason: str, *, culprit: str | None = None, rule: str | None = None) -> bool:
        """End the game without a loser; False if it had already ended."""
        if self.state not in (GameState.WAITING, GameState.PLAYING):
            return False
        self.state = GameState.ABORTED
        self.reason = reason
        self.culprit = culprit
        self.rule = rule
        self.events.append(Aborted(reason, culprit, rule))
        return True

    def refuse_and_abort(self, reason: str, *, culprit: str | None, rule: str) -> None:
        """A claim the table knows cannot be true: the game ends here, naming ``culprit``,
        and the request is refused with the same words."""
        self.abort(reason, culprit=culprit, rule=rule)
        raise RefereeError(reason)
