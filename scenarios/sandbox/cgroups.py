"""A control group per box: its share of the cores, its memory, its processes, all together.

An rlimit bounds one process; a box may hold many (a JVM's threads, a fork
bomb, a spinner on every core). A control group bounds them all at once:
``cpu`` at ``cores`` of the machine's cores (the CFS quota: a program
spinning on every core still gets one core's time, and its opponent the
rest), ``memory`` at ``memory_bytes`` for the whole box (swap included where
the kernel counts it), ``pids`` at ``processes``.

Made under the cgroup the runner itself is in, in each controller's
hierarchy where it is a cgroup v1 one (as on Debian 12's kernels with the
hybrid layout), or in the unified (v2) hierarchy where the runner's cgroup
delegates the controllers to its children (``cgroup.subtree_control``).
Where neither is writable, ``available()`` says why, and the box is bounded
by its rlimits alone (``scenarios.programs.Limits``), as the probe's line
says. The program's process enters the group before it runs ``bwrap``
(``enter``, in the child), so everything the box starts is in it;
``remove`` kills what is left and deletes the group.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import secrets
import signal
from dataclasses import dataclass
from pathlib import Path

import trio

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("cpu", "memory", "pids")
PERIOD_US = 100_000  # the CFS period: a quota of cores x this per period
# The box's processes are already killed when it is removed: this only waits for the
# kernel to finish them.
REMOVE_TIMEOUT = 5.0
REMOVE_POLL = 0.002
PREFIX = "cardring-box-"


@dataclass(frozen=True)
class Quota:
    """What one box may take in all: cores (None: no CPU quota), memory, processes."""

    cores: float | None = 1.0
    memory_bytes: int | None = None
    processes: int | None = None


def _own_paths() -> dict[str, str]:
    """This process's cgroup in each hierarchy: controller (or "" for v2) -> path."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _v1_parents() -> dict[str, Path]:
    """Where each controller's groups go in a v1 hierarchy, where it is writable."""
    found = {}
    own = _own_paths()
    for controller in CONTROLLERS:
        if controller in own and (ROOT / controller / "cgroup.procs").exists():
            parent = ROOT / controller / own[controller].lstrip("/")
            if os.access(parent, os.W_OK):
                found[controller] = parent
    return found


def _v2_parent() -> Path | None:
    own = _own_paths().get("")
    for mount in (ROOT, ROOT / "unified"):
        if own is None or not (mount / "cgroup.controllers").exists():
            continue
        parent = mount / own.lstrip("/")
        try:
            delegated = set((parent / "cgroup.subtree_control").read_text().split())
        except OSError:
            continue
        if set(CONTROLLERS) <= delegated and os.access(parent, os.W_OK):
            return parent
    return None


@functools.cache
def available() -> str | None:
    """None if boxes can have their groups here, else why not (one clause). Asked at
    every program's start, and the answer does not change in a process's life."""
    if os.geteuid() != 0:
        return "not root"
    if set(_v1_parents()) == set(CONTROLLERS) or _v2_parent() is not None:
        return None
    return "no writable cgroup with the cpu, memory and pids controllers"


