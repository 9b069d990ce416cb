"""The box (scenarios.sandbox), asked from inside by small programs: what it shows, who it
is, what it reaches, what it may take, and that nothing of it is left after its run."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest
import trio

from scenarios.programs import Limits, Program, RunningProgram
from scenarios.sandbox import Box, BoxNetwork, Quota, box_network, cgroups, exit_status
from scenarios.sandbox.probe import probe
from tests.helpers.sandbox_support import box_available

pytestmark = pytest.mark.scenario

UID = 1_600_000_123
MIB = 1024 * 1024


@pytest.fixture(autouse=True)
def _needs_a_box() -> None:
    if not box_available():
        pytest.fail("no box on this machine (needs root and bubblewrap: .ci/run installs it)")


def run_boxed(
    code: str,
    tmp: Path,
    *,
    box: Box | None = None,
    limits: Limits | None = None,
    network: BoxNetwork | None = None,
    timeout: float = 30.0,
) -> tuple[RunningProgram, str]:
    """Run ``code`` (Python) in a box; the run (stopped) and its stdout."""
    box = box or Box(uid=UID)
    if network is not None:
        box = Box(**{**box.__dict__, "netns": network.path})
    program = Program((sys.executable, "-I", "-c", code), limits=limits, box=box)

    async def main() -> RunningProgram:
        running = await program.start({}, tmp / "logs", "boxed")
        await running.wait(timeout)
        await running.stop()
        return running

    running = trio.run(main)
    return running, running.stdout_path.read_text()


def test_the_probe_says_the_box_holds() -> None:
    line = probe(UID)
    assert line.startswith("sandbox: bubblewrap")


def test_a_box_shows_its_folder_and_scratch_and_nothing_else(tmp_path: Path) -> None:
    own, other = tmp_path / "own", tmp_path / "own" / "hidden"
    other.mkdir(parents=True)
    (own / "mine.txt").write_text("mine")
    (other / "secret.txt").write_text("secret")
    os.environ["CARDRING_TEST_SECRET"] = "runner's own"
    code = """
import json, os
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return exc.strerror
seen = {
    "uid": os.getuid(), "groups": os.getgroups(), "cwd": os.getcwd(),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "mine": open("mine.txt").read(), "hidden": os.listdir("hidden"),
    "write_own": attempt(lambda: open("new.txt", "w")),
    "write_etc": attempt(lambda: open("/etc/x", "w")),
    "root_home": os.path.exists("/root/.bashrc"),
    "env": sorted(os.environ), "home": os.environ["HOME"],
    "kill_1": attempt(lambda: os.kill(1, 9)),
}
with open("/tmp/fill", "wb") as f:
    seen["fill"] = attempt(lambda: [f.write(b"x" * 1048576) for _ in range(64)])
print(json.dumps(seen))
"""
    try:
        box = Box(uid=UID, folders=(own,), workdir=own, hidden=(other,), scratch_bytes=4 * MIB)
        running, out = run_boxed(code, tmp_path, box=box)
    finally:
        del os.environ["CARDRING_TEST_SECRET"]
    seen = json.loads(out)
    assert running.status == 0
    assert seen["uid"] == UID and seen["groups"] == []  # no supplementary groups
    assert seen["cwd"] == str(own) and seen["mine"] == "mine"
    assert seen["hidden"] == []  # a hidden folder inside a shown one is empty
    assert seen["processes"] == [1, 2]  # bubblewrap's init and itself
    assert seen["write_own"] == seen["write_etc"] == "Read-only file system"
    assert not seen["root_home"]
    assert "CARDRING_TEST_SECRET" not in seen["env"] and seen["home"] == "/tmp"
    assert seen["kill_1"] == "Operation not permitted"
    assert seen["fill"] == "No space left on device"


def test_a_boxed_program_killed_by_a_signal_is_said_so(tmp_path: Path) -> None:
    running, _ = run_boxed("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", tmp_path)
    assert running.status == -11
    assert running.describe_exit() == "killed by SIGSEGV"
    assert exit_status(3) == 3 and exit_status(128 + 9) == -9


def test_a_box_reaches_its_listener_and_nothing_of_the_machine(tmp_path: Path) -> None:
    outsides: list[socket.socket] = []
    seen: dict[str, object] = {}

    async def main() -> None:
        async with box_network() as network:
            listener = await network.listen("127.0.0.1")
            port = listener.socket.getsockname()[1]
            # The box's namespace has ports of its own: the machine's listener
            # may be given the same number, which the box would then reach as
            # its own. Another number is asked for (a few tries at most).
            for _ in range(5):
                outsides.append(socket.create_server(("127.0.0.1", 0)))
                outside_port = outsides[-1].getsockname()[1]
                if outside_port != port:
                    break
            assert outside_port != port
            seen["outside_port"] = outside_port
            code = f"""
