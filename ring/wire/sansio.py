"""What the Trio layer needs from a sans-IO protocol object.

Every protocol in the project (Old Maid links, and the line protocols of the
tables) is driven through this one interface, so one ``Connection`` wrapper
serves them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class NeedData:
    """``next_event()`` has nothing until more bytes arrive."""

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA = NeedData()


@dataclass(frozen=True, slots=True)
class Invalid:
    """Input the receiver must answer with its protocol's error; ``reason`` says why.

    The connection stays usable: the protocol has already resynchronised.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class Closed:
    """The other side closed its end."""


class ProtocolError(Exception):
    """Something broke a game's protocol; the message says what.

    ``reason`` is the short form a line protocol sends back (FishNet's
    ``error <reason>``, so without spaces there), ``detail`` the rest; a
    protocol that sends no such token gives the whole message as ``reason``.
    The one pair below is every protocol's, as h11's are HTTP's.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class LocalProtocolError(ProtocolError):
    """Our own code tried to send something the protocol does not allow now."""


class RemoteProtocolError(ProtocolError):
    """The other side broke the protocol beyond repair: close the connection."""


class SansIO(Protocol):
    def send(self, message: Any) -> bytes:
        """The bytes of one message, to be written in one write."""

    def receive_data(self, data: bytes) -> None:
        """Bytes from the other side; ``b""`` when it closed its end."""

    def next_event(self) -> Any:
        """The next event, or ``NEED_DATA``."""
