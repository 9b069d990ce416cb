"""What a case decides: a verdict, one line that says why, the rule, and the evidence.

A FAIL carries the rule it enforces (``scenarios.check.obligations``: a
sentence of the protocol docs that says *must*); a WARN the rules, if any,
that say *should*.
"""

from __future__ import annotations

import enum
import statistics
from dataclasses import dataclass, field
from typing import Any

from scenarios.check.obligations import Level, Rule


class CaseVerdict(enum.Enum):
    PASS = "PASS"
    WARN = "WARN"  # legal, but fragile: our servers put up with it, others may not
    FAIL = "FAIL"  # a "must" of the protocol docs broken (scenarios.check.obligations)
    ERROR = "ERROR"  # the checker itself failed: not the program's fault

    @property
    def rank(self) -> int:
        order = (CaseVerdict.PASS, CaseVerdict.WARN, CaseVerdict.FAIL, CaseVerdict.ERROR)
        return order.index(self)


class CaseFailed(Exception):
    """Raised by a case (``Judge.fail``) to end it with FAIL; the message is the line, and
    ``rule`` the "must" it breaks."""

    def __init__(self, rule: Rule, message: str) -> None:
        super().__init__(message)
        self.rule = rule


@dataclass
class Judge:
    """What one case found so far: warnings go on, a failure ends the case."""

    warnings: list[str] = field(default_factory=list)
    warned: list[Rule] = field(default_factory=list)  # the "should"s behind the warnings
    notes: list[str] = field(default_factory=list)  # facts for the report (timings, counts)
    figures: dict[str, Any] = field(default_factory=dict)  # the same, for --json

    def fail(self, rule: Rule, message: str) -> CaseFailed:
        """The exception to raise: ``raise judge.fail(RULE, "...")``; only a "must" fails."""
        if rule.level is not Level.MUST:
            raise ValueError(f"{rule.key} says should: a WARN, never a FAIL")
        return CaseFailed(rule, message)

    def warn(self, message: str, rule: Rule | None = None) -> None:
        """A WARN: legal, but fragile; ``rule`` the "should" it does not follow, if any."""
        if message not in self.warnings:
            self.warnings.append(message)
        if rule is not None and rule not in self.warned:
            self.warned.append(rule)

    def note(self, message: str) -> None:
        self.notes.append(message)

    def move_times(self, times: list[float]) -> None:
        """The program's thinking times, in the notes and the figures."""
        if not times:
            return
        slowest, median = max(times), statistics.median(times)
        self.figures.update(
            moves=len(times), slowest_move=round(slowest, 4), median_move=round(median, 4)
        )
        self.note(
            f"{len(times)} moves: median {median * 1000:.1f} ms, slowest {slowest * 1000:.1f} ms"
        )


@dataclass
class CaseResult:
    """One case's verdict, as every report shows it."""

    case_id: str
    title: str
    section: str
    verdict: CaseVerdict
    reason: str  # one line: why this verdict
    seconds: float
    transcript: list[str] = field(default_factory=list)  # the lines around the verdict
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)  # a FAIL's one "must", a WARN's "should"s

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.case_id,
            "title": self.title,
            "section": self.section,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "rules": [
                {"key": r.key, "doc": r.doc, "section": r.section, "level": r.level.value,
                 "text": r.text}
                for r in self.rules
            ],
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
            "figures": self.figures,
            "transcript": self.transcript,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }
