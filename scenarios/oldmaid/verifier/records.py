"""What one Old Maid game left behind, read back: the records, and the facts the findings derive.

``load_records`` is the one loader; the formats are those of ``docs/logs.md``.
Every record's ``t`` is ``time.monotonic()``, one clock for all processes on
the machine, so records of different processes can be compared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ring.games.events import read_events
from ring.oldmaid.cards import Card, parse_card

Record = dict[str, Any]

# What a record with a missing or mistyped field raises somewhere in a check.
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)


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
    a peer answers ``out`` only after that acknowledgement (oldmaid.md 7.8), so
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


def _card(value: Any) -> Card | None:
    try:
        return parse_card(*value)
    except (TypeError, ValueError):
        return None


def _out_before(outs: Mapping[str, float], nick: str, t: float) -> bool:
    return outs.get(nick, math.inf) < t
