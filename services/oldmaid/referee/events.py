"""The referee's vocabulary: game states, refusals, and the decisions it records.

The field names of the events are the transcript's (docs/logs.md), so the
table writes them as they are. ``services.oldmaid.referee.rules`` re-exports all of
this.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from ring.oldmaid.cards import Card

Address = tuple[str, int]


class GameState(enum.Enum):
    WAITING = "waiting"
    PLAYING = "playing"
    OVER = "over"
    ABORTED = "aborted"


class RefereeError(Exception):
    """A request the rules refuse; the text is sent to the client as is."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class ClaimedTwice(RefereeError):
    """A discard of a card another player discarded, in a verified game: refused, and
    left to the ledger, which knows which of the two held it (protocol 14.6)."""

    def __init__(self, message: str, nick: str, cards: tuple[Card, Card]) -> None:
        super().__init__(message)
        self.nick = nick
        self.cards = cards


def show(card: Card) -> str:
    """A card as the client wrote it on the wire, so messages match its request."""
    return f'["{card.value}","{card.suit}"]'


@dataclass(frozen=True, slots=True)
class Seat:
    nick: str
    address: Address


# Referee events: what the transcript records about each decision. The field
# names are the transcript's (docs/logs.md), so the table writes them as is.


@dataclass(frozen=True, slots=True)
class Started:
    EVENT: ClassVar[str] = "started"
    players: list[str]
    addresses: list[Address]
    verified: list[str] | None = None  # the players that prove who they are (protocol 14.5)


@dataclass(frozen=True, slots=True)
class Dealt:
    EVENT: ClassVar[str] = "dealt"
    nick: str
    card: Card
    last: bool


@dataclass(frozen=True, slots=True)
class Discarded:
    EVENT: ClassVar[str] = "discarded"
    nick: str
    cards: list[Card]


@dataclass(frozen=True, slots=True)
class WentOut:
    EVENT: ClassVar[str] = "out"
    nick: str
    place: int  # 1 = the winner


@dataclass(frozen=True, slots=True)
class Left:
    EVENT: ClassVar[str] = "left"
    nick: str  # a player who was already out closed its table connection


@dataclass(frozen=True, slots=True)
class Over:
    EVENT: ClassVar[str] = "over"
    loser: str
    out: list[str]
    undiscarded: int  # pairs never discarded (0 when every player discarded every pair)


@dataclass(frozen=True, slots=True)
class Aborted:
    EVENT: ClassVar[str] = "aborted"
    reason: str
    # The player the reason names as the one at fault, where there is one.
    culprit: str | None = None
    # The rule broken, where the table can say (protocol 14): "claimed_twice", ...
    rule: str | None = None


@dataclass(frozen=True, slots=True)
class Accused:
    EVENT: ClassVar[str] = "accused"
    accuser: str
    accused: str | None
    rule: str
    # "pending" (the table waits a moment for a counter-accusation), "taken"
    # (the game is aborted on it), "refused" (it contradicts what the table
    # knows) or "noted" (the game was already being decided).
    verdict: str
    message: str = ""


RefereeEvent = Started | Dealt | Discarded | WentOut | Left | Over | Aborted | Accused


@dataclass(frozen=True, slots=True)
class Standing:
    """What ``status`` reports; ``in_`` because ``in`` is a keyword."""

    state: GameState
    in_: tuple[str, ...]
    out: tuple[str, ...]
    loser: str | None = None
    reason: str | None = None
    undiscarded: int = 0  # pairs never discarded; reported once the game is over
