"""Where one game is played: ``play_game``, the same in this machine's pool and on Dask.

``play_game`` takes a ``GameJob`` and returns its ``GameOutcome``; it runs
its own Trio loop, so any process or thread can call it. Every program of a
game carries a run token beginning with the game's own prefix (the
tournament's, then the game's number): when the game is over, or the worker
is told to stop (SIGTERM, which a pool's worker also gets when the runner
dies: ``die_with_parent``), everything carrying that prefix is killed, so no
program outlives its game, even one that left its process group.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import msgspec
import trio

from scenarios.programs import sweep
from scenarios.tournament import ring_game, two_player
from scenarios.tournament.hosts import HOSTS
from scenarios.tournament.jobs import BoxSettings, Entrant, GameJob, GameOutcome

# The run-token prefixes of the games this process is playing now.
_playing: set[str] = set()
_PR_SET_PDEATHSIG = 1


def play_game(job: GameJob) -> GameOutcome:
    """Play one game to its end; raises ``two_player.Unfinished`` if it never ends."""
    if job.game != "oldmaid" and job.game not in HOSTS:
        raise ValueError(f"no tournament game {job.game!r}")
    prefix = f"{job.tag_prefix}{job.number:05d}-"
    job = msgspec.structs.replace(job, tag_prefix=prefix)
    _playing.add(prefix)
    try:
        with tempfile.TemporaryDirectory(prefix="ring-game-") as logs:
            if job.game == "oldmaid":
                result, files = trio.run(ring_game.play, job, Path(logs))
            else:
                result, files = trio.run(two_player.play, job, HOSTS[job.game], Path(logs))
    finally:
        sweep(prefix)
        _playing.discard(prefix)
    return GameOutcome(result, files, worker=f"{socket.gethostname()}:{os.getpid()}")


def start_worker() -> None:
    """A pool worker's set-up: Ctrl-C is the runner's to handle; SIGTERM (a stop, or the
    runner's death) kills the games' programs and exits at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop_now)
    die_with_parent()


def die_with_parent() -> None:
    """Ask Linux for SIGTERM when the parent dies (prctl PR_SET_PDEATHSIG); elsewhere a
    no-op, and the runner's own sweep at its next start is what remains."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop_now(signum: int, frame: object) -> None:
    for prefix in list(_playing):
        sweep(prefix)
    os._exit(128 + signum)


def check_box(box: BoxSettings | None) -> list[str]:
    """Why this machine cannot make the tournament's boxes (nothing if it can)."""
    if box is None:
        return []
    from scenarios.sandbox.box import SandboxError
    from scenarios.sandbox.probe import probe

    try:
        probe(box.uids[0][1])
    except SandboxError as exc:
        return [f"cannot box the programs: {exc}"]
    return []


def check_commands(entrants: Sequence[Entrant]) -> list[str]:
    """One line for each program command that cannot be started on this machine."""
    problems = []
    for entrant in entrants:
        if entrant.level is not None:
            continue
        if not entrant.command:
            problems.append(f"{entrant.name} has no command")
            continue
        program = entrant.command[0]
        cwd = Path(entrant.cwd) if entrant.cwd else Path.cwd()
        if "/" in program:
            path = cwd / program
            if not path.is_file():
                problems.append(f"cannot run {entrant.name}'s command: no file {program}")
            elif not os.access(path, os.X_OK):
                problems.append(f"cannot run {entrant.name}'s command: {program} is not executable")
        elif shutil.which(program) is None:
            problems.append(f"cannot run {entrant.name}'s command: no program {program!r} on PATH")
    return problems
