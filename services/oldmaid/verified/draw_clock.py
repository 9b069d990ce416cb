"""The draw turn in a witnessed game (protocol 14.6, "The draw turn").

The table sees every draw, so it knows whose draw it is; it cannot see whether
the player before handed that player the turn (``your_turn``), nor whether
that player ever answered. In a witnessed game it need not: a draw turn that
sits ``DRAW_WAIT`` after the draw before it (or the start) is handed on by the
table itself, with a ``draw_turn`` notice to the player whose draw it is and
to the one before; the first then draws within ``MOVE_TIMEOUT`` or is named
(``no_answer``). A silent sender of ``your_turn`` costs the game a moment and
never ends it; a silent receiver is named.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from ring.oldmaid.messages import DrawTurn
from services.oldmaid.referee.rules import DECK_SIZE, GameState, TableGame
from services.oldmaid.verified.witness import MOVE_TIMEOUT

# How long a draw turn may sit before the table hands it on: an honest handoff of the
# draw turn (discards, your_turn, its ok, the draw) takes milliseconds.
DRAW_WAIT = 2.0


class DrawClock:
    """Hands on the draw turns of one witnessed game that sit, and names who then sits."""

    def __init__(
        self,
        referee: TableGame,
        notify: Callable[[str, DrawTurn], None],
    ) -> None:
        self._referee = referee
        self._notify = notify  # how a notice reaches a player
        self._drew = trio.Event()  # set at each draw (``drew``), replaced as it is awaited

    def drew(self) -> None:
        """The table dealt a card."""
        self._drew.set()

    async def run(self) -> bool:
        """Until the deck is empty or the game ends: each draw that does not come within
        ``DRAW_WAIT`` is handed on, and its drawer named if it still does not come.
        Whether it ended the game so."""
        referee = self._referee
        while referee.state is GameState.PLAYING and (drawer := referee.turn) is not None:
            drew = self._drew = trio.Event()
            with trio.move_on_after(DRAW_WAIT):
                await drew.wait()
            if drew.is_set() or referee.state is not GameState.PLAYING:
                continue
            number = DECK_SIZE - referee.undrawn + 1
            notice = DrawTurn(to=drawer, draw=number, sender=self._before(drawer, number))
            self._notify(drawer, notice)
            if notice.sender is not None:
                self._notify(notice.sender, notice)
            with trio.move_on_after(MOVE_TIMEOUT):
                await drew.wait()
            if drew.is_set() or referee.state is not GameState.PLAYING:
                continue
            reason = (
                f"{drawer} did not draw (card {number}) within {MOVE_TIMEOUT:g} s of the "
                "table's notice handing it the draw turn"
            )
            return referee.abort(reason, culprit=drawer, rule="no_answer")
        return False

    def _before(self, drawer: str, number: int) -> str | None:
        """The player that drew the card before ``number`` (None for the first)."""
        if number == 1:
            return None
        nicks = [seat.nick for seat in self._referee.seats]
        return nicks[(nicks.index(drawer) - 1) % len(nicks)]

