"""No Tipping's wire protocol, sans-IO: the server's end of a connection, and a client's end.

Every message is ``CMD:ARG:ARG…;``. Bytes go in with ``receive_data`` (``b""``
when the other side closed); events come out of ``next_event`` (``NEED_DATA``
while no whole message is buffered). Messages go in with ``send``; the bytes
of one message come out, ended by ``;\\n``, to be written in one write.

Reading (the handout: "spacing and line breaks are irrelevant - all that
matters is the colons and semicolons"):

- A message is everything up to the next ``;``, split at any byte across
  reads. Empty messages (``;;``, blank lines) are skipped.
- The server end drops every whitespace byte of a client's message, so
  ``ADD : 3 : - 2 ;`` is ``ADD:3:-2``. Commands are read in any case
  (``add:3:-2;``); numbers are decimal integers with an optional sign.
- The client end splits the server's fields at ``:`` and the lists inside a
  field (weights, the 21 numbers of the state) at whitespace.
- Limit: ``max_message`` bytes (4096 by default, the limit for line
  protocols: docs/protocols/notipping.md 2) since the end of the last
  message, whitespace included. Past it, ``MessageTooLong`` at once, without
  waiting for the ``;``; the connection is done.
- A message cut off by the close (bytes after the last ``;``, other than
  whitespace) is reported as ``Garbled`` before ``Closed`` (``ring.wire.sansio``'s,
  as every protocol of the project reports a close).
- Bytes that are not ASCII are kept as ``\\xNN`` in the text of ``Garbled``.

The server end reports every message; it does not know whose turn it is, and
the game decides what a move out of turn means. The client end raises
``RemoteProtocolError`` for a message it cannot read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ring.wire.sansio import NEED_DATA, Closed, NeedData

# Every protocol's one pair of errors (ring.wire.sansio), named here too for this game's users.
from ring.wire.sansio import LocalProtocolError as LocalProtocolError
from ring.wire.sansio import ProtocolError as ProtocolError
from ring.wire.sansio import RemoteProtocolError as RemoteProtocolError

MAX_MESSAGE = 4096
HANDLE = re.compile(r"[A-Za-z0-9_.\-]{1,32}")
_WHITESPACE = re.compile(rb"\s+")
_INTEGER = re.compile(r"[+-]?[0-9]{1,9}")
_TERMINATOR = b";\n"


# -- what a client sends, as the server reads it ------------------------------------


@dataclass(frozen=True)
class JoinRequest:
    handle: str
    player: int


@dataclass(frozen=True)
class BadJoin:
    """A ``JOINREQUEST`` the server must deny; ``reason`` says why (for the log).
    ``player``: the seat asked for, where only the handle is at fault (the handout sets
    no form for a handle: ``ring check`` warns of one and plays on)."""

    reason: str
    player: int | None = None


@dataclass(frozen=True)
class AddMove:
    weight: int
    position: int


@dataclass(frozen=True)
class RemoveMove:
    position: int


@dataclass(frozen=True)
class Garbled:
    """A message that is not one the client may send; ``reason`` says what was expected."""

    text: str
    reason: str


@dataclass(frozen=True)
class MessageTooLong:
    limit: int


# -- what the server sends ------------------------------------------------------------


@dataclass(frozen=True)
class Granted:
    pass


@dataclass(frozen=True)
class Denied:
    pass


@dataclass(frozen=True)
class Begin:
    game: int
    max_weight: int


@dataclass(frozen=True)
class Round:
    """``ROUND:<round>.<player>:ADD:<mine>:<theirs>:<state>;`` or ``…:REMOVE:<state>;``.

    ``mine`` and ``theirs`` are None in REMOVE; ``weights`` are the 21 numbers
    of the state, positions -10 to 10.
    """

    round: int
    player: int
    phase: str
    mine: tuple[int, ...] | None
    theirs: tuple[int, ...] | None
    weights: tuple[int, ...]


@dataclass(frozen=True)
class Invalid:
    pass


@dataclass(frozen=True)
class Win:
    pass


@dataclass(frozen=True)
class Lose:
    pass


ServerMessage = Granted | Denied | Begin | Round | Invalid | Win | Lose

_BARE = {Granted: "GRANTED", Denied: "DENIED", Invalid: "INVALID", Win: "WIN", Lose: "LOSE"}


def encode(message: ServerMessage) -> bytes:
    """The wire form of a server message, ``;\\n`` included."""
    if isinstance(message, Begin):
        text = f"BEGIN:{message.game}:{message.max_weight}"
    elif isinstance(message, Round):
        state = " ".join(map(str, message.weights))
        head = f"ROUND:{message.round}.{message.player}:{message.phase}"
        if message.phase == "ADD":
            assert message.mine is not None and message.theirs is not None
            mine = " ".join(map(str, sorted(message.mine)))
            theirs = " ".join(map(str, sorted(message.theirs)))
            text = f"{head}:{mine}:{theirs}:{state}"
        else:
            text = f"{head}:{state}"
    else:
        text = _BARE[type(message)]
    return text.encode() + _TERMINATOR


@dataclass(frozen=True)
class _CutOff:
    """Bytes after the last ``;`` when the stream closed."""

    raw: bytes


def _show(raw: bytes) -> str:
    return raw.decode("ascii", "backslashreplace")


class _Messages:
    """Bytes in, the text of whole messages out (``;`` removed), with the size limit."""

    def __init__(self, max_message: int) -> None:
        self.max_message = max_message
        self._buffer = bytearray()
        self._closed = False
        self._too_long = False

    def receive_data(self, data: bytes) -> None:
        if self._closed:
            if data:
                raise LocalProtocolError("bytes received after the close")
            return
        if self._too_long:
            return  # the connection is done; nothing more is read
        if not data:
            self._closed = True
            return
        self._buffer += data

    def next(self) -> bytes | _CutOff | MessageTooLong | Closed | NeedData:
        """A message's raw bytes (without ``;``), or what ended the stream."""
        if self._too_long:
            return MessageTooLong(self.max_message)
        while True:
            end = self._buffer.find(b";")
            if end < 0:
                if len(self._buffer) > self.max_message:
                    self._too_long = True
                    self._buffer.clear()
                    return MessageTooLong(self.max_message)
                if self._closed:
                    rest = bytes(self._buffer)
                    self._buffer.clear()
                    if rest.strip():
                        return _CutOff(rest)  # reported before Closed
                    return Closed()
                return NEED_DATA
            if end > self.max_message:
                self._too_long = True
                self._buffer.clear()
                return MessageTooLong(self.max_message)
            raw = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if raw.strip():
                return raw


