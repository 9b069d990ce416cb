"""FishNet's line protocol, sans-IO: one client connection, seen from either end.

Bytes go in with ``receive_data`` (``b""`` when the other side closed);
events come out of ``next_event``. Messages go in with ``send``; the bytes of
one line come out, to be written in one write. The Trio layer
(``ring.transport.Connection``) drives a ``Link``; the tests pair a
``Role.SERVER`` link with a ``Role.CLIENT`` link without sockets.

Both ends track the same conversation: before ``play``, playing, and over
(after ``youwin``/``youlose``/``tiegame``). While playing, the turn is the
client's only between the server's ``yourturn`` and the client's ``request``
or ``pass``; a ``request`` stays open until the server answers it with
``oppgives`` or ``fish`` (or moves on without either when the deck is empty).

The server end reports what is wrong with a client line as ``Invalid(reason)``
and stays usable: the server answers ``error <reason>`` and decides what else
to do (WIRE.md: ``yourturn`` again on the requester's turn). The client end
trusts the server to referee, so a server line that is malformed or makes no
sense raises ``RemoteProtocolError``. A line over the limit raises
``RemoteProtocolError`` on either end: nothing after it can be trusted, so the
server sends ``error line_too_long`` and closes.

Decisions beyond the handout and WIRE.md:

- Arguments are separated by runs of spaces or tabs; whitespace around a line
  is ignored, and commands are matched case-insensitively (we always send
  lower case). A rank is ASCII digits with value 0-12 (leading zeros allowed);
  an ``oppgives`` count is 1-3, since a hand never holds a whole book.
- The limit is 4 KiB of line content, without its ``\\r\\n`` or ``\\n``.
- A name (team or opponent) is any printable text without whitespace; names
  compare case-insensitively (``name_key``), but keep the spelling sent.
- Bytes left without a newline when the other side closes are not a message
  (a cut write could turn ``request 12`` into ``request 1``): the server end
  reports ``Invalid("unterminated_line")``, the client end raises.
- After ``quit`` the client may send only ``quit``; the server end reports
  anything else as ``Invalid("already_quit")``. ``quit`` is accepted in every
  phase and changes nothing on the server's side: the server decides.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, fields
from typing import ClassVar

from ring.sansio import NEED_DATA, Closed, Invalid, NeedData
from services.fishnet.rules import BOOK_SIZE, RANK_COUNT

MAX_LINE = 4096  # bytes of line content (WIRE.md: 4 KiB for the line protocols)
MAX_GIVEN = BOOK_SIZE - 1


class ProtocolError(Exception):
    """``reason`` has no spaces, so a server can send it as ``error <reason>``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class LocalProtocolError(ProtocolError):
    """Our own code tried to send something the protocol does not allow now."""


class RemoteProtocolError(ProtocolError):
    """The other side broke the protocol beyond repair; close the connection."""


# -- messages ----------------------------------------------------------------------


def _check_rank(rank: object) -> None:
    if not (isinstance(rank, int) and not isinstance(rank, bool) and 0 <= rank < RANK_COUNT):
        raise ValueError(f"a rank is 0-{RANK_COUNT - 1}, not {rank!r}")


def is_word(text: object) -> bool:
    # str.isprintable() is False for every whitespace character but " ".
    return isinstance(text, str) and bool(text) and text.isprintable() and " " not in text


def name_key(name: str) -> str:
    """What two names are compared by: bot and team names are case-insensitive."""
    return name.casefold()


@dataclass(frozen=True, slots=True)
class Play:
    """Client: who we are and whom we want to play."""

    command: ClassVar[str] = "play"
    team: str
    opponent: str

    def __post_init__(self) -> None:
        if not (is_word(self.team) and is_word(self.opponent)):
            raise ValueError(f"names need printable text without spaces: {self!r}")


@dataclass(frozen=True, slots=True)
class Request:
    """Client: we ask for ``rank``. Server: the opponent asked us for ``rank``."""

    command: ClassVar[str] = "request"
    rank: int

    def __post_init__(self) -> None:
        _check_rank(self.rank)


@dataclass(frozen=True, slots=True)
class Pass:
    """Client: we forfeit the turn. Server: the opponent did."""

    command: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True)
class Quit:
    """Client (later edition): we are leaving."""

    command: ClassVar[str] = "quit"


@dataclass(frozen=True, slots=True)
class Fish:
    """Server: you drew a card of ``rank`` (in the deal, or fishing)."""

    command: ClassVar[str] = "fish"
    rank: int

    def __post_init__(self) -> None:
        _check_rank(self.rank)


@dataclass(frozen=True, slots=True)
class OppMakes:
    """Server: the opponent completed the book of ``rank``."""

    command: ClassVar[str] = "oppmakes"
    rank: int

    def __post_init__(self) -> None:
        _check_rank(self.rank)


@dataclass(frozen=True, slots=True)
class YouMake:
    """Server (later edition, ``--youmake``): you completed the book of ``rank``."""

    command: ClassVar[str] = "youmake"
    rank: int

    def __post_init__(self) -> None:
        _check_rank(self.rank)


