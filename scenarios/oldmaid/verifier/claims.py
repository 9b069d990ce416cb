"""The finding that every claim the table took could be true (protocol 14; issue 27).

The table refuses the claims it knows are false; this check reads its
transcript and holds the game to the same knowledge, so a table that let
one through (or a transcript that was tampered with) fails:

- no discard, while cards were still being dealt, of a card the table dealt
  to another player (nothing passes between players before the deck is
  empty);
- no player counted out while the table's count says it still holds more
  than two cards (``services.oldmaid.referee.scrutiny``: dealt, less two a pair it
  discarded, less one a turn it can have given a card without picking one);
- no more pairs missing at the end than the players who went out by
  ``out_of_cards`` (rather than by discarding their last pair) could keep.

Seats own the cards of the deal by position (draws go in seat order), so a
check of who drew what (``scenarios.oldmaid.verifier.turns``) stays apart from this one.
"""

from __future__ import annotations

from collections import Counter

from scenarios.oldmaid.verifier.finding import CLAIMS, Finding, _result
from scenarios.oldmaid.verifier.records import GameRecords, _card, seat_order
from services.oldmaid.referee.scrutiny import KEPT, fewest_cards
from services.oldmaid.referee.seats import out_run_to_the_right

DECK_SIZE = 53


def verify_claims(records: GameRecords) -> Finding:
    """(e) Every claim the table took could be true, by what the table knew."""
    seats = seat_order(records)
    if not seats:
        return Finding(CLAIMS, False, "no seat order: no 'started' record, no 'start' event")
    problems: list[str] = []
    owner: dict[object, str] = {}
    dealt: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    out: list[str] = []
    bare: set[str] = set()  # out by out_of_cards, not by discarding its last pair
    last_drawer: str | None = None
    previous: dict | None = None
    for record in (r for r in records.transcript if "event" in r):
        kind = record["event"]
        if kind == "dealt":
            drawer = seats[sum(dealt.values()) % len(seats)]
            owner[_card(record["card"])] = drawer
            dealt[drawer] += 1
            if sum(dealt.values()) == DECK_SIZE:
                last_drawer = drawer
        elif kind == "discarded":
            nick = record["nick"]
            pairs[nick] += 1
            for card in map(_card, record["cards"]):
                if sum(dealt.values()) < DECK_SIZE and owner.get(card) != nick:
                    problems.append(
                        f"{nick} discarded {card}, dealt to {owner.get(card)}, before the deck "
                        "was empty"
                    )
        elif kind == "out":
            nick = record["nick"]
            passes = out_run_to_the_right(seats, out, nick)
            least = fewest_cards(
                dealt[nick], pairs[nick], first_turn=nick == last_drawer, passes=passes
            )
            if least > KEPT:
                problems.append(f"{nick} went out holding at least {least} cards by its count")
            out.append(nick)
            after_discard = (
                previous is not None
                and previous["event"] == "discarded"
                and previous["nick"] == nick
            )
            if not after_discard:
                bare.add(nick)
        elif kind == "over" and record.get("undiscarded", 0) > len(bare):
            problems.append(
                f"{record['undiscarded']} pairs never discarded, more than the {len(bare)} "
                "players out by out_of_cards could keep"
            )
        previous = record
    return _result(
        CLAIMS, problems, "every discard and every player out could be true by the table's count"
    )
