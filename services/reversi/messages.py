"""Reversi's messages as values: the server's four, the client's two, what the server end reports.

Each message checks its fields when made (``ValueError``); ``encode`` gives a
server message's bytes. ``_Order`` is the rule both ends hold the server's
messages to: ``U`` first and once, ``B`` until ``W``, ``W`` once, ``G`` last.
The wire format and how each end reads it: ``services.reversi.protocol``,
which also uses the few byte helpers here that both ends' parsers share
(leading whitespace, how a byte is described in a reason).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ring.wire.sansio import Closed, NeedData

# Every protocol's one pair of errors (ring.wire.sansio), named here too for this game's users.
from ring.wire.sansio import LocalProtocolError as LocalProtocolError
from ring.wire.sansio import ProtocolError as ProtocolError
from ring.wire.sansio import RemoteProtocolError as RemoteProtocolError

NAME_MAX = 10  # handout: "no longer than 10 characters"
SIZE = 8
SQUARES = SIZE * SIZE

_NAME_TEXT = re.compile(rf"[A-Za-z0-9_]{{1,{NAME_MAX}}}")
_LEADING_WHITESPACE = re.compile(rb"[ \t\r\n\x0b\x0c]*")


def is_name(text: object) -> bool:
    """Whether ``text`` is a valid team name: 1-10 of ``[A-Za-z0-9_]``."""
    return isinstance(text, str) and _NAME_TEXT.fullmatch(text) is not None


def _is_int(value: object, allowed: range) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in allowed


def _run_end(pattern: re.Pattern[bytes], data: bytearray, pos: int = 0) -> int:
    """Where a run of ``pattern`` (which matches the empty string) starting at ``pos`` ends."""
    found = pattern.match(data, pos)
    return pos if found is None else found.end()


def _describe(byte: int) -> str:
    """One byte as a reason shows it: ``'-'``, ``'\\t'``, or ``byte 0xc3``."""
    return repr(chr(byte)) if byte < 0x80 else f"byte 0x{byte:02x}"


# -- the server's messages -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Colour:
    """``U1``: you are black and move first; ``U0``: you are white."""

    BLACK: ClassVar[int] = 1
    WHITE: ClassVar[int] = 0
    colour: int

    def __post_init__(self) -> None:
        if not _is_int(self.colour, range(2)):
            raise ValueError(f"a colour is 1 (black) or 0 (white), not {self.colour!r}")


@dataclass(frozen=True, slots=True)
class Board:
    """``B`` + 64 digits: square i is (x, y) = (i // 8, i % 8); 0 empty, 1 white, 2 black."""

    EMPTY: ClassVar[str] = "0"
    WHITE: ClassVar[str] = "1"
    BLACK: ClassVar[str] = "2"
    digits: str

    def __post_init__(self) -> None:
        digits = self.digits
        if not (isinstance(digits, str) and len(digits) == SQUARES and set(digits) <= set("012")):
            raise ValueError(f"a board is {SQUARES} digits, each 0, 1 or 2, not {digits!r}")

    def square(self, x: int, y: int) -> int:
        """What is on (x, y): 0 empty, 1 white, 2 black."""
        if not (_is_int(x, range(SIZE)) and _is_int(y, range(SIZE))):
            raise ValueError(f"no square ({x!r}, {y!r}) on the board")
        return int(self.digits[x * SIZE + y])


@dataclass(frozen=True, slots=True)
class Result:
    """``W1`` you won, ``W0`` you lost, ``W2`` a draw."""

    LOSS: ClassVar[int] = 0
    WIN: ClassVar[int] = 1
    DRAW: ClassVar[int] = 2
    result: int

    def __post_init__(self) -> None:
        if not _is_int(self.result, range(3)):
            raise ValueError(f"a result is 1 (won), 0 (lost) or 2 (draw), not {self.result!r}")


@dataclass(frozen=True, slots=True)
class GameOver:
    """``G``: the game is over; the server closes the connection next."""


ServerMessage = Colour | Board | Result | GameOver
_LETTERS: dict[type, str] = {Colour: "U", Board: "B", Result: "W", GameOver: "G"}


def encode(message: ServerMessage) -> bytes:
    """A server message without its newline: ``U1``, ``B0…0``, ``W2``, ``G``."""
    if isinstance(message, Colour):
        return b"U%d" % message.colour
    if isinstance(message, Board):
        return b"B" + message.digits.encode()
    if isinstance(message, Result):
        return b"W%d" % message.result
    if isinstance(message, GameOver):
        return b"G"
    raise TypeError(f"not a Reversi server message: {message!r}")


class _Order:
    """Which server message may come next: U first and once, B until W, W once, G last."""

    def __init__(self) -> None:
        self.colour: int | None = None
        self.result: int | None = None
        self.over = False

    def apply(self, message: ServerMessage) -> str | None:
        """The problem with ``message`` coming now, or None after noting it."""
        letter = _LETTERS[type(message)]
        if self.over:
            return f"{letter} after G: G is the last message"
        if isinstance(message, Colour):
            if self.colour is not None:
                return "a second U: the colour is sent once"
            self.colour = message.colour
            return None
        if self.colour is None:
            return f"{letter} before U: the colour comes first"
        if isinstance(message, Result):
            if self.result is not None:
                return "a second W: the result is sent once"
            self.result = message.result
        elif isinstance(message, Board):
            if self.result is not None:
                return "B after W: only G may follow the result"
        else:
            self.over = True
        return None


# -- what the server end reports -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Named:
    """The client's name arrived; it may play."""

    name: str


@dataclass(frozen=True, slots=True)
class BadName:
    """The name is refused; ``reason`` says exactly why. The connection is done."""

    reason: str


@dataclass(frozen=True, slots=True)
class MoveAttempt:
    """A well-formed ``Mxy``; whether the move is legal is the game's business."""

    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Garbled:
    """An attempt that is not ``Mxy`` (``text`` is what came, stripped)."""

    text: str


@dataclass(frozen=True, slots=True)
class LineTooLong:
    """A line went over ``limit`` bytes; the connection is done."""

    limit: int


ServerEvent = Named | BadName | MoveAttempt | Garbled | LineTooLong | Closed | NeedData
_FINAL = (BadName, LineTooLong, Closed)


# -- the client's messages ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Name:
    """Client: ``N<name>``, the first thing a client sends."""

    name: str

    def __post_init__(self) -> None:
        if not is_name(self.name):
            raise ValueError(f"a name is 1-{NAME_MAX} of A-Z a-z 0-9 _, not {self.name!r}")


@dataclass(frozen=True, slots=True)
class Move:
    """Client: ``Mxy``, a piece on (x, y)."""

    x: int
    y: int

    def __post_init__(self) -> None:
        if not (_is_int(self.x, range(SIZE)) and _is_int(self.y, range(SIZE))):
            raise ValueError(f"a move is on x, y in 0-7, not ({self.x!r}, {self.y!r})")


ClientMessage = Name | Move
ClientEvent = Colour | Board | Result | GameOver | Closed | NeedData
