"""What the ledger of a verified game is fed and what it finds (protocol 14.6).

Each player's doings, in the order it did them: its draws, its discards, its
going out (the referee's decisions), and its reports of exchanges (``received``,
``gave``). ``Lie`` is what the ledger (``services.oldmaid.verified.ledger``)
returns when they cannot all be true.
"""

from __future__ import annotations

from dataclasses import dataclass

from ring.oldmaid.cards import Card


@dataclass(frozen=True)
class Drew:
    card: Card
    last: bool  # the deck's last card: the drawer holds the first turn of the offers


@dataclass(frozen=True)
class Threw:
    cards: tuple[Card, Card]  # a discard the table accepted


@dataclass(frozen=True)
class Out:
    pass  # the table counted this player out


@dataclass(frozen=True)
class Gave:
    """The offerer's report: it handed exchange ``seq`` to ``to``; ``ack`` is to's;
    ``salts`` open each position of its commitment (None: it sent none)."""

    seq: int
    to: str
    mac: str
    ack: str | None
    salts: tuple[str, ...] | None = None
    pick: tuple[int, str] | None = None  # to's signed pick: card_num, mac


@dataclass(frozen=True)
class Received:
    """The receiver's report: the offer as it came, and (for cards) what it picked."""

    seq: int
    sender: str
    num_cards: int
    hashes: tuple[str, ...]
    mac: str
    card_num: int | None = None
    card: Card | None = None
    salt: str | None = None


Entry = Drew | Threw | Out | Gave | Received


@dataclass(frozen=True)
class Lie:
    """What the ledger found: the rule, the words, and who is to blame (if anyone can be)."""

    rule: str
    what: str
    culprit: str | None
    suspects: tuple[str, ...] = ()
