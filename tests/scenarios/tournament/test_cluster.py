"""``ring tournament --cluster``: the games on a real Dask cluster, set up as a lab sets it
up (``dask scheduler``, and ``dask worker`` with two worker processes, all on loopback), with
the same results as this machine's pool.

Everything of Dask runs in processes of its own: a Dask client in the test's process would
leave threads behind that disturb the tests after it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scenarios.tournament.jobs import Entrant, Settings
from scenarios.tournament.runner import Tournament, run
from tests.helpers.tournament import decided

BIN = Path(sys.executable).parent
START_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A scheduler and two worker processes; the scheduler's address."""
    folder = tmp_path_factory.mktemp("dask")
    contact = folder / "scheduler.json"
    # Each in a process group of its own, killed whole at the end (a worker's nanny
    # shuts down politely in seconds; nothing of it matters once the tests are done).
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": folder}
    scheduler = [BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", "0"]
    scheduler += ["--no-dashboard", "--scheduler-file", contact]
    started = [subprocess.Popen(scheduler, start_new_session=True, **quiet)]
    try:
        # The scheduler writes its address once it listens: watched for, as it is not a
        # line on a pipe we own. The file appears before its text is whole: read until
        # it parses.
        deadline = time.monotonic() + START_TIMEOUT
        address = None
        while address is None and time.monotonic() < deadline:
            try:
                address = json.loads(contact.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.05)
        assert address is not None, f"no scheduler address within {START_TIMEOUT:g} s"
        workers = [BIN / "dask", "worker", address, "--host", "127.0.0.1", "--nworkers", "2"]
        workers += ["--nthreads", "1", "--no-dashboard"]
        started.append(subprocess.Popen(workers, start_new_session=True, **quiet))
        yield address
    finally:
        for process in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def tournament(out: Path, *words: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "ring", "tournament", "reversi", "--builtin", "random"]
    command += ["--builtin", "deep", "--depth", "1", "--games", "2", "--seed", "4"]
    command += ["--out", str(out), *words]
    return subprocess.run(command, capture_output=True, timeout=300)


def test_a_cluster_plays_the_same_games_as_the_local_pool(tmp_path: Path, scheduler: str) -> None:
    entrants = (Entrant("random", level="random"), Entrant("deep", level="deep"))
    here = Tournament("reversi", entrants, tmp_path / "here", seed=4, settings=Settings(depth=1))
    assert run(here, stream=io.StringIO()) == 0
    # Workers may still be joining the scheduler: the runner needs one, and has it then.
    done = tournament(tmp_path / "there", "--cluster", scheduler)
    assert done.returncode == 0, done.stderr.decode()
    assert len(decided(tmp_path / "there")) == 2
    assert decided(tmp_path / "there") == decided(tmp_path / "here")
    # what the games said on the workers came back with them
    assert (tmp_path / "there" / "games" / "00001" / "transcript.jsonl").stat().st_size > 0
    # played in boxes on the workers (the command's default), with the same results
    boxes = json.loads((tmp_path / "there" / "games" / "00001" / "boxes.json").read_text())
    assert sorted(shown["box"]["tool"] for shown in boxes.values()) == ["bubblewrap"] * 2


def test_every_worker_checks_every_command_before_the_first_game(
    tmp_path: Path, scheduler: str
) -> None:
    done = tournament(tmp_path / "t", "--player", "a=./not-here {host}", "--cluster", scheduler)
    said = done.stderr.decode()
    assert done.returncode == 2
    assert said.startswith("ring tournament: worker tcp://127.0.0.1:") and said.count("\n") == 1
    assert ": cannot run a's command: no file ./not-here" in said
    assert not list((tmp_path / "t" / "games").glob("*.json"))


def test_an_unreachable_scheduler_is_one_line() -> None:
    check = (
        "from scenarios.tournament.cluster import ClusterError, DaskPool\n"
        "try:\n    DaskPool('tcp://127.0.0.1:9', timeout=0.5)\n"
        "except ClusterError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, timeout=60)
    said = done.stdout.decode()
    assert said.startswith("cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    assert said.count("\n") == 1