@dataclass(frozen=True, slots=True)
class YourTurn:
    """Server: answer with ``request`` or ``pass``."""

    command: ClassVar[str] = "yourturn"


@dataclass(frozen=True, slots=True)
class OppGives:
    """Server: the opponent gave you ``count`` cards of the ``rank`` you requested."""

    command: ClassVar[str] = "oppgives"
    count: int
    rank: int

    def __post_init__(self) -> None:
        count = self.count
        if not (isinstance(count, int) and not isinstance(count, bool) and 0 < count <= MAX_GIVEN):
            raise ValueError(f"an oppgives count is 1-{MAX_GIVEN}, not {count!r}")
        _check_rank(self.rank)


@dataclass(frozen=True, slots=True)
class YouWin:
    command: ClassVar[str] = "youwin"


@dataclass(frozen=True, slots=True)
class YouLose:
    command: ClassVar[str] = "youlose"


@dataclass(frozen=True, slots=True)
class TieGame:
    command: ClassVar[str] = "tiegame"


@dataclass(frozen=True, slots=True)
class Error:
    """Server: something went wrong, usually the client's fault; play goes on."""

    command: ClassVar[str] = "error"
    reason: str

    def __post_init__(self) -> None:
        if not is_word(self.reason):
            raise ValueError(f"an error reason is printable text without spaces: {self.reason!r}")


ClientMessage = Play | Request | Pass | Quit
ServerMessage = (
    Fish
    | OppMakes
    | YouMake
    | YourTurn
    | Request
    | OppGives
    | Pass
    | YouWin
    | YouLose
    | TieGame
    | Error
)
Message = ClientMessage | ServerMessage
END_MESSAGES = (YouWin, YouLose, TieGame)


def encode(message: Message) -> bytes:
    """One line, ``\\n``-terminated; fields go out in declaration order."""
    words = [message.command, *(str(getattr(message, f.name)) for f in fields(message))]
    return (" ".join(words) + "\n").encode()


# -- parsing -----------------------------------------------------------------------


class Role(enum.Enum):
    SERVER = "server"  # the server's end of one client connection
    CLIENT = "client"


class BadLine(ValueError):
    """A line that is not a message; ``reason`` has no spaces."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_RANK = re.compile(r"0*([0-9]{1,2})")  # fullmatch keeps int() off non-ASCII digits
_SEPARATORS = re.compile(r"[ \t]+")


def _rank(word: str) -> int:
    match = _RANK.fullmatch(word)
    if match is None or int(match[1]) >= RANK_COUNT:
        raise BadLine("bad_rank")
    return int(match[1])


def _count(word: str) -> int:
    match = _RANK.fullmatch(word)
    if match is None or not 0 < int(match[1]) <= MAX_GIVEN:
        raise BadLine("bad_count")
    return int(match[1])


def _name(word: str) -> str:
    if not is_word(word):
        raise BadLine("bad_name")
    return word


def _reason(word: str) -> str:
    if not is_word(word):
        raise BadLine("bad_reason")
    return word


_Parser = dict[str, tuple[type, tuple]]
# What each end receives: the other end's vocabulary, and how to read each argument.
_RECEIVES: dict[Role, _Parser] = {
    Role.SERVER: {
        "play": (Play, (_name, _name)),
        "request": (Request, (_rank,)),
        "pass": (Pass, ()),
        "quit": (Quit, ()),
    },
    Role.CLIENT: {
        "fish": (Fish, (_rank,)),
        "oppmakes": (OppMakes, (_rank,)),
        "youmake": (YouMake, (_rank,)),
        "yourturn": (YourTurn, ()),
        "request": (Request, (_rank,)),
        "oppgives": (OppGives, (_count, _rank)),
        "pass": (Pass, ()),
        "youwin": (YouWin, ()),
        "youlose": (YouLose, ()),
        "tiegame": (TieGame, ()),
        "error": (Error, (_reason,)),
    },
}
_SENDS: dict[Role, tuple[type, ...]] = {
    Role.SERVER: tuple(cls for cls, _ in _RECEIVES[Role.CLIENT].values()),
    Role.CLIENT: tuple(cls for cls, _ in _RECEIVES[Role.SERVER].values()),
}


def parse_line(line: bytes, receiver: Role) -> Message | None:
    """The message in one line (without its line ending) as ``receiver`` reads it.

    ``None`` for a blank line; ``BadLine`` when it is not a message.
    """
    try:
        text = line.decode()
    except UnicodeDecodeError:
        raise BadLine("bad_encoding") from None
    text = text.strip(" \t\r")
    if not text:
        return None
    command, *words = _SEPARATORS.split(text)
    known = _RECEIVES[receiver].get(command.lower())
    if known is None:
        raise BadLine("unknown_command")
    cls, readers = known
    if len(words) < len(readers):
        raise BadLine("missing_argument")
    if len(words) > len(readers):
        raise BadLine("extra_argument")
    return cls(*(read(word) for read, word in zip(readers, words, strict=True)))


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
