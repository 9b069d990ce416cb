"""Reversi's wire protocol, sans-IO: the server's end of one connection, and a client's end.

Bytes go in with ``receive_data`` (``b""`` when the other side closed); events
come out of ``next_event`` (``NEED_DATA`` when nothing complete is buffered).
Messages go in with ``send`` (or the client's ``start``/``move``); the bytes of
one message come out, to be written in one write. There are no sockets and no
clock: the Trio layer calls ``ServerConnection.name_silence()`` when a name
has begun and 200 ms pass without bytes.

Server messages are fixed-length by their first letter: ``U`` + 1 digit
(colour: 1 black, moves first; 0 white), ``B`` + 64 digits (square i is
(i // 8, i % 8); 0 empty, 1 white, 2 black), ``W`` + 1 digit (1 won, 0 lost,
2 draw), ``G`` (game over). The server end writes each followed by ``\\n``
(``newlines=False``: bare), and refuses to send them out of order: ``U``
first and once, ``B`` any number of times until ``W``, ``W`` at most once,
``G`` last (with or without a ``W`` before it), nothing after ``G``
(``LocalProtocolError``). The client end reads them with or without
newlines, with any ASCII whitespace between them, split anywhere, and raises
``RemoteProtocolError`` for anything else, for the same order broken, and for
a message cut off by the close.

How the server end reads a client (the handout and WIRE.md leave these open):

- Whitespace is ASCII space, tab, ``\\r``, ``\\n``, ``\\v``, ``\\f``.
- The name. Whitespace before it is skipped (blank lines too). Then must come
  ``N``, then 1-10 name characters ``[A-Za-z0-9_]``. The name is complete:

  * at a newline, after optional spaces, tabs or ``\\r`` (``Nteam \\r\\n``);
  * at ``name_silence()``, or when the client closes, with whatever has
    come (trailing spaces allowed). So a name of 10 characters sent with no
    newline waits for the next byte, or the silence: WIRE.md's "the name ends
    at 10 characters" is decided by the byte after the 10th, whatever the
    packets, and an 11th name character refuses the name (the issue's "over
    10 characters"), as a class would expect of a too-long team name.

  ``BadName(reason)`` refuses it, and the connection is done: ``missing N``
  (the first non-whitespace byte is something else), ``over 10 characters``,
  ``empty name`` (``N``
  then a newline, silence or the close), ``bad character`` (with the
  character: punctuation, a control character, or a space or tab followed by
  more text on the same line, as in ``Nmy team``), ``not ASCII`` (with the
  byte). A client that closes before sending anything but whitespace gives
  ``Closed()``.
- Moves. Whitespace between attempts is skipped. An attempt starting with
  ``M`` is ``M`` and the next two bytes, so it needs no newline; whitespace
  ends it early (``M3\\n`` is one bad attempt, not a wait for a third byte).
  ``M`` and two digits 0-7 is ``MoveAttempt(x, y)``; anything else is
  ``Garbled(text)``. So ``M345\\n`` is ``MoveAttempt(3, 4)`` then
  ``Garbled("5")``, and ``M 34`` is ``Garbled("M")`` then ``Garbled("34")``.
- Any other attempt runs up to the next newline or the next ``M``, whichever
  comes first, and is one ``Garbled(text)`` (trailing whitespace dropped;
  non-UTF-8 bytes shown as ``\\xNN``). It is reported only when that newline
  or ``M`` arrives (or the client closes): until then the server waits, so a
  client that sends ``34`` with no newline gets no answer before its move time
  runs out. ``hello M34`` is ``Garbled("hello")`` then ``MoveAttempt(3, 4)``.
- Lower-case ``n`` and ``m`` are not ``N`` and ``M``: the handout spells them
  in capitals, and so do these rules.
- A cut-off attempt when the client closes (``M3``, ``hello``) is reported as
  ``Garbled`` before ``Closed()``; a cut-off name completes as above.
- The limit (``max_line``, 4096 by default) is on a line: the bytes since the
  last newline or the end of the last message (name or attempt), whitespace
  and blank lines included, not counting the line's ``\\r\\n``. Past it:
  ``LineTooLong(limit)``, at once, without waiting for the newline, and the
  connection is done. A client that sends no newlines never reaches it with
  whole moves, since each move ends a message.
- Every decision depends only on the bytes up to the byte that decides it,
  so any split of the same bytes into reads gives the same events.
- After ``BadName``, ``LineTooLong`` or ``Closed``, ``next_event`` returns
  that event again; bytes received after ``BadName`` or ``LineTooLong`` are
  dropped. Bytes after the close are a ``LocalProtocolError``.

The server end does not know whose turn it is: it reports every attempt,
and the game decides what an attempt out of turn means. The client end
allows ``move`` only to answer a board it has received, once per board, and
not after ``W`` or ``G``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ring.sansio import NEED_DATA, Closed, NeedData

__all__ = [
    "NEED_DATA",
    "BadName",
    "Board",
    "ClientConnection",
    "Closed",
    "Colour",
    "GameOver",
    "Garbled",
    "LineTooLong",
    "LocalProtocolError",
    "Move",
    "MoveAttempt",
    "Name",
    "Named",
    "ProtocolError",
    "RemoteProtocolError",
    "Result",
    "ServerConnection",
    "encode",
    "is_name",
]

MAX_LINE = 4096  # WIRE.md: 4 KiB for the line protocols
NAME_MAX = 10  # handout: "no longer than 10 characters"
SIZE = 8
SQUARES = SIZE * SIZE

_WHITESPACE = b" \t\r\n\x0b\x0c"
_NAME_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_COORDINATES = frozenset(b"01234567")
_NAME_TEXT = re.compile(rf"[A-Za-z0-9_]{{1,{NAME_MAX}}}")
_LEADING_WHITESPACE = re.compile(rb"[ \t\r\n\x0b\x0c]*")
_INLINE_WHITESPACE = re.compile(rb"[ \t\r\x0b\x0c]*")  # whitespace that does not end a line
_GARBAGE_END = re.compile(rb"[\nM]")
_NL, _CR, _N, _M = b"\n"[0], b"\r"[0], b"N"[0], b"M"[0]


class ProtocolError(Exception):
    """Something broke the Reversi protocol; the message says what."""


class LocalProtocolError(ProtocolError):
    """Our own code tried to send something the protocol does not allow now."""


class RemoteProtocolError(ProtocolError):
    """The other side sent bytes that are not the protocol; close the connection."""


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


def _text(data: bytes | bytearray) -> str:
    return bytes(data).rstrip(_WHITESPACE).decode("utf-8", "backslashreplace")


class ServerConnection:
    """The server's end of one client connection: a name, then move attempts."""

    def __init__(self, newlines: bool = True, max_line: int = MAX_LINE) -> None:
        if not _is_int(max_line, range(1 + NAME_MAX, 1 << 62)):
            raise ValueError(f"max_line must fit a name message ({1 + NAME_MAX} bytes)")
        self.newlines = newlines
        self.max_line = max_line
        self.name: str | None = None  # once Named
        self._buf = bytearray()
        self._eof = False
        self._final: BadName | LineTooLong | Closed | None = None
        self._decided: ServerEvent | None = None  # by name_silence, not yet taken
        self._order = _Order()

    # -- state ----------------------------------------------------------------------

    @property
    def naming(self) -> bool:
        """Still waiting for the name (no Named, and not done)."""
        return self.name is None and self._final is None

    @property
    def buffered(self) -> int:
        """Bytes received and not yet turned into events."""
        return len(self._buf)

    @property
    def name_started(self) -> bool:
        """A name has begun but is not complete: the time for ``name_silence`` runs."""
        return self.naming and self._decided is None and bool(self._buf.strip(_WHITESPACE))

    @property
    def colour(self) -> int | None:
        return self._order.colour

    @property
    def result(self) -> int | None:
        return self._order.result

    @property
    def game_over(self) -> bool:
        """``G`` has been sent."""
        return self._order.over

    # -- sending --------------------------------------------------------------------

    def send(self, message: ServerMessage) -> bytes:
        if not isinstance(message, Colour | Board | Result | GameOver):
            raise LocalProtocolError(f"the server does not send {message!r}")
        problem = self._order.apply(message)
        if problem is not None:
            raise LocalProtocolError(problem)
        return encode(message) + (b"\n" if self.newlines else b"")

    # -- receiving ------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Bytes from the client; ``b""`` means it closed its end."""
        if self._eof:
            if data:
                raise LocalProtocolError("data after the close")
            return
        if not data:
            self._eof = True
        elif self._final is None:
            self._buf += data

    def name_silence(self) -> None:
        """200 ms passed without bytes while naming: what has come is the whole name.

        Does nothing before the name has begun, or once it is complete.
        """
        if self.naming and self._decided is None:
            event = self._name_event(silence=True)
            if event is not NEED_DATA:
                self._decided = event

    def next_event(self) -> ServerEvent:
        if self._decided is not None:
            event, self._decided = self._decided, None
            return event
        if self._final is not None:
            return self._final
        if self.name is None:
            return self._name_event(silence=False)
        return self._attempt_event()

    # -- parsing --------------------------------------------------------------------

    def _finish(self, event: BadName | LineTooLong | Closed) -> ServerEvent:
        self._final = event
        self._buf.clear()
        return event

    def _over(self, end: int, *, line_end: bool) -> bool:
        """Whether ``buf[:end]``, one line's bytes, is over the limit.

        With ``line_end`` (the newline came next, or may come next) a final
        ``\\r`` is the line ending's, not counted.
        """
        cr = line_end and end > 0 and self._buf[end - 1] == _CR
        return end - cr > self.max_line

    def _too_long(self) -> ServerEvent:
        return self._finish(LineTooLong(self.max_line))

    def _skip_whitespace(self) -> int | None:
        """Drop whole blank lines; return where the first non-whitespace byte is.

        None if one of those blank lines is over the limit.
        """
        buf = self._buf
        start = _run_end(_LEADING_WHITESPACE, buf)
        newline = buf.rfind(b"\n", 0, start)
        if newline >= 0:
            for line in bytes(buf[:newline]).split(b"\n"):
                if len(line) - line.endswith(b"\r") > self.max_line:
                    return None
            del buf[: newline + 1]
            start -= newline + 1
        return start

    def _name_event(self, *, silence: bool) -> ServerEvent:
        buf = self._buf
        start = self._skip_whitespace()
        if start is None:
            return self._too_long()
        size = len(buf)
        if start == size:
            if self._over(size, line_end=True):
                return self._too_long()
            return self._finish(Closed()) if self._eof else NEED_DATA
        if self._over(start, line_end=True):
            return self._too_long()
        if buf[start] != _N:
            got = _describe(buf[start])
            return self._finish(BadName(f"missing N: a name starts with N, not {got}"))
        first = start + 1
        end = first
        while end < size and end - first <= NAME_MAX and buf[end] in _NAME_CHARS:
            end += 1
        if end - first > NAME_MAX:
            return self._finish(
                BadName(f"over {NAME_MAX} characters: a name is 1-{NAME_MAX} of A-Z a-z 0-9 _")
            )
        # Past the name: whitespace that does not end the line may come before the newline.
        after = _run_end(_INLINE_WHITESPACE, buf, end)
        if after == size:
            if self._over(size, line_end=True):
                return self._too_long()
            if self._eof or silence:
                return self._named(first, end, size)
            return NEED_DATA
        if self._over(after, line_end=True):
            return self._too_long()
        if buf[after] == _NL:
            return self._named(first, end, after + 1)
        bad = buf[end]  # the first byte that is not a name character
        if bad >= 0x80:
            return self._finish(BadName(f"not ASCII: {_describe(bad)} in the name"))
        return self._finish(BadName(f"bad character {_describe(bad)} in the name"))

    def _named(self, first: int, end: int, consumed: int) -> ServerEvent:
        if end == first:
            return self._finish(BadName("empty name: N must be followed by 1-10 characters"))
        name = self._buf[first:end].decode("ascii")
        del self._buf[:consumed]
        self.name = name
        return Named(name)

    def _attempt_event(self) -> ServerEvent:
        buf = self._buf
        start = self._skip_whitespace()
        if start is None:
            return self._too_long()
        size = len(buf)
        if start == size:
            if self._over(size, line_end=True):
                return self._too_long()
            return self._finish(Closed()) if self._eof else NEED_DATA
        if buf[start] == _M:
            end = start + 1
            while end < size and end - start < 3 and buf[end] not in _WHITESPACE:
                end += 1
            if end - start == 3 or end < size:  # two bytes after M, or whitespace ended it
                if self._over(end, line_end=False):
                    return self._too_long()
                attempt = bytes(buf[start:end])
                del buf[:end]
                if len(attempt) == 3 and attempt[1] in _COORDINATES and attempt[2] in _COORDINATES:
                    return MoveAttempt(attempt[1] - 0x30, attempt[2] - 0x30)
                return Garbled(_text(attempt))
        else:
            found = _GARBAGE_END.search(buf, start)
            if found is not None:
                stop = found.start()
                newline = buf[stop] == _NL
                if self._over(stop, line_end=newline):
                    return self._too_long()
                event = Garbled(_text(buf[start:stop]))
                del buf[: stop + 1 if newline else stop]
                return event
        # An attempt not decided yet: wait for more, unless the client has closed.
        if self._over(size, line_end=True):
            return self._too_long()
        if not self._eof:
            return NEED_DATA
        event = Garbled(_text(buf[start:]))
        buf.clear()
        return event


