"""The LAN scenario and its namespace harness: a game over a bridge, found by mDNS, and cleanup.

Everything here needs to create network namespaces (root and iproute2). That
is found out by making and deleting a throwaway namespace; if it cannot be
done the tests are skipped with the reason, which ``-ra`` prints.

Network rule: nothing here sends a packet outside the namespaces it makes;
zeroconf runs only inside them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scenarios import processes
from scenarios.oldmaid import game as oldmaid_game
from scenarios.oldmaid import lan, netns
from scenarios.oldmaid.verifier import verify

pytestmark = pytest.mark.scenario

REPO = Path(__file__).resolve().parents[3]
# Bounds every wait below; a run that hangs fails instead of hanging the suite.
WAIT = 15.0


@pytest.fixture(scope="module", autouse=True)
def namespaces() -> None:
    reason = netns.namespaces_unavailable()
    if reason is not None:
        pytest.skip(f"LAN scenario skipped: {reason} (needs root and iproute2)")


def _run_in(host: netns.Host, code: str, timeout: float = WAIT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*host.exec_prefix(), sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def _root_links() -> list[str]:
    return sorted(line.split(":")[1].strip() for line in netns.ip("-o", "link").splitlines())


def _alive(pid: int, start: int | None = None) -> bool:
    """Running, that is: neither gone nor a zombie waiting for a parent to reap it.

    With ``start`` (its start time), only that process: not a later one with its pid.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rpartition(")")[2].split()
    return fields[0] != "Z" and (start is None or int(fields[19]) == start)


def _wait_for(condition, what: str, timeout: float = WAIT) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def _owned_by(pid: int) -> list[str]:
    return [name for name in netns.our_namespaces() if name.startswith(f"{netns.PREFIX}{pid}-")]


@pytest.fixture
def fresh() -> Iterator[None]:
    """Each test starts and ends with none of this process's namespaces around."""
    assert _owned_by(os.getpid()) == []
    yield
    assert _owned_by(os.getpid()) == []


# --- the harness -------------------------------------------------------------