class BoxGroup:
    """One box's control group (one directory per v1 hierarchy, or one in v2).

    ``take`` one; ``remove`` empties it and keeps it for this process's next box of
    the same owner (making one costs ~15 ms, twice a game), or deletes it."""

    def __init__(self, quota: Quota, owner: str = "") -> None:
        self.owner = owner
        # The owner (a tournament's run prefix) in the name: its next run removes what a
        # killed one left (``sweep``).
        name = f"{PREFIX}{owner}-{secrets.token_hex(6)}"
        v1 = _v1_parents()
        if set(v1) == set(CONTROLLERS):
            self.dirs = {controller: parent / name for controller, parent in v1.items()}
        else:
            parent = _v2_parent()
            if parent is None:
                raise OSError(available() or "no cgroup for the box")
            self.dirs = {controller: parent / name for controller in CONTROLLERS}
        self.v2 = len(set(self.dirs.values())) == 1
        for folder in set(self.dirs.values()):
            folder.mkdir()
        self._limit(quota)

    @classmethod
    def take(cls, quota: Quota, owner: str = "") -> BoxGroup:
        """An idle group of this process's for ``owner`` (limited anew), or a new one."""
        idle = IDLE.get(owner, [])
        while idle:
            group = idle.pop()
            if all(folder.is_dir() for folder in group.dirs.values()) and not group.processes():
                group._limit(quota)
                return group
            group.remove_now()
        return cls(quota, owner)

    def _limit(self, quota: Quota) -> None:
        cpu, memory, pids = self.dirs["cpu"], self.dirs["memory"], self.dirs["pids"]
        if quota.cores is not None:
            quota_us = max(1000, int(quota.cores * PERIOD_US))
            if self.v2:
                _write(cpu / "cpu.max", f"{quota_us} {PERIOD_US}")
            else:
                _write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
                _write(cpu / "cpu.cfs_quota_us", str(quota_us))
        if quota.memory_bytes is not None:
            if self.v2:
                _write(memory / "memory.max", str(quota.memory_bytes))
                with contextlib.suppress(OSError):
                    _write(memory / "memory.swap.max", "0")
            else:
                _write(memory / "memory.limit_in_bytes", str(quota.memory_bytes))
                with contextlib.suppress(OSError):  # only where swap is accounted
                    _write(memory / "memory.memsw.limit_in_bytes", str(quota.memory_bytes))
        if quota.processes is not None:
            _write(pids / "pids.max", str(quota.processes))

    def enter(self) -> None:
        """Put this process in the group (the child, before it runs ``bwrap``)."""
        pid = str(os.getpid())
        for folder in set(self.dirs.values()):
            _write(folder / "cgroup.procs", pid)

    def memory_failures(self) -> int:
        """How many times the box's memory reached its limit (0 where not counted)."""
        memory = self.dirs["memory"]
        try:
            if self.v2:
                for line in (memory / "memory.events").read_text().splitlines():
                    if line.startswith("max "):
                        return int(line.split()[1])
                return 0
            return int((memory / "memory.failcnt").read_text())
        except (OSError, ValueError):
            return 0

    async def remove(self, timeout: float = REMOVE_TIMEOUT) -> bool:
        """Kill whatever is left in the group and delete it; whether it is gone. Its
        processes die as the kernel gets to them, so this waits for them, at most
        ``timeout``."""
        with trio.move_on_after(timeout):
            while left := self.processes():
                for pid in left:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                await trio.sleep(REMOVE_POLL)
            idle = IDLE.setdefault(self.owner, [])
            if len(idle) < MOST_IDLE:
                idle.append(self)  # empty: ready for the next box
                return True
            while not self.remove_now():
                await trio.sleep(REMOVE_POLL)  # EBUSY until the last exit is done
        return self.remove_now()

    def remove_now(self) -> bool:
        """Delete the group if nothing is in it any more; whether it is gone."""
        gone = True
        for folder in set(self.dirs.values()):
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                gone = False
        return gone

    def processes(self) -> list[int]:
        found: set[int] = set()
        for folder in set(self.dirs.values()):
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return sorted(found)


# Empty groups of this process, by owner, for its next boxes (``BoxGroup.take``).
IDLE: dict[str, list[BoxGroup]] = {}
MOST_IDLE = 8


@atexit.register
def _remove_idle() -> None:
    for groups in IDLE.values():
        while groups:
            groups.pop().remove_now()


def sweep(owner: str) -> int:
    """Kill what is in every group ``owner`` made, and delete them (a killed runner's
    leftovers); how many groups there were."""
    if not owner or os.geteuid() != 0:
        return 0
    parents = set(_v1_parents().values())
    v2 = _v2_parent()
    if v2 is not None:
        parents.add(v2)
    found = 0
    for parent in parents:
        for folder in parent.glob(f"{PREFIX}{owner}-*"):
            found += 1
            with contextlib.suppress(OSError, ValueError):
                for pid in (folder / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)
            with contextlib.suppress(OSError):
                folder.rmdir()
    return found


def _write(path: Path, value: str) -> None:
    with open(path, "w") as file:
        file.write(value)
