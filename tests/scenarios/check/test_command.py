"""``ring check`` as a command: its reports, its exit status, a program that cannot run."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from scenarios import processes
from tests.helpers.connections import fixed_port

pytestmark = pytest.mark.scenario

BROKEN = Path(__file__).with_name("broken_reversi.py")


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
    assert (suite.get("tests"), suite.get("failures")) == ("4", "1")
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["reversi.end.draw"]
    graded = json.loads(gradescope.read_text())
    assert graded["score"] == 3.0 and len(graded["tests"]) == 4
    cases = {c["id"]: c for c in json.loads(report.read_text())["cases"]}
    assert cases["reversi.end.draw"]["verdict"] == "FAIL"
    assert cases["reversi.end.draw"]["section"] == "reversi.md 3"
    [rule] = cases["reversi.end.draw"]["rules"]  # the must it breaks, quoted from the doc
    assert rule["level"] == "must" and rule["text"].startswith("A program must")
    assert "breaks programs.md 3 (program.exit): \u201cA program must exit" in done.stdout


def test_a_missing_program_fails_each_case_in_one_line(tmp_path: Path) -> None:
    command = [*processes.ring_command(), "check", "reversi", "--case", "reversi.game.black",
               "--", "./no-such-client", "{address}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "FAIL  reversi.game.black" in done.stdout
    assert "cannot run './no-such-client': no such program" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


STUDENT_PEER = Path(__file__).parent.parent.parent / "interop" / "student_peer.py"


@pytest.mark.parametrize(
    ("game", "wanted", "command"),
    [
        # The Reversi server's side listens on the fixed port itself.
        ("reversi", ("reversi.game.black", "reversi.end.draw"),
         lambda port: [sys.executable, str(BROKEN), "127.0.0.1", str(port), "checker"]),
        # Old Maid: the table takes it, or the relay where a case relays the program's
        # table connection (end.table-dies).
        ("oldmaid", ("oldmaid.game.2", "oldmaid.end.table-dies"),
         lambda port: [sys.executable, str(STUDENT_PEER), "--nick", "checker", "--table",
                       f"127.0.0.1:{port}"]),
    ],
)  # fmt: skip
def test_manual_mode_tells_when_to_start_and_checks_the_wire(
    game: str, wanted: tuple[str, ...], command: Callable[[int], list[str]], tmp_path: Path
) -> None:
    """--manual: one fixed port, cases one by one, each announced; the student starts its
    program (here: the announcement starts it, as a student at the keyboard would)."""
    import importlib

    import trio

    from scenarios.check.manual import ManualProgram
    from scenarios.check.runner import run_cases
    from scenarios.check.verdicts import CaseVerdict

    port = fixed_port()  # as a student would pick one; the check binds it case by case
    told: list[str] = []
    started: list[subprocess.Popen[bytes]] = []

    def start_it(text: str) -> None:
        told.append(text)
        started.append(subprocess.Popen(command(port), stdout=subprocess.DEVNULL))

    module = importlib.import_module(f"scenarios.check.{game}")
    cases = [case for case in module.cases(1.0) if case.case_id in wanted]
    try:
        results = trio.run(lambda: run_cases(cases, ManualProgram(port, start_it), tmp_path))
    finally:
        for process in started:
            process.kill()
            process.wait()
    assert [(r.case_id, r.verdict) for r in results] == [(c, CaseVerdict.PASS) for c in wanted]
    assert told == [
        f"{case}: start your program now: it connects to 127.0.0.1:{port} (name checker)"
        for case in wanted
    ]