@pytest.mark.usefixtures("fresh")
def test_lan_hosts_reach_each_other_and_leave_the_root_namespace_alone() -> None:
    before = _root_links()
    with netns.Lan(["a", "b", "c"]) as net:
        assert _root_links() == before  # not even a veth end in the root namespace
        assert set(net.namespaces) <= set(netns.list_namespaces())
        assert len({h.address for h in net.hosts.values()}) == 3
        a, b = net.hosts["a"], net.hosts["b"]
        listing = _run_in(a, "import subprocess; subprocess.run(['ip', '-o', 'addr'])")
        assert f"{a.address}/24" in listing.stdout and " lo " in listing.stdout
        server = subprocess.Popen(
            [*a.exec_prefix(), sys.executable, "-c", textwrap.dedent(f"""
                import socket
                server = socket.create_server(("{a.address}", 7000))
                print("ready", flush=True)
                server.settimeout({WAIT})
                conn, (peer, _) = server.accept()
                conn.sendall(peer.encode())
            """)],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            assert server.stdout is not None and server.stdout.readline().strip() == "ready"
            client = _run_in(b, f"""
                import socket
                with socket.create_connection(("{a.address}", 7000), timeout={WAIT}) as s:
                    print(s.recv(100).decode())
            """)  # fmt: skip
            # The server saw b's own address: the connection crossed the bridge.
            assert client.stdout.strip() == b.address, client.stderr
        finally:
            server.kill()
            server.wait(timeout=WAIT)
    assert net.check_gone() == [] and net.teardown_errors == []
    assert _root_links() == before


@pytest.mark.usefixtures("fresh")
def test_mdns_crosses_the_bridge() -> None:
    # Discovery depends on multicast working between namespaces; check it with
    # zeroconf alone, so a failure here points at the harness, not at ring.
    with netns.Lan(["a", "b"]) as net:
        a, b = net.hosts["a"], net.hosts["b"]
        advertiser = subprocess.Popen(
            [*a.exec_prefix(), sys.executable, "-c", textwrap.dedent(f"""
                import socket, time
                from zeroconf import ServiceInfo, Zeroconf
                zc = Zeroconf()
                zc.register_service(ServiceInfo(
                    "_cardringtest._tcp.local.", "probe._cardringtest._tcp.local.",
                    port=7001, addresses=[socket.inet_aton("{a.address}")],
                ))
                print("registered", flush=True)
                time.sleep({WAIT})
            """)],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            assert advertiser.stdout is not None
            assert advertiser.stdout.readline().strip() == "registered"
            # Browse as a peer does: the PTR answer carries SRV and A with it.
            browse = _run_in(b, """
                import queue
                from zeroconf import ServiceBrowser, ServiceStateChange, Zeroconf
                found = queue.Queue()

                def changed(zeroconf, service_type, name, state_change):
                    if state_change is ServiceStateChange.Added:
                        found.put(zeroconf.get_service_info(service_type, name, timeout=3000))

                zc = Zeroconf()
                ServiceBrowser(zc, "_cardringtest._tcp.local.", handlers=[changed])
                info = found.get(timeout=5)
                print(info.parsed_addresses() if info else None, info and info.port)
                zc.close()
            """)  # fmt: skip
            assert browse.stdout.strip() == f"['{a.address}'] 7001", browse.stderr
        finally:
            advertiser.kill()
            advertiser.wait(timeout=WAIT)


@pytest.mark.usefixtures("fresh")
def test_teardown_kills_what_runs_inside() -> None:
    # A process inside would keep its namespace (and veth) alive after `ip netns del`.
    with netns.Lan(["a"]) as net:
        sleeper = subprocess.Popen(
            [*net.hosts["a"].exec_prefix(), "sleep", "60"], stdout=subprocess.DEVNULL
        )
        _wait_for(lambda: netns.namespace_pids(net.hosts["a"].netns), "the sleeper to start")
    assert sleeper.wait(timeout=WAIT) == -signal.SIGKILL
    assert net.check_gone() == []


@pytest.mark.usefixtures("fresh")
def test_a_failed_setup_leaves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    real_ip = netns.ip
    calls = 0

    def failing_ip(*args: str, **kwargs: float) -> str:
        nonlocal calls
        # Fail half-way through building: some namespaces and veths exist by then.
        if args[:1] == ("-n",) and (calls := calls + 1) == 8:
            raise netns.NetnsError("ip: injected failure")
        return real_ip(*args, **kwargs)

    monkeypatch.setattr(netns, "ip", failing_ip)
    net = netns.Lan(["a", "b", "c"])
    with pytest.raises(netns.NetnsError, match="injected failure"):
        net.up()
    monkeypatch.undo()
    assert net.check_gone() == []


@pytest.mark.usefixtures("fresh")
def test_stale_namespaces_of_a_dead_run_are_removed() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=WAIT)
    stale = f"{netns.PREFIX}{dead.pid}-1-a"
    netns.ip("netns", "add", stale)
    try:
        with netns.Lan(["a"]) as net:
            assert stale in net.stale_removed
            assert stale not in netns.list_namespaces()
    finally:
        netns.delete_namespaces([stale])


@pytest.mark.usefixtures("fresh")
def test_the_reaper_cleans_up_after_a_sigkill() -> None:
    # SIGKILL skips every finally: the reaper, not the owner, must delete the
    # namespaces and kill what was left running inside them.
    owner = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import subprocess, time
            from scenarios.oldmaid import netns
            net = netns.Lan(["a", "b"])
            net.up()
            inside = subprocess.Popen(
                [*net.hosts["b"].exec_prefix(), "sleep", "60"], stdout=subprocess.DEVNULL
            )
            print(inside.pid, *net.namespaces, flush=True)
            time.sleep(60)
        """)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )  # fmt: skip
    try:
        assert owner.stdout is not None
        pid, *names = owner.stdout.readline().split()
        assert len(names) == 3 and set(names) <= set(netns.list_namespaces())
    finally:
        owner.kill()
        owner.wait(timeout=WAIT)
    _wait_for(lambda: not set(names) & set(netns.list_namespaces()), "the reaper")
    _wait_for(lambda: not _alive(int(pid)), "the process inside to be killed")


# --- the scenario ------------------------------------------------------------


@pytest.fixture(scope="module")
def default_lan_game(tmp_path_factory: pytest.TempPathFactory) -> lan.LanResult:
    workdir = tmp_path_factory.mktemp("lan")
    return lan.run_lan(lan.DEFAULT_SEED, workdir=workdir)


def test_lan_game_by_discovery_passes_every_check(default_lan_game: lan.LanResult) -> None:
    result = default_lan_game
    assert result.ok, lan.format_result(result)
    assert result.game is not None
    assert [c.name for c in result.game.findings] == list(verify.FINDING_NAMES)
    assert [c.name for c in result.findings] == [lan.PLACEMENT, lan.TEARDOWN]
    # The table alone on one host, the peers over the other two.
    roles = {name: host.role for name, host in result.hosts.items()}
    assert roles.pop(oldmaid_game.TABLE) == lan.TABLE_HOST
    assert set(roles.values()) == set(lan.PEER_HOSTS) and len(roles) >= 4
    # No peer was told where the table is.
    for nick in roles:
        argv = result.game.processes[nick].argv
        assert "--server" not in argv and "--host" not in argv
    assert result.game.summary is not None and result.game.summary.skips >= 1


def test_lan_game_leaves_no_namespace(default_lan_game: lan.LanResult) -> None:
    assert _owned_by(os.getpid()) == []
    assert {c.name: c.ok for c in default_lan_game.findings}[lan.TEARDOWN]


@pytest.mark.usefixtures("fresh")
def test_a_failing_lan_run_is_reported_and_torn_down(tmp_path: Path) -> None:
    # One seat goes to a process that exits 3 at once: the game never starts,
    # the deadline kills the rest, and the LAN must still go.
    quitter = [sys.executable, "-c", "raise SystemExit(3)"]
    result = lan.run_lan(1, workdir=tmp_path, timeout=3, extra_peers=[quitter])
    assert not result.ok
    assert result.game is not None and result.game.processes["x1"].returncode == 3
    assert {c.name: c.ok for c in result.findings}[lan.TEARDOWN]
    text = lan.format_result(result)
    assert "FAIL  exit codes" in text and "FAILED:" in text


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_game_tears_everything_down(
    sig: signal.Signals, code: int, tmp_path: Path
) -> None:
    # --keep: an interrupted run keeps its logs, and they belong in tmp_path.
    scenario = subprocess.Popen(
        [*processes.ring_command(), "scenario", "lan", "--timeout", "20", "--keep", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    inside: list[tuple[int, int | None]] = []
    try:

        def table_running() -> bool:
            # One reading of each namespace: a second could already differ.
            pids = {name: netns.namespace_pids(name) for name in _owned_by(scenario.pid)}
            table = [n for n in pids if n.endswith(f"-{lan.TABLE_HOST}")]
            if not (table and pids[table[0]]):
                return False
            inside[:] = [
                (pid, netns.process_start(pid)) for group in pids.values() for pid in group
            ]
            return True

        _wait_for(table_running, "the scenario's table to start")
        scenario.send_signal(sig)
        out, err = scenario.communicate(timeout=WAIT)
    finally:
        if scenario.poll() is None:
            scenario.kill()
            scenario.communicate(timeout=WAIT)
    assert scenario.returncode == code, out + err
    assert "the LAN is torn down" in err
    assert _owned_by(scenario.pid) == []
    assert inside
    left = [(pid, start) for pid, start in inside if _alive(pid, start)]
    assert not left, [Path(f"/proc/{pid}/cmdline").read_bytes() for pid, _ in left]


def test_cli_lan(tmp_path: Path) -> None:
    keep = tmp_path / "logs"
    completed = subprocess.run(
        [*processes.ring_command(), "scenario", "lan", "--keep", str(keep)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    assert f"scenario lan, seed {lan.DEFAULT_SEED}" in out
    for label in ("handoffs", "skips", "out", "loser", "wall time", "host a", "host b", "host c"):
        assert label in out
    for name in (*verify.FINDING_NAMES, lan.PLACEMENT, lan.TEARDOWN):
        assert f"PASS  {name}:" in out
    assert "FAIL" not in out
    assert (keep / "table.jsonl").exists()
