"""``ring peer`` as a user runs it: one line and an exit code, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from ring.cli.app import build_parser
from tests.helpers.connections import refusing_port

RING = [str(Path(sys.executable).with_name("ring"))]


def run_ring(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RING, *args], capture_output=True, text=True, timeout=30)


def test_unreachable_table_is_one_line_and_exit_1() -> None:
    with refusing_port() as port:
        where = f"127.0.0.1:{port}"
        done = run_ring("peer", "--name", "ann", "--server", where, "--peer-timeout", "2")
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"ann: cannot reach the table at 127.0.0.1:{port}"
    )


def test_table_that_speaks_garbage_is_one_line_and_exit_1() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        where = f"127.0.0.1:{port}"
        peer = subprocess.Popen(
            [*RING, "peer", "--name", "ann", "--server", where, "--peer-timeout", "5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            server.settimeout(10)
            conn, _ = server.accept()
            with conn:
                conn.settimeout(10)
                assert b'"cmd":"join"' in conn.recv(4096)
                conn.sendall(b'{"result":"ok","players":"nobody"}\n')
                out, err = peer.communicate(timeout=20)
        finally:
            peer.kill()
            peer.wait()
    assert peer.returncode == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ann: the table") and "Traceback" not in err


def test_bad_table_address_is_a_usage_error() -> None:
    done = run_ring("peer", "--name", "ann", "--server", "nowhere")
    assert done.returncode == 2 and "expected HOST:PORT" in done.stderr


def test_nick_and_table_are_hidden_old_spellings_of_name_and_server() -> None:
    parser = build_parser([], [])
    old = parser.parse_args(["peer", "--nick", "ann", "--table", "10.0.0.1:9898"])
    new = parser.parse_args(["peer", "--name", "ann", "--server", "10.0.0.1:9898"])
    assert old == new and (new.name, new.server) == ("ann", ("10.0.0.1", 9898))
    shown = run_ring("peer", "--help").stdout
    assert "--name NAME" in shown and "--server HOST:PORT" in shown
    assert "--nick" not in shown and "--table " not in shown and "--table\n" not in shown


def test_no_verify_plays_as_an_older_client() -> None:
    from ring.oldmaid.peer_config import config_from_args

    parser = build_parser([], [])
    base = ["peer", "--name", "ann", "--server", "10.0.0.1:9898"]
    assert config_from_args(parser.parse_args(base)).verify is True
    assert config_from_args(parser.parse_args([*base, "--no-verify"])).verify is False
