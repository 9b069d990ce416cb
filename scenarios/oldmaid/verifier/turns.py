"""What the verifier finds of the turn going round: (a) the handoffs, (b) the skips over the out.

Peers are not required to keep a log: an independent (interop) peer writes
none. The chain check tolerates exactly the gaps that two log-less peers in
a row leave.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from scenarios.oldmaid.verifier.finding import HANDOFF, SKIPS, Finding, _result
from scenarios.oldmaid.verifier.handoffs import collect_handoffs
from scenarios.oldmaid.verifier.records import (
    GameRecords,
    Record,
    _out_before,
    last_drawer,
    out_times,
    over_record,
    peer_events,
    seat_order,
    table_events,
)


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


def _when_out(outs: Mapping[str, float], nick: str) -> str:
    return f"out at t={outs[nick]:.6f}" if nick in outs else "never out"


def verify_handoffs(records: GameRecords) -> Finding:
    """(a) The turn travels the ring: holder -> next player in, and the picker holds it next."""
    seats = seat_order(records)
    if not seats:
        return Finding(HANDOFF, False, "no seat order: no 'started' record, no 'start' event")
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


def verify_skips(records: GameRecords) -> Finding:
    """(b) Each ``skip`` passes over a player who is out, and dialling moves one seat at a time.

    Once the table has recorded the game over, out players may stop
    answering, so a dial round may stop short: the last holder, out, passing
    to the loser, or the loser's own final round. Such rounds are accepted if
    they stopped after the game was over; their skips are still checked.
    """
    seats = seat_order(records)
    if not seats:
        return Finding(SKIPS, False, "no seat order")
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
