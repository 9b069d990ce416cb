"""``ring serve --fishnet``, ``ring bot fishnet`` and ``ring play fishnet`` as real processes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scenarios.processes import ChildProcess

RING = [sys.executable, "-m", "ring"]
WAIT = 30  # seconds: the bound on any one process in these tests


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ChildProcess, str]]:
    """A FishNet server process on a free port; yields it and its HOST:PORT."""
    child = ChildProcess(
        "fishnet",
        [*RING, "serve", "--fishnet", "0", "--seed", "11", "--move-time", "20"],
        tmp_path,
    )
    try:
        first = child.first_line(WAIT)
        assert first is not None, child.stderr
        match = re.fullmatch(r"fishnet listening on (127\.0\.0\.1:\d+)", first)
        assert match, first
        yield child, match[1]
    finally:
        if child.popen.poll() is None:
            child.popen.kill()
        child.popen.wait(WAIT)


def ring(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RING, *args], input=stdin, capture_output=True, text=True, timeout=WAIT)


def stop(child: ChildProcess, how: int) -> int:
    child.popen.send_signal(how)
    code = child.popen.wait(WAIT)
    child.wait(time.monotonic() + WAIT)  # its output is all read
    return code


def test_a_bot_client_plays_the_built_in_players(server: tuple[ChildProcess, str]) -> None:
    child, address = server
    done = ring(
        "bot", "fishnet", "--level", "smarx", "--server", address,
        "--name", "robo", "--opponent", "SPOT", "--games", "3", "--seed", "4",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4
    assert all(re.fullmatch(r"robo \(smarx\) (won|lost|tied) against SPOT", x) for x in lines[:3])
    assert re.fullmatch(r"robo: \d won, \d tied, \d lost", lines[3])
    assert stop(child, signal.SIGTERM) == 143
    games = [line for line in child.stdout if line.startswith("fishnet: game ")]
    assert len(games) == 3 and all("robo" in line and "spot" in line for line in games)
    assert child.stdout[-1] == "ring serve stopped"


def test_two_bot_processes_meet_through_the_server(server: tuple[ChildProcess, str]) -> None:
    child, address = server
    commands = [
        [*RING, "bot", "fishnet", "--level", level, "--server", address, "--name", me,
         "--opponent", them, "--seed", "1"]
        for level, me, them in (("alice", "ann", "bo"), ("bob", "bo", "ann"))
    ]  # fmt: skip
    bots = [subprocess.Popen(c, stdout=subprocess.PIPE, text=True) for c in commands]
    outputs = [bot.communicate(timeout=WAIT)[0].strip() for bot in bots]
    assert [bot.returncode for bot in bots] == [0, 0]
    verdicts = {re.fullmatch(r"\w+ \(\w+\) (won|lost|tied) against \w+", o)[1] for o in outputs}
    assert verdicts in ({"won", "lost"}, {"tied"})
    assert stop(child, signal.SIGINT) == 130


def test_a_person_plays_a_whole_game_from_the_terminal(server: tuple[ChildProcess, str]) -> None:
    _, address = server
    # Help, two bad inputs, then every rank in turn: ranks not held are refused locally.
    moves = "help\n99\nask\n\u00b2\n" + "".join(f"{r}\n" for _ in range(60) for r in range(13))
    done = ring(
        "play", "fishnet", "--server", address, "--name", "ann", "--opponent", "alice",
        stdin=moves,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"^you are dealt: (\d+ ){6}\d+$", out, re.M)
    assert "ask the opponent for all its cards of that rank" in out  # help
    assert "not a move: '99'" in out and "not a move: 'ask'" in out
    assert "not a move: '\u00b2'" in out  # a digit, but not an ASCII one
    assert re.search(r"you hold no \d+s: ask for a rank in your hand", out)
    assert re.search(r"^your hand: .*\(\d+ cards\)$", out, re.M)
    assert re.search(r"^books: you \d+ \[.*\], alice \d+ \[.*\]$", out, re.M)
    assert re.search(r"^alice surely holds: .*; holds none of: .*$", out, re.M)
    assert re.search(r"^(you win|you lose|a tie): your \d+ books to alice's \d+$", out, re.M)


def test_quit_or_end_of_input_leaves_the_game(server: tuple[ChildProcess, str]) -> None:
    child, address = server
    for name, stdin in (("quitter", "quit\n"), ("eof", "")):
        done = ring(
            "play", "fishnet", "--server", address, "--name", name, "--opponent", "bob",
            stdin=stdin,
        )  # fmt: skip
        assert done.returncode == 1
        # Piped input is not echoed, so the message follows the prompt on its line.
        assert done.stdout.splitlines()[-1].endswith("game over: you left the game")
    stop(child, signal.SIGTERM)
    assert any(line.endswith("(quitter left)") for line in child.stdout)
    assert any(line.endswith("(eof left)") for line in child.stdout)


def test_no_server_is_one_clear_line() -> None:
    done = ring("bot", "fishnet", "--level", "spot", "--server", "127.0.0.1:1", "--name", "x",
                "--opponent", "spot")  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == "x: cannot connect to 127.0.0.1:1: Connection refused"


def test_names_with_spaces_are_refused_before_connecting() -> None:
    done = ring("bot", "fishnet", "--level", "spot", "--name", "a b", "--opponent", "spot")
    assert done.returncode == 2
    assert "argument --name: a name is printable text without spaces, not 'a b'" in done.stderr


def test_serve_needs_a_free_port(server: tuple[ChildProcess, str]) -> None:
    _, address = server
    taken = ring("serve", "--fishnet", address.rpartition(":")[2])
    assert taken.returncode == 2
    first, *_, last = taken.stderr.splitlines()
    assert first.startswith("ring serve: cardring ")  # its version, before anything else
    assert last.startswith("ring serve: fishnet: cannot listen on 127.0.0.1:")
