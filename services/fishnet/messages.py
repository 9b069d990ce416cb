"""FishNet's messages: the lines each end sends, as values, and how one line is read.

``encode`` gives a message's line; ``parse_line`` reads one line as the
server's or the client's end does (``BadLine`` when it is not a message).
The connection that holds both ends to the conversation is
``services.fishnet.protocol``.

Decisions beyond the handout (docs/protocols/fishnet.md "Lines", "Messages"):

- Arguments are separated by runs of spaces or tabs; whitespace around a line
  is ignored, and commands are matched case-insensitively (we always send
  lower case). A rank is ASCII digits with value 0-12 (leading zeros allowed);
  an ``oppgives`` count is 1-3, since a hand never holds a whole book.
- A name (team or opponent) is any printable text without whitespace; names
  compare case-insensitively (``name_key``), but keep the spelling sent.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, fields
from typing import ClassVar

# Every protocol's one pair of errors (ring.wire.sansio), named here too for this game's users.
from ring.wire.sansio import LocalProtocolError as LocalProtocolError
from ring.wire.sansio import ProtocolError as ProtocolError
from ring.wire.sansio import RemoteProtocolError as RemoteProtocolError
from services.fishnet.rules import BOOK_SIZE, RANK_COUNT

MAX_GIVEN = BOOK_SIZE - 1


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
    words = [
        message.command,
        *(str(getattr(message, name)) for name in _field_names(type(message))),
    ]
    return (" ".join(words) + "\n").encode()


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    # dataclasses.fields() builds its answer on every call: 2 % of a busy server's CPU.
    return tuple(f.name for f in fields(kind))


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
