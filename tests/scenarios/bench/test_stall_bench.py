"""The stall bench's machinery, small: a real ``ring serve``, a status poller, passers.

The figures are the bench's (``make bench-stall``); here each phase lasts a
fraction of a second, and what is checked is that every phase was timed,
that the passers' games against spot and smarx ended, and that the report
names them all.
"""

from __future__ import annotations

from pathlib import Path

import trio

from scenarios.bench import stall_bench


def test_every_phase_is_timed_and_the_passers_games_end(tmp_path: Path) -> None:
    server, addresses = stall_bench.start_server(tmp_path, seed=28)
    try:
        alone, phases = trio.run(stall_bench.measure, addresses, 0.3, 2)
    finally:
        server.kill()
    assert len(alone.samples) > 1
    assert [seen.opponent for _, seen in phases] == ["spot", "smarx"]
    for phase, seen in phases:
        assert len(phase.samples) > 1
        assert seen.games >= 2 and not seen.failures and seen.longest_turn > 0
    lines = stall_bench.report(alone, phases)
    assert "alone" in lines[1] and "spot" in lines[2] and "smarx" in lines[3]
    assert not any("Traceback" in line for line in server.stderr)
