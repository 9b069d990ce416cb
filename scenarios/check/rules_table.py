"""The obligations table of docs/check.md: each rule of a game → the cases that test it →
FAIL or WARN, and what no case tests, with why.

``ring check GAME --rules`` prints it; ``tests/scenarios/check/test_obligations.py``
checks that docs/check.md holds it as printed, so the doc cannot drift from the cases.
"""

from __future__ import annotations

from collections.abc import Sequence

from scenarios.check import obligations
from scenarios.check.context import Case
from scenarios.check.obligations import Level, Rule

# What a handout or a protocol doc asks of a client that no case tests, and why not.
UNTESTED: dict[str, list[tuple[str, str]]] = {
    "reversi": [],
    "notipping": [],
    "fishnet": [
        (
            "the later handout's `youmake <r>` (fishnet.md, Messages)",
            "sent only by a server started with `--youmake`; a client written from the "
            "first handout never heard of it, so it could be a WARN at most",
        ),
    ],
    "oldmaid": [
        (
            "`give_up` and `accuse` (oldmaid.md 5.8, 5.9)",
            "requests a peer may send, never must",
        ),
    ],
}


# Rules of every program that a game's cases leave to another of its rules, and why.
LEFT_TO: dict[str, dict[Rule, str]] = {
    "oldmaid": {
        obligations.READ_TO_END: "a peer that leaves before the table's game_over is named "
        "by the table (`oldmaid.to-end`: left; `oldmaid.table-rules`: false_out, ...) or "
        "found holding the turn (`oldmaid.turn`: left_with_turn, stalled)",
    },
}


def verdict_of(rule: Rule) -> str:
    return "FAIL" if rule.level is Level.MUST else "WARN"


def table(game: str, cases: Sequence[Case]) -> list[str]:
    """The markdown rows of ``game``'s obligations table (program rules first)."""
    lines = [
        "| rule | says | cases that test it | verdict |",
        "|---|---|---|---|",
    ]
    for rule in (*obligations.PROGRAM_RULES, *obligations.BY_GAME[game]):
        ids = [case.case_id for case in cases if rule in case.tests]
        tested = ", ".join(f"`{case_id}`" for case_id in ids) or "none"
        if rule in LEFT_TO.get(game, {}):
            tested = f"no case: {LEFT_TO[game][rule]}"
        lines.append(
            f"| `{rule.key}` ({rule.doc} {rule.section}) | {rule.text} | {tested} "
            f"| {verdict_of(rule)} |"
        )
    for what, why in UNTESTED[game]:
        lines.append(f"| {what} | — | no case: {why} | — |")
    return lines
