"""FishNet's line protocol, sans-IO: one client connection, seen from either end.

Bytes go in with ``receive_data`` (``b""`` when the other side closed);
events come out of ``next_event``. Messages go in with ``send``; the bytes of
one line come out, to be written in one write. The Trio layer
(``ring.wire.transport.Connection``) drives a ``Link``; the tests pair a
``Role.SERVER`` link with a ``Role.CLIENT`` link without sockets.

Both ends track the same conversation: before ``play``, playing, and over
(after ``youwin``/``youlose``/``tiegame``). While playing, the turn is the
client's only between the server's ``yourturn`` and the client's ``request``
or ``pass``; a ``request`` stays open until the server answers it with
``oppgives`` or ``fish`` (or moves on without either when the deck is empty).

The server end reports what is wrong with a client line as ``Invalid(reason)``
and stays usable: the server answers ``error <reason>`` and decides what else
to do (docs/protocols/fishnet.md "Errors": ``yourturn`` again on the
requester's turn). The client end trusts the server to referee, so a server
line that is malformed or makes no sense raises ``RemoteProtocolError``. A
line over the limit raises ``RemoteProtocolError`` on either end: nothing
after it can be trusted, so the server sends ``error line_too_long`` and
closes.

This module is the connection (``Link``) and its ``LineBuffer``, and where
the protocol is imported from: it re-exports the messages and their parsing
(``services.fishnet.messages``, with the decisions on arguments, ranks and
names).

Decisions beyond the handout (docs/protocols/fishnet.md "Lines", "Errors"):

- The limit is 4 KiB of line content, without its ``\\r\\n`` or ``\\n``.
- Bytes left without a newline when the other side closes are not a message
  (a cut write could turn ``request 12`` into ``request 1``): the server end
  reports ``Invalid("unterminated_line")``, the client end raises.
- After ``quit`` the client may send only ``quit``; the server end reports
  anything else as ``Invalid("already_quit")``. ``quit`` is accepted in every
  phase and changes nothing on the server's side: the server decides.
"""

from __future__ import annotations

import enum

from ring.wire.sansio import NEED_DATA, Closed, Invalid, NeedData
from services.fishnet.messages import (
    _SENDS,
    END_MESSAGES,
    MAX_GIVEN,
    BadLine,
    ClientMessage,
    Error,
    Fish,
    LocalProtocolError,
    Message,
    OppGives,
    OppMakes,
    Pass,
    Play,
    ProtocolError,
    Quit,
    RemoteProtocolError,
    Request,
    Role,
    ServerMessage,
    TieGame,
    YouLose,
    YouMake,
    YourTurn,
    YouWin,
    encode,
    is_word,
    name_key,
    parse_line,
)

# Imported from here by the FishNet server, conversation, referee and client, and the tests.
__all__ = [
    "END_MESSAGES",
    "MAX_GIVEN",
    "MAX_LINE",
    "BadLine",
    "ClientMessage",
    "Closed",
    "Error",
    "Event",
    "Fish",
    "Invalid",
    "LineBuffer",
    "Link",
    "LocalProtocolError",
    "Message",
    "OppGives",
    "OppMakes",
    "Pass",
    "Phase",
    "Play",
    "ProtocolError",
    "Quit",
    "RemoteProtocolError",
    "Request",
    "Role",
    "ServerMessage",
    "TieGame",
    "YouLose",
    "YouMake",
    "YouWin",
    "YourTurn",
    "encode",
    "is_word",
    "name_key",
    "parse_line",
]

MAX_LINE = 4096  # bytes of line content (fishnet.md "Lines": 4 KiB for the line protocols)


class LineBuffer:
    """Bytes in, lines out (without ``\\n`` or ``\\r\\n``), across any chunking.

    ``next_line`` raises ``RemoteProtocolError("line_too_long")`` as soon as a
    line cannot fit, without waiting for its end.
    """

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._searched = 0  # no newline before here, so chunks are scanned once

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next_line(self) -> bytes | None:
        newline = self._buf.find(b"\n", self._searched)
        if newline < 0:
            self._searched = len(self._buf)
            # Only a "\r" whose "\n" has not arrived yet may go past the limit.
            over = len(self._buf) - self.max_line
            if over > 1 or (over == 1 and self._buf[-1] != 0x0D):
                raise RemoteProtocolError("line_too_long", f"over {self.max_line} bytes")
            return None
        line = bytes(self._buf[:newline])
        del self._buf[: newline + 1]
        self._searched = 0
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_line:
            raise RemoteProtocolError("line_too_long", f"over {self.max_line} bytes")
        return line

    def take_rest(self) -> bytes:
        """What is left without a newline; the buffer is empty afterwards."""
        rest = bytes(self._buf)
        self._buf.clear()
        self._searched = 0
        return rest


