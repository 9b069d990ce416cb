"""``ring serve`` and the open-file limit: raised to what its caps need, at start."""

from __future__ import annotations

import argparse
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ring.cli.serve import files_needed, raise_file_limit
from ring.wire.net import MAX_REFUSING
from tests.helpers.connections import BOUND

# -- ring serve and the open-file limit ---------------------------------------------


class FakeLimits:
    def __init__(self, soft: int, hard: int) -> None:
        self.now = (soft, hard)

    def getrlimit(self, which: int) -> tuple[int, int]:
        assert which == resource.RLIMIT_NOFILE
        return self.now

    def setrlimit(self, which: int, limits: tuple[int, int]) -> None:
        assert which == resource.RLIMIT_NOFILE
        assert limits[1] == resource.RLIM_INFINITY or limits[0] <= limits[1]
        self.now = limits


@pytest.mark.parametrize(
    "soft, hard, after, says",
    [
        (1024, 4096, (2272, 4096), False),  # raised to what the caps need
        (1024, resource.RLIM_INFINITY, (2272, resource.RLIM_INFINITY), False),
        (1024, 2000, (2000, 2000), True),  # as far as the hard limit goes, and said
        (4096, 4096, (4096, 4096), False),  # enough already: left alone
    ],
)
def test_ring_serve_raises_the_open_file_limit_its_caps_need(
    soft: int, hard: int, after: tuple[int, int], says: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    need = files_needed(argparse.Namespace(max_connections=None), 4)
    assert need == 4 * (2 * 256 + MAX_REFUSING + 8) + 64 == 2272
    limits = FakeLimits(soft, hard)
    monkeypatch.setattr(resource, "getrlimit", limits.getrlimit)
    monkeypatch.setattr(resource, "setrlimit", limits.setrlimit)
    line = raise_file_limit(need)
    assert limits.now == after
    assert (line is not None) == says
    if line is not None:
        assert "2000" in line and "2272" in line and "\n" not in line


def _soft_file_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-file limit in /proc")


@pytest.mark.skipif(
    not Path("/proc/self/limits").exists(),
    reason="reads the server process's open-file limit from /proc/<pid>/limits (Linux only)",
)
@pytest.mark.parametrize("hard_too", [False, True])
def test_ring_serve_raises_its_own_open_file_limit_at_start(tmp_path: Path, hard_too: bool) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = files_needed(argparse.Namespace(max_connections=None), 1)
    if not hard_too and hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip(f"raising to {need} open files needs a hard limit that high; here it is {hard}")

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256 if hard_too else hard))

    server = subprocess.Popen(
        [sys.executable, "-m", "ring", "serve", "--fishnet", "0", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=low_limit,
    )  # fmt: skip
    try:
        assert server.stdout is not None and server.stderr is not None
        assert server.stdout.readline().startswith(b"fishnet listening on ")
        assert _soft_file_limit(server.pid) == (256 if hard_too else need)
        server.send_signal(signal.SIGTERM)
        assert server.wait(BOUND) == 143
        errors = server.stderr.read().decode()
        said = [line for line in errors.splitlines() if "open-file limit" in line]
        assert len(said) == (1 if hard_too else 0), errors
    finally:
        server.kill()
        server.wait(BOUND)
