"""A student's program as docs/protocols/programs.md (1, 2) starts it: real OS processes,
killed whole at the end."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
import trio

from scenarios.programs import Limits, Program, ProgramError, environment, substitute

VALUES = {"host": "127.0.0.1", "port": "4000", "address": "127.0.0.1:4000", "name": "ann"}


def test_placeholders_are_replaced_anywhere_and_other_braces_stay() -> None:
    argv = ["client", "--to={address}", "{host}", "-p{port}", '{"name": "{name}"}', "{x}"]
    assert substitute(argv, VALUES) == [
        "client", "--to=127.0.0.1:4000", "127.0.0.1", "-p4000", '{"name": "ann"}', "{x}",
    ]  # fmt: skip


def test_only_wire_placeholders_exist() -> None:
    with pytest.raises(ValueError, match="colour"):
        substitute(["x"], {"colour": "black"})


def test_the_environment_carries_the_same_values() -> None:
    env = environment({"nick": "p1", "table": "127.0.0.1:9"}, base={"PATH": "/bin"})
    assert env["CARDRING_NICK"] == "p1" and env["CARDRING_TABLE"] == "127.0.0.1:9"
    assert env["PATH"] == "/bin"


PRINTS = """
import os, sys
print(" ".join(sys.argv[1:]))
print(os.environ["CARDRING_ADDRESS"], os.environ["CARDRING_NAME"])
print(repr(sys.stdin.read()))
print("to stderr", file=sys.stderr)
"""


async def test_a_program_gets_its_arguments_environment_and_a_closed_stdin(
    tmp_path: Path,
) -> None:
    program = Program((sys.executable, "-c", PRINTS, "{host}", "{port}"))
    running = await program.start(VALUES, tmp_path, "case1")
    try:
        assert await running.wait(10.0)
    finally:
        await running.stop()
    stdout, stderr = running.output()
    assert stdout == ["127.0.0.1 4000", "127.0.0.1:4000 ann", "''"]
    assert stderr == ["to stderr"]
    assert (tmp_path / "case1.stdout").exists() and not running.killed
    assert running.describe_exit() == "exited with status 0"


# A program that ignores SIGTERM and starts a child; each holds a connection
# to the test open, so its end shows as the connection's end (no polling).
STUBBORN = """
import signal, socket, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
host, port = sys.argv[1], int(sys.argv[2])
me = socket.create_connection((host, port))
me.sendall(b"leader")
child = ("import socket, sys, time; c = socket.create_connection((sys.argv[1], int(sys.argv[2])));"
         " c.sendall(b'child'); time.sleep(600)")
subprocess.Popen([sys.executable, "-c", child, host, str(port)])
time.sleep(600)
"""


async def _closed(stream: trio.SocketStream) -> None:
    while await stream.receive_some(100):
        pass


async def test_stop_kills_the_whole_group_even_a_program_that_ignores_sigterm(
    tmp_path: Path,
) -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    program = Program((sys.executable, "-c", STUBBORN, "{host}", "{port}"))
    running = await program.start(VALUES | {"port": str(port)}, tmp_path, "stubborn")
    connections = {}
    with trio.fail_after(10):
        while len(connections) < 2:
            stream = await listeners[0].accept()
            connections[(await stream.receive_some(100)).strip()] = stream
    assert set(connections) == {b"leader", b"child"}
    with trio.fail_after(10):
        await running.stop(grace=0.2)
        for stream in connections.values():  # each closes when its process is gone
            await _closed(stream)
    assert running.killed and running.describe_exit() == "killed by SIGKILL"
    await listeners[0].aclose()


async def test_a_missing_program_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(ProgramError, match=r"^cannot run '\./no-such-client': no such program$"):
        await Program(("./no-such-client", "{host}")).start(VALUES, tmp_path, "x")


async def test_a_file_that_is_not_executable_is_one_clear_line(tmp_path: Path) -> None:
    script = tmp_path / "client.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(ProgramError, match=r"it is not executable$"):
        await Program((str(script),)).start(VALUES, tmp_path, "x")


def test_no_command_is_one_clear_line() -> None:
    with pytest.raises(ProgramError, match="no program to run"):
        Program(())


# Each prints what it met: the limit is set in the child, before the command runs.
TAKE_MEMORY = """
try:
    hoard = bytearray(400 * 1024 * 1024)
    print("allocated")
except MemoryError:
    print("MemoryError")
"""
OPEN_FILES = """
import os
handles = []
try:
    while len(handles) < 1000:
        handles.append(open(os.devnull))
    print("opened", len(handles))
except OSError as exc:
    print("refused after", len(handles), exc.strerror)
"""
SPIN = "while True: pass"


@pytest.mark.parametrize(
    ("code", "limits", "printed"),
    [
        (TAKE_MEMORY, Limits(memory_bytes=200 * 1024 * 1024), "MemoryError"),
        (TAKE_MEMORY, None, "allocated"),
        (OPEN_FILES, Limits(open_files=64), "refused after"),
        (OPEN_FILES, None, "opened 1000"),
    ],
)
async def test_limits_bound_what_a_run_takes(
    code: str, limits: Limits | None, printed: str, tmp_path: Path
) -> None:
    running = await Program((sys.executable, "-c", code), limits=limits).start(
        VALUES, tmp_path, "limited"
    )
    assert await running.wait(30)
    stdout, _ = running.output()
    assert stdout and stdout[-1].startswith(printed), stdout


async def test_a_program_past_its_cpu_time_is_killed_and_told_so(tmp_path: Path) -> None:
    running = await Program((sys.executable, "-c", SPIN), limits=Limits(cpu_seconds=1)).start(
        VALUES, tmp_path, "spin"
    )
    assert await running.wait(30)
    assert running.describe_exit() == "killed by SIGXCPU: past its CPU-time limit"


# A daemon, as a student's program may start one: fork, setsid (out of the group), fork.
DAEMON = """
import os, socket, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
        c.sendall(b"daemon")
        time.sleep(600)
    os._exit(0)
time.sleep(600)
"""


async def test_a_process_that_left_the_group_is_found_by_its_tag_and_killed(
    tmp_path: Path,
) -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    program = Program((sys.executable, "-c", DAEMON, "{host}", "{port}"))
    running = await program.start(VALUES | {"port": str(port)}, tmp_path, "daemon")
    with trio.fail_after(10):
        stream = await listeners[0].accept()
        assert await stream.receive_some(100) == b"daemon"
        await running.stop(grace=0.2)
        await _closed(stream)  # the daemon is gone too
    assert running.strays == 1
    await listeners[0].aclose()
