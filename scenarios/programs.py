"""A student's program under test: started as programs.md 1-2 says, never outliving its case.

``ring check`` (and later ``ring tournament``) gets a program as a command
line. ``Program.start`` replaces the placeholders of docs/protocols/programs.md
(section 1) wherever they appear in its arguments, sets the same values in its
environment, and starts it in a process group of its own with standard input
closed and its output going to two files of the case's directory (files, not
pipes: a program that prints a lot never blocks on a reader that is busy).
``RunningProgram.stop`` kills the whole group, SIGTERM first and SIGKILL after
a grace period, so that nothing the program started survives the case. What
left the group (a daemon's ``setsid``) still carries the run's own token in
its environment (``CARDRING_RUN``, inherited by everything it starts): stop
finds such strays in ``/proc`` and kills them too.

``Limits`` bound what one run may take of the machine (memory, CPU time,
open files, processes), set in the child before it runs the command: a
program past its memory fails to allocate, past its CPU time it is killed
(SIGXCPU), past its files it cannot open another. A tournament runs every
program so.

A program given a ``Box`` (``scenarios.sandbox``) runs in it: bubblewrap and
a uid of its own, in the box's network namespace, with a clean environment.
Its whole box is its process group's leader, so stopping works the same;
SIGTERM goes to the program's own processes first (found by the box's PID
namespace), then the box is killed, and the kernel kills all it held.

A command that cannot be started at all (no such file, not executable) raises
``ProgramError`` with one line that says so; a program that exits at once is
for the caller to notice (``exited``) and report with its last output.
"""

from __future__ import annotations

import contextlib
import os
import resource
import secrets
import shlex
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from scenarios.sandbox import Box, BoxGroup, box_processes, cgroups, exit_status

# After SIGTERM a program gets this long to exit before the group is SIGKILLed.
STOP_GRACE = 1.0
# A process that cannot be reaped even after SIGKILL (stuck in the kernel) is
# given up on after this long: stopping must never hang the checker.
REAP_TIMEOUT = 5.0
# How much of a program's output a report quotes (the files keep it all).
TAIL_LINES = 20
# Each run's own token, in its environment and so in everything it starts.
RUN_TAG = "CARDRING_RUN"
PROC = Path("/proc")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

# The placeholders of docs/protocols/programs.md 1 and the environment variable of each.
PLACEHOLDERS = {
    "host": "CARDRING_HOST",
    "port": "CARDRING_PORT",
    "address": "CARDRING_ADDRESS",
    "name": "CARDRING_NAME",
    "seat": "CARDRING_SEAT",
    "nick": "CARDRING_NICK",
    "table": "CARDRING_TABLE",
}


class ProgramError(Exception):
    """The program cannot be run at all; the message is the one line to show."""


