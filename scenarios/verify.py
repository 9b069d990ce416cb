"""Checks over one Old Maid game: the table transcript and the peers' event logs.

``verify`` runs every check in a fixed order. The verifier is pure functions
over parsed records, in the modules beside this one; scenarios and tests
import them from here:

- ``scenarios.game_records``: the records (``load_records`` is the one
  loader; the formats are those of ``docs/logs.md``) and the facts derived
  from them;
- ``scenarios.handoffs``: the handoffs pieced together, and ``summarise``;
- ``scenarios.turn_checks``, ``scenarios.outcome_checks``,
  ``scenarios.claim_checks``: the checks;
- ``scenarios.check_result``: what a check returns.

Each check returns a ``CheckResult`` with a name, a verdict and a detail that
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

from scenarios.check_result import (
    CHECK_NAMES,
    CLAIMS,
    EXITS,
    HANDOFF,
    LINES,
    LOSER,
    OUT_ORDER,
    PAIRS,
    SKIPS,
    CheckResult,
)
from scenarios.claim_checks import check_claims
from scenarios.game_records import (
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
from scenarios.handoffs import GameSummary, summarise
from scenarios.outcome_checks import (
    LOST_LINE,
    check_exits,
    check_lines,
    check_loser,
    check_out_order,
    check_pairs,
)
from scenarios.turn_checks import check_handoffs, check_skips

# Imported from here by the scenarios and the tests.
__all__ = [
    "CHECK_NAMES",
    "CLAIMS",
    "EXITS",
    "HANDOFF",
    "LINES",
    "LOSER",
    "LOST_LINE",
    "OUT_ORDER",
    "PAIRS",
    "SKIPS",
    "CheckResult",
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


CHECKS: tuple[Callable[[GameRecords], CheckResult], ...] = (
    check_handoffs,
    check_skips,
    check_loser,
    check_pairs,
    check_out_order,
    check_exits,
    check_lines,
    check_claims,
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
