"""A throwaway LAN made of Linux network namespaces: create, run inside, tear down.

``Lan`` builds one layer-2 segment: a bridge that lives in a namespace of its
own, and one namespace per host, each joined to the bridge by a veth pair and
given an address on one private /24 (``lo`` up too). Every interface is
created directly inside a namespace of ours, so the root namespace's network
is never touched, not even for a moment.

Names: every namespace is ``cardring-lan-<pid>-<start>-<role>``, where pid and
start (the owner's start time, in clock ticks since boot) identify the process
that made it. A namespace whose owner is gone (a crashed or SIGKILLed run) is
stale, and ``clean_stale`` removes it; ``Lan.up`` calls it first. The start
time is there so that a recycled pid cannot make a dead run look alive.

Teardown happens on every path: ``Lan`` is a context manager whose exit
(and a failed ``up``) tears down with SIGINT/SIGTERM/SIGHUP held back until it
is finished, and a small reaper process (``python -m scenarios.oldmaid.netns reap``,
in its own session so a terminal's Ctrl-C does not reach it) waits for its
owner's pipe to close and removes what is left, which covers the owner being
SIGKILLed. Deleting a namespace first kills the processes still inside it,
because a namespace with a process in it outlives ``ip netns del`` (and so do
its veths).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

PREFIX = "cardring-lan-"
NAME = re.compile(re.escape(PREFIX) + r"(?P<pid>\d+)-(?P<start>\d+)-(?P<role>[a-z0-9]+)")
BRIDGE_ROLE = "br"
BRIDGE = "br0"
HOST_IF = "eth0"

# Every `ip` call, and every wait for processes to die, is bounded by these.
IP_TIMEOUT = 10.0
KILL_TIMEOUT = 5.0
REAPER_TIMEOUT = 15.0

_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


class NetnsError(RuntimeError):
    """An ``ip`` command failed; the message holds the command and what it said."""


def ip(*args: str, timeout: float = IP_TIMEOUT) -> str:
    """Run ``ip ARGS`` and return its stdout; NetnsError with its stderr if it fails."""
    argv = ["ip", *args]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NetnsError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.strip() or f"exit {done.returncode}"
        raise NetnsError(f"{' '.join(argv)}: {said}")
    return done.stdout


def list_namespaces() -> list[str]:
    """Names of the named network namespaces (``ip netns list``)."""
    # Lines look like "name (id: 3)" or just "name".
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


def our_namespaces() -> list[str]:
    """Every namespace with this module's prefix, whoever made it."""
    return [name for name in list_namespaces() if name.startswith(PREFIX)]


def process_start(pid: int) -> int | None:
    """A process's start time in clock ticks since boot; None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    return int(stat.rpartition(")")[2].split()[19])


def owner_alive(name: str) -> bool:
    """Whether the process that made this namespace still runs (unparseable names: assume so)."""
    match = NAME.fullmatch(name)
    if match is None:
        return True
    return process_start(int(match["pid"])) == int(match["start"])


def namespace_pids(name: str) -> list[int]:
    try:
        return [int(pid) for pid in ip("netns", "pids", name).split()]
    except NetnsError:
        return []


def delete_namespace(name: str) -> None:
    """Kill what still runs inside, then delete the namespace (and with it its interfaces)."""
    deadline = time.monotonic() + KILL_TIMEOUT
    while (pids := namespace_pids(name)) and time.monotonic() < deadline:
        for pid in pids:
            # Only processes inside our own namespace: ones this harness started.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    ip("netns", "delete", name)


def delete_namespaces(names: Sequence[str]) -> list[str]:
    """Delete those of ``names`` that exist; the errors, one line each (empty: all gone)."""
    errors = []
    try:
        existing = set(list_namespaces())
    except NetnsError as exc:
        return [str(exc)]
    for name in names:
        if name in existing:
            try:
                delete_namespace(name)
            except NetnsError as exc:
                errors.append(str(exc))
    return errors


def clean_stale() -> list[str]:
    """Delete our namespaces whose owner is gone (a crashed run); the names deleted."""
    stale = [name for name in our_namespaces() if not owner_alive(name)]
    delete_namespaces(stale)
    return stale


def namespaces_unavailable() -> str | None:
    """Why this process cannot make network namespaces, or None if it can.

    Found out by making and deleting a throwaway one: being root is not
    enough inside some containers.
    """
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    name = f"{PREFIX}{os.getpid()}-{process_start(os.getpid())}-probe"
    try:
        ip("netns", "add", name)
    except NetnsError as exc:
        euid = os.geteuid()
        return f"cannot create a network namespace (euid {euid}): {exc}"
    try:
        ip("netns", "delete", name)
    except NetnsError as exc:
        return f"created a network namespace but cannot delete it: {exc}"
    return None


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold back SIGINT/SIGTERM/SIGHUP (delivered when done) so cleanup is not cut short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _Terminated(SystemExit):
    """SIGTERM or SIGHUP, raised like Ctrl-C raises KeyboardInterrupt, so finally blocks run."""


def _raise_terminated(signum: int, _frame: object) -> None:
    raise _Terminated(128 + signum)


@contextlib.contextmanager
def terminate_as_exception() -> Iterator[None]:
    """Within this block SIGTERM and SIGHUP raise SystemExit(128+N) instead of killing outright."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, _raise_terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def subnet_for(pid: int) -> str:
    """A private /24 (as ``10.213.X``) that differs between concurrent runs most of the time."""
    # Each LAN is sealed inside its own namespaces, so a clash would be harmless;
    # distinct subnets just keep logs of two runs from looking alike.
    return f"10.213.{pid % 250 + 1}"


@dataclass(frozen=True)
class Host:
    role: str  # short name: a, b, c, ...
    netns: str
    address: str  # on the LAN's /24, on HOST_IF

    def exec_prefix(self) -> list[str]:
        """The command prefix that runs a program inside this host's namespace."""
        return ["ip", "netns", "exec", self.netns]


class Lan:
    """One bridge (in its own namespace) and a namespace per host, on one /24.

    Use as ``with Lan(["a", "b", "c"]) as lan:``; ``lan.hosts["a"].exec_prefix()``
    runs a command on host a. Everything is gone after the block, however it ends.
    """

    def __init__(self, roles: Sequence[str], *, reaper: bool = True) -> None:
        if len(set(roles)) != len(roles) or not roles or len(roles) > 250:
            raise ValueError(f"need 1 to 250 distinct host roles, got {list(roles)}")
        for role in roles:
            if not re.fullmatch(r"[a-z0-9]{1,8}", role) or role in (BRIDGE_ROLE, "probe"):
                raise ValueError(f"a host role is 1-8 of a-z 0-9 (not br, probe): {role!r}")
        pid = os.getpid()
        self.tag = f"{PREFIX}{pid}-{process_start(pid)}-"
        self.subnet = subnet_for(pid)
        self.bridge_netns = self.tag + BRIDGE_ROLE
        self.hosts = {
            role: Host(role, self.tag + role, f"{self.subnet}.{number}")
            for number, role in enumerate(roles, 1)
        }
        self.use_reaper = reaper
        self._reaper: subprocess.Popen[bytes] | None = None
        self.stale_removed: list[str] = []
        self.setup_time: float | None = None
        self.teardown_errors: list[str] = []

    @property
    def namespaces(self) -> list[str]:
        return [self.bridge_netns, *(host.netns for host in self.hosts.values())]

    def __enter__(self) -> Lan:
        self.up()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.down()

    def up(self) -> None:
        """Build the LAN; if anything fails (or a signal comes), tear down and re-raise."""
        started = time.monotonic()
        try:
            self.stale_removed = clean_stale()
            if self.use_reaper:
                self._start_reaper()
            self._build()
        except BaseException:
            self.down()
            raise
        self.setup_time = time.monotonic() - started

    def _build(self) -> None:
        br = self.bridge_netns
        ip("netns", "add", br)
        ip("-n", br, "link", "set", "lo", "up")
        ip("-n", br, "link", "add", BRIDGE, "type", "bridge")
        # mDNS goes to 224.0.0.251, which is link-local and flooded anyway; no
        # snooping keeps any other multicast from depending on IGMP timing.
        ip("-n", br, "link", "set", BRIDGE, "type", "bridge", "mcast_snooping", "0")
        ip("-n", br, "link", "set", BRIDGE, "up")
        for host in self.hosts.values():
            ns = host.netns
            ip("netns", "add", ns)
            port = f"v{host.role}"
            # Both ends are born inside our namespaces: nothing appears in the root one.
            ip("-n", br, "link", "add", port, "type", "veth", "peer", "name", HOST_IF, "netns", ns)
            ip("-n", br, "link", "set", port, "master", BRIDGE)
            ip("-n", br, "link", "set", port, "up")
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "addr", "add", f"{host.address}/24", "dev", HOST_IF)
            ip("-n", ns, "link", "set", HOST_IF, "up")
            # No default route in here. zeroconf names its interface for multicast
            # (and works without this, as measured); a sender that does not
            # would otherwise get ENETUNREACH for 224.0.0.251.
            ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", HOST_IF)

    def down(self) -> None:
        """Delete every namespace of this LAN (processes inside are killed first)."""
        with signals_held():
            self.teardown_errors = delete_namespaces(self.namespaces)
            self._stop_reaper()

    def _start_reaper(self) -> None:
        # The reaper's pipe is not inheritable, so only this process holds it:
        # it reads EOF exactly when this process ends, however it ends.
        self._reaper = subprocess.Popen(
            [sys.executable, "-m", "scenarios.oldmaid.netns", "reap", *self.namespaces],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd=Path(__file__).resolve().parent.parent,
        )

    def _stop_reaper(self) -> None:
        reaper, self._reaper = self._reaper, None
        if reaper is None:
            return
        assert reaper.stdin is not None
        with contextlib.suppress(OSError):
            reaper.stdin.close()
        try:
            reaper.wait(timeout=REAPER_TIMEOUT)
        except subprocess.TimeoutExpired:
            reaper.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                reaper.wait(timeout=KILL_TIMEOUT)

    def check_gone(self) -> list[str]:
        """Namespaces of this LAN that still exist (empty after a clean teardown)."""
        existing = set(list_namespaces())
        return [name for name in self.namespaces if name in existing]


def _reap(names: Sequence[str]) -> int:
    """Wait for the owner to close our stdin (or die), then delete ``names``."""
    # Ctrl-C and hang-ups are for the owner; this process must outlive it.
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    bad = [name for name in names if not name.startswith(PREFIX)]
    if bad:
        print(f"refusing to delete namespaces without the {PREFIX} prefix: {bad}", file=sys.stderr)
        return 2
    errors = delete_namespaces(names)
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "reap":
        sys.exit(_reap(sys.argv[2:]))
    print("usage: python -m scenarios.oldmaid.netns reap NETNS...", file=sys.stderr)
    sys.exit(2)
