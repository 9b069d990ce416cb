"""Reversi's wire protocol, sans-IO, the client's end: a bot's or the human client's connection.

Sends the name, then one move for each board received; reads the server's
messages with or without newlines (``services.reversi.protocol`` has the
rules).
"""

from __future__ import annotations

from ring.wire.sansio import NEED_DATA, Closed
from services.reversi.messages import (
    _LEADING_WHITESPACE,
    SQUARES,
    Board,
    ClientEvent,
    ClientMessage,
    Colour,
    GameOver,
    LocalProtocolError,
    Move,
    Name,
    RemoteProtocolError,
    Result,
    ServerMessage,
    _describe,
    _Order,
    _run_end,
)

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
        """``start`` for ``Name``, ``move`` for ``Move``: for ``ring.wire.transport.Connection``."""
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
