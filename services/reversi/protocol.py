"""Reversi's wire protocol, sans-IO: the server's end of one connection, and a client's end.

This module is the server's end (``ServerConnection``) and where the
protocol is imported from: it re-exports the messages
(``services.reversi.messages``) and the client's end
(``services.reversi.client_connection``).

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

How the server end reads a client (the handout leaves these open; docs/protocols/reversi.md 6):

- Whitespace is ASCII space, tab, ``\\r``, ``\\n``, ``\\v``, ``\\f``.
- The name. Whitespace before it is skipped (blank lines too). Then must come
  ``N``, then 1-10 name characters ``[A-Za-z0-9_]``. The name is complete:

  * at a newline, after optional spaces, tabs or ``\\r`` (``Nteam \\r\\n``);
  * at ``name_silence()``, or when the client closes, with whatever has
    come (trailing spaces allowed). So a name of 10 characters sent with no
    newline waits for the next byte, or the silence: the end of a name at 10
    characters (docs/protocols/reversi.md 6, "The name") is decided by the
    byte after the 10th, whatever the packets, and an 11th name character
    refuses the name (the issue's "over 10 characters"), as a class would
    expect of a too-long team name.

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

from ring.wire.sansio import NEED_DATA, Closed
from services.reversi.client_connection import ClientConnection
from services.reversi.messages import (
    _LEADING_WHITESPACE,
    NAME_MAX,
    BadName,
    Board,
    Colour,
    GameOver,
    Garbled,
    LineTooLong,
    LocalProtocolError,
    Move,
    MoveAttempt,
    Name,
    Named,
    ProtocolError,
    RemoteProtocolError,
    Result,
    ServerEvent,
    ServerMessage,
    _describe,
    _is_int,
    _Order,
    _run_end,
    encode,
    is_name,
)

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

MAX_LINE = 4096  # docs/protocols/reversi.md 2: 4 KiB for the line protocols

_WHITESPACE = b" \t\r\n\x0b\x0c"
_NAME_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_COORDINATES = frozenset(b"01234567")
_INLINE_WHITESPACE = re.compile(rb"[ \t\r\x0b\x0c]*")  # whitespace that does not end a line
_GARBAGE_END = re.compile(rb"[\nM]")
_NL, _CR, _N, _M = b"\n"[0], b"\r"[0], b"N"[0], b"M"[0]


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
