"""What the table can check of hands it never sees (protocol 14; issue 27, deliverable 1).

The table deals every card and hears every discard and every player going
out; the cards that pass between players it never sees. Still, some claims
contradict what it knows for certain, whoever held what since:

- **Nothing passes between players in the draw phase.** A card lies in the
  hand of the player it was dealt to until the deck is empty, so a discard
  of a card dealt to someone else before then is a lie.
- **A hand shrinks only by pairs and by cards given away, and a player gives
  at most one card a turn.** It holds the turn in the offer phase once for
  each pick it made (and a pick brings a card in), once more if it drew the
  last card, and once for each pass (an offer of ``num_cards`` 0) it got.
  A pass comes only from a player who went out holding the turn, and goes
  to the next player in to its left: so a player gets at most as many passes
  as there are players out right next to it on its right, with no one in
  between. A player therefore holds at least ``dealt - 2 * pairs - first -
  passes`` cards, whatever it picked; an older client may go out keeping its
  last pair (13.5), so a claim of an empty hand from a player that must
  hold more than two cards is a lie.
- **Every pair that is never discarded went somewhere.** When one player is
  left in, an honest one holds the Old Maid and at most the pair its last
  pick made; a player that went out by ``out_of_cards`` may have kept its
  last pair. More pairs missing than that cannot be.

Each check here is a pure function of the table's own records; the referee
(``services.oldmaid.referee.rules``) calls them and aborts naming the liar, or,
where the table cannot tell which of two players lies, naming both as
suspects and neither as the culprit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from ring.oldmaid.cards import Card
from services.oldmaid.referee.events import ClaimedTwice, RefereeError, Seat

# What an honest claim of an empty hand may still hold: an older client's last pair.
KEPT = 2


def dealt_to(position: int, players: int) -> int:
    """The seat that drew the card at ``position`` of the deck: draws go in seat order."""
    return position % players


def dealt_count(seat: int, players: int, dealt: int) -> int:
    """How many of the first ``dealt`` cards went to ``seat``."""
    return len(range(seat, dealt, players))


def out_run_to_the_right(seats: Sequence[str], out: Collection[str], nick: str) -> int:
    """How many players right next to ``nick`` on its right are out, with no one in between.

    A pass reaches ``nick`` only from one of them (see the module docstring).
    """
    count = len(seats)
    seat = seats.index(nick)
    run = 0
    for step in range(1, count):
        if seats[(seat - step) % count] not in out:
            break
        run += 1
    return run


def between(seats: Sequence[str], first: str, last: str) -> list[str]:
    """The seats strictly between ``first`` and ``last``, going left (the turn's way)."""
    count = len(seats)
    start, end = seats.index(first), seats.index(last)
    return [seats[(start + step) % count] for step in range(1, (end - start) % count)]


def next_in_to_the_left(seats: Sequence[str], out: Collection[str], nick: str) -> str | None:
    """The player ``nick`` hands the turn to now: the first to its left who is not out."""
    count = len(seats)
    seat = seats.index(nick)
    for step in range(1, count):
        other = seats[(seat + step) % count]
        if other not in out:
            return other
    return None


def neighbours(seats: Sequence[str], out: Collection[str], one: str, other: str) -> bool:
    """Whether ``one`` and ``other`` are next to each other among the players in.

    Every exchange is between a player and the next player in to its left, so a
    peer can only report on a neighbour in this sense. Being out is final, so
    seats skipped then are out now.
    """
    return all(s in out for s in between(seats, one, other)) or all(
        s in out for s in between(seats, other, one)
    )


def fewest_cards(dealt: int, pairs: int, *, first_turn: bool, passes: int) -> int:
    """The fewest cards a player can hold (see the module docstring); may be below 0."""
    return dealt - 2 * pairs - int(first_turn) - passes


def show(card: Card) -> str:
    """A card as the client wrote it on the wire, so messages match its request."""
    return f'["{card.value}","{card.suit}"]'


def nicks_text(nicks: Sequence[str]) -> str:
    if len(nicks) <= 1:
        return "".join(nicks)
    return f"{', '.join(nicks[:-1])} or {nicks[-1]}"


class Claims:
    """``TableGame``'s checks of the claims players make about their own hands, and of the
    end they lead to."""

    _seats: list[Seat]
    _deck: list[Card]
    _position: dict[Card, int]
    _dealt: int
    _discarded: dict[Card, str]
    reports_exchanges: bool
    _out: list[str]
    _bare_outs: set[str]
    _pairs_by: Counter[str]

    # Provided by TableGame.
    @property
    def undrawn(self) -> int: ...
    @property
    def undiscarded_pairs(self) -> int: ...
    @property
    def decided(self) -> bool: ...
    def _one_left_in(self) -> bool: ...
    def _end(self) -> None: ...
    def _seat(self, nick: str) -> int: ...
    def _nicks(self) -> Sequence[str]: ...
    def abort(
        self, reason: str, *, culprit: str | None = None, rule: str | None = None
    ) -> bool: ...

    def end_without_pairs(self) -> None:
        """End a decided game although pairs were never discarded (see ``decided``).

        Each player that went out by ``out_of_cards`` may have kept its last
        pair (13.5); more pairs missing than that cannot be, and the game is
        aborted instead.
        """
        if not self.decided:
            raise RefereeError("the game is not decided")
        if not self._pairs_vanished(grace=0):
            self._end()

    def _check_over(self) -> None:
        if not self._one_left_in():
            return
        if self.undiscarded_pairs == 0:
            self._end()
        else:
            # The loser may still discard the pair its last pick made.
            self._pairs_vanished(grace=1)

    def _refuse_and_abort(self, reason: str, *, culprit: str | None, rule: str) -> None:
        """A claim the table knows cannot be true: the game ends here, naming ``culprit``."""
        self.abort(reason, culprit=culprit, rule=rule)
        raise RefereeError(reason)

    def _check_unclaimed(self, nick: str, card: Card, pair: tuple[Card, Card]) -> None:
        owner = self._discarded.get(card)
        if owner is None:
            return
        if owner == nick:
            raise RefereeError(f"{show(card)} was already discarded (by {nick})")
        if self.reports_exchanges:
            raise ClaimedTwice(
                f"{show(card)} was already discarded, by {owner}: the table's ledger will tell "
                "which of you held it",
                nick,
                pair,
            )
        self._refuse_and_abort(
            f"a card claimed twice: {owner} discarded {show(card)}, and now {nick} discards it "
            f"too; one of them lies about its hand, and the table cannot see the picks that "
            f"would tell which, so it names both and blames neither",
            culprit=None,
            rule="claimed_twice",
        )

    def _check_own_deal(self, nick: str, card: Card) -> None:
        """In the draw phase nothing passes between players: only the card's own draw holds it."""
        owner = self._seats[dealt_to(self._position[card], len(self._seats))].nick
        if owner != nick:
            self._refuse_and_abort(
                f"{nick} discarded {show(card)}, which the table dealt to {owner}, while cards "
                "were still being drawn (no card passes between players before the deck is "
                "empty)",
                culprit=nick,
                rule="dealt_to_another",
            )

    def least_held(self, nick: str, *, pairs: int | None = None) -> tuple[int, str]:
        """The fewest cards ``nick`` can hold now (the deck is empty), and why, in words.

        ``pairs``: count this many pairs discarded by it instead of those it did.
        """
        seat = self._seat(nick)
        dealt = dealt_count(seat, len(self._seats), self._dealt)
        done = self._pairs_by[nick] if pairs is None else pairs
        first = self._deck_last_drawer() == nick
        passes = out_run_to_the_right(self._nicks(), self._out, nick)
        least = fewest_cards(dealt, done, first_turn=first, passes=passes)
        why = (
            f"the table dealt it {dealt} and it discarded {done} pairs, and a player gives away "
            f"at most one card for each card it picks, plus {int(first) + passes} here (the "
            "first turn of the offers, and a pass from each player out right next to it)"
        )
        return least, why

    def _check_claim(self, nick: str, *, pairs: int) -> None:
        """``nick`` says its hand is empty (the deck is empty and it is in): can it be?"""
        least, why = self.least_held(nick, pairs=pairs)
        if least > KEPT:
            self._refuse_and_abort(
                f"{nick} claimed an empty hand, but it holds at least {least} cards: {why}",
                culprit=nick,
                rule="hand_not_empty",
            )
        players = len(self._seats)
        if len(self._out) == players - 1:
            outs = ", ".join(self._out)
            self._refuse_and_abort(
                f"the Old Maid vanished: {nick}, the last player in, claimed an empty hand, but "
                f"the Old Maid is never discarded, so it or a player who went out ({outs}) lies "
                "about its hand; the table cannot see the picks that would tell which",
                culprit=None,
                rule="old_maid_vanished",
            )

    def _deck_last_drawer(self) -> str | None:
        if self.undrawn > 0 or not self._seats:
            return None
        return self._seats[(len(self._deck) - 1) % len(self._seats)].nick

    def _pairs_vanished(self, *, grace: int) -> bool:
        """Abort if more pairs are missing than honest players can leave; whether it did.

        ``grace``: pairs the loser may still discard (its last pick's).
        """
        missing, kept = self.undiscarded_pairs, len(self._bare_outs)
        if missing <= kept + grace:
            return False
        loser = next(s.nick for s in self._seats if s.nick not in self._out)
        bare = ", ".join(n for n in self._out if n in self._bare_outs) or "none"
        self.abort(
            f"pairs vanished: {missing} pairs were never discarded, but a player going out by "
            f"out_of_cards keeps at most its last pair ({kept} did: {bare}) and the last player "
            f"in, {loser}, discards every pair it holds; someone went out holding cards, or "
            f"{loser} holds pairs it never discarded, and the table cannot tell who",
            rule="pairs_vanished",
        )
        return True