def _integer(text: str) -> int | None:
    return int(text) if _INTEGER.fullmatch(text) else None


class ServerConnection:
    """The server's end of one player's connection.

    States: joining (until ``GRANTED``; ``DENIED`` keeps it there), granted,
    playing (from ``BEGIN``), done (after ``WIN`` or ``LOSE``). ``send``
    refuses a message the state does not allow (``LocalProtocolError``).
    """

    def __init__(self, max_message: int = MAX_MESSAGE) -> None:
        self._messages = _Messages(max_message)
        self.state = "joining"

    @property
    def buffered(self) -> int:
        return len(self._messages._buffer)

    def receive_data(self, data: bytes) -> None:
        self._messages.receive_data(data)

    def next_event(self) -> object:
        raw = self._messages.next()
        if isinstance(raw, _CutOff):
            text = _show(_WHITESPACE.sub(b"", raw.raw))
            return Garbled(text, "cut off by the close, before its ';'")
        if not isinstance(raw, bytes):
            return raw
        return self._parse(_show(_WHITESPACE.sub(b"", raw)))

    def _parse(self, text: str) -> object:
        fields = text.split(":")
        command = fields[0].upper()
        args = fields[1:]
        if command == "JOINREQUEST":
            return _join(text, args)
        if command == "ADD":
            numbers = [_integer(a) for a in args]
            if len(numbers) != 2 or None in numbers:
                return Garbled(text, "ADD takes a weight and a position, as in ADD:3:-2;")
            weight, position = numbers
            assert weight is not None and position is not None
            return AddMove(weight, position)
        if command == "REMOVE":
            numbers = [_integer(a) for a in args]
            if len(numbers) != 1 or None in numbers:
                return Garbled(text, "REMOVE takes a position, as in REMOVE:-2;")
            position = numbers[0]
            assert position is not None
            return RemoveMove(position)
        return Garbled(text, "a client sends JOINREQUEST, ADD or REMOVE")

    def send(self, message: ServerMessage) -> bytes:
        allowed = {
            "joining": (Granted, Denied),
            "granted": (Begin,),
            "playing": (Round, Invalid, Win, Lose),
            "done": (),
        }[self.state]
        if not isinstance(message, allowed):
            raise LocalProtocolError(f"cannot send {type(message).__name__} while {self.state}")
        if isinstance(message, Granted):
            self.state = "granted"
        elif isinstance(message, Begin):
            self.state = "playing"
        elif isinstance(message, Win | Lose):
            self.state = "done"
        return encode(message)


