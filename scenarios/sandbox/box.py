"""The box one program runs in: what it sees, who it is, what it may take.

A box is bubblewrap (``bwrap``, from the distribution's packages) started by
root, in privileged mode (no user namespace: root can bind any folder, where
a user namespace could not even reach one under a 0700 home), and inside it
util-linux's ``setpriv`` dropping to the box's own uid before the program
runs. So the program:

- is in a **PID namespace** of its own: it sees and can signal only its own
  processes (``/proc`` is the namespace's); when the box's init dies, the
  kernel kills everything left in it;
- runs as **a uid of its own** (one per entrant, never 0, never the runner's),
  with no capabilities and ``no_new_privs``: a set-uid program cannot give it
  root back, and every bind is ``nosuid``;
- sees a **filesystem** of the system's folders read-only (``/usr``, ``/etc``,
  the folders the Python that runs us lives in, our own packages: the
  built-in players run from them), its own folder read-only, and a private
  ``/tmp`` (its ``HOME`` and ``TMPDIR``) of ``scratch_bytes``; nothing else:
  no other entrant's folder, no results, no home. A path to hide that lies
  inside a bound folder gets an empty folder mounted over it;
- has the **network** of its ``BoxNetwork`` (``scenarios.sandbox.network``):
  a namespace holding only what the runner listens on for it;
- has a clean **environment**: the placeholders, ``PATH``, ``HOME``, the
  language, its run token; none of the runner's own variables.

Limits on memory, CPU time, open files, file size and processes are the
program's rlimits (``scenarios.programs.Limits``), set before ``bwrap`` runs
and kept through it; the process count is per uid, which is the entrant's
alone, so a fork bomb stops at its own limit.

bubblewrap reports a child killed by signal N as exit status 128 + N:
``exit_status`` turns that back into the signal, as a shell does.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scenarios.sandbox import cgroups
from scenarios.sandbox.cgroups import BoxGroup, Quota

# The system's folders every box shows, read-only, where they exist; a
# symbolic link (``/bin`` -> ``usr/bin`` on a merged-/usr system) stays a link.
SYSTEM_FOLDERS = ("/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The packages the built-in players run from (``python -m ring ...``).
OUR_PACKAGES = ("ring", "services", "scenarios")
SCRATCH = "/tmp"
# The box's environment: these of the runner's own, and nothing else of it.
KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "TZ")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
CLONE_NEWNET = 0x40000000


class SandboxError(Exception):
    """The box cannot be made on this machine; the message is the one line to show."""


def tool(name: str) -> str:
    """The absolute path of a tool the box needs, or ``SandboxError`` naming the package."""
    found = shutil.which(name)
    if found is None:
        package = {"bwrap": "bubblewrap", "setpriv": "util-linux"}.get(name, name)
        raise SandboxError(f"no {name} on this machine (install the {package} package)")
    return found


@dataclass(frozen=True)
class Box:
    """One program's box. ``folders``: its own, bound read-only at the same paths;
    ``workdir``: where it starts (it need not be writable); ``hidden``: paths
    that must not be seen even where a bound folder holds them; ``netns``: the
    network namespace to run in (a path under /proc), None for an empty one of
    its own, unless ``machine_network``: then the machine's (``ring check``'s
    Old Maid cases, whose peers dial the program)."""

    uid: int
    folders: tuple[Path, ...] = ()
    workdir: Path | None = None
    hidden: tuple[Path, ...] = ()
    scratch_bytes: int = 256 * 1024 * 1024
    netns: str | None = None
    machine_network: bool = False
    # What the whole box may take (a control group), where the machine has cgroups.
    quota: Quota | None = None
    extra_system: tuple[Path, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.uid <= 0 or self.uid == os.getuid():
            raise ValueError(f"a box's uid must be its own, not {self.uid}")

    def command(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` in this box."""
        bwrap, setpriv = tool("bwrap"), tool("setpriv")
        args = [
            bwrap,
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--hostname", "box",
            # Only setpriv uses these, to become the box's uid; it drops them all.
            "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
        ]  # fmt: skip
        if self.netns is None and not self.machine_network:
            args.append("--unshare-net")
        # The scratch first: a folder of the program's may well lie under /tmp too.
        scratch = str(self.scratch_bytes)
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--size", scratch, "--perms", "1777", "--tmpfs", SCRATCH]
        args += ["--size", scratch, "--perms", "1777", "--tmpfs", "/dev/shm"]
        shown = [*self.system_folders(), *self.folders]
        bound: list[Path] = []  # folders bound whole: what lies in them is there
        made: set[Path] = set()  # empty folders made to hold a bound one
        for path in shown:
            if path.is_symlink() and str(path) in SYSTEM_FOLDERS:
                args += ["--symlink", os.readlink(path), str(path)]
                continue
            # bwrap makes a missing parent 0700, which the box's uid could not enter.
            for parent in list(reversed(path.parents))[1:]:
                if parent not in made and not any(_inside(parent, b) for b in bound):
                    args += ["--perms", "0755", "--dir", str(parent)]
                    made.add(parent)
            args += ["--ro-bind", str(path), str(path)]
            bound.append(path)
        for path in self.hidden:
            if any(_inside(path, folder) for folder in shown) and path.is_dir():
                args += ["--tmpfs", str(path)]
        args += ["--chdir", str(self.workdir or SCRATCH)]
        args += [
            setpriv, f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
            "--inh-caps=-all", "--no-new-privs", "--",
        ]  # fmt: skip
        return args + list(argv)

    def system_folders(self) -> list[Path]:
        """The read-only folders every program sees, that exist here, parents first."""
        found: list[Path] = []
        for text in SYSTEM_FOLDERS:
            path = Path(text)
            if path.exists() or path.is_symlink():
                found.append(path)
        runtime = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent}
        root = Path(__file__).resolve().parents[2]
        ours = {root / package for package in OUR_PACKAGES if (root / package).is_dir()}
        for path in sorted(runtime | ours | set(self.extra_system)):
            if not any(_inside(path, folder) for folder in found):
                found.append(path)
        return found

    def environment(self, values: Mapping[str, str]) -> dict[str, str]:
        """A clean environment: ``values`` (placeholders and run token) and the basics."""
        env = {key: os.environ[key] for key in KEPT_VARIABLES if key in os.environ}
        env.setdefault("PATH", DEFAULT_PATH)
        env.update(HOME=SCRATCH, TMPDIR=SCRATCH, USER=f"box{self.uid}", PYTHONUNBUFFERED="1")
        env.update(values)
        return env

    def group(self, owner: str = "") -> BoxGroup | None:
        """A control group for one run of this box, where it has a quota and the machine
        has cgroups (``cgroups.available``); None otherwise (its rlimits bound it).
        ``owner``: who sweeps it if its runner is killed (``cgroups.sweep``)."""
        if self.quota is None or cgroups.available() is not None:
            return None
        return BoxGroup.take(self.quota, owner)

    def preparer(
        self, limits: Callable[[], None] | None, group: BoxGroup | None = None
    ) -> Callable[[], None]:
        """What the child runs before ``bwrap``: the limits, into its control group,
        then into the box's network."""
        netns = self.netns

        def prepare() -> None:
            if limits is not None:
                limits()
            if group is not None:
                group.enter()
            if netns is not None:
                _enter_network(netns)

        return prepare

    def shown(self) -> dict[str, object]:
        """What the evidence says of this box."""
        quota = self.quota if self.quota is not None and cgroups.available() is None else None
        return {
            "tool": "bubblewrap",
            "uid": self.uid,
            "folders": [str(path) for path in self.folders],
            "scratch_mb": self.scratch_bytes // (1024 * 1024),
            "network": (
                "the machine's" if self.machine_network
                else "its own, empty" if self.netns is None
                else "its game's own namespace"
            ),
            "cgroup": None if quota is None else {
                "cores": quota.cores,
                "memory_mb": None if quota.memory_bytes is None else quota.memory_bytes >> 20,
                "processes": quota.processes,
            },
        }


def exit_status(code: int | None) -> int | None:
    """A boxed program's return code as ``subprocess`` would give it unboxed: bubblewrap
    exits with 128 + N for a child killed by signal N."""
    if code is not None and 128 < code < 128 + 65:
        return -(code - 128)
    return code


def box_processes(bwrap_pid: int) -> list[int]:
    """The processes inside the box whose ``bwrap`` is ``bwrap_pid`` (its init left out)."""
    try:
        children = Path(f"/proc/{bwrap_pid}/task/{bwrap_pid}/children").read_text().split()
        init = int(children[0])
        namespace = os.readlink(f"/proc/{init}/ns/pid")
    except (OSError, IndexError, ValueError):
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != init:
            try:
                if os.readlink(entry / "ns" / "pid") == namespace:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _enter_network(netns: str) -> None:
    """In the child, before it runs ``bwrap``: join the network namespace ``netns``."""
    import ctypes

    fd = os.open(netns, os.O_RDONLY)
    if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), f"cannot enter the box's network {netns}")
    os.close(fd)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def covering(paths: Iterable[Path], folder: Path) -> bool:
    """Whether ``folder`` is one of ``paths`` or inside one."""
    return any(_inside(folder, path) for path in paths)
