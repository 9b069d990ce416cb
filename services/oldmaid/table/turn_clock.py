"""A game that stops moving: the table's turn timeout (docs/protocols/oldmaid.md 8).

A client that stops while it holds the turn, with no timeout of its own among the
others, would hold the game open for ever; so the table aborts a game in which
nothing moves (a draw, a discard, a player out; in a verified game a report, and in
a witnessed one a witness request or move) for ``--turn-timeout``, saying whom it can
know to hold the turn. A witnessed game's own deadlines name whoever stops an
exchange or a draw, so the clock waits while one runs; and there it is at most
``WITNESSED_TURN_TIMEOUT`` (14.6), so that a turn kept is named before the peers'
idle timeout would end the game naming no one.
"""

from __future__ import annotations

import math

import trio

from services.oldmaid.referee.rules import GameState, TableGame
from services.oldmaid.referee.stalls import stuck_reason
from services.oldmaid.verified.game import WITNESSED_TURN_TIMEOUT, VerifiedGame
from services.oldmaid.verified.play import abort_reason


class TurnClock:
    """One game's turn timeout: restarted by every move, run until the game ends."""

    def __init__(self, turn_timeout: float) -> None:
        self.timeout = turn_timeout if turn_timeout > 0 else math.inf  # 0: no limit
        self.last_move_at = math.inf  # trio.current_time() of the last move
        self._scope: trio.CancelScope | None = None  # its deadline: timeout after that

    def witnessed(self) -> None:
        """The game is witnessed: its turn timeout is at most ``WITNESSED_TURN_TIMEOUT``."""
        self.timeout = min(self.timeout, WITNESSED_TURN_TIMEOUT)

    def moved(self) -> None:
        """Something moved in the game: the timeout counts from now."""
        self.last_move_at = trio.current_time()
        if self._scope is not None:
            self._scope.deadline = self.last_move_at + self.timeout

    async def run(
        self, referee: TableGame, verified: VerifiedGame | None, ended: trio.Event
    ) -> bool:
        """Until the game ends, or nothing moves for the timeout: then abort it saying who
        stopped it, as far as the table can know; whether it did."""
        while True:
            with trio.CancelScope(deadline=trio.current_time() + self.timeout) as scope:
                self._scope = scope
                await ended.wait()
            if not scope.cancelled_caught or referee.state is not GameState.PLAYING:
                return False
            if verified is None or not verified.witnessing:
                break
            # A witnessed exchange or draw: its own deadline names whoever stops it.
        if referee.decided:
            return False  # the last-pair grace ends it
        reason, culprit, rule = self._stuck_reason(referee, verified)
        return referee.abort(reason, culprit=culprit, rule=rule)

    def _stuck_reason(
        self, referee: TableGame, verified: VerifiedGame | None
    ) -> tuple[str, str | None, str]:
        """Who stopped the game, as far as the table can know it: words, culprit, rule."""
        waited = f"{self.timeout:g} s"
        if verified is not None and referee.turn is None:
            lie = verified.play.stalled()
            return f"nothing moved for {waited}: {abort_reason(lie)}", lie.culprit, lie.rule
        return stuck_reason(referee, waited), None, "stalled"