# -- the client's end ------------------------------------------------------------------


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

# The length of each server message by its letter, and the bytes allowed after the letter.
_SERVER_FORMS: dict[int, tuple[int, bytes, str]] = {
    b"U"[0]: (1, b"01", "colour"),
    b"B"[0]: (SQUARES, b"012", "square"),
    b"W"[0]: (1, b"012", "result"),
    b"G"[0]: (0, b"", ""),
}


class ClientConnection:
    """A client's end (a bot, the human client): the name, then moves answering boards."""

    def __init__(self, name: str, *, newlines: bool = True) -> None:
        Name(name)  # validates
        self.name = name
        self.newlines = newlines
        self.started = False
        self.board: Board | None = None  # the last board received
        self.may_move = False  # a board has come that no move has answered yet
        self._buf = bytearray()
        self._eof = False
        self._broken: RemoteProtocolError | None = None
        self._order = _Order()

    @property
    def colour(self) -> int | None:
        return self._order.colour

    @property
    def result(self) -> int | None:
        return self._order.result

    @property
    def game_over(self) -> bool:
        """``G`` has been received."""
        return self._order.over

    # -- sending --------------------------------------------------------------------

    def _line(self, text: str) -> bytes:
        return (text + ("\n" if self.newlines else "")).encode("ascii")

    def start(self) -> bytes:
        """The bytes to send first: ``N<name>\\n``."""
        if self.started:
            raise LocalProtocolError("the name was already sent")
        self.started = True
        return self._line("N" + self.name)

    def move(self, x: int, y: int) -> bytes:
        """``M<x><y>\\n``, answering the board last received."""
        Move(x, y)  # validates
        if not self.started:
            raise LocalProtocolError("the name goes first: call start()")
        if not self.may_move:
            raise LocalProtocolError("no board to answer: a move answers a B, once")
        self.may_move = False
        return self._line(f"M{x}{y}")

    def send(self, message: ClientMessage) -> bytes:
        """``start`` for ``Name``, ``move`` for ``Move``: for ``ring.transport.Connection``."""
        if isinstance(message, Name):
            if message.name != self.name:
                raise LocalProtocolError(f"this connection's name is {self.name!r}")
            return self.start()
        if isinstance(message, Move):
            return self.move(message.x, message.y)
        raise LocalProtocolError(f"a client does not send {message!r}")

    # -- receiving ------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Bytes from the server; ``b""`` means it closed its end."""
        if self._eof:
            if data:
                raise LocalProtocolError("data after the close")
            return
        if data:
            self._buf += data
        else:
            self._eof = True

    def next_event(self) -> ClientEvent:
        if self._broken is not None:
            raise self._broken
        try:
            return self._server_event()
        except RemoteProtocolError as exc:
            self._broken = exc
            raise

    def _server_event(self) -> ClientEvent:
        buf = self._buf
        del buf[: _run_end(_LEADING_WHITESPACE, buf)]
        if not buf:
            return Closed() if self._eof else NEED_DATA
        letter = buf[0]
        form = _SERVER_FORMS.get(letter)
        if form is None:
            raise RemoteProtocolError(f"not a server message: starts with {_describe(letter)}")
        length, allowed, what = form
        body = buf[1 : 1 + length]
        for index, byte in enumerate(body):
            if byte not in allowed:
                where = f" {index}" if length > 1 else ""
                raise RemoteProtocolError(
                    f"bad {chr(letter)} message: {what}{where} is {_describe(byte)}"
                )
        if len(body) < length:
            if self._eof:
                raise RemoteProtocolError(f"the server closed inside a {chr(letter)} message")
            return NEED_DATA
        del buf[: 1 + length]
        message = self._decode(letter, body.decode("ascii"))
        problem = self._order.apply(message)
        if problem is not None:
            raise RemoteProtocolError(problem)
        if isinstance(message, Board):
            self.board = message
            self.may_move = True
        elif isinstance(message, Result | GameOver):
            self.may_move = False
        return message

    @staticmethod
    def _decode(letter: int, body: str) -> ServerMessage:
        if letter == b"U"[0]:
            return Colour(int(body))
        if letter == b"B"[0]:
            return Board(body)
        if letter == b"W"[0]:
            return Result(int(body))
        return GameOver()
