"""What the verifier finds of one thing a correct game shows: a ``Finding`` under one of
``FINDING_NAMES``.

A failing finding's detail lists at most ``MAX_PROBLEMS`` problems and counts
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
FINDING_NAMES = (HANDOFF, SKIPS, LOSER, PAIRS, OUT_ORDER, EXITS, LINES, CLAIMS)

# A failing finding lists this many problems and counts the rest, so one
# systematic bug does not bury the summary under a hundred lines.
MAX_PROBLEMS = 5


@dataclass(frozen=True)
class Finding:
    name: str
    ok: bool
    detail: str


def _result(name: str, problems: list[str], good: str) -> Finding:
    if not problems:
        return Finding(name, True, good)
    shown = "; ".join(problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    return Finding(name, False, shown + (f"; and {more} more" if more > 0 else ""))
