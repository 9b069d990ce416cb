"""What the verifier finds of a game's end: one loser, the pairs, the out order, exits, lines."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ring.oldmaid.cards import JOKER, Card, full_deck, is_pair, pair_key
from scenarios.oldmaid.verifier.finding import (
    EXITS,
    LINES,
    LOSER,
    OUT_ORDER,
    PAIRS,
    Finding,
    _result,
)
from scenarios.oldmaid.verifier.records import (
    GameRecords,
    _card,
    _out_before,
    out_times,
    over_record,
    peer_events,
    seat_order,
    table_events,
)

_TABLE_OVER_LINE = re.compile(
    r"game over: loser (?P<loser>\S+); out: (?P<out>[^;[]*?)"
    r"(?:; \d+ pairs? never discarded)?(?: \[[^\]]*\])?"
)
LOST_LINE = "lost: holds the Old Maid"


def verify_loser(records: GameRecords) -> Finding:
    """(c) Exactly one loser, holding only the joker, and everyone agrees who it is."""
    over = over_record(records)
    if over is None:
        aborted = table_events(records, "aborted")
        reason = f" (aborted: {aborted[-1].get('reason')})" if aborted else ""
        return Finding(LOSER, False, "the table recorded no game over" + reason)
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


def verify_pairs(records: GameRecords) -> Finding:
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


def verify_out_order(records: GameRecords) -> Finding:
    """(c) The table's out order: N-1 players, as counted, and consistent with the peers' logs."""
    seats = seat_order(records)
    over = over_record(records)
    if over is None:
        return Finding(OUT_ORDER, False, "the table recorded no game over")
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


def verify_exits(records: GameRecords) -> Finding:
    """(c) Every process exited 0, as each peer's own ``exit`` event says too."""
    if not records.exits:
        return Finding(EXITS, False, "no process exit codes")
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


def verify_lines(records: GameRecords) -> Finding:
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
