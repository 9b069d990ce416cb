"""What ``ring check oldmaid.verify.witness`` sees of the program and the table as witness.

In that case our players ask the table to witness every exchange they wait in at all
(protocol 14.6, "The table as witness"), so a program that joined with ``witness`` makes
its moves of those exchanges through the table, and they never send it their first
``your_turn``, so that the table hands it the draw turn ("The draw turn"), and send it
one offer with a bad mac, which it must check with the table and refuse ("Checking an
offer"); the table names it if it does not move or draw, or takes that offer. This record
hub subscriber notes whether the program joined with ``witness``, how many exchanges with
it the table took to witness, how many draw turns it handed it and how many bad offers it
refused, so that the case can WARN a program that never asked to take
part, and knows it proved something when it PASSes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ring.games.record import GameKey
from scenarios.check.oldmaid_watch import PROGRAM

# How the table's reply to a check_offer that refuses the offer begins (VerifiedGame).
REFUSED_OFFER = "do not take it"
# How soon our players in that case ask the table about an exchange: at once, in effect.
ASK_AT_ONCE = 0.0001


@dataclass
class WitnessWatch:
    """The program's join and the witness requests about its exchanges, from the records."""

    joined_verified: bool = False
    joined_witness: bool = False
    witnessed: int = 0  # witness requests the table took, by the program or about it
    moves: int = 0  # the program's moves through the table
    draw_turns: int = 0  # draw turns the table handed it (14.6, "The draw turn")
    oks_withheld: int = 0  # its your_turns our players drew on without answering
    # Offers of ours with a bad mac that its check with the table refused ("Checking an
    # offer"): the table's error replies to its check_offer.
    offers_refused: int = 0
    bad_offers_taken: int = 0  # ... that it answered ok directly instead, unchecked

    def peer_event(self, record: dict[str, Any]) -> None:
        """One of our players' event-log records."""
        if record.get("event") == "withheld_ok" and record.get("to") == PROGRAM:
            self.oks_withheld += 1
        if record.get("event") == "bad_mac_taken" and record.get("to") == PROGRAM:
            self.bad_offers_taken += 1

    def unchecked(self) -> str | None:
        """The FAIL for a program that took our garbled offer directly, if it did."""
        if not self.bad_offers_taken:
            return None
        return (
            "it answered ok to an offer of ours whose mac is not ours (garbled on the way) "
            "without checking it with the table: in a witnessed game, send check_offer "
            "before you answer an offer ok, and refuse it on an error (14.6, \"Checking an "
            "offer\")"
        )

    def table_record(self, _key: GameKey, record: dict[str, Any]) -> None:
        message = record.get("msg")
        if not isinstance(message, dict):
            return
        if record.get("dir") != "in":
            pass
        elif message.get("cmd") == "join" and message.get("nick") == PROGRAM:
            # (Its connection has no nick before the join is taken: the join's own says.)
            self.joined_verified = message.get("verify") is True
            self.joined_witness = self.joined_verified and message.get("witness") is True
        elif message.get("cmd") == "move" and record.get("nick") == PROGRAM:
            self.moves += 1
        to_program = record.get("dir") == "out" and record.get("nick") == PROGRAM
        if to_program and message.get("cmd") == "witnessed" and message.get("step") == 1:
            self.witnessed += 1

        if to_program and str(message.get("message", "")).startswith(REFUSED_OFFER):
            self.offers_refused += 1  # the table's reply to its check_offer of our offer
        if to_program and message.get("cmd") == "draw_turn" and message.get("to") == PROGRAM:
            self.draw_turns += 1

    def not_taking_part(self) -> str | None:
        """The WARN for a verifying program that did not join with witness, if it did not."""
        if not self.joined_verified or self.joined_witness:
            return None
        return (
            'it verifies, but did not join with "witness":true: the table cannot witness an '
            "exchange with it, so a neighbour that goes silent on it, or an answer without "
            "its ack, ends the game naming no one; to take part, follow the table's "
            "witnessed notices and make the moves you owe with move (14.6, the table as "
            "witness)"
        )