def substitute(argv: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """``argv`` with every ``{key}`` of ``values`` replaced, wherever it appears.

    Plain replacement, not ``str.format``: a student's arguments may hold other
    braces (JSON, shell code), which stay as they are.
    """
    unknown = set(values) - set(PLACEHOLDERS)
    if unknown:
        unknown_list = ", ".join(sorted(unknown))
        raise ValueError(f"not a placeholder of docs/protocols/programs.md: {unknown_list}")
    result = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        result.append(arg)
    return result


def environment(values: Mapping[str, str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The program's environment: ours (or ``base``), the values under programs.md 1's names."""
    env = dict(os.environ if base is None else base)
    env.update({PLACEHOLDERS[key]: value for key, value in values.items()})
    env.setdefault("PYTHONUNBUFFERED", "1")  # a Python student's prints reach the log at once
    return env


@dataclass(frozen=True)
class Limits:
    """What one run of a program may take; None: no limit of that kind.

    Memory is the data limit (RLIMIT_DATA: the heap and every private writable
    mapping), not the address space: a JVM reserves far more address space than
    it uses, and would not even start under a limit on it.
    """

    memory_bytes: int | None = 2 * 1024**3
    cpu_seconds: int | None = None
    open_files: int | None = 1024
    # Any one file it writes, its output files included: a program printing in a
    # loop is stopped (SIGXFSZ) before it fills the disk.
    file_bytes: int | None = None
    # Processes and threads of its uid (RLIMIT_NPROC): only a boxed program has a uid
    # of its own, so only there is this a bound on it alone (a fork bomb stays in it).
    processes: int | None = None

    def apply(self) -> None:
        """Set the limits in this process (the child, before it runs the command)."""
        # A runner that ignores Ctrl-C in its workers must not pass that on to the program.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # CPU time: SIGXCPU at the limit, SIGKILL a second later (for one that ignores it).
        for kind, value, grace in (
            (resource.RLIMIT_DATA, self.memory_bytes, 0),
            (resource.RLIMIT_CPU, self.cpu_seconds, 1),
            (resource.RLIMIT_NOFILE, self.open_files, 0),
            (resource.RLIMIT_FSIZE, self.file_bytes, 0),
            (resource.RLIMIT_NPROC, self.processes, 0),
        ):
            if value is not None:
                _, hard = resource.getrlimit(kind)
                unlimited = hard == resource.RLIM_INFINITY
                soft = value if unlimited else min(value, hard)
                resource.setrlimit(
                    kind, (soft, soft + grace if unlimited else min(hard, soft + grace))
                )


@dataclass(frozen=True)
class Program:
    """A command line to test; ``cwd`` is where it runs (the checker's own by default);
    ``limits``: what each run may take (None: as much as the checker itself may)."""

    argv: tuple[str, ...]
    cwd: Path | None = None
    limits: Limits | None = None
    # Begins every run's token: a tournament finds all its programs by it (``sweep``).
    tag_prefix: str = ""
    box: Box | None = None  # None: it runs as the runner, seeing the whole machine

    def __post_init__(self) -> None:
        if not self.argv:
            raise ProgramError("no program to run: give its command after --")

    @property
    def shown(self) -> str:
        return shlex.join(self.argv)

    async def start(self, values: Mapping[str, str], logs: Path, label: str) -> RunningProgram:
        """Start it for one case, its output in ``logs/label.stdout`` and ``.stderr``."""
        argv = substitute(self.argv, values)
        tag = self.tag_prefix + secrets.token_hex(8)
        env = environment(values) | {RUN_TAG: tag}
        cwd, run, group = self.cwd, argv, None
        setup = self.limits.apply if self.limits is not None else None
        if self.box is not None:
            box = self.box
            given = {PLACEHOLDERS[key]: value for key, value in values.items()}
            env = box.environment(given | {RUN_TAG: tag})
            cwd, run = None, box.command(argv)
            group = box.group(self.tag_prefix)
            setup = box.preparer(self.limits.apply if self.limits is not None else None, group)
        logs.mkdir(parents=True, exist_ok=True)
        stdout_path = logs / f"{label}.stdout"
        stderr_path = logs / f"{label}.stderr"
        try:
            process = await _open(run, stdout_path, stderr_path, cwd, env, setup)
        except BaseException:
            if group is not None:
                group.remove_now()  # nothing ever ran in it
            raise
        return RunningProgram(
            argv, process, stdout_path, stderr_path, trio.current_time(), tag, self.box, group
        )


async def _open(
    argv: list[str],
    stdout_path: Path,
    stderr_path: Path,
    cwd: Path | None,
    env: dict[str, str],
    setup: Callable[[], None] | None,
) -> trio.Process:
    """The process, its output going to the two files; ``ProgramError`` if it cannot run."""
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        try:
            return await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=cwd,
                env=env,
                start_new_session=True,  # its own process group, killed whole
                preexec_fn=setup,
            )
        except FileNotFoundError:
            raise ProgramError(f"cannot run {argv[0]!r}: no such program") from None
        except PermissionError:
            raise ProgramError(f"cannot run {argv[0]!r}: it is not executable") from None
        except OSError as exc:
            raise ProgramError(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from None


@dataclass
class RunningProgram:
    """One run of a program; ``stop`` it (always) when its case is over."""

    argv: list[str]
    process: trio.Process
    stdout_path: Path
    stderr_path: Path
    started: float
    tag: str = ""  # its RUN_TAG token
    box: Box | None = None
    group: BoxGroup | None = None  # its box's control group, removed when it is stopped
    killed: bool = False  # stop found it still running
    strays: int = 0  # processes it started outside its group that stop had to kill
    returncode: int | None = field(default=None)

    @property
    def exited(self) -> bool:
        return self.process.poll() is not None

    @property
    def status(self) -> int | None:
        """Its return code as ``subprocess`` gives it (negative: killed by that signal),
        None while it runs; a box's is turned back from bubblewrap's 128 + N."""
        code = self.process.poll()
        return exit_status(code) if self.box is not None else code

    async def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for it to exit on its own; whether it did."""
        with trio.move_on_after(timeout):
            await self.process.wait()
        return self.exited

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """End it and everything it started: SIGTERM to the group, then SIGKILL."""
        if not self.exited:
            self.killed = True
        if self.box is not None:
            # Not the box itself: killed, it would take its program down at once.
            for pid in box_processes(self.process.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGTERM)
        else:
            self._signal_group(signal.SIGTERM)
        with trio.move_on_after(grace):
            await self.process.wait()
        # Children may linger after the leader exits: the group is killed either way.
        self._signal_group(signal.SIGKILL)
        with trio.move_on_after(REAP_TIMEOUT):
            await self.process.wait()
        self.returncode = self.status
        if self.group is not None:
            await self.group.remove()
        self.strays += _kill_tagged(self.tag)

    def cpu_seconds(self) -> float:
        """CPU time used so far by every process of its group (threads included; a
        wrapper's children too, reaped or not): how a runner tells a program that
        thinks from one that waits."""
        return group_cpu_seconds(self.process.pid)

    def stderr_size(self) -> int:
        """How much it has written on stderr so far: what it writes after is new."""
        try:
            return self.stderr_path.stat().st_size
        except OSError:
            return 0

    def stderr_since(self, offset: int) -> str:
        """What it wrote on stderr from ``offset`` on (the last 64 KiB at most)."""
        try:
            with self.stderr_path.open("rb") as file:
                file.seek(max(offset, self.stderr_size() - 65536))
                return file.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def output(self) -> tuple[list[str], list[str]]:
        """The last lines of its stdout and stderr."""
        return _tail(self.stdout_path), _tail(self.stderr_path)

    def describe_exit(self) -> str:
        code = self.status
        if code is None:
            return "still running"
        if code == -signal.SIGXCPU:
            return "killed by SIGXCPU: past its CPU-time limit"
        if code == -signal.SIGXFSZ:
            return "killed by SIGXFSZ: past its file-size limit"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"


def sweep(prefix: str) -> int:
    """SIGKILL every process whose run token begins with ``prefix`` (every program a
    tournament started, wherever they went), and remove the boxes' control groups a
    killed run of it left; how many processes."""
    killed = _kill_tagged(prefix, whole=False)
    cgroups.sweep(prefix)
    return killed


def _kill_tagged(tag: str, passes: int = 3, *, whole: bool = True) -> int:
    """SIGKILL every process whose environment carries ``RUN_TAG=tag`` (or, not
    ``whole``, a token beginning with ``tag``); how many.

    A few passes: a stray may fork while it is being found. Where there is no
    ``/proc`` (not Linux), the process group is all there is."""
    if not tag or not PROC.is_dir():
        return 0
    entry = f"{RUN_TAG}={tag}".encode()

    def carries(pid: int) -> bool:
        environ = _environ(pid)
        return entry in environ if whole else any(e.startswith(entry) for e in environ)

    killed: set[int] = set()
    for _ in range(passes):
        found = [pid for pid in _pids() if carries(pid)]
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(found)
        if not found:
            break
    return len(killed)


def group_cpu_seconds(pgid: int) -> float:
    """User and system CPU seconds of every process in group ``pgid``, from /proc (0.0
    where there is none): each process's own, and its reaped children's."""
    if not PROC.is_dir():
        return 0.0
    ticks = 0
    for pid in _pids():
        try:
            stat = (PROC / str(pid) / "stat").read_text()
        except OSError:
            continue
        # Fields after the command's closing parenthesis: state is 3, pgrp 5, utime 14.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 14 and int(fields[2]) == pgid:
            ticks += sum(int(value) for value in fields[11:15])
    return ticks / CLOCK_TICKS


def _pids() -> list[int]:
    return [int(p.name) for p in PROC.iterdir() if p.name.isdigit() and int(p.name) != os.getpid()]


def _environ(pid: int) -> list[bytes]:
    try:
        return (PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:  # gone meanwhile, or not ours to read
        return []


def _tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]