import socket
for port in ({port}, {outside_port}):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"hello")
        print(port, "reached", flush=True)
        s.recv(10)
    except OSError as exc:
        print(port, exc.strerror, flush=True)
"""
            box = Box(uid=UID, netns=network.path)
            program = Program((sys.executable, "-I", "-c", code), box=box)
            running = await program.start({}, tmp_path / "logs", "net")
            with trio.fail_after(10):
                stream = await listener.accept()
                seen["owner"] = network.owner(stream.socket.getpeername()[1])
                seen["said"] = await stream.receive_some(10)
                await stream.aclose()
            await running.wait(10)
            await running.stop()
            seen["out"] = running.stdout_path.read_text()
            seen["port"] = port

    try:
        trio.run(main)
    finally:
        for outside in outsides:
            outside.close()
    assert seen["owner"] == UID and seen["said"] == b"hello"
    said = str(seen["out"]).splitlines()
    assert said == [f"{seen['port']} reached", f"{seen['outside_port']} Connection refused"]


@pytest.mark.skipif(
    cgroups.available() is not None,
    reason=f"this machine has no control groups for boxes: {cgroups.available()}",
)
def test_a_boxes_memory_and_processes_are_bounded_all_together(tmp_path: Path) -> None:
    """Four processes of 48 MB each, every one under its own 64 MB limit, in a box of
    96 MB: the box's control group stops them together; a fork bomb stops at its count."""
    # Each child holds its block until all four have theirs (or died trying): the
    # blocks are held at once however the children are scheduled.
    code = """
import os, sys
release_r, release_w = os.pipe()
ready_r, ready_w = os.pipe()
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        os.close(release_w)
        block = bytearray(48 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os.write(ready_w, b"x")
        os.read(release_r, 1)  # until the parent lets go
        os._exit(0)
    children.append(pid)
os.close(ready_w)
killed, held = 0, 0
while held + killed < len(children):
    pid, status = os.waitpid(-1, os.WNOHANG)
    if pid:
        killed += os.WIFSIGNALED(status)
        continue
    import select
    if select.select([ready_r], [], [], 0.05)[0]:
        held += len(os.read(ready_r, 4))
os.close(release_w)
for pid in children:
    try:
        _, status = os.waitpid(pid, 0)
        killed += os.WIFSIGNALED(status)
    except ChildProcessError:
        pass
forks = 0
try:
    for _ in range(100):
        if os.fork() == 0:
            import time; time.sleep(30); os._exit(0)
        forks += 1
except OSError as exc:
    print(killed, forks, exc.strerror)
"""
    quota = Quota(cores=1.0, memory_bytes=96 * MIB, processes=20)
    limits = Limits(memory_bytes=64 * MIB)
    running, out = run_boxed(code, tmp_path, box=Box(uid=UID, quota=quota), limits=limits)
    killed, forks, error = out.split(maxsplit=2)
    assert int(killed) >= 1  # at least one of the four was killed by the group's limit
    assert int(forks) < 20 and error.strip() == "Resource temporarily unavailable"
    # Emptied when stopped (and kept for this process's next box).
    assert running.group is not None and running.group.processes() == []
