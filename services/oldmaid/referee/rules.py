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
``scrutiny`` and ``reports``; the abort then names the liar and the rule, or,
where the table cannot tell which of two players lies, names both and blames
neither (protocol 14).

``TableGame`` is the one object the table talks to. It is composed of the
game's facts (``facts.TableFacts``, what every part reads), the checks of
claims (``scrutiny.Scrutiny``) and the answers to reports
(``reports.Reports``); it plays the moves itself and hands each claim and
report to its part.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from typing import Any

from ring.oldmaid.cards import JOKER, Card, full_deck, is_pair
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
    show,
)
from services.oldmaid.referee.facts import PAIRS, TableFacts
from services.oldmaid.referee.reports import REPORT_QUIET, Reports
from services.oldmaid.referee.scrutiny import Scrutiny
from services.oldmaid.referee.seats import seating

MIN_PLAYERS = 2
MAX_PLAYERS = 8
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


class TableGame:
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
        self.facts = TableFacts(players_needed, seed, deck)
        self.scrutiny = Scrutiny(self.facts)
        self.reports = Reports(self.facts)

    # -- what the table may read -------------------------------------------

    @property
    def players_needed(self) -> int:
        return self.facts.players_needed

    @property
    def seed(self) -> int:
        return self.facts.seed

    @property
    def state(self) -> GameState:
        return self.facts.state

    @property
    def loser(self) -> str | None:
        return self.facts.loser

    @property
    def reason(self) -> str | None:
        return self.facts.reason

    @property
    def culprit(self) -> str | None:
        """The player an abort names as at fault."""
        return self.facts.culprit

    @property
    def rule(self) -> str | None:
        """The rule an abort says was broken (protocol 14)."""
        return self.facts.rule

    @property
    def verified(self) -> set[str]:
        """The players that joined with verify (protocol 14.5); the table adds to it."""
        return self.facts.verified

    @property
    def reports_exchanges(self) -> bool:
        """Every player verified, and a ledger weighs their reports (protocol 14.6)."""
        return self.facts.reports_exchanges

    @reports_exchanges.setter
    def reports_exchanges(self, value: bool) -> None:
        self.facts.reports_exchanges = value

    @property
    def witnessed(self) -> bool:
        """Every player verified and joined with witness (protocol 14.6)."""
        return self.facts.witnessed

    @witnessed.setter
    def witnessed(self, value: bool) -> None:
        self.facts.witnessed = value

    @property
    def joined(self) -> tuple[str, ...]:
        return tuple(self.facts.joined)

    @property
    def is_full(self) -> bool:
        return len(self.facts.joined) >= self.facts.players_needed

    @property
    def seats(self) -> tuple[Seat, ...]:
        return tuple(self.facts.seats)

    @property
    def out(self) -> tuple[str, ...]:
        return tuple(self.facts.out)

    @property
    def undrawn(self) -> int:
        return self.facts.undrawn

    @property
    def drawn(self) -> tuple[Card, ...]:
        """Every card dealt so far, in the order dealt."""
        return tuple(self.facts.deck[: self.facts.dealt])

    @property
    def discarded(self) -> dict[Card, str]:
        return dict(self.facts.discarded)

    @property
    def turn(self) -> str | None:
        """Whose turn it is to draw; None when there is nothing to draw."""
        facts = self.facts
        if facts.state is not GameState.PLAYING or facts.undrawn == 0:
            return None
        return facts.seats[facts.dealt % len(facts.seats)].nick

    @property
    def undiscarded_pairs(self) -> int:
        return self.facts.undiscarded_pairs

    @property
    def last_move(self) -> str | None:
        """What the table last saw a player do, as words: who it last knew held the turn."""
        return self.facts.last_move

    @property
    def pending(self) -> Accusation | None:
        """An accusation the table will act on once its window has passed (``settle``)."""
        return self.reports.pending

    @property
    def decided(self) -> bool:
        """The deck is empty, one player is left in, some pairs are not discarded (see
        ``Scrutiny.decided``); the table waits a moment, then calls ``end_without_pairs``."""
        return self.scrutiny.decided

    def take_events(self) -> list[RefereeEvent]:
        """The decisions made since the last call, oldest first."""
        events, self.facts.events = self.facts.events, []
        return events

    def status(self) -> Standing:
        facts = self.facts
        if not facts.seats:
            return Standing(facts.state, tuple(facts.joined), (), reason=facts.reason)
        undiscarded = facts.undiscarded_pairs if facts.state is GameState.OVER else 0
        return Standing(
            facts.state,
            tuple(facts.still_in()),
            tuple(facts.out),
            facts.loser,
            facts.reason,
            undiscarded,
        )

    # -- before the start ---------------------------------------------------

    def join(self, nick: str, address: Address) -> None:
        facts = self.facts
        facts.require(GameState.WAITING)
        if not NICK_RE.fullmatch(nick):
            raise RefereeError(f"nick {nick!r} must be 1-32 of A-Z a-z 0-9 _ -")
        if nick in facts.joined:
            raise RefereeError(f"nick {nick!r} is taken at this table; choose another")
        for other, taken in facts.joined.items():
            if taken == address:
                raise RefereeError(
                    f"address {address[0]}:{address[1]} has already joined (as {other}); "
                    "each host and port may join once"
                )
        if self.is_full:
            raise RefereeError(f"the table is full ({facts.players_needed} players)")
        facts.joined[nick] = address

    def leave(self, nick: str) -> None:
        """A player's table connection closed: a free seat, nothing, or the end of the game.

        A player who is out no longer matters to the game, so it may leave
        (docs/protocols/oldmaid.md 5.7); the loser leaving once the game is
        decided ends it. Any other player still in leaving aborts the game, but while an
        accusation waits for its verdict (a player that accused someone
        leaves once it has said so), only the accused leaving settles it.
        """
        facts = self.facts
        if nick not in facts.joined:
            raise RefereeError(f"{nick} has not joined")
        if facts.state is GameState.WAITING:
            del facts.joined[nick]
        elif facts.state is GameState.PLAYING:
            pending = self.reports.pending
            if nick in facts.out:
                facts.left.add(nick)
                facts.events.append(Left(nick))
            elif pending is not None:
                if nick == pending.accused:
                    self.reports.settle()
            elif self.scrutiny.decided:
                self.scrutiny.end_without_pairs()
            else:
                facts.abort(f"{nick} left the table", culprit=nick, rule="left")

    def start(self) -> tuple[Seat, ...]:
        facts = self.facts
        facts.require(GameState.WAITING)
        if len(facts.joined) < MIN_PLAYERS:
            raise RefereeError(
                f"a game needs at least {MIN_PLAYERS} players; {len(facts.joined)} joined"
            )
        # Sorting first makes the seating independent of the join order; two
        # separate generators keep the deck the same whoever joined.
        nicks = seating(facts.joined, facts.seed)
        if facts.stacked is not None:
            deck = list(facts.stacked)
        else:
            deck = full_deck()
            random.Random(f"deck:{facts.seed}").shuffle(deck)
        facts.seats = [Seat(nick, facts.joined[nick]) for nick in nicks]
        facts.seat_of = {seat.nick: i for i, seat in enumerate(facts.seats)}
        facts.deck = deck
        facts.position = {card: i for i, card in enumerate(deck)}
        facts.state = GameState.PLAYING
        facts.events.append(
            Started(
                [s.nick for s in facts.seats],
                [s.address for s in facts.seats],
                [s.nick for s in facts.seats if s.nick in facts.verified] or None,
            )
        )
        return self.seats

    # -- the game ------------------------------------------------------------

    def draw(self, nick: str) -> tuple[Card, bool]:
        """The next card for ``nick`` and whether it was the last one."""
        facts = self.facts
        facts.require(GameState.PLAYING)
        seat = facts.seat(nick)
        if facts.undrawn == 0:
            raise RefereeError(f"the deck is empty: all {DECK_SIZE} cards have been dealt")
        turn = facts.dealt % len(facts.seats)
        if seat != turn:
            raise RefereeError(
                f"it is {facts.seats[turn].nick}'s turn to draw, not {nick}'s "
                "(draws go in seat order, one card a turn)"
            )
        card = facts.deck[facts.dealt]
        facts.dealt += 1
        last = facts.undrawn == 0
        facts.events.append(Dealt(nick, card, last))
        if last:
            facts.moved(
                nick, f"{nick} drew the last card (so it held the first turn of the offers)"
            )
        else:
            facts.moved(nick, f"{nick} drew card {facts.dealt} (and was to pass the draw turn on)")
        return card, last

    def discard(self, nick: str, first: Card, second: Card, declares_out: bool = False) -> None:
        facts, scrutiny = self.facts, self.scrutiny
        facts.require(GameState.PLAYING)
        facts.seat(nick)
        if nick in facts.out:
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
            if facts.position.get(card, DECK_SIZE) >= facts.dealt:
                raise RefereeError(f"{show(card)} has not been drawn yet")
        for card in (first, second):
            scrutiny.check_unclaimed(nick, card, (first, second))
        if facts.undrawn > 0:
            for card in (first, second):
                scrutiny.check_own_deal(nick, card)
        # A true flag counts only once the deck is empty (protocol 5.3), like out_of_cards.
        goes_out = declares_out and facts.undrawn == 0
        if goes_out:
            scrutiny.check_claim(nick, pairs=facts.pairs_by[nick] + 1)
        facts.discarded[first] = facts.discarded[second] = nick
        facts.pairs_by[nick] += 1
        facts.events.append(Discarded(nick, [first, second]))
        facts.moved(
            nick,
            f"{nick} discarded a pair (a player discards as it draws or picks, so {nick} "
            "held the turn then)",
        )
        if goes_out:
            facts.count_out(nick, bare=False)
        self._check_over()

    def out_of_cards(self, nick: str) -> bool:
        """Whether this counted ``nick`` out; early and repeated notices change nothing."""
        facts = self.facts
        if facts.state is GameState.OVER:
            facts.seat(nick)
            return False
        facts.require(GameState.PLAYING)
        facts.seat(nick)
        # A hand can empty during the draw and fill again, so only an empty
        # hand after the last card was dealt counts (docs/protocols/oldmaid.md 5.4).
        if facts.undrawn > 0 or nick in facts.out:
            return False
        self.scrutiny.check_claim(nick, pairs=facts.pairs_by[nick])
        facts.count_out(nick, bare=True)
        self._check_over()
        return True

    def _check_over(self) -> None:
        """End the game if one player is left in, unless an accusation waits for its
        verdict: that always ends the game naming someone, or the two accusers, so a
        game does not end normally around it (protocol 5.9)."""
        if self.reports.pending is None:
            self.scrutiny.check_over()

    def end_without_pairs(self) -> None:
        """End a decided game although pairs were never discarded (``Scrutiny``); while an
        accusation waits for its verdict, the verdict ends it instead."""
        if self.reports.pending is None:
            self.scrutiny.end_without_pairs()

    def least_held(self, nick: str) -> tuple[int, str]:
        """The fewest cards ``nick`` can hold now, and why (``Scrutiny``)."""
        return self.scrutiny.least_held(nick)

    # -- reports about other players (``Reports``) ---------------------------

    def left_with_turn(self, reporter: str, nick: str, *, quiet: float = math.inf) -> str:
        return self.reports.left_with_turn(reporter, nick, quiet=quiet)

    def give_up(self, reporter: str, nick: str | None, reason: str) -> str:
        return self.reports.give_up(reporter, nick, reason)

    def accuse(self, accuser: str, accused: str | None, rule: str, evidence: dict[str, Any]) -> str:
        return self.reports.accuse(accuser, accused, rule, evidence)

    def settle(self) -> None:
        self.reports.settle()

    # -- ending ---------------------------------------------------------------

    def abort(self, reason: str, *, culprit: str | None = None, rule: str | None = None) -> bool:
        """End the game without a loser; False if it had already ended."""
        return self.facts.abort(reason, culprit=culprit, rule=rule)

    def void(self, reason: str, *, culprit: str | None, rule: str) -> bool:
        """Abort a game whose end is decided but not yet announced: a verified game in
        which a lie, or a missing report, came to light as it ended (protocol 14.6)."""
        facts = self.facts
        if facts.state is not GameState.OVER:
            return False
        facts.state, facts.loser = GameState.PLAYING, None
        return facts.abort(reason, culprit=culprit, rule=rule)
