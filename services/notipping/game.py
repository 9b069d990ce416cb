"""One No Tipping game as ``ring.games.match`` plays it: ROUND after ROUND, the clock, the verdict.

``server`` seats the players and hands both to a ``ring.games.match.Match``, which
plays the game to its end with ``NoTippingRules``: ``rules.Game`` decides
every move; this module says what each player is sent and what its answer
does, and words every ending.

Playing. Each turn the mover alone gets ``ROUND:<round>.<player>:ADD:<mine>:
<theirs>:<state>;`` or ``ROUND:<round>.<player>:REMOVE:<state>;``. Its next
message answers it: bytes a player sent early (before its game, or while the
opponent moved) are read in order when its turn comes, as the course server
read only the mover's socket. A move ``rules.Game`` refuses, garbage, a move
of the wrong phase, a ``JOINREQUEST`` or a message over the size limit gets
``INVALID;`` then ``LOSE;``, and the opponent ``WIN;``. A move that tips the
board gets ``LOSE;`` (no ``INVALID;``: the move was allowed) and the opponent
``WIN;``. While the opponent moves, the waiting player's connection is
watched: if it closes, it loses at once (``WIN;`` to the mover), even with a
move still unread; if more than ``MAX_MESSAGE`` bytes wait unread from it,
it gets ``INVALID;`` ``LOSE;``. A mover whose connection closes loses too
(the opponent gets ``WIN;``). After ``WIN;``/``LOSE;`` both connections close.

Clocks. Each player has ``time_budget`` seconds in all for its moves,
counted from the end of writing its ``ROUND`` to the arrival of its answer;
an answer already waiting costs nothing. The clock is a
``ring.games.clock.TurnClock``: the time the server's loop spent in long stretches
of its own work (another game's step, a collection) is not charged. A player
past its budget gets ``INVALID;`` ``LOSE;``: it loses as for an invalid move
(docs/protocols/notipping.md 5, steps 10 and 11).
With the budget off (0), one move may still take at most ``wait_timeout``: no
one waits for an opponent longer than that, in a game or before it. Every
write gives up after ``send_timeout`` (the player is then treated as gone).

The record (``ring.games.record``): ``start`` names the players with their seats
and holds the server's seed (No Tipping has no chance: it decides nothing)
and the options ``max_weight`` and ``time_budget``; then every message in
and out with the player's seat (``player``) and ``handle`` (its join lines
too, with the times they happened; moves in their canonical form), a
``move`` record with both support torques after each move, and ``end``
(winner and loser by handle, the reason, the culprit of a forfeit; its
``details`` the seats, ``winner`` and ``loser``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ring.games.match import Fault, Moved, Terms, Verdict
from ring.games.record import Player
from services.notipping import protocol as wire
from services.notipping.protocol import MAX_MESSAGE
from services.notipping.rules import ADD, REMOVE, Add, Game, InvalidMove, Remove

LEFT = "left the game"


@dataclass(frozen=True)
class GameReport:
    """How one game ended, as the server prints it."""

    number: int
    handles: tuple[str, str]  # player 0, player 1
    winner: int
    reason: str  # what the loser did: "tipped the board", "made an invalid move: ..."

    @property
    def loser(self) -> int:
        return 1 - self.winner

    @property
    def line(self) -> str:
        winner, loser = self.handles[self.winner], self.handles[self.loser]
        beat = f"{winner} (player {self.winner}) beat {loser} (player {self.loser})"
        return f"game {self.number}: {beat}: {loser} {self.reason}"


def shown(event: object) -> dict[str, Any]:
    """An event as a transcript shows it: the message in its canonical form."""
    if isinstance(event, wire.JoinRequest):
        return {"line": f"JOINREQUEST:{event.handle}:{event.player};"}
    if isinstance(event, wire.AddMove):
        return {"line": f"ADD:{event.weight}:{event.position};"}
    if isinstance(event, wire.RemoveMove):
        return {"line": f"REMOVE:{event.position};"}
    if isinstance(event, wire.BadJoin):
        return {"bad_join": event.reason}
    if isinstance(event, wire.Garbled):
        return {"garbled": event.text, "reason": event.reason}
    if isinstance(event, wire.MessageTooLong):
        return {"too_long": event.limit}
    return {"closed": True}


def describe(event: object) -> str:
    """An event that is not a join, for the log and the game report."""
    if isinstance(event, wire.Garbled):
        # The text already shows bytes that are not ASCII as \xNN: quoted, not repr'd again.
        return f"'{event.text}' ({event.reason})"
    if isinstance(event, wire.MessageTooLong):
        return f"a message over {event.limit} bytes"
    if isinstance(event, wire.JoinRequest | wire.BadJoin):
        return "a JOINREQUEST during the game"
    return f"{shown(event)['line']!r}"


class NoTippingRules:
    """No Tipping's side of a ``ring.games.match.Match``: states ``rules.Game``, seats players."""

    service = "notipping"

    def __init__(self, *, time_budget: float, wait_timeout: float, send_timeout: float) -> None:
        self.time_budget = time_budget  # 0: no budget, one move at most wait_timeout
        self.wait_timeout = wait_timeout
        budgeted = time_budget > 0
        self.terms = Terms(
            move_time=math.inf if budgeted else wait_timeout,
            budget=time_budget if budgeted else math.inf,
            send_timeout=send_timeout,
            watch_waiting=True,
        )

    def options(self, game: Game) -> dict[str, Any]:
        return {"max_weight": game.max_weight, "time_budget": self.time_budget}

    def who(self, seat: int, name: str) -> Player:
        return Player(name, seat=seat)

    def tags(self, seat: int, name: str) -> dict[str, Any]:
        return {"player": seat, "handle": name}

    def opening(self, game: Game, number: int) -> list[tuple[int, Any]]:
        begin = wire.Begin(number, game.max_weight)
        return [(0, begin), (1, begin)]

    def verdict(self, game: Game) -> Verdict | None:
        return None if game.winner is None else Verdict(game.winner, "tipped the board")

    def to_move(self, game: Game) -> int:
        return game.to_move

    def prompt(self, game: Game, seat: int) -> wire.Round:
        if game.phase == ADD:
            mine, theirs = tuple(game.hands[seat]), tuple(game.hands[1 - seat])
            return wire.Round(game.round, seat, ADD, mine, theirs, game.weights)
        return wire.Round(game.round, seat, REMOVE, None, None, game.weights)

    def judge(self, game: Game, seat: int, event: Any) -> Moved[Game] | Verdict:
        if isinstance(event, wire.AddMove):
            move: Add | Remove = Add(event.weight, event.position)
            weight = event.weight
        elif isinstance(event, wire.RemoveMove):
            move = Remove(event.position)
            weight = game.weight_at(event.position)
        else:
            return self._invalid(seat, describe(event))
        try:
            after = game.play(move)
        except InvalidMove as exc:
            return self._invalid(seat, str(exc))
        record = {"player": seat, "move": type(move).__name__.upper(), "weight": weight,
                  "position": event.position, "left": after.left, "right": after.right,
                  "tipped": after.over}  # fmt: skip
        return Moved(after, record)

    def _invalid(self, seat: int, what: str) -> Verdict:
        return Verdict.forfeit(seat, f"made an invalid move: {what}", invalid=True)

    def forfeit(self, seat: int, fault: Fault) -> Verdict:
        if fault is Fault.LEFT:
            return Verdict.forfeit(seat, LEFT)
        if fault is Fault.FLOODED:
            reason = f"sent over {MAX_MESSAGE} bytes out of turn"
        elif fault is Fault.TIMED_OUT and self.time_budget > 0:
            reason = f"ran out of time ({self.time_budget:g} s)"
        elif fault is Fault.TIMED_OUT:
            reason = f"did not move within {self.wait_timeout:g} s"
        else:  # Fault.REFUSED: an invalid move loses at once, so never
            reason = "made invalid moves"
        return Verdict.forfeit(seat, reason, invalid=True)

    def farewell(self, verdict: Verdict) -> list[tuple[int, Any]]:
        assert verdict.winner is not None  # No Tipping has no draw
        loser = 1 - verdict.winner
        told = [(loser, wire.Invalid())] if verdict.invalid else []
        return [*told, (loser, wire.Lose()), (verdict.winner, wire.Win())]

    def details(self, game: Game, verdict: Verdict) -> dict[str, Any]:
        assert verdict.winner is not None
        return {"winner": verdict.winner, "loser": 1 - verdict.winner}

    def report(
        self, number: int, names: tuple[str, str], game: Game, verdict: Verdict
    ) -> GameReport:
        assert verdict.winner is not None
        return GameReport(number, names, verdict.winner, verdict.reason)
