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

Each check here reads only the table's own facts (``facts.TableFacts``); the
referee (``rules.TableGame``) asks ``Scrutiny`` before it believes a discard or
a player going out, and a check that fails aborts the game naming the liar,
or, where the table cannot tell which of two players lies, naming both as
suspects and neither as the culprit.
"""

from __future__ import annotations

from ring.oldmaid.cards import Card
from services.oldmaid.referee.events import ClaimedTwice, GameState, RefereeError, show
from services.oldmaid.referee.facts import TableFacts
from services.oldmaid.referee.seats import dealt_count, dealt_to, out_run_to_the_right

# What an honest claim of an empty hand may still hold: an older client's last pair.
KEPT = 2


def fewest_cards(dealt: int, pairs: int, *, first_turn: bool, passes: int) -> int:
    """The fewest cards a player can hold (see the module docstring); may be below 0."""
    return dealt - 2 * pairs - int(first_turn) - passes


class Scrutiny:
    """The referee's checks of the claims players make about their own hands, and of the
    end they lead to."""

    def __init__(self, facts: TableFacts) -> None:
        self.facts = facts

    @property
    def decided(self) -> bool:
        """The deck is empty and one player is left in, but some pairs are not discarded.

        Usually the loser is about to discard the pair its last pick made;
        a player that went out without discarding its last pair never will.
        The table waits a moment for the pairs (``discard`` still works),
        then calls ``end_without_pairs``.
        """
        return self.facts.state is GameState.PLAYING and self.facts.one_left_in()

    def end_without_pairs(self) -> None:
        """End a decided game although pairs were never discarded (see ``decided``).

        Each player that went out by ``out_of_cards`` may have kept its last
        pair (13.5); more pairs missing than that cannot be, and the game is
        aborted instead.
        """
        if not self.decided:
            raise RefereeError("the game is not decided")
        if not self._pairs_vanished(grace=0):
            self.facts.end()

    def check_over(self) -> None:
        """After a discard or a player going out: end the game if one player is left in."""
        if not self.facts.one_left_in():
            return
        if self.facts.undiscarded_pairs == 0:
            self.facts.end()
        else:
            # The loser may still discard the pair its last pick made.
            self._pairs_vanished(grace=1)

    def check_unclaimed(self, nick: str, card: Card, pair: tuple[Card, Card]) -> None:
        """``nick`` discards ``card``: refused if someone discarded it already."""
        owner = self.facts.discarded.get(card)
        if owner is None:
            return
        if owner == nick:
            raise RefereeError(f"{show(card)} was already discarded (by {nick})")
        if self.facts.reports_exchanges:
            raise ClaimedTwice(
                f"{show(card)} was already discarded, by {owner}: the table's ledger will tell "
                "which of you held it",
                nick,
                pair,
            )
        self.facts.refuse_and_abort(
            f"a card claimed twice: {owner} discarded {show(card)}, and now {nick} discards it "
            f"too; one of them lies about its hand, and the table cannot see the picks that "
            f"would tell which, so it names both and blames neither",
            culprit=None,
            rule="claimed_twice",
        )

    def check_own_deal(self, nick: str, card: Card) -> None:
        """In the draw phase nothing passes between players: only the card's own draw holds it."""
        seats = self.facts.seats
        owner = seats[dealt_to(self.facts.position[card], len(seats))].nick
        if owner != nick:
            self.facts.refuse_and_abort(
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
        facts = self.facts
        seat = facts.seat(nick)
        dealt = dealt_count(seat, len(facts.seats), facts.dealt)
        done = facts.pairs_by[nick] if pairs is None else pairs
        first = facts.deck_last_drawer() == nick
        passes = out_run_to_the_right(facts.nicks(), facts.out, nick)
        least = fewest_cards(dealt, done, first_turn=first, passes=passes)
        why = (
            f"the table dealt it {dealt} and it discarded {done} pairs, and a player gives away "
            f"at most one card for each card it picks, plus {int(first) + passes} here (the "
            "first turn of the offers, and a pass from each player out right next to it)"
        )
        return least, why

    def check_claim(self, nick: str, *, pairs: int) -> None:
        """``nick`` says its hand is empty (the deck is empty and it is in): can it be?

        Not asked in a verified game: there the ledger knows the hand exactly and
        judges the claim in the order the player made it (protocol 14.6), while this
        count assumes every pass came from a player out, which a cheater's pass from a
        player in breaks, and the count would name the honest player it passed to."""
        if self.facts.reports_exchanges:
            return
        least, why = self.least_held(nick, pairs=pairs)
        if least > KEPT:
            self.facts.refuse_and_abort(
                f"{nick} claimed an empty hand, but it holds at least {least} cards: {why}",
                culprit=nick,
                rule="hand_not_empty",
            )
        if len(self.facts.out) == len(self.facts.seats) - 1:
            outs = ", ".join(self.facts.out)
            self.facts.refuse_and_abort(
                f"the Old Maid vanished: {nick}, the last player in, claimed an empty hand, but "
                f"the Old Maid is never discarded, so it or a player who went out ({outs}) lies "
                "about its hand; the table cannot see the picks that would tell which",
                culprit=None,
                rule="old_maid_vanished",
            )

    def _pairs_vanished(self, *, grace: int) -> bool:
        """Abort if more pairs are missing than honest players can leave; whether it did.

        ``grace``: pairs the loser may still discard (its last pick's). Never in a
        verified game: the ledger names whoever went out holding a pair, and pairs the
        loser keeps are its own.
        """
        facts = self.facts
        if facts.reports_exchanges:
            return False
        missing, kept = facts.undiscarded_pairs, len(facts.bare_outs)
        if missing <= kept + grace:
            return False
        loser = facts.still_in()[0]
        bare = ", ".join(n for n in facts.out if n in facts.bare_outs) or "none"
        facts.abort(
            f"pairs vanished: {missing} pairs were never discarded, but a player going out by "
            f"out_of_cards keeps at most its last pair ({kept} did: {bare}) and the last player "
            f"in, {loser}, discards every pair it holds; someone went out holding cards, or "
            f"{loser} holds pairs it never discarded, and the table cannot tell who",
            rule="pairs_vanished",
        )
        return True
