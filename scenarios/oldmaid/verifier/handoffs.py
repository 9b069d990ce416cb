"""The handoffs of one Old Maid game, pieced together from the givers' and receivers' logs.

A handoff between two peers is visible when at least one of them logs;
handoffs between two log-less peers are invisible. ``summarise`` gives the
figures a scenario reports.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from scenarios.oldmaid.verifier.records import (
    _MALFORMED,
    GameRecords,
    Record,
    _card,
    over_record,
    peer_events,
    seat_order,
    table_events,
)


@dataclass
class Handoff:
    """One offer or pass, pieced together from the giver's and receiver's logs."""

    giver: str
    receiver: str
    kind: str  # "offer" or "pass"
    t_start: float | None = None  # giver began looking for the next player
    t_offer: float | None = None  # giver sent the accepted offer
    t_ok: float | None = None  # giver had the "ok"
    t_recv: float | None = None  # receiver logged its pick/turn
    num_cards: int | None = None
    card_num: int | None = None
    given: Any = None  # the card in the giver's ``gave``
    picked: Any = None  # the card in the receiver's ``pick``

    @property
    def key(self) -> float:
        """A time that orders handoffs causally.

        The receiver's pick/turn always precedes its own next offer, which
        precedes the next receiver's pick/turn; the giver's ``ok`` time does
        not (a pass's ``ok`` may be logged after the receiver moved on).
        """
        for value in (self.t_recv, self.t_offer, self.t_ok):
            if value is not None:
                return value
        return math.inf

    @property
    def sent(self) -> float:
        """When the accepted offer went out, or the best later bound we have."""
        for value in (self.t_offer, self.t_ok, self.t_recv):
            if value is not None:
                return value
        return math.inf

    @property
    def duration(self) -> float | None:
        """The handoff time of docs/logs.md: receiver's ``t`` minus giver's ``t_start``."""
        if self.t_recv is None or self.t_start is None:
            return None
        return self.t_recv - self.t_start

    def describe(self) -> str:
        return f"{self.giver} {self.kind} to {self.receiver} at t={self.key:.6f}"


@dataclass
class GameSummary:
    seats: list[str]
    handoffs: list[Handoff]
    skips: int
    out_order: list[str]
    loser: str | None

    @property
    def offers(self) -> int:
        return sum(1 for h in self.handoffs if h.kind == "offer")

    @property
    def passes(self) -> int:
        return sum(1 for h in self.handoffs if h.kind == "pass")

    @property
    def durations(self) -> list[float]:
        return [d for h in self.handoffs if (d := h.duration) is not None]


def collect_handoffs(records: GameRecords) -> tuple[list[Handoff], list[str]]:
    """Every visible handoff in causal order, and what did not match up.

    The k-th offer/pass that a giver logs towards a receiver is matched with
    the k-th pick/turn that the receiver logs from that giver. A pick or turn
    from a peer without a log is the only trace of that handoff, so it stands
    alone.
    """
    problems: list[str] = []
    logged = set(records.events)
    sent: dict[tuple[str, str], list[Handoff]] = defaultdict(list)
    for giver, log in records.events.items():
        awaiting_gave: Handoff | None = None
        for event in log:
            kind = event.get("event")
            if kind in ("offer", "pass"):
                handoff = Handoff(
                    giver=giver,
                    receiver=event.get("to"),
                    kind=kind,
                    t_start=event.get("t_start"),
                    t_offer=event.get("t_offer"),
                    t_ok=event.get("t"),
                    num_cards=event.get("num_cards", 0),
                )
                if kind == "offer" and not (handoff.num_cards or 0) > 0:
                    problems.append(f"{handoff.describe()} offered {handoff.num_cards} cards")
                if awaiting_gave is not None:
                    problems.append(f"{awaiting_gave.describe()}: {giver} logged no gave")
                sent[(giver, handoff.receiver)].append(handoff)
                awaiting_gave = handoff if kind == "offer" else None
            elif kind == "gave":
                if awaiting_gave is None or event.get("to") != awaiting_gave.receiver:
                    problems.append(
                        f"{giver} gave a card to {event.get('to')} at t={event.get('t')} "
                        "without an accepted offer to it"
                    )
                else:
                    awaiting_gave.given = event.get("card")
                    awaiting_gave.card_num = event.get("card_num")
                    awaiting_gave = None
        if awaiting_gave is not None:
            problems.append(f"{awaiting_gave.describe()}: {giver} logged no gave")
    received: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for receiver, log in records.events.items():
        for event in log:
            if event.get("event") in ("pick", "turn"):
                received[(event.get("from"), receiver)].append(event)

    handoffs: list[Handoff] = []
    for (giver, receiver), outgoing in sent.items():
        handoffs.extend(outgoing)
        if receiver not in logged:
            continue
        incoming = received.pop((giver, receiver), [])
        for handoff, event in zip(outgoing, incoming, strict=False):
            _match(handoff, event, problems)
        for handoff in outgoing[len(incoming) :]:
            wanted = "pick" if handoff.kind == "offer" else "turn"
            problems.append(f"{handoff.describe()} has no matching {wanted} in {receiver}'s log")
        for event in incoming[len(outgoing) :]:
            problems.append(
                f"{receiver} logged a {event['event']} from {giver} at t={event['t']:.6f} "
                f"that {giver} never logged handing over"
            )
    for (giver, receiver), incoming in received.items():
        if giver in logged:
            for event in incoming:
                problems.append(
                    f"{receiver} logged a {event['event']} from {giver} at t={event['t']:.6f} "
                    f"that {giver} never logged handing over"
                )
            continue
        for event in incoming:
            handoff = Handoff(
                giver=giver,
                receiver=receiver,
                kind="offer" if event["event"] == "pick" else "pass",
                t_recv=event["t"],
                card_num=event.get("card_num"),
                picked=event.get("card"),
            )
            handoffs.append(handoff)
    handoffs.sort(key=lambda h: h.key)
    return handoffs, problems


def _match(handoff: Handoff, event: Record, problems: list[str]) -> None:
    wanted = "pick" if handoff.kind == "offer" else "turn"
    if event.get("event") != wanted:
        problems.append(
            f"{handoff.describe()} was answered by a {event.get('event')} in "
            f"{handoff.receiver}'s log at t={event['t']:.6f}, not a {wanted}"
        )
        return
    handoff.t_recv = event["t"]
    if wanted == "pick":
        handoff.picked = event.get("card")
        if handoff.given is not None and _card(handoff.given) != _card(handoff.picked):
            problems.append(
                f"{handoff.describe()}: {handoff.giver} gave {handoff.given} but "
                f"{handoff.receiver} picked {handoff.picked}"
            )
        if handoff.card_num is not None and handoff.card_num != event.get("card_num"):
            problems.append(
                f"{handoff.describe()}: card number {handoff.card_num} given, "
                f"{event.get('card_num')} picked"
            )
        if (
            isinstance(event.get("card_num"), int)
            and handoff.num_cards is not None
            and not 0 <= event["card_num"] < handoff.num_cards
        ):
            problems.append(
                f"{handoff.describe()}: picked card {event['card_num']} of {handoff.num_cards}"
            )


def summarise(records: GameRecords) -> GameSummary:
    """The figures a scenario reports; malformed records (the checks say why) count as absent."""
    try:
        seats = [str(nick) for nick in seat_order(records)]
    except _MALFORMED:
        seats = []
    try:
        handoffs, _ = collect_handoffs(records)
    except _MALFORMED:
        handoffs = []
    over = over_record(records)
    return GameSummary(
        seats=seats,
        handoffs=handoffs,
        skips=len(peer_events(records, "skip")),
        out_order=[str(r.get("nick")) for r in table_events(records, "out")],
        loser=over.get("loser") if over else None,
    )
