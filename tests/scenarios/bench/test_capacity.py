"""The capacity bench's machinery, small: a real ``ring serve`` and real load processes.

The figures themselves are the bench's (``make bench-capacity``); here each
load plays a couple of games through one server, with the hostile clients
beside them, and every game must end and every load must have timed replies.
"""

from __future__ import annotations

import ipaddress
import time
from pathlib import Path

import pytest
import trio

from scenarios.bench import capacity
from scenarios.bench.hostile_load import CROWD, HOLD, crowd_address
from scenarios.bench.load_figures import LoadFigures, Recorder, Relay, probe_lag


def test_every_load_ends_its_games_and_times_the_servers_replies(tmp_path: Path) -> None:
    server, addresses = capacity.start_server(tmp_path, seed=7)
    try:
        plan = capacity.Plan(
            "small", {"fishnet": 2, "reversi": 2, "notipping": 2, "oldmaid": 1}, hostile=True
        )
        phase = capacity.run_phase(plan, addresses, server, tmp_path, duration=0.2, seed=7)
        # One hostile kind alone: the floods only, one a service that answers garbage.
        floods = capacity.Plan("floods", {"oldmaid": 1}, hostile=True, kinds=("flood",))
        flooded = capacity.run_phase(floods, addresses, server, tmp_path, duration=0.2, seed=7)
        # The crowd: HOLD addresses, one connection each a service, so no per-address cap
        # closes any of them (held from one address, all but 16 a service would be).
        crowd = capacity.Plan("crowd", {"oldmaid": 1}, hostile=True, kinds=(CROWD,))
        crowded = capacity.run_phase(crowd, addresses, server, tmp_path, duration=0.2, seed=7)
    finally:
        server.kill()
    assert [f.games for f in flooded.figures if f.load == "hostile"] == [3]
    assert [(f.games, f.failed) for f in crowded.figures if f.load == "hostile"] == [(4 * HOLD, 0)]
    by_load = {f.load: f for f in phase.figures}
    assert set(by_load) == {"fishnet", "reversi", "notipping", "oldmaid", "hostile"}
    hostile = by_load.pop("hostile")
    # Every service held HOLD connections; three of them were flooded and dribbled into.
    assert hostile.games == 4 * HOLD + 3 + 3
    for figures in by_load.values():
        assert figures.failed == 0, figures.failures
        assert figures.games >= figures.slots
        assert figures.samples > 0
        assert 0 < figures.p50 <= figures.p99 <= figures.maximum
        assert figures.cpu > 0  # the load's own CPU, printed beside the server's
        assert 0 <= figures.lag_p50 <= figures.lag_p99
    assert phase.machine_busy is not None and 0 < phase.machine_busy <= 1
    assert not any("Traceback" in line for line in server.stderr)
    lines = capacity.format_phase(phase, rtt=1e-4)
    assert lines[0].startswith("small (") and len(lines) == 1 + 5
    assert "server CPU" in lines[0] and "loads' CPU" in lines[0] and "busy of" in lines[0]


def test_the_cpu_words_say_when_the_machine_was_saturated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity.os, "cpu_count", lambda: 2)
    loads = [LoadFigures("fishnet", 10, 1.0, cpu=3.0), LoadFigures("reversi", 10, 1.0, cpu=1.0)]

    def words(busy: float | None) -> str:
        return capacity.cpu_words(capacity.Phase("p", loads, 5.0, 10.0, busy))

    assert words(0.89) == "server CPU 50%, loads' CPU 40%, machine 89% busy of 2 cores"
    assert words(0.9) == "server CPU 50%, loads' CPU 40%, machine 90% busy of 2 cores: saturated"
    assert words(None) == "server CPU 50%, loads' CPU 40%"


@pytest.mark.trio
async def test_a_board_two_games_reach_at_once_is_not_timed() -> None:
    recorder = Recorder()
    relay = Relay(recorder)
    relay.sent("opening")
    relay.sent("opening")  # another game, the same position
    relay.sent("middle")
    relay.arrived("opening")
    relay.arrived("opening")  # its send time went with the first: nothing to match
    relay.arrived("middle")
    relay.arrived("start")  # a first board: no move made it
    assert len(recorder.samples) == 1
    assert recorder.ambiguous == 2


def test_the_crowds_addresses_are_loopback_and_all_different() -> None:
    addresses = [crowd_address(number) for number in range(HOLD)]
    assert len(set(addresses)) == HOLD
    assert addresses[0] == "127.0.2.1" and crowd_address(250) == "127.0.3.1"
    assert all(ipaddress.ip_address(a).is_loopback for a in addresses)
    assert "127.0.0.1" not in addresses and "127.0.0.2" not in addresses


@pytest.mark.trio
async def test_the_lag_probe_sees_a_loop_that_was_busy() -> None:
    recorder = Recorder()

    async def busy_step() -> None:
        await trio.sleep(0.02)
        time.sleep(0.05)  # one step that holds the loop, as a busy load's do

    with trio.move_on_after(0.2):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(probe_lag, recorder)
            nursery.start_soon(busy_step)
    assert recorder.lags and min(recorder.lags) >= 0
    assert max(recorder.lags) >= 0.03  # the probe woke at least that late once
    assert recorder.figures("x", 1, 1.0).lag_p99 <= max(recorder.lags)
