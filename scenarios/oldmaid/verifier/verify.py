"""The verifier of one Old Maid game: the table transcript and the peers' event logs.

``verify`` makes every finding in a fixed order. The verifier is pure functions
over parsed records, in the modules beside this one; scenarios and tests
import them from here:

- ``scenarios.oldmaid.verifier.records``: the records (``load_records`` is the one
  loader; the formats are those of ``docs/logs.md``) and the facts derived
  from them;
- ``scenarios.oldmaid.verifier.handoffs``: the handoffs pieced together, and ``summarise``;
- ``scenarios.oldmaid.verifier.turns``, ``scenarios.oldmaid.verifier.outcome``,
  ``scenarios.oldmaid.verifier.claims``: the checks;
- ``scenarios.oldmaid.verifier.finding``: what a check returns.

Each check returns a ``Finding`` with a name, a verdict and a detail that
says what was seen, so a failing scenario explains itself without opening
the logs.

Peers are not required to keep a log: an independent (interop) peer writes
none. Checks that need a peer's own log are made for the peers that have one;
the table transcript covers everyone. A handoff between two peers is visible
when at least one of them logs; handoffs between two log-less peers are
invisible, and the chain check tolerates exactly those gaps.

Times: every record's ``t`` is ``time.monotonic()``, one clock for all
processes on the machine, so records of different processes can be compared.
"""

from __future__ import annotations

from collections.abc import Callable

from scenarios.oldmaid.verifier.claims import verify_claims
from scenarios.oldmaid.verifier.finding import (
    CLAIMS,
    EXITS,
    FINDING_NAMES,
    HANDOFF,
    LINES,
    LOSER,
    OUT_ORDER,
    PAIRS,
    SKIPS,
    Finding,
)
from scenarios.oldmaid.verifier.handoffs import GameSummary, summarise
from scenarios.oldmaid.verifier.outcome import (
    LOST_LINE,
    verify_exits,
    verify_lines,
    verify_loser,
    verify_out_order,
    verify_pairs,
)
from scenarios.oldmaid.verifier.records import (
    _MALFORMED,
    GameRecords,
    Record,
    last_drawer,
    load_records,
    out_times,
    over_record,
    seat_order,
    table_events,
)
from scenarios.oldmaid.verifier.turns import verify_handoffs, verify_skips

# Imported from here by the scenarios and the tests.
__all__ = [
    "CLAIMS",
    "EXITS",
    "FINDING_NAMES",
    "HANDOFF",
    "LINES",
    "LOSER",
    "LOST_LINE",
    "OUT_ORDER",
    "PAIRS",
    "SKIPS",
    "Finding",
    "GameRecords",
    "GameSummary",
    "Record",
    "last_drawer",
    "load_records",
    "out_times",
    "over_record",
    "seat_order",
    "summarise",
    "table_events",
    "verify",
]


FINDERS: tuple[Callable[[GameRecords], Finding], ...] = (
    verify_handoffs,
    verify_skips,
    verify_loser,
    verify_pairs,
    verify_out_order,
    verify_exits,
    verify_lines,
    verify_claims,
)


def verify(records: GameRecords) -> list[Finding]:
    """Every check, in a fixed order; a check that trips over a malformed record fails."""
    results = []
    for check, name in zip(FINDERS, FINDING_NAMES, strict=True):
        try:
            results.append(check(records))
        except _MALFORMED as exc:
            results.append(Finding(name, False, f"malformed record: {exc!r}"))
    return results
