"""``ring check`` as a command: its reports, its exit status, a program that cannot run."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from scenarios import processes

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
