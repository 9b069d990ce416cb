"""The stall bench's machinery, small: a real ``ring serve``, a status poller, passers.

The figures are the bench's (``make bench-stall``); here each phase lasts a
fraction of a second, and what is checked is that both phases were timed,
that the passers' games against smarx ended, and that the report names both.
"""

from __future__ import annotations

from pathlib import Path

import trio

from scenarios import stall_bench


def test_both_phases_are_timed_and_the_passers_games_end(tmp_path: Path) -> None:
    server, addresses = stall_bench.start_server(tmp_path, seed=28)
    try:
        alone, searching, seen = trio.run(stall_bench.measure, addresses, 0.3, 2)
    finally:
        server.kill()
    assert len(alone.samples) > 1 and len(searching.samples) > 1
    assert seen.games >= 2 and not seen.failures
    assert seen.longest_turn > 0
    lines = stall_bench.report(alone, searching, seen)
    assert "alone" in lines[1] and "while smarx searches" in lines[2]
    assert not any("Traceback" in line for line in server.stderr)
