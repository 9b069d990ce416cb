"""Which draw turns handed to this peer it acts on, sans-IO (protocol 14.6, "The draw turn").

A draw turn reaches a peer as a ``your_turn`` from its right neighbour, or, in a
witnessed game, as the table's ``draw_turn`` notice when the ``your_turn`` is
late or never comes. Both may come for the same draw, in either order:

- a notice for the draw this peer is to make next, with no draw of its own
  under way, is a turn; any other notice is about a draw it is making or has
  made, and is dropped;
- a ``your_turn`` is always answered and acted on (as without the table), but
  a draw the table then refuses as not ours is the late ``your_turn`` of a
  turn the table handed us: it is dropped, not held against its sender.

Draws go in seat order, so the peer in seat ``seat`` (from 0) of ``players``
makes draws ``seat + 1``, ``seat + 1 + players``, ... (7.3).
"""

from __future__ import annotations


class DrawTurns:
    """One peer's draw turns: those it takes, those the table handed it."""

    def __init__(self) -> None:
        self.seat = 0
        self.players = 1
        self.drawn = 0  # draws the table granted us
        self.pending = 0  # turns taken whose draw has not been answered yet
        self.from_table = 0  # turns the table handed us whose your_turn has not come

    def seated(self, seat: int, players: int) -> None:
        self.seat, self.players = seat, players

    @property
    def next_draw(self) -> int:
        """The number (1 to 53) of the next card this peer draws."""
        return self.seat + 1 + self.players * self.drawn

    def by_your_turn(self) -> bool:
        """A ``your_turn`` we answered ``ok`` (or player1's first draw): whether to draw.
        Not if the table handed us this very turn and we have not drawn yet: it is the
        ``your_turn`` the notice stood for."""
        if self.pending and self.from_table:
            self.from_table -= 1
            return False
        self.pending += 1
        return True

    def by_table(self, draw: int) -> bool:
        """A ``draw_turn`` notice for draw number ``draw``: whether to draw."""
        if self.pending or draw != self.next_draw:
            return False
        self.pending += 1
        self.from_table += 1
        return True

    def answered(self, drew: bool) -> None:
        """The table answered one of our draws: ``drew`` if it dealt us a card."""
        self.pending = max(0, self.pending - 1)
        if drew:
            self.drawn += 1

    def late(self) -> bool:
        """A draw refused as not ours: whether it was a late ``your_turn``'s, for a turn
        the table had handed us (else the ``your_turn`` was not ours to take)."""
        if not self.from_table:
            return False
        self.from_table -= 1
        return True
