"""One Reversi game as ``ring.games.match`` plays it: what each player is sent, what a move does.

Seat 0 is Black (``U1``, moves first), seat 1 White (``U0``). Each turn the
mover gets the board (``B`` + 64 digits); its next attempt answers it. A
legal move is played (``rules.Position`` makes any pass that follows); an
illegal or garbled attempt gets the same board again, once, and
``max_illegal`` of them in a row lose. The move time runs from the end of
writing the turn's first board: boards sent again do not extend it. A line
over 4 KiB, a close, or the move time past lose too. At the end each player
gets ``W1``/``W0``/``W2`` then ``G``; a player whose connection dropped gets
nothing, its opponent ``W1`` and ``G``.

The record (``ring.games.record``): ``start`` names the players with their colours
and holds the game's seed and ``move_time``; every message out and every
attempt in carries the player's ``colour`` and ``name`` (``line``, or
``garbled`` for an attempt that is not ``Mxy``); each legal move is a
``move`` record (``colour``, ``x``, ``y``); ``end`` has the disc counts in
``details`` (``black``, ``white``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ring.games.match import AGAIN, Again, Fault, Moved, Terms, Verdict
from ring.games.record import Player
from services.reversi.protocol import (
    Board,
    Colour,
    GameOver,
    Garbled,
    LineTooLong,
    MoveAttempt,
    Result,
)
from services.reversi.rules import BLACK, WHITE, Position, square

COLOURS = ("black", "white")  # by seat
_SEAT_OF = {BLACK: 0, WHITE: 1}
_COLOUR_OF = (BLACK, WHITE)


@dataclass(frozen=True)
class GameReport:
    """How one game ended, as the server prints it."""

    number: int
    names: tuple[str, str]  # black, white
    discs: tuple[int, int]  # black, white
    winner: int | None  # BLACK, WHITE, or None for a draw
    reason: str  # "board" (counted), or why a player lost

    @property
    def line(self) -> str:
        black, white = self.names
        discs = f"{self.discs[0]} - {self.discs[1]}"
        score = f"game {self.number}: {black} (black) {discs} {white} (white)"
        if self.winner is None:
            return f"{score}: a draw"
        who, other = (black, white) if self.winner == BLACK else (white, black)
        if self.reason == "board":
            return f"{score}: {who} wins"
        return f"{score}: {who} wins, {other} {self.reason}"


def shown(event: object) -> dict[str, Any] | None:
    """An attempt as the record shows it; the close and a line too long show in ``end``."""
    if isinstance(event, MoveAttempt):
        return {"line": f"M{event.x}{event.y}"}
    if isinstance(event, Garbled):
        return {"garbled": event.text}
    return None


class ReversiRules:
    """Reversi's side of a ``ring.games.match.Match``; states are ``rules.Position``."""

    service = "reversi"

    def __init__(self, *, move_time: float, max_illegal: int, send_timeout: float) -> None:
        self.move_time = move_time  # 0: no limit
        self.max_illegal = max_illegal
        self.terms = Terms(
            move_time=move_time if move_time > 0 else math.inf,
            send_timeout=send_timeout,
            attempts=max_illegal,
        )

    def options(self, position: Position) -> dict[str, Any]:
        return {"move_time": self.move_time}

    def who(self, seat: int, name: str) -> Player:
        return Player(name, colour=COLOURS[seat])

    def tags(self, seat: int, name: str) -> dict[str, Any]:
        return {"colour": COLOURS[seat], "name": name}

    def opening(self, position: Position, number: int) -> list[tuple[int, Any]]:
        return [(0, Colour(1)), (1, Colour(0))]

    def verdict(self, position: Position) -> Verdict | None:
        if not position.over:
            return None
        winner = position.winner()
        return Verdict(None if winner is None else _SEAT_OF[winner], "board")

    def to_move(self, position: Position) -> int:
        return _SEAT_OF[position.to_move]

    def prompt(self, position: Position, seat: int) -> Board:
        return Board(position.digits())

    def judge(self, position: Position, seat: int, event: Any) -> Moved[Position] | Again | Verdict:
        if isinstance(event, LineTooLong):
            return Verdict.forfeit(seat, "sent a line over 4 KiB")
        if isinstance(event, MoveAttempt) and position.is_legal(sq := square(event.x, event.y)):
            move = {"colour": COLOURS[seat], "x": event.x, "y": event.y}
            return Moved(position.play(sq), move)
        return AGAIN  # illegal or garbled: the board again

    def forfeit(self, seat: int, fault: Fault) -> Verdict:
        reason = {
            Fault.LEFT: "left the game",
            Fault.TIMED_OUT: f"did not move within {self.move_time:g} s",
            Fault.REFUSED: f"made {self.max_illegal} illegal moves in a row",
            Fault.FLOODED: "sent too much out of turn",  # not watched: never
        }[fault]
        return Verdict.forfeit(seat, reason)

    def farewell(self, verdict: Verdict) -> Iterator[tuple[int, Any]]:
        for seat in (0, 1):
            result = 2 if verdict.winner is None else 1 if verdict.winner == seat else 0
            yield seat, Result(result)
            yield seat, GameOver()

    def details(self, position: Position, verdict: Verdict) -> dict[str, Any]:
        return {"black": position.count(BLACK), "white": position.count(WHITE)}

    def report(
        self, number: int, names: tuple[str, str], position: Position, verdict: Verdict
    ) -> GameReport:
        discs = (position.count(BLACK), position.count(WHITE))
        winner = None if verdict.winner is None else _COLOUR_OF[verdict.winner]
        return GameReport(number, names, discs, winner, verdict.reason)
