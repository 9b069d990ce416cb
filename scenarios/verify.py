"""Checks over one Old Maid game: the table transcript and the peers' event logs.

Everything here is a pure function over parsed records (``load_records`` is
the one loader); the formats are those of ``docs/logs.md``. Each check returns
a ``CheckResult`` with a name, a verdict and a detail that says what was
seen, so a failing scenario explains itself without opening the logs.

Peers are not required to keep a log: an independent (interop) peer writes
none. Checks that need a peer's own log are made for the peers that have one;
the table transcript covers everyone. A handoff between two peers is visible
when at least one of them logs; handoffs between two log-less peers are
invisible, and the chain check tolerates exactly those gaps.

Times: every record's ``t`` is ``time.monotonic()``, one clock for all
processes on the machine, so records of different processes can be compared.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ring.events import read_events
from ring.oldmaid.cards import JOKER, Card, full_deck, is_pair, pair_key, parse_card

Record = dict[str, Any]

HANDOFF = "ring handoff"
SKIPS = "out skipping"
LOSER = "one loser"
PAIRS = "pairs discarded"
OUT_ORDER = "out order"
EXITS = "exit codes"
LINES = "final lines"
CHECK_NAMES = (HANDOFF, SKIPS, LOSER, PAIRS, OUT_ORDER, EXITS, LINES)

# What a record with a missing or mistyped field raises somewhere in a check.
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)

# A failing check lists this many problems and counts the rest, so one
# systematic bug does not bury the summary under a hundred lines.
MAX_PROBLEMS = 5

_TABLE_OVER_LINE = re.compile(r"game over: loser (?P<loser>\S+); out: (?P<out>.*)")
LOST_LINE = "lost: holds the Old Maid"


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str


@dataclass
class GameRecords:
    """Everything one game left behind.

    ``events`` maps a nick to that peer's log; a peer that keeps none is
    simply absent. ``exits`` and ``lines`` are keyed by process name (the
    table is ``"table"``, a ``ring peer`` by its nick); an exit code of
    ``None`` means the process had to be killed.
    """

    transcript: list[Record]
    events: dict[str, list[Record]]
    exits: dict[str, int | None] = field(default_factory=dict)
    lines: dict[str, list[str]] = field(default_factory=dict)


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


def load_records(
    transcript: Path | None,
    event_logs: Mapping[str, Path],
    *,
    exits: Mapping[str, int | None] | None = None,
    lines: Mapping[str, list[str]] | None = None,
) -> GameRecords:
    """Read a transcript and peer logs; a file that was never written reads as empty."""

    def read(path: Path | None) -> list[Record]:
        return read_events(path) if path is not None and path.exists() else []

    return GameRecords(
        transcript=read(transcript),
        events={nick: read(path) for nick, path in event_logs.items()},
        exits=dict(exits or {}),
        lines={name: list(text) for name, text in (lines or {}).items()},
    )


# --- derived facts ----------------------------------------------------------


def table_events(records: GameRecords, event: str) -> list[Record]:
    """Referee records of one kind, in transcript order (message records have no ``event``)."""
    return [r for r in records.transcript if r.get("event") == event]


def peer_events(records: GameRecords, event: str) -> list[tuple[str, Record]]:
    return [
        (nick, e) for nick, log in records.events.items() for e in log if e.get("event") == event
    ]


def seat_order(records: GameRecords) -> list[str]:
    """Nicks in seat order: the table's ``started`` record, else any peer's ``start``."""
    for record in table_events(records, "started"):
        return list(record["players"])
    for _, event in peer_events(records, "start"):
        return list(event["players"])
    return []


def over_record(records: GameRecords) -> Record | None:
    overs = table_events(records, "over")
    return overs[-1] if overs else None


def out_times(records: GameRecords) -> dict[str, float]:
    """The earliest evidence that each player was out.

    The table counts a player out before acknowledging ``out_of_cards``, and
    a peer answers ``out`` only after that acknowledgement (WIRE.md), so
    either record bounds from above the moment the player stopped being in.
    """
    times: dict[str, float] = {}
    for record in table_events(records, "out"):
        nick = record["nick"]
        times[nick] = min(times.get(nick, math.inf), record["t"])
    for nick, event in peer_events(records, "out"):
        times[nick] = min(times.get(nick, math.inf), event["t"])
    return times


def last_drawer(records: GameRecords) -> tuple[str | None, list[str]]:
    """Who drew the last card (table first, the peers' own logs as a fallback)."""
    problems: list[str] = []
    from_table = [r["nick"] for r in table_events(records, "dealt") if r.get("last")]
    from_peers = [nick for nick, e in peer_events(records, "draw") if e.get("last")]
    if len(from_table) > 1:
        problems.append(f"the table dealt the last card {len(from_table)} times: {from_table}")
    if len(from_peers) > 1:
        problems.append(f"several peers logged drawing the last card: {from_peers}")
    if from_table and from_peers and from_table[0] != from_peers[0]:
        problems.append(
            f"the table dealt the last card to {from_table[0]}, but {from_peers[0]} logged it"
        )
    drawer = (from_table or from_peers or [None])[0]
    return drawer, problems


def _left(seats: list[str], nick: str, steps: int = 1) -> str:
    return seats[(seats.index(nick) + steps) % len(seats)]


def _between(seats: list[str], giver: str, receiver: str) -> list[str]:
    """The seats strictly between giver and receiver going left (increasing index, wrapping)."""
    result = []
    seat = _left(seats, giver)
    while seat not in (receiver, giver):
        result.append(seat)
        seat = _left(seats, seat)
    return result


def _previous_in(seats: list[str], outs: Mapping[str, float], nick: str, t: float) -> str:
    """The nearest player right of ``nick`` who was still in at ``t`` (``nick`` if none)."""
    for steps in range(1, len(seats)):
        seat = _left(seats, nick, -steps)
        if not _out_before(outs, seat, t):
            return seat
    return nick


def _card(value: Any) -> Card | None:
    try:
        return parse_card(*value)
    except (TypeError, ValueError):
        return None


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


# --- checks -------------------------------------------------------------------


def _result(name: str, problems: list[str], good: str) -> CheckResult:
    if not problems:
        return CheckResult(name, True, good)
    shown = "; ".join(problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    return CheckResult(name, False, shown + (f"; and {more} more" if more > 0 else ""))


def _out_before(outs: Mapping[str, float], nick: str, t: float) -> bool:
    return outs.get(nick, math.inf) < t


def _when_out(outs: Mapping[str, float], nick: str) -> str:
    return f"out at t={outs[nick]:.6f}" if nick in outs else "never out"


def check_handoffs(records: GameRecords) -> CheckResult:
    """(a) The turn travels the ring: holder -> next player in, and the picker holds it next."""
    seats = seat_order(records)
    if not seats:
        return CheckResult(HANDOFF, False, "no seat order: no 'started' record, no 'start' event")
    problems: list[str] = []
    for nick, event in peer_events(records, "start"):
        if list(event.get("players", [])) != seats:
            problems.append(f"{nick} was seated as {event.get('players')}, the table said {seats}")
        elif nick in seats and event.get("seat") != seats.index(nick):
            problems.append(f"{nick} logged seat {event.get('seat')}, it is {seats.index(nick)}")
    # The draw turn goes round the same ring, one card a turn, seat 0 first.
    dealt_to = [r.get("nick") for r in table_events(records, "dealt")]
    in_turn = [seats[i % len(seats)] for i in range(len(dealt_to))]
    if dealt_to != in_turn:
        wrong = next(i for i, (a, b) in enumerate(zip(dealt_to, in_turn, strict=True)) if a != b)
        problems.append(
            f"draw #{wrong + 1} went to {dealt_to[wrong]}, but it was {in_turn[wrong]}'s turn"
        )
    handoffs, match_problems = collect_handoffs(records)
    problems += match_problems
    drawer, draw_problems = last_drawer(records)
    problems += draw_problems
    outs = out_times(records)
    logged = set(records.events)

    holder = drawer
    for number, handoff in enumerate(handoffs, 1):
        if handoff.giver is None:
            # An independent peer need not name itself in its offer, and the
            # receiver then logs ``from: null``. The log-less turn holder may
            # have sent it, if the ring allows; otherwise it came from the
            # nearest player to the right still in, and the chain check below
            # tells whether that player held the turn.
            if (
                holder in seats
                and holder not in logged
                and holder != handoff.receiver
                and all(
                    _out_before(outs, seat, handoff.sent)
                    for seat in _between(seats, holder, handoff.receiver)
                )
            ):
                giver = holder
            else:
                giver = _previous_in(seats, outs, handoff.receiver, handoff.sent)
            handoff = replace(handoff, giver=giver)
        label = f"handoff #{number} ({handoff.describe()})"
        if handoff.giver not in seats or handoff.receiver not in seats:
            problems.append(f"{label} involves a player who is not seated")
            holder = handoff.receiver
            continue
        # Two log-less peers in a row can hand the turn on without a trace.
        invisible_gap = holder not in logged and handoff.giver not in logged
        if holder is not None and handoff.giver != holder and not invisible_gap:
            problems.append(f"{label} comes from {handoff.giver}, but {holder} holds the turn")
        if handoff.receiver == handoff.giver:
            problems.append(f"{label} goes to the giver itself")
        else:
            for seat in _between(seats, handoff.giver, handoff.receiver):
                if not _out_before(outs, seat, handoff.sent):
                    problems.append(f"{label} passes over {seat}, who is still in")
            if _out_before(outs, handoff.receiver, handoff.sent):
                problems.append(
                    f"{label} lands on {handoff.receiver}, who was already "
                    f"{_when_out(outs, handoff.receiver)}"
                )
        holder = handoff.receiver

    lost = peer_events(records, "lost")
    over = over_record(records)
    # The unique ``lost`` event names the loser most directly; with none or
    # several (check "one loser" reports that), fall back to the table.
    loser = lost[0][0] if len(lost) == 1 else (over.get("loser") if over else None)
    invisible_end = holder not in logged and loser not in logged
    # The game is over the moment the last pair is discarded and all but one
    # are out. When the last holder went out that way, the game may end
    # before its pass reaches the loser: the loser hears it from the table.
    last_key = handoffs[-1].key if handoffs else -math.inf
    over_during_last_turn = (
        over is not None and over["t"] > last_key and _out_before(outs, holder, math.inf)
    )
    if (
        loser is not None
        and holder is not None
        and holder != loser
        and not invisible_end
        and not over_during_last_turn
    ):
        problems.append(f"the turn ends with {holder}, but the loser is {loser}")
    # A loser may hear from the table (game over) before the last pass
    # reaches it; only a loss it found by itself must come after every handoff.
    if len(lost) == 1 and handoffs:
        lost_t = lost[0][1]["t"]
        told = over is not None and over["t"] < lost_t
        if lost_t < handoffs[-1].key and not told:
            problems.append(f"{loser} lost at t={lost_t:.6f}, before the last handoff")
    if drawer is None:
        problems.append("no one drew the last card: the offer phase never began")
    ending = (
        f"to the loser {holder}"
        if holder == loser
        else f"to {holder}, who was out when the game ended (loser {loser})"
    )
    return _result(
        HANDOFF,
        problems,
        f"{len(handoffs)} handoffs, each to the next player in, from {drawer} (last card) {ending}",
    )


def check_skips(records: GameRecords) -> CheckResult:
    """(b) Each ``skip`` passes over a player who is out, and dialling moves one seat at a time.

    Once the table has recorded the game over, out players may stop
    answering, so a dial round may stop short: the last holder, out, passing
    to the loser, or the loser's own final round. Such rounds are accepted if
    they stopped after the game was over; their skips are still checked.
    """
    seats = seat_order(records)
    if not seats:
        return CheckResult(SKIPS, False, "no seat order")
    outs = out_times(records)
    over = over_record(records)
    over_t = over["t"] if over else math.inf
    problems: list[str] = []
    count = 0
    stopped = 0
    for nick, log in records.events.items():
        pending: list[Record] = []
        for event in log:
            kind = event.get("event")
            if kind == "skip":
                pending.append(event)
                count += 1
            elif kind in ("your_turn", "offer", "pass", "lost"):
                if pending:
                    target = nick if kind == "lost" else event.get("to")
                    may_stop = kind == "lost" and over_t < event["t"]
                    problems += _dial_round(seats, outs, nick, pending, target, kind, may_stop)
                pending = []
        if pending and over_t < pending[-1]["t"]:
            stopped += 1
            problems += _dial_round(seats, outs, nick, pending, None, "dialling", True)
        elif pending:
            problems.append(
                f"{nick} skipped {[e.get('over') for e in pending]} but never finished dialling"
            )
    after = f"; {stopped} round(s) cut short by the game over" if stopped else ""
    return _result(SKIPS, problems, f"{count} skips, each over a player who was out{after}")


def _dial_round(
    seats: list[str],
    outs: Mapping[str, float],
    nick: str,
    skips: list[Record],
    target: Any,
    kind: str,
    may_stop: bool = False,
) -> list[str]:
    """One turn holder's run of skips and where it ended (a handoff, or ``lost`` at itself).

    ``may_stop``: the game was over, so the round may end before its landing.
    """
    problems = []
    if nick not in seats:
        return [f"{nick} is not seated but skipped players"]
    expected = _left(seats, nick)
    for skip in skips:
        over = skip.get("over")
        where = f"{nick} skipped {over} at t={skip['t']:.6f}"
        if over not in seats:
            problems.append(f"{where}: no such player")
            return problems
        if over != expected:
            problems.append(f"{where}, but the seat to dial was {expected}")
        if not _out_before(outs, over, skip["t"]):
            problems.append(f"{where}, who was not out ({_when_out(outs, over)})")
        expected = _left(seats, over)
    if target != expected and not may_stop:
        landed = "itself (lost)" if kind == "lost" else target
        problems.append(
            f"after skipping {skips[-1].get('over')}, {nick}'s {kind} went to {landed}, "
            f"not the next seat {expected}"
        )
    elif target == expected and kind != "lost" and _out_before(outs, target, skips[-1]["t"]):
        problems.append(
            f"after skipping {skips[-1].get('over')}, {nick}'s {kind} landed on {target}, "
            f"who was {_when_out(outs, target)}"
        )
    return problems


def check_loser(records: GameRecords) -> CheckResult:
    """(c) Exactly one loser, holding only the joker, and everyone agrees who it is."""
    over = over_record(records)
    if over is None:
        aborted = table_events(records, "aborted")
        reason = f" (aborted: {aborted[-1].get('reason')})" if aborted else ""
        return CheckResult(LOSER, False, "the table recorded no game over" + reason)
    loser = over.get("loser")
    seats = seat_order(records)
    problems: list[str] = []
    if loser not in seats:
        problems.append(f"the table's loser {loser!r} is not seated")
    lost = peer_events(records, "lost")
    losers = [nick for nick, _ in lost]
    if loser in records.events:
        if losers != [loser]:
            problems.append(f"the table says {loser} lost, the peers' lost events name {losers}")
    elif losers:
        problems.append(f"the table says {loser} lost (it keeps no log), but {losers} logged lost")
    outs = out_times(records)
    for nick, event in lost:
        hand = [_card(card) for card in event.get("hand", [])]
        if hand != [JOKER]:
            problems.append(f"{nick} lost holding {event.get('hand')}, not just the Old Maid")
        still_in = [p for p in seats if p != nick and not _out_before(outs, p, event["t"])]
        if still_in:
            problems.append(f"{nick} lost at t={event['t']:.6f} while {still_in} were still in")
    for nick, event in peer_events(records, "game_over"):
        if event.get("aborted"):
            problems.append(f"{nick} was told the game was aborted: {event.get('reason')}")
        elif event.get("loser") != loser:
            problems.append(f"{nick} was told {event.get('loser')} lost, the table says {loser}")
    return _result(LOSER, problems, f"{loser} lost holding only the Old Maid")


def check_pairs(records: GameRecords) -> CheckResult:
    """(c) 53 cards dealt once each; 26 pairs discarded, each of the 52 other cards once."""
    problems: list[str] = []
    deck = full_deck()
    dealt = Counter(_card(r.get("card")) for r in table_events(records, "dealt"))
    if dealt != Counter(deck):
        missing = [str(c) for c in deck if c not in dealt]
        twice = [str(c) for c, n in dealt.items() if n > 1]
        problems.append(
            f"the deal was not the 53-card deck once each "
            f"({sum(dealt.values())} dealt, never dealt: {missing[:3]}, dealt twice: {twice[:3]})"
        )
    discarded = table_events(records, "discarded")
    seen: Counter[Card] = Counter()
    for record in discarded:
        cards = [_card(card) for card in record.get("cards", [])]
        if len(cards) != 2 or None in cards or not is_pair(*cards):
            problems.append(f"the table accepted {record.get('cards')} from {record.get('nick')}")
            continue
        seen.update(cards)
    for card, times in seen.items():
        if times > 1:
            problems.append(f"{card} was discarded {times} times")
    never = {pair_key(card) for card in deck if card != JOKER and card not in seen}
    for value, colour in sorted(never):
        problems.append(f"the {colour} pair of {value} was never discarded")
    if len(discarded) != 26:
        problems.append(f"{len(discarded)} pairs discarded, not 26")

    # Each peer's accepted discards are exactly the table's records for it.
    def key(nick: str, cards: Iterable[Any]) -> tuple[str, frozenset[Card | None]]:
        return nick, frozenset(_card(c) for c in cards)

    table_side = Counter(key(r.get("nick"), r.get("cards", [])) for r in discarded)
    peer_side = Counter(key(n, e.get("cards", [])) for n, e in peer_events(records, "discard"))
    for (nick, cards), times in (table_side - peer_side).items():
        if nick in records.events:
            names = sorted(str(c) for c in cards)
            problems.append(f"the table recorded {nick} discarding {names} {times}x; it did not")
    for (nick, cards), times in (peer_side - table_side).items():
        names = sorted(str(c) for c in cards)
        problems.append(f"{nick} logged discarding {names} {times}x; the table did not record it")
    return _result(PAIRS, problems, "53 cards dealt once; 26 pairs discarded, 52 cards once each")


def check_out_order(records: GameRecords) -> CheckResult:
    """(c) The table's out order: N-1 players, as counted, and consistent with the peers' logs."""
    seats = seat_order(records)
    over = over_record(records)
    if over is None:
        return CheckResult(OUT_ORDER, False, "the table recorded no game over")
    problems: list[str] = []
    outs = table_events(records, "out")
    order = [r.get("nick") for r in outs]
    places = [r.get("place") for r in outs]
    if places != list(range(1, len(outs) + 1)):
        problems.append(f"the table's out places run {places}, not 1..{len(outs)}")
    if list(over.get("out") or []) != order:
        problems.append(f"the table's final out order {over.get('out')} is not the order {order}")
    loser = over.get("loser")
    if len(order) != len(seats) - 1 or set(order) != set(seats) - {loser}:
        problems.append(f"out {order} is not every player but the loser {loser}")
    if len(set(order)) != len(order):
        problems.append(f"someone went out twice: {order}")

    table_t = {r.get("nick"): r["t"] for r in outs}
    peer_t: dict[str, float] = {}
    for nick, log in records.events.items():
        times = [e["t"] for e in log if e.get("event") == "out"]
        if nick == loser and times:
            problems.append(f"{nick} lost but logged going out")
        elif nick != loser and len(times) != 1:
            problems.append(f"{nick} logged going out {len(times)} times")
        if times:
            peer_t[nick] = times[0]
    # A peer logs ``out`` only once the table has counted it. So if b logged
    # its out before the table even counted a, then a cannot rank before b.
    for i, first in enumerate(order):
        for second in order[i + 1 :]:
            if second in peer_t and first in table_t and peer_t[second] < table_t[first]:
                problems.append(
                    f"{second} logged out at t={peer_t[second]:.6f}, before the table counted "
                    f"{first} at t={table_t[first]:.6f}, yet {first} ranks first"
                )
    for nick, event in peer_events(records, "game_over"):
        if not event.get("aborted") and list(event.get("out") or []) != list(over.get("out") or []):
            problems.append(f"{nick} was told the out order {event.get('out')}")
    return _result(OUT_ORDER, problems, "out: " + ", ".join(str(n) for n in order))


def check_exits(records: GameRecords) -> CheckResult:
    """(c) Every process exited 0, as each peer's own ``exit`` event says too."""
    if not records.exits:
        return CheckResult(EXITS, False, "no process exit codes")
    problems = []
    for name, code in records.exits.items():
        if code is None:
            problems.append(f"{name} did not exit (killed)")
        elif code != 0:
            problems.append(f"{name} exited {code}")
    for nick, event in peer_events(records, "exit"):
        code = records.exits.get(nick)
        if nick in records.exits and code is not None and event.get("code") != code:
            problems.append(f"{nick} logged exit code {event.get('code')} but exited {code}")
    return _result(EXITS, problems, f"all {len(records.exits)} processes exited 0")


def _ordinal(place: int) -> str:
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def check_lines(records: GameRecords) -> CheckResult:
    """The last lines printed by the table and the peers tell the same result as the records."""
    seats = seat_order(records)
    over = over_record(records)
    order = [r.get("nick") for r in table_events(records, "out")]
    loser = over.get("loser") if over else None
    problems = []
    table_lines = records.lines.get("table")
    if table_lines is not None:
        matches = [m for line in table_lines if (m := _TABLE_OVER_LINE.fullmatch(line.strip()))]
        if not matches:
            problems.append(f"the table printed no 'game over' line: {table_lines[-1:]}")
        else:
            said_out = [n.strip() for n in matches[-1]["out"].split(",") if n.strip()]
            if matches[-1]["loser"] != loser or said_out != order:
                problems.append(f"the table printed {matches[-1].group(0)!r}")
    for nick in seats:
        printed = [line.strip() for line in records.lines.get(nick, []) if line.strip()]
        if nick not in records.lines or over is None:
            # Without a game over there is no result to agree on; the other
            # checks already say the game did not end.
            continue
        if nick == loser:
            expected = LOST_LINE
        elif nick in order:
            expected = f"out {_ordinal(order.index(nick) + 1)} of {len(seats)}"
        else:
            problems.append(f"{nick} neither went out nor lost")
            continue
        if printed[-1:] != [expected]:
            problems.append(f"{nick} printed {printed[-1:]}, expected {expected!r}")
        for event in records.events.get(nick, []):
            if event.get("event") == "exit" and printed and event.get("line") != printed[-1]:
                problems.append(
                    f"{nick} logged exit line {event.get('line')!r}, printed {printed[-1]!r}"
                )
    return _result(LINES, problems, f"{len(records.lines)} processes printed the agreed result")


CHECKS: tuple[Callable[[GameRecords], CheckResult], ...] = (
    check_handoffs,
    check_skips,
    check_loser,
    check_pairs,
    check_out_order,
    check_exits,
    check_lines,
)


def verify(records: GameRecords) -> list[CheckResult]:
    """Every check, in a fixed order; a check that trips over a malformed record fails."""
    results = []
    for check, name in zip(CHECKS, CHECK_NAMES, strict=True):
        try:
            results.append(check(records))
        except _MALFORMED as exc:
            results.append(CheckResult(name, False, f"malformed record: {exc!r}"))
    return results
