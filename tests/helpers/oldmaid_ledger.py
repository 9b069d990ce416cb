"""Whole Old Maid games played by the rules, as a verified game's players report them
(protocol 14.6): what each player would tell the table, in its order. For the ledger's
tests and the witness's, which feed them to the table's pure parts without a socket."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ring.oldmaid import exchanges
from ring.oldmaid.cards import JOKER, Card, full_deck, partner
from services.oldmaid.verified.ledger import Drew, Entry, Gave, Ledger, Lie, Out, Received, Threw


@dataclass
class Exchange:
    """One exchange of the offer phase, as both sides report it."""

    seq: int
    sender: str
    receiver: str
    gave: Gave
    received: Received


@dataclass
class HonestGame:
    seats: tuple[str, ...]
    secrets: dict[str, str]
    streams: dict[str, list[Entry]]
    hands: dict[str, Counter[Card]]
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def loser(self) -> str:
        return next(n for n, hand in self.hands.items() if hand[JOKER])


def honest_game(seed: int, players: int) -> HonestGame:
    """A whole game played by the rules; every player's words to the table, in its order."""
    rng = random.Random(seed)
    seats = tuple(f"p{i}" for i in range(players))
    secrets = {n: f"{rng.getrandbits(128):032x}" for n in seats}
    streams: dict[str, list[Entry]] = {n: [] for n in seats}
    hands: dict[str, list[Card]] = {n: [] for n in seats}
    deck = full_deck()
    rng.shuffle(deck)

    def take(nick: str, card: Card) -> None:
        if card != JOKER and partner(card) in hands[nick]:
            hands[nick].remove(partner(card))
            streams[nick].append(Threw((card, partner(card))))
        else:
            hands[nick].append(card)

    for i, card in enumerate(deck):
        nick = seats[i % players]
        streams[nick].append(Drew(card, last=i == len(deck) - 1))
        take(nick, card)
    for nick in seats:
        if not hands[nick]:
            streams[nick].append(Out())
    game = HonestGame(seats, secrets, streams, {})
    holder = seats[(len(deck) - 1) % players]
    seq = 1
    while sum(1 for n in seats if hands[n]) > 1:
        start = seats.index(holder)
        to = next(
            seats[(start + k) % players]
            for k in range(1, players)
            if hands[seats[(start + k) % players]]
        )
        cards = list(hands[holder])
        rng.shuffle(cards)
        offer = exchanges.commit(secrets[holder], seq=seq, sender=holder, to=to, cards=cards)
        ack = exchanges.ack_mac(secrets[to], offer.mac)
        gave = Gave(seq, to, offer.mac, ack, offer.salts)
        if cards:
            position = rng.randrange(len(cards))
            card = cards[position]
            received = Received(
                seq, holder, len(cards), offer.hashes, offer.mac,
                position, card, offer.salt_of(position),
            )  # fmt: skip
        else:
            received = Received(seq, holder, 0, (), offer.mac)
        game.exchanges.append(Exchange(seq, holder, to, gave, received))
        streams[to].append(received)
        streams[holder].append(gave)
        if cards:
            hands[holder].remove(card)
            take(to, card)
            if not hands[holder]:
                streams[holder].append(Out())
            if not hands[to]:
                streams[to].append(Out())
        holder = to
        seq += 1
    game.hands = {n: Counter(hands[n]) for n in seats}
    return game


def feed(ledger: Ledger, streams: dict[str, list[Entry]], order: Sequence[int]) -> Lie | None:
    """Every entry, each player's in its order, the players interleaved as ``order`` picks."""
    queues = {n: list(entries) for n, entries in streams.items()}
    picks = iter(order)
    while any(queues.values()):
        ready = [n for n in sorted(queues) if queues[n]]
        nick = ready[next(picks, 0) % len(ready)]
        lie = ledger.record(nick, queues[nick].pop(0))
        if lie is not None:
            return lie
    return None


def ledger_of(game: HonestGame) -> Ledger:
    return Ledger(game.seats, game.secrets)
