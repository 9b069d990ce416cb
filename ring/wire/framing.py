"""Split a byte stream into JSON objects, sans-IO.

Senders on the wire write one object per message followed by ``\\n``, but
clients written against the original course table send bare ``json.dumps``
output with no delimiter, so objects may also arrive back to back. TCP may
split or merge any of them, so the splitter tracks brace depth and string
state across arbitrary chunks instead of splitting on newlines.

Resynchronisation (docs/protocols/oldmaid.md 2): a run of bytes that is not a
JSON object is reported as soon as it is seen and discarded through the next
newline. A raw
newline inside an object (JSON strings cannot hold one) ends that object as
malformed, so a truncated message never swallows the one after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MAX_MESSAGE = 64 * 1024

_WHITESPACE = b" \t\r\n"
_IN_STRING = re.compile(rb'["\\\n]')
# Outside strings: a run of bytes that are not structural, and whole strings (escapes
# included, no raw newline), in one match: a message's keys and values cost one regex
# call, not two a string. It stops before a brace, a newline, or a string it cannot
# finish here (cut off by the chunk's end, or holding a newline): the byte-at-a-time
# path below takes those.
_RUN = re.compile(rb'(?:[^{}"\n]++|"(?:[^"\\\n]++|\\[^\n])*+")*+')


class FramingError(Exception):
    """The stream broke a rule that leaves no way to resynchronise."""


class MessageTooLarge(FramingError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"message exceeds the {limit}-byte limit")
        self.limit = limit


@dataclass(frozen=True, slots=True)
class Garbage:
    """Bytes that cannot be a JSON object; the receiver answers with an error."""

    reason: str


class JsonObjectSplitter:
    """Feed bytes in; take complete JSON objects (as bytes) or ``Garbage`` out.

    ``next_frame()`` returns ``None`` when it needs more data and raises
    ``MessageTooLarge`` when one message exceeds ``max_size`` bytes; after
    that the stream cannot be trusted and the connection should be closed.
    """

    def __init__(self, max_size: int = DEFAULT_MAX_MESSAGE) -> None:
        self.max_size = max_size
        self._buf = bytearray()
        self._pos = 0  # next byte to examine
        self._start: int | None = None  # start of the object being scanned
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._skipping = False  # discarding a bad line through its newline
        self._skipped = 0

    def feed(self, data: bytes) -> None:
        self._buf += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as frames."""
        return len(self._buf) - (self._start if self._start is not None else self._pos)

    def next_frame(self) -> bytes | Garbage | None:
        if self._skipping and not self._skip_line():
            return None
        if self._start is None:
            garbage = self._between_objects()
            if garbage is not None or self._start is None:
                return garbage
        return self._scan_object()

    def _compact(self) -> None:
        cut = self._pos if self._start is None else self._start
        if cut:
            del self._buf[:cut]
            self._pos -= cut
            if self._start is not None:
                self._start -= cut

    def _skip_line(self) -> bool:
        newline = self._buf.find(b"\n", self._pos)
        if newline < 0:
            self._skipped += len(self._buf) - self._pos
            self._pos = len(self._buf)
            self._compact()
            if self._skipped > self.max_size:
                raise MessageTooLarge(self.max_size)
            return False
        self._pos = newline + 1
        self._skipping = False
        self._skipped = 0
        self._compact()
        return True

    def _between_objects(self) -> Garbage | None:
        buf, pos, end = self._buf, self._pos, len(self._buf)
        while pos < end and buf[pos] in _WHITESPACE:
            pos += 1
        self._pos = pos
        if pos == end:
            self._compact()
            return None
        if buf[pos] == 0x7B:  # "{"
            self._start = pos
            self._pos = pos + 1
            self._depth = 1
            self._in_string = False
            self._escaped = False
            return None
        self._skipping = True
        return Garbage("not a JSON object")

    def _scan_object(self) -> bytes | Garbage | None:
        buf = self._buf
        while True:
            if self._escaped:
                if self._pos >= len(buf):
                    break
                self._escaped = False
                if buf[self._pos] == 0x0A:
                    return self._abandon_object(self._pos)
                self._pos += 1
                continue
            if self._in_string:
                match = _IN_STRING.search(buf, self._pos)
                if match is None:
                    break
                char = buf[match.start()]
                self._pos = match.end()
                if char == 0x5C:  # backslash: the next byte is escaped
                    self._escaped = True
                elif char == 0x22:
                    self._in_string = False
                else:
                    return self._abandon_object(match.start())
                continue
            run = _RUN.match(buf, self._pos)
            assert run is not None  # it matches the empty run at least
            at = run.end()
            if at >= len(buf):
                break
            char = buf[at]
            self._pos = at + 1
            if char == 0x7B:
                self._depth += 1
            elif char == 0x7D:
                self._depth -= 1
                if self._depth == 0:
                    assert self._start is not None
                    frame = bytes(buf[self._start : self._pos])
                    self._start = None
                    self._compact()
                    if len(frame) > self.max_size:
                        raise MessageTooLarge(self.max_size)
                    return frame
            elif char == 0x22:
                self._in_string = True
            else:
                return self._abandon_object(at)
        self._pos = len(buf)
        if self._start is not None and len(buf) - self._start > self.max_size:
            raise MessageTooLarge(self.max_size)
        return None

    def _abandon_object(self, newline_at: int) -> Garbage:
        assert self._start is not None
        if newline_at - self._start > self.max_size:
            raise MessageTooLarge(self.max_size)
        self._start = None
        self._in_string = False
        self._escaped = False
        self._pos = newline_at + 1
        self._compact()
        return Garbage("incomplete JSON object before end of line")
