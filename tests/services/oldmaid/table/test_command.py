"""``ring table`` and ``ring serve --oldmaid`` as real processes: the port, how the game
ended, a port in use, the timeouts they take.
"""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import settings_for
from services.oldmaid.table import server as table_module
from services.oldmaid.table.server import TableConfig
from tests.helpers.oldmaid_table import TIMEOUT

ROOT = Path(__file__).resolve().parents[4]
pytestmark = pytest.mark.usefixtures("no_internal_errors")


# -- the command line ---------------------------------------------------------------


def ring(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ring", "table", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ring_table_prints_its_port_then_how_the_game_ended() -> None:
    process = ring("--port", "0", "--players", "2", "--seed", "3", "--linger", "5")
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
        assert ready, "ring table printed nothing"
        first = process.stdout.readline()
        assert first.startswith("table listening on 127.0.0.1:")
        port = int(first.rsplit(":", 1)[1])
        players = []
        for nick in ("ann", "bob"):
            sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            sock.sendall(json.dumps({"cmd": "join", "nick": nick}).encode() + b"\n")
            players.append(sock)
        for sock in players:
            assert b'"players"' in sock.recv(4096)
        for sock in players:
            sock.close()
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()
        process.wait()
    last = out.splitlines()
    assert last in (["game aborted: ann left the table"], ["game aborted: bob left the table"])
    assert process.returncode == 1
    assert "Traceback" not in err and "--seed 3" in err


def test_ring_table_on_a_port_in_use_says_so_in_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        process = ring("--port", str(busy.getsockname()[1]))
        out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and "cannot listen" in err


async def test_ring_serve_and_ring_table_take_the_wait_and_turn_timeouts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[TableConfig] = []

    async def record(config: TableConfig, **_: Any) -> None:
        seen.append(config)

    monkeypatch.setattr(table_module, "serve_tables", record)
    parser = build_parser()
    timeouts = ["--wait-timeout", "40", "--turn-timeout", "30"]
    [oldmaid] = [service for service in declared_services() if service.name == "oldmaid"]
    settings = settings_for(parser.parse_args(["serve", "--oldmaid", "0", *timeouts]), oldmaid, 1)
    await oldmaid.serve(settings, task_status=trio.TASK_STATUS_IGNORED)
    seen.append(TableConfig.from_args(parser.parse_args(["table", *timeouts])))
    seen.append(TableConfig.from_args(parser.parse_args(["table"])))
    assert [(c.wait_timeout, c.turn_timeout) for c in seen] == [(40, 30), (40, 30), (600, 300)]