# -- the connection ----------------------------------------------------------------


class Phase(enum.Enum):
    BEFORE_PLAY = "before play"
    PLAYING = "playing"
    OVER = "over"


Event = Message | Invalid | Closed | NeedData


class Link:
    """One end of one FishNet connection."""

    def __init__(self, role: Role, max_line: int = MAX_LINE) -> None:
        self.role = role
        self._lines = LineBuffer(max_line)
        self._eof = False
        self._broken: RemoteProtocolError | None = None
        self.phase = Phase.BEFORE_PLAY
        self.client_has_turn = False  # between yourturn and the client's answer
        self.open_request: int | None = None  # the client's rank awaiting oppgives/fish
        self.client_quit = False

    # -- the conversation, shared by both ends ------------------------------------
    # Each returns the problem (a reason) or None after applying the message.

    def _client_says(self, message: Message) -> str | None:
        if isinstance(message, Quit):
            self.client_quit = True
            return None
        if self.client_quit:
            return "already_quit"
        if self.phase is Phase.OVER:
            return "game_over"
        if isinstance(message, Play):
            if self.phase is not Phase.BEFORE_PLAY:
                return "already_playing"
            self.phase = Phase.PLAYING
            return None
        if self.phase is Phase.BEFORE_PLAY:
            return "not_playing"
        if not self.client_has_turn:
            return "not_your_turn"
        self.client_has_turn = False
        self.open_request = message.rank if isinstance(message, Request) else None
        return None

    def _server_says(self, message: Message) -> str | None:
        if self.phase is Phase.OVER:
            return "message_after_game_over"
        if isinstance(message, Error):
            return None  # answers a client line; play goes on as it was
        if self.phase is Phase.BEFORE_PLAY:
            return f"{message.command}_before_play"
        if isinstance(message, END_MESSAGES):
            self.phase = Phase.OVER
            self.client_has_turn = False
            self.open_request = None
            return None
        if isinstance(message, YourTurn):
            # Also a repeat prompt, after an error answering the client's move.
            self.client_has_turn = True
            self.open_request = None
            return None
        if self.client_has_turn:
            return f"{message.command}_during_client_turn"
        if isinstance(message, OppGives):
            if self.open_request is None:
                return "oppgives_without_request"
            if message.rank != self.open_request:
                return "oppgives_for_another_rank"
        if isinstance(message, YouMake):
            return None  # a book may follow a request's answer; it closes nothing
        # Anything else answers the open request or shows it got no answer
        # (go fish on an empty deck): the opponent is playing now.
        self.open_request = None
        return None

    # -- sending ------------------------------------------------------------------

    def send(self, message: Message) -> bytes:
        if not isinstance(message, _SENDS[self.role]):
            raise LocalProtocolError(
                f"{self.role.value}_does_not_send_{message.command}", repr(message)
            )
        says = self._server_says if self.role is Role.SERVER else self._client_says
        problem = says(message)
        if problem is not None:
            raise LocalProtocolError(problem, repr(message))
        return encode(message)

    # -- receiving ----------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Bytes from the other side; ``b""`` means it closed its end."""
        if self._eof and data:
            raise LocalProtocolError("data_after_eof")
        if data:
            self._lines.feed(data)
        else:
            self._eof = True

    def next_event(self) -> Event:
        if self._broken is not None:
            raise self._broken
        try:
            while True:
                line = self._lines.next_line()
                if line is None:
                    return self._no_line()
                event = self._received_line(line)
                if event is not None:
                    return event
        except RemoteProtocolError as exc:
            self._broken = exc
            raise

    def _no_line(self) -> Invalid | Closed | NeedData:
        if not self._eof:
            return NEED_DATA
        if self._lines.take_rest().strip(b" \t\r"):
            return self._bad("unterminated_line")
        return Closed()

    def _received_line(self, line: bytes) -> Message | Invalid | None:
        try:
            message = parse_line(line, self.role)
        except BadLine as exc:
            return self._bad(exc.reason)
        if message is None:
            return None
        says = self._client_says if self.role is Role.SERVER else self._server_says
        problem = says(message)
        if problem is not None:
            return self._bad(problem)
        return message

    def _bad(self, reason: str) -> Invalid:
        if self.role is Role.CLIENT:
            raise RemoteProtocolError(reason)
        return Invalid(reason)
