"""A network namespace for boxes: the runner listens in it; its programs reach nothing else.

``BoxNetwork.open()`` starts the namespace's keeper (``netns_agent.py``, as
root, outside every box) and asks it for sockets made inside the namespace:
a listener (``listen``: a two-player game's seat, an Old Maid table) or a
socket to connect with (``socket``: the checker dialling a student's peer).
Those sockets stay the runner's; the programs started with ``netns`` (the
namespace's path) see the namespace's loopback and nothing of the machine's:
no other seat, no other game, no service of the host. The runner's own
sockets keep working from outside, as a socket belongs to the namespace it
was made in.

``owner(port)`` says which uid holds the other end of a connection accepted
here (the namespace's TCP table, ``/proc/<agent>/net/tcp``): with a uid per
entrant, which entrant dialled. An Old Maid ring shares one namespace (its
peers dial each other), so its table asks this who is joining.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import socket
import subprocess
import sys
from pathlib import Path

import trio

AGENT = Path(__file__).with_name("netns_agent.py")
# The agent answers at once (it makes one socket); these only bound a broken one.
START_TIMEOUT = 5.0
REQUEST_TIMEOUT = 5.0


class NetworkError(Exception):
    """The namespace could not be made or asked; one line."""


class BoxNetwork:
    """One network namespace and its keeper; ``aclose`` it (or leave ``box_network``) when
    its game is over.

    The keeper is a plain process of this one (not a Trio one), so a namespace can
    outlive the Trio run that made it: ``box_network`` keeps a few idle ones for the
    next game of this process (a tournament's worker runs one Trio run a game), which
    saves starting a keeper (15 ms) twice a game (``reusable``).
    """

    def __init__(self, agent: subprocess.Popen[bytes], control: socket.socket) -> None:
        self.agent = agent
        self.control = control
        self._asking = False

    @classmethod
    async def open(cls) -> BoxNetwork:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            agent = subprocess.Popen(
                [sys.executable, "-I", str(AGENT), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        network = cls(agent, ours)
        try:
            with trio.fail_after(START_TIMEOUT):
                line = await network._line()
        except (trio.TooSlowError, NetworkError) as exc:
            network.close()
            raise NetworkError(f"no network namespace for the box: {exc}") from None
        if line != "ready":
            network.close()
            raise NetworkError(f"no network namespace for the box: {line}")
        return network

    @property
    def path(self) -> str:
        """The namespace, for ``setns`` (``Box.netns``)."""
        return f"/proc/{self.agent.pid}/ns/net"

    async def listen(self, host: str = "127.0.0.1", port: int = 0) -> trio.SocketListener:
        sock = await self._ask(f"L {host} {port}")
        return trio.SocketListener(trio.socket.from_stdlib_socket(sock))

    async def socket(self, family: int = socket.AF_INET) -> trio.socket.SocketType:
        return trio.socket.from_stdlib_socket(await self._ask(f"S {int(family)}"))

    async def connect(self, host: str, port: int) -> trio.SocketStream:
        """A connection made inside the namespace (to a program listening there)."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = await self.socket(family)
        try:
            await sock.connect((host, port))
        except BaseException:
            sock.close()
            raise
        return trio.SocketStream(sock)

    def owner(self, port: int) -> int | None:
        """The uid that owns the namespace's TCP socket bound to local ``port`` (the far
        end of a connection we accepted), None if there is none."""
        for table in ("tcp", "tcp6"):
            try:
                lines = Path(f"/proc/{self.agent.pid}/net/{table}").read_text().splitlines()
            except OSError:
                continue
            for line in lines[1:]:
                fields = line.split()
                # local_address is "ADDR:PORT" in hex, state "0A" a listener, uid the 8th.
                mine = len(fields) > 7 and fields[3] != "0A"
                if mine and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    return int(fields[7])
        return None

    def reusable(self) -> bool:
        """Whether the next game may have it: its keeper is alive. Nothing of the last
        game is left in it: its programs' boxes are gone (a PID namespace's init exits
        only once every process of it has, and with them their sockets), and the
        runner's own sockets are closed (only TIME_WAIT remains, inert). Not read from
        its TCP table, which costs 4 ms a read."""
        return self.agent.poll() is None

    def close(self) -> None:
        """End the keeper (it ends when its control socket closes) and reap it."""
        self.control.close()
        try:
            self.agent.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.agent.kill()
            self.agent.wait()

    async def aclose(self) -> None:
        """``close``, waiting for the keeper's exit without blocking the Trio run."""
        self.control.close()
        with trio.move_on_after(START_TIMEOUT):
            while self.agent.poll() is None:
                await trio.sleep(0.002)
        if self.agent.poll() is None:
            self.agent.kill()
            self.agent.wait()

    async def _ask(self, request: str) -> socket.socket:
        with trio.fail_after(REQUEST_TIMEOUT):
            while self._asking:  # one request at a time on the control socket
                await trio.sleep(0.001)
            self._asking = True
            try:
                with trio.socket.from_stdlib_socket(self.control.dup()) as control:
                    await control.send((request + "\n").encode())
                    data, ancillary, _, _ = await control.recvmsg(
                        256, socket.CMSG_SPACE(array.array("i", [0]).itemsize)
                    )
            finally:
                self._asking = False
        fds = array.array("i")
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        if not fds:
            raise NetworkError(data.decode(errors="replace").strip() or "the agent is gone")
        return socket.socket(fileno=fds[0])

    async def _line(self) -> str:
        pending = b""
        with trio.socket.from_stdlib_socket(self.control.dup()) as control:
            while b"\n" not in pending:
                chunk = await control.recv(1)  # a byte at a time: nothing past the line
                if not chunk:
                    raise NetworkError("the agent ended")
                pending += chunk
        return pending.decode(errors="replace").strip()


# Idle namespaces of this process, for its next games (``box_network``).
IDLE: list[BoxNetwork] = []
MOST_IDLE = 8


@contextlib.asynccontextmanager
async def box_network():  # type: ignore[no-untyped-def]
    """``async with box_network() as network:`` a namespace for the body's programs: an
    idle one of this process's, or a new one; kept for the next if it is left clean."""
    network = None
    while IDLE and network is None:
        idle = IDLE.pop()
        if idle.reusable():
            network = idle
        else:
            idle.close()
    if network is None:
        network = await BoxNetwork.open()
    try:
        yield network
    finally:
        if len(IDLE) < MOST_IDLE and network.reusable():
            IDLE.append(network)
        else:
            network.close()


@atexit.register
def _close_idle() -> None:
    while IDLE:
        IDLE.pop().close()
