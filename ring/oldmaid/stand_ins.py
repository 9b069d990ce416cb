"""ring check's stand-ins for other players' habits and faults, in one place.

``ring check oldmaid`` plays a student's program against our own peers, and some
cases need one of them to behave as an older client does (listen late, write
``ok`` and ``pick`` in one write), as a cheater does (serve another card), or as
a network that loses or garbles a message would (a ``your_turn`` or an ``ok``
that never comes, an offer whose mac is wrong). Each such bend is a field
here, read by the part of the peer it bends; a ``ring peer`` has none (every
default), so a reader of the peer sees at once which code is there for the
check (``scenarios/check/oldmaid_ring.py`` sets them).

The one-time faults are spent when used: each happens once, to one player.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import trio


@dataclass
class StandIns:
    """What of a peer ring check bends; the defaults bend nothing."""

    # Bind the listening port before joining, but listen only this long after the join
    # reply (older clients did, docs/protocols/oldmaid.md 13.1).
    listen_late: float | None = None
    # Every link's stream goes through it (a relay that splits writes, drops a message).
    wrap_stream: Callable[[trio.SocketStream], trio.abc.HalfCloseableStream] | None = None
    # Which of n offered cards to pick (None: at random, as a peer does).
    choose_pick: Callable[[int], int] | None = None
    # Write the first pick in one write with the ok to the offer, whatever the offer's
    # stream flag (a hasty older client, 13.2).
    pick_with_ok: bool = False
    # Answer each pick from an offer of two cards or more with the card of the next
    # position, and its salt: a card that does not open the picked position (a cheating
    # offerer, whose picker must refuse the card, 14.6).
    serve_other: bool = False
    # In a witnessed game, never send that player our first your_turn, so that the table
    # hands it the draw turn (14.6, "The draw turn").
    withhold_your_turn_to: str | None = None
    # In a witnessed game, draw on that player's first your_turn without answering it ok,
    # so that it must not give up on it (14.6, "The draw turn").
    withhold_ok_from: str | None = None
    # In a witnessed game, our offers of cards to that player go with a mac not ours until
    # it answers one (not out), so that it must check it with the table (14.6, "Checking
    # an offer"); we wait our own timeout before asking the table about it.
    bad_mac_to: str | None = None

    def withholds_your_turn(self, to: str) -> bool:
        """Whether our your_turn to ``to`` is lost on the way: the first one only."""
        if self.withhold_your_turn_to is None or self.withhold_your_turn_to != to:
            return False
        self.withhold_your_turn_to = None
        return True

    def withholds_ok(self, sender: str) -> bool:
        """Whether our ok to ``sender``'s your_turn is lost on the way: the first one only."""
        if self.withhold_ok_from is None or self.withhold_ok_from != sender:
            return False
        self.withhold_ok_from = None
        return True

    def garbles_offer_to(self, to: str) -> bool:
        """Whether our offers of cards to ``to`` go with a wrong mac (until one is met)."""
        return self.bad_mac_to is not None and self.bad_mac_to == to

    def garbled_offer_met(self) -> None:
        """One garbled offer was answered: the offers after it go as they are."""
        self.bad_mac_to = None
