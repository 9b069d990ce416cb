"""``ring check reversi`` against real programs: our bot, a correct student client, and
one broken client a case, each run as the checker runs any program (its own process)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import trio

from scenarios import processes
from scenarios.check import reversi
from scenarios.check.runner import run_cases
from scenarios.check.verdicts import Verdict
from scenarios.programs import Program

pytestmark = pytest.mark.scenario

BROKEN = Path(__file__).with_name("broken_reversi.py")
MOVE_LIMIT = 1.0  # so that a program that missed a message fails in a second
# Each case, and the bug of broken_reversi.py it is there to catch, with what its
# reason must say.
CAUGHT = {
    "reversi.game.black": ("swap-xy", "an illegal move"),
    "reversi.game.white": ("swap-xy", "an illegal move"),
    "reversi.framing.split": ("one-recv", ""),
    "reversi.framing.together": ("one-recv", "no move within"),
    "reversi.framing.bare": ("needs-newline", "no move within"),
    "reversi.pass": ("no-pass", "no move within"),
    "reversi.board-again": ("repeat", "it repeated"),
    "reversi.end.empty": ("expects-full", "did not close its connection"),
    "reversi.end.draw": ("no-draw", "did not close its connection"),
    "reversi.end.server-closes": ("hang-on-close", "did not exit"),
    "reversi.time": ("slow", "no move within 1 s"),
}


def check(program: Program, tmp_path: Path, case_ids: list[str] | None = None) -> list:
    cases = reversi.cases(MOVE_LIMIT)
    if case_ids is not None:
        cases = [case for case in cases if case.case_id in case_ids]
    return trio.run(lambda: run_cases(cases, program, tmp_path, jobs=4))


def student(bug: str = "") -> Program:
    return Program((sys.executable, str(BROKEN), "{host}", "{port}", "{name}", "--bug", bug))


def test_every_case_is_paired_with_the_bug_it_catches() -> None:
    assert sorted(CAUGHT) == sorted(case.case_id for case in reversi.cases())


def test_our_bot_passes_every_case(tmp_path: Path) -> None:
    bot = Program((*processes.ring_command(), "bot", "reversi", "--server", "{address}",
                   "--name", "{name}", "--level", "greedy"))  # fmt: skip
    results = check(bot, tmp_path)
    assert [
        (r.case_id, r.verdict, r.reason) for r in results if r.verdict is not Verdict.PASS
    ] == []


def test_a_correct_student_client_passes_every_case(tmp_path: Path) -> None:
    results = check(student(), tmp_path)
    assert [
        (r.case_id, r.verdict, r.reason) for r in results if r.verdict is not Verdict.PASS
    ] == []
    game = next(r for r in results if r.case_id == "reversi.game.black")
    assert game.figures["moves"] > 20 and game.figures["slowest_move"] < MOVE_LIMIT


@pytest.mark.parametrize("case_id", sorted(CAUGHT))
def test_each_case_catches_its_broken_client(case_id: str, tmp_path: Path) -> None:
    bug, says = CAUGHT[case_id]
    [result] = check(student(bug), tmp_path, [case_id])
    assert result.verdict is Verdict.FAIL, (bug, result.reason)
    assert says in result.reason, result.reason
    assert result.transcript or result.stdout  # a FAIL shows what happened


def test_the_command_line_writes_every_report_and_fails_on_a_failure(tmp_path: Path) -> None:
    junit, gradescope, report = (
        tmp_path / "junit.xml",
        tmp_path / "results.json",
        tmp_path / "r.json",
    )
    command = [
        *processes.ring_command(), "check", "reversi", "--move-time", "1",
        "--case", "reversi.end", "--junit", str(junit), "--gradescope", str(gradescope),
        "--json", str(report), "--", sys.executable, str(BROKEN), "{host}", "{port}", "{name}",
        "--bug", "no-draw",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("FAIL  reversi.end.draw ") for line in lines), lines
    assert any(line.startswith("PASS  reversi.end.empty ") for line in lines), lines
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("3", "1")
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["reversi.end.draw"]
    graded = json.loads(gradescope.read_text())
    assert graded["score"] == 2.0 and len(graded["tests"]) == 3
    cases = {c["id"]: c for c in json.loads(report.read_text())["cases"]}
    assert cases["reversi.end.draw"]["verdict"] == "FAIL"
    assert cases["reversi.end.draw"]["section"] == "reversi.md 3"


def test_a_missing_program_fails_each_case_in_one_line(tmp_path: Path) -> None:
    command = [*processes.ring_command(), "check", "reversi", "--case", "reversi.game.black",
               "--", "./no-such-client", "{address}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "FAIL  reversi.game.black" in done.stdout
    assert "cannot run './no-such-client': no such program" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
