"""What a check of the verifier returns: a ``CheckResult`` under one of the check names.

A failing check's detail lists at most ``MAX_PROBLEMS`` problems and counts
the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

HANDOFF = "ring handoff"
SKIPS = "out skipping"
LOSER = "one loser"
PAIRS = "pairs discarded"
OUT_ORDER = "out order"
EXITS = "exit codes"
LINES = "final lines"
CLAIMS = "honest claims"
CHECK_NAMES = (HANDOFF, SKIPS, LOSER, PAIRS, OUT_ORDER, EXITS, LINES, CLAIMS)

# A failing check lists this many problems and counts the rest, so one
# systematic bug does not bury the summary under a hundred lines.
MAX_PROBLEMS = 5


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str


def _result(name: str, problems: list[str], good: str) -> CheckResult:
    if not problems:
        return CheckResult(name, True, good)
    shown = "; ".join(problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    return CheckResult(name, False, shown + (f"; and {more} more" if more > 0 else ""))
