"""The stall watch: after each handoff, make sure the turn moves on.

A player who goes out by taking the turn must pass it on (an offer of
num_cards 0, protocol 7.8). Some older clients leave instead (13.6), and
then nobody holds the turn. Only the player who handed it over knows who had
it, so each peer watches its own handoffs and reports such a player to the
table (``left_with_turn``), which aborts the game naming it.
"""

from __future__ import annotations

import math

import trio

from ring.games.events import EventLog
from ring.oldmaid.messages import LeftWithTurn, Status
from ring.oldmaid.table_side import NETWORK_ERRORS, TableSide
from ring.oldmaid.turns import Turns


class StallWatch:
    """Watches each handoff this peer makes until the ring shows that it moves."""

    def __init__(self, stall_timeout: float, turns: Turns, table: TableSide, log: EventLog) -> None:
        self._stall_timeout = stall_timeout
        self._turns = turns
        self._table = table
        self._log = log
        # Set (and replaced) whenever the ring shows it moves: a request
        # reaches our listener, or the game ends.
        self._progress = trio.Event()
        # Each handoff this peer makes: the seat that took the turn, and the
        # progress event of that moment.
        self._handoffs_in, self._handoffs_out = trio.open_memory_channel[tuple[int, trio.Event]](
            math.inf
        )

    def note_progress(self) -> None:
        """The ring moves: a player sent us a turn, or the game is over."""
        self._progress.set()
        self._progress = trio.Event()

    def handed_turn_to(self, seat: int) -> None:
        self._handoffs_in.send_nowait((seat, self._progress))

    async def run(self) -> None:
        """After each handoff, wait for progress; report a player who left with the turn.

        In a ring that moves, the player who handed the turn on hears a
        request within a round (the turn comes back, or a turn holder asks it
        and it answers out), so silence for ``stall_timeout`` after a handoff
        is the sign to ask the table: if the receiver is out, it is reported;
        the table aborts the game only if that player has left, and refuses
        the report otherwise. Waiting on an event costs the handoffs of a
        healthy ring nothing.
        """
        async for seat, progress in self._handoffs_out:
            while not progress.is_set():
                with trio.move_on_after(self._stall_timeout):
                    await progress.wait()
                    break
                try:
                    if await self._stalled_by(seat):
                        return
                except NETWORK_ERRORS as exc:
                    self._log.write("inbound_error", error=str(exc) or type(exc).__name__)
                    return

    async def _stalled_by(self, seat: int) -> bool:
        """Report ``seat`` if it is out, since it has had the turn with no sign of progress."""
        nick = self._turns.nick_of(seat)
        status = await self._table.request(Status())
        if status.game_over or status.aborted or nick not in (status.out or []):
            return False  # over, or still in: holding the turn is its right
        self._log.write("left_with_turn", nick=nick, waited=self._stall_timeout)
        reply = await self._table.request(LeftWithTurn(nick=nick))
        if not reply.ok:
            self._log.write("report_refused", nick=nick, message=reply.message)
        return reply.ok
