"""mDNS discovery, on loopback only.

NETWORK RULE: these tests run in the machine's own network namespace (but
one, in a namespace of its own), so every advertiser and browser is bound to
127.0.0.1 (``--mdns-interface
127.0.0.1``); nothing here may multicast on a real interface. Multicast on
``lo`` works although ``lo`` has no MULTICAST flag: zeroconf sets
IP_MULTICAST_IF to 127.0.0.1 and the kernel loops the packets back.

Nothing waits on a clock to learn that something happened: the tests wait
on events and channels, or poll a subprocess's output, always under a
deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from ring.mdns import discovery
from ring.mdns.discovery import Advertiser, DiscoveryError, Found, browse, find_table, oldmaid_txt
from services.oldmaid.table.server import TableConfig, serve_table
from tests.helpers.connections import refusing_port

LOOPBACK = ["127.0.0.1"]
MDNS = ["--mdns-interface", "127.0.0.1"]
RING = [str(Path(sys.executable).with_name("ring"))]
TIMEOUT = 10.0
# Names unique to this run: another test run on this host may advertise too.
RUN = f"t{os.getpid()}"


# -- helpers ---------------------------------------------------------------------


async def next_found(found: trio.MemoryReceiveChannel[Found], instance: str) -> Found:
    """The next sighting of ``instance``, skipping every other service."""
    async for service in found:
        if service.instance == instance:
            return service
    raise AssertionError("the browser stopped")


async def json_request(stream: trio.SocketStream, message: dict[str, object]) -> dict[str, object]:
    await stream.send_all(json.dumps(message).encode() + b"\n")
    data = b""
    while not data.endswith(b"\n"):
        chunk = await stream.receive_some()
        assert chunk, "the table closed the connection"
        data += chunk
    return json.loads(data)


def table_process(*args: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [*RING, "table", "--port", "0", "--advertise", *MDNS, "--linger", "1", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # the table prints it as soon as it listens
    assert line.startswith("table listening on 127.0.0.1:"), line
    return process, int(line.rsplit(":", 1)[1])


def stop(process: subprocess.Popen[str], how: signal.Signals = signal.SIGINT) -> str:
    """Stop a table as a user would; its remaining stdout."""
    if process.poll() is None:
        process.send_signal(how)
    try:
        out, _ = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out


def discover_lines(*args: str, until: int) -> list[str]:
    """``ring discover`` lines, asked again until ``until`` services are listed.

    Each run listens 3 s: a responder that multicast an answer less than a
    second ago holds the next one back a second (RFC 6762, section 14), so
    back-to-back runs of 1 s could each miss it.
    """
    deadline = time.monotonic() + TIMEOUT
    while True:
        done = subprocess.run(
            [*RING, "discover", "--timeout", "3", *MDNS, *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        if sum(RUN in line for line in lines) >= until or time.monotonic() > deadline:
            return lines


# -- the module ------------------------------------------------------------------


def test_names_lines_and_interface_choices() -> None:
    found = Found("oldmaid", "alpha-0123abcd", ("127.0.0.1",), 9898, {"v": "1", "state": "waiting"})
    assert found.name == "alpha-0123abcd._oldmaid._tcp.local."
    assert found.matches("alpha") and found.matches("alpha-0123abcd") and found.matches(None)
    assert not found.matches("alp") and not found.matches("beta")
    assert found.waiting and found.address == ("127.0.0.1", 9898)
    assert found.line == "oldmaid alpha-0123abcd 127.0.0.1 9898 state=waiting v=1"
    odd = Found("oldmaid", "Ann's table", ("10.0.0.1",), 1, {"state": "playing"})
    assert odd.line.startswith("oldmaid 'Ann'\"'\"'s table' ") and not odd.waiting
    assert discovery.interfaces_for("127.0.0.1") == ("127.0.0.1",)
    assert discovery.interfaces_for(None, "127.0.0.1") == ("127.0.0.1",)
    assert discovery.interfaces_for(None, "0.0.0.0") == discovery.ALL_INTERFACES
    assert discovery.instance_name().startswith("table-")
    assert discovery.service_type("oldmaid") == "_oldmaid._tcp.local."
    for bad in ("", "Oldmaid", "no-dashes", "x" * 16, "9lives"):
        with pytest.raises(ValueError, match="service kind"):
            discovery.service_type(bad)
    with pytest.raises(TypeError):
        Advertiser("oldmaid", 1, host="127.0.0.1", interfaces="127.0.0.1", txt={})
    with pytest.raises(DiscoveryError):
        discovery.interfaces_for("localhost")


async def test_advertise_browse_update_and_withdraw() -> None:
    advertiser = Advertiser(
        "fishnet",
        4242,
        host="127.0.0.1",
        interfaces=LOOPBACK,
        txt=oldmaid_txt(players=3, joined=0, state="waiting"),
    )
    advertising = trio.CancelScope()

    async def advertise() -> None:
        with advertising:
            await advertiser.run()

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(advertise)
            async with browse(["fishnet"], interfaces=LOOPBACK) as found:
                first = await next_found(found, advertiser.instance)
                await advertiser.registered.wait()
                assert first.addresses == ("127.0.0.1",) and first.port == 4242
                assert first.txt == {"v": "1", "players": "3", "joined": "0", "state": "waiting"}

                advertiser.update({"joined": "1"})
                advertiser.update({"joined": "3", "state": "playing"})  # one update for both
                changed = await next_found(found, advertiser.instance)
                assert changed.txt["state"] == "playing" and changed.txt["joined"] == "3"

                advertising.cancel()  # as when the service shuts down
                await advertiser.withdrawn.wait()
                gone = await next_found(found, advertiser.instance)
                assert gone.removed


async def test_the_table_serves_at_once_while_registration_probes() -> None:
    config = TableConfig(
        players=2, port=0, advertise=True, mdns_interface="127.0.0.1", linger=0, mdns_name=RUN
    )
    advertisers: list[Advertiser] = []
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            _, port = await nursery.start(
                lambda task_status: serve_table(
                    config, task_status=task_status, on_advertise=advertisers.append
                )
            )
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            reply = await json_request(stream, {"cmd": "status"})
            # Probing the name takes over a second; the status reply did not wait.
            assert reply["result"] == "ok" and reply["state"] == "waiting"
            (advertiser,) = advertisers
            assert not advertiser.registered.is_set()

            await stream.send_all(b'{"cmd": "join", "nick": "ann", "port": 4000}\n')
            async with browse(["oldmaid"], interfaces=LOOPBACK) as found:
                service = await next_found(found, advertiser.instance)
                while service.txt["joined"] != "1":  # the join may come as an update
                    service = await next_found(found, advertiser.instance)
                assert service.port == port and service.txt["state"] == "waiting"
                await advertiser.registered.wait()
                found_again = await find_table(interfaces=LOOPBACK, timeout=TIMEOUT, name=RUN)
                assert found_again.instance == advertiser.instance
                nursery.cancel_scope.cancel()
    assert advertiser.withdrawn.is_set()


async def test_find_table_gives_up_with_one_line() -> None:
    with pytest.raises(DiscoveryError, match="no waiting table named nosuch found"):
        await find_table(interfaces=LOOPBACK, timeout=0.3, name="nosuch")


# -- the ring command ----------------------------------------------------------------


def test_peers_without_table_find_it_and_play_a_whole_game() -> None:
    table, _ = table_process("--players", "3", "--seed", "11", "--name", f"game-{RUN}")
    try:
        peers = [
            subprocess.Popen(
                [*RING, "peer", "--name", nick, *MDNS, "--table-name", f"game-{RUN}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for nick in ("ann", "bob", "cat")
        ]
        results = [peer.communicate(timeout=30) for peer in peers]
        table_out, table_err = table.communicate(timeout=15)
    finally:
        stop(table)
    assert [peer.returncode for peer in peers] == [0, 0, 0], results
    lines = sorted(out.strip() for out, _ in results)
    assert lines == ["lost: holds the Old Maid", "out 1st of 3", "out 2nd of 3"]
    assert table.returncode == 0 and table_out.splitlines()[-1].startswith("game over"), table_err
    assert f"advertising game-{RUN}-" in table_err


def test_table_name_chooses_and_discover_lists_both() -> None:
    alpha, alpha_port = table_process("--players", "2", "--name", f"alpha-{RUN}")
    beta, beta_port = table_process("--players", "2", "--name", f"beta-{RUN}")
    try:
        lines = discover_lines("--kind", "oldmaid", until=2)
        fields = sorted(line.split() for line in lines if RUN in line)
        names = [f[1].rsplit("-", 1)[0] for f in fields]
        assert names == [f"alpha-{RUN}", f"beta-{RUN}"], lines
        assert [f[2:4] for f in fields] == [
            ["127.0.0.1", str(alpha_port)],
            ["127.0.0.1", str(beta_port)],
        ]
        txt = ["joined=0", "players=2", "state=waiting", "v=1"]
        assert all(f[0] == "oldmaid" and f[4:] == txt for f in fields), lines

        peers = [
            subprocess.Popen(
                [*RING, "peer", "--name", nick, *MDNS, "--table-name", f"beta-{RUN}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for nick in ("ann", "bob")
        ]
        results = [peer.communicate(timeout=30) for peer in peers]
        assert [peer.returncode for peer in peers] == [0, 0], results
        beta_out, _ = beta.communicate(timeout=15)
        assert beta_out.splitlines()[-1].startswith("game over")
        assert alpha.poll() is None  # alpha still waits for players
        # A service manager stops a table with SIGTERM: it must withdraw too.
        assert stop(alpha, signal.SIGTERM).splitlines() == [
            "game aborted: the table was terminated"
        ]
        assert alpha.returncode == 143
    finally:
        stop(alpha)
        stop(beta)
    # Both withdrew on the way out (beta after its game, alpha on SIGTERM).
    done = subprocess.run(
        [*RING, "discover", "--timeout", "0.5", *MDNS], capture_output=True, text=True, timeout=10
    )
    assert done.returncode == 0 and RUN not in done.stdout


def test_a_peer_given_table_never_imports_zeroconf() -> None:
    with refusing_port() as port:
        peer = ["peer", "--name", "ann", "--server", f"127.0.0.1:{port}", "--peer-timeout", "1"]
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "ring", *peer],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    assert done.returncode == 1 and "cannot reach the table" in done.stderr
    assert "import time:" in done.stderr
    assert "zeroconf" not in done.stderr and "ring.mdns.discovery" not in done.stderr


def test_a_peer_that_finds_no_table_says_so_in_one_line() -> None:
    peer = ["peer", "--name", "ann", *MDNS, "--table-name", "nosuch", "--discover-timeout", "0.5"]
    done = subprocess.run(
        [*RING, *peer],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "ann: no waiting table named nosuch found by mDNS within 0.5 s"
    ]


def test_discover_says_so_when_it_finds_nothing() -> None:
    # On 127.0.0.1 other tests advertise FishNet meanwhile (pytest-xdist runs them
    # side by side): "nothing" needs a loopback of its own, a new network namespace's.
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("needs root, unshare and ip for a network namespace of its own")
    alone = ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    done = subprocess.run(
        [*alone, *RING, "discover", "--kind", "fishnet", "--timeout", "0.3", *MDNS],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == "discover: no services found within 0.3 s\n"
