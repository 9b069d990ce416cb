"""A check's results, written for a person, for CI (JUnit XML), for Gradescope, and as JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from scenarios.check.verdicts import CaseResult, CaseVerdict

# A FAIL quotes this much of the program's output.
OUTPUT_LINES = 8
ID_WIDTH = 30  # the longest case id: oldmaid.connect.late-neighbour


def case_line(result: CaseResult) -> str:
    """The line printed as a case ends: verdict, id, time, and why (unless it passed)."""
    line = f"{result.verdict.value:<5} {result.case_id:<{ID_WIDTH}} {result.seconds:6.2f} s"
    if result.verdict is not CaseVerdict.PASS:
        line += f"  {result.reason}"
    return line


def details(result: CaseResult) -> list[str]:
    """What a FAIL or a WARN shows under its line: the rule it breaks (or the advice it
    does not follow), quoted from the docs; the case's section; and for a FAIL the
    transcript and the output."""
    if result.verdict is CaseVerdict.PASS:
        return []
    said = "breaks" if result.verdict is CaseVerdict.FAIL else "advice"
    lines = [f"      {said} {rule.quoted}" for rule in result.rules]
    lines.append(f"      case: {result.section}: {result.title}")
    if result.verdict is CaseVerdict.FAIL:
        if result.transcript:
            lines.append("      the last of the conversation (-> ours, <- the program's):")
            lines += [f"        {line}" for line in result.transcript]
        for name, output in (("stdout", result.stdout), ("stderr", result.stderr)):
            if output:
                lines.append(f"      the program's {name} (last lines):")
                lines += [f"        {line}" for line in output[-OUTPUT_LINES:]]
    return lines


def summary(game: str, results: Sequence[CaseResult], command: str) -> list[str]:
    counts = Counter(result.verdict for result in results)
    shown = (CaseVerdict.PASS, CaseVerdict.WARN, CaseVerdict.FAIL)
    line = "  " + ", ".join(f"{counts[verdict]} {verdict.value}" for verdict in shown)
    if counts[CaseVerdict.ERROR]:
        line += f", {counts[CaseVerdict.ERROR]} ERROR (the checker's own failures)"
    lines = ["", f"{game}: {len(results)} cases against {command}", line]
    for result in results:
        if result.notes:
            lines.append(f"  {result.case_id}: {'; '.join(result.notes)}")
    return lines


def exit_status(results: Sequence[CaseResult]) -> int:
    """0 only when no case FAILed (WARN passes, as h2spec's and Autobahn's "non-strict");
    3 when the checker itself failed (ERROR) and nothing FAILed."""
    if any(result.verdict is CaseVerdict.FAIL for result in results):
        return 1
    return 3 if any(result.verdict is CaseVerdict.ERROR for result in results) else 0


def write_json(path: Path, game: str, command: str, results: Sequence[CaseResult]) -> None:
    document = {
        "game": game,
        "command": command,
        "cases": [result.as_dict() for result in results],
        "failed": sum(result.verdict is CaseVerdict.FAIL for result in results),
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def write_junit(path: Path, game: str, results: Sequence[CaseResult]) -> None:
    """JUnit XML, one testcase a case, as CI systems read it; a WARN passes with its reason."""
    failures = sum(result.verdict is CaseVerdict.FAIL for result in results)
    errors = sum(result.verdict is CaseVerdict.ERROR for result in results)
    suite = ET.Element(
        "testsuite",
        name=f"ring check {game}",
        tests=str(len(results)),
        failures=str(failures),
        errors=str(errors),
        time=f"{sum(result.seconds for result in results):.3f}",
    )
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"ring.check.{game}",
            name=result.case_id,
            time=f"{result.seconds:.3f}",
        )
        if result.verdict is CaseVerdict.FAIL:
            failure = ET.SubElement(case, "failure", message=result.reason, type="FAIL")
            failure.text = "\n".join(details(result))
        elif result.verdict is CaseVerdict.ERROR:
            ET.SubElement(case, "error", message=result.reason, type="ERROR")
        output = [f"{result.verdict.value}: {result.reason}", *result.notes]
        ET.SubElement(case, "system-out").text = "\n".join(output)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def write_gradescope(path: Path, results: Sequence[CaseResult]) -> None:
    """Gradescope's results.json: a test a case, full marks unless it FAILed (an ERROR is
    the checker's failure, never taken out of a student's score)."""
    tests = []
    for result in results:
        score = 0.0 if result.verdict is CaseVerdict.FAIL else 1.0
        output = [f"{result.verdict.value}: {result.reason}", *result.notes, *details(result)]
        tests.append(
            {
                "name": f"{result.case_id}: {result.title} ({result.section})",
                "score": score,
                "max_score": 1.0,
                "status": "failed" if result.verdict is CaseVerdict.FAIL else "passed",
                "output": "\n".join(output),
            }
        )
    document = {
        "score": sum(test["score"] for test in tests),  # type: ignore[misc]
        "tests": tests,
    }
    path.write_text(json.dumps(document, indent=2) + "\n")