def _join(text: str, args: list[str]) -> JoinRequest | BadJoin:
    if len(args) != 2:
        return BadJoin(f"{text!r}: JOINREQUEST takes a handle and a player number")
    handle, number = args
    if not HANDLE.fullmatch(handle):
        player = int(number) if number in ("0", "1") else None
        return BadJoin(f"{handle!r}: a handle is 1-32 of A-Z a-z 0-9 _ . -", player)
    if number not in ("0", "1"):
        return BadJoin(f"{number!r}: the player number is 0 or 1")
    return JoinRequest(handle, int(number))


# -- the client's end ---------------------------------------------------------------


def _numbers(field: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(token) for token in field.split())
    except ValueError:
        raise RemoteProtocolError(f"{what} {field.strip()!r}: not numbers") from None


class ClientConnection:
    """A client's end: ``start()`` asks for a seat; then ``next_event`` and ``move``."""

    def __init__(self, handle: str, player: int, max_message: int = MAX_MESSAGE) -> None:
        if not HANDLE.fullmatch(handle):
            raise ValueError(f"{handle!r}: a handle is 1-32 of A-Z a-z 0-9 _ . -")
        if player not in (0, 1):
            raise ValueError("the player number is 0 or 1")
        self.handle = handle
        self.player = player
        self._messages = _Messages(max_message)
        self._round: Round | None = None  # the round we owe a move for

    def start(self) -> bytes:
        return f"JOINREQUEST:{self.handle}:{self.player};\n".encode()

    def receive_data(self, data: bytes) -> None:
        self._messages.receive_data(data)

    def next_event(self) -> object:
        raw = self._messages.next()
        if isinstance(raw, MessageTooLong):
            raise RemoteProtocolError(f"a message over {raw.limit} bytes")
        if isinstance(raw, _CutOff):
            raise RemoteProtocolError(f"the server closed in the middle of {_show(raw.raw)!r}")
        if not isinstance(raw, bytes):
            return raw
        event = self._parse(_show(raw).strip())
        if isinstance(event, Round):
            self._round = event
        return event

    def _parse(self, text: str) -> ServerMessage:
        fields = text.split(":")
        command = fields[0].strip().upper()
        for kind, word in _BARE.items():
            if command == word and len(fields) == 1:
                return kind()
        if command == "BEGIN" and len(fields) == 3:
            game, weight = (_integer(f.strip()) for f in fields[1:])
            if game is not None and weight is not None:
                return Begin(game, weight)
        if command == "ROUND" and len(fields) in (4, 6):
            return self._round_of(text, fields)
        raise RemoteProtocolError(f"cannot read the server's message {text!r}")

    def _round_of(self, text: str, fields: list[str]) -> Round:
        number, _, player = fields[1].strip().partition(".")
        round_number, player_number = _integer(number), _integer(player)
        phase = fields[2].strip().upper()
        if round_number is None or player_number not in (0, 1):
            raise RemoteProtocolError(f"{text!r}: the round is <round>.<player>")
        assert player_number is not None
        weights = _numbers(fields[-1], "state")
        if len(weights) != 21:
            raise RemoteProtocolError(f"{text!r}: a state has 21 numbers, not {len(weights)}")
        if phase == "ADD" and len(fields) == 6:
            mine, theirs = _numbers(fields[3], "weights"), _numbers(fields[4], "weights")
            return Round(round_number, player_number, "ADD", mine, theirs, weights)
        if phase == "REMOVE" and len(fields) == 4:
            return Round(round_number, player_number, "REMOVE", None, None, weights)
        raise RemoteProtocolError(f"{text!r}: ROUND is ADD with two weight lists, or REMOVE")

    def add(self, weight: int, position: int) -> bytes:
        self._answer("ADD")
        return f"ADD:{weight}:{position};\n".encode()

    def remove(self, position: int) -> bytes:
        self._answer("REMOVE")
        return f"REMOVE:{position};\n".encode()

    def _answer(self, phase: str) -> None:
        if self._round is None:
            raise LocalProtocolError("a move answers a ROUND, and this one is answered")
        if self._round.phase != phase:
            raise LocalProtocolError(f"this round is {self._round.phase}, not {phase}")
        self._round = None
