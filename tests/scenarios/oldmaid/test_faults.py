"""Faults as OS processes: kill -9 a peer or the table, SIGSTOP a peer; every end is clean.

Each test plays a real game (``scenarios.oldmaid.faults``), inflicts the fault at a
moment read from the logs, and checks that everyone still running exits
non-zero within 5 s with one line on stderr and no traceback. The scenario
reaps every process it started, whatever happens.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scenarios import processes
from scenarios.oldmaid import faults
from scenarios.oldmaid.fault_findings import VERIFIED_GAME, FaultResult
from scenarios.oldmaid.game import TABLE

pytestmark = pytest.mark.scenario

TIMEOUT = 60.0


def _run(name: str, tmp_path: Path) -> FaultResult:
    result = faults.run_fault(name, workdir=tmp_path, timeout=TIMEOUT)
    assert result.ok, faults.format_result(result)
    assert all(p.returncode is not None for p in result.processes.values())
    return result


def _assert_one_line_each(result: FaultResult, names: list[str]) -> None:
    for name in names:
        process = result.processes[name]
        assert process.returncode not in (0, None), (name, process)
        assert len(process.stderr) == 1, (name, process.stderr)
        assert process.stderr[0].startswith(f"{name}: "), process.stderr
        assert process.stdout == []


def test_kill_a_peer_in_the_offer_phase(tmp_path: Path) -> None:
    result = _run("fault-kill-peer", tmp_path)
    victim = result.victim
    assert victim is not None
    survivors = [f"p{i}" for i in range(1, faults.PLAYERS + 1) if f"p{i}" != victim]
    _assert_one_line_each(result, survivors)
    for name in survivors:
        after = result.after_fault(name)
        assert after is not None and after < faults.EXIT_BOUND, (name, after)
        assert victim in result.processes[name].stderr[0]
    table = result.processes[TABLE]
    assert table.returncode == 1
    # Our peers verify (protocol 14.6), and the end line says so.
    assert table.stdout[-1] == f"game aborted: {victim} left the table{VERIFIED_GAME}"
    assert result.status is not None and result.status["state"] == "aborted"
    assert result.status["reason"] == f"{victim} left the table"


def test_kill_the_table_mid_game(tmp_path: Path) -> None:
    result = _run("fault-kill-table", tmp_path)
    peers = [f"p{i}" for i in range(1, faults.PLAYERS + 1)]
    _assert_one_line_each(result, peers)
    for name in peers:
        after = result.after_fault(name)
        assert after is not None and after < faults.EXIT_BOUND, (name, after)
        assert "table" in result.processes[name].stderr[0]


def test_a_stopped_peer_is_handed_the_draw_turn_and_named(tmp_path: Path) -> None:
    """A witnessed game (protocol 14.6, "The draw turn"): the one that waited on the
    stopped player does not give up; the table hands the stopped player the turn, names
    it, and everyone else ends with the table's words."""
    result = _run("fault-stop-peer", tmp_path)
    victim = result.victim
    assert victim is not None
    survivors = [f"p{i}" for i in range(1, faults.PLAYERS + 1) if f"p{i}" != victim]
    _assert_one_line_each(result, survivors)
    reason = f"{victim} did not draw (card 2) within 2 s of the table's notice handing it"
    for name in survivors:
        after = result.after_fault(name)
        assert after is not None and after < faults.NAMED_WITHIN + faults.EXIT_BOUND
        assert result.processes[name].stderr[0].startswith(f"{name}: game aborted: {reason}")
    assert result.processes[TABLE].stdout[-1].startswith(f"game aborted: {reason}")
    assert result.processes[TABLE].stdout[-1].endswith(VERIFIED_GAME)


def test_cli_runs_a_fault_scenario(tmp_path: Path) -> None:
    keep = tmp_path / "logs"
    completed = subprocess.run(
        [*processes.ring_command(), "scenario", "fault-kill-table", "--keep", str(keep)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT + 30,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "scenario fault-kill-table" in completed.stdout
    assert "FAIL" not in completed.stdout and "PASS  exit within 5 s" in completed.stdout
    assert (keep / "table.jsonl").exists()
