"""Listen and dial helpers shared by the peers and every table service."""

from __future__ import annotations

import contextlib
import contextvars
import enum
import errno
import ipaddress
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

import trio

from ring.wire.transport import SEND_FAILED, plain_ip

DEFAULT_MAX_CONNECTIONS = 256
# A student testing a ring of 8 peers from one machine holds 8 table
# connections; twice that leaves room for status pollers and reconnects.
DEFAULT_MAX_PER_ADDRESS = 16
# A refusal hook may wait this long for the newcomer's first message, so that
# its answer is not lost to the reset a late request into a closed socket draws.
REFUSAL_READ_TIMEOUT = 1.0
REFUSAL_TIMEOUT = 2.0  # the whole refusal, shielded: the read and the answer
# Refusals under way at once; beyond them a refused newcomer is closed at once,
# so a flood of connections cannot hold a descriptor each while it is refused.
MAX_REFUSING = 32
# Where a program on the server's own machine connects from unless it picks an
# address: benches and scenarios open hundreds of connections from them, so the
# per-address cap leaves them alone. Any other address counts as a machine of
# its own, the rest of 127.0.0.0/8 included: a program must choose such a source
# on purpose, as the capacity bench's hostile clients do (127.0.0.2) to stand
# for one student's machine on a LAN. (Until 2026-11-26 all of 127.0.0.0/8 was
# exempt, and those 1,200 held connections were never capped.)
IPV4_LOOPBACK, IPV6_LOOPBACK = "127.0.0.1", "::1"
LOCAL_ADDRESSES = frozenset({IPV4_LOOPBACK, IPV6_LOOPBACK})
# How many free IPv4 ports to try before one is free on ::1 too (``open_listeners``).
LOOPBACK_PORT_TRIES = 20


class Refusal(enum.Enum):
    """Which cap a newcomer met; the value says it in words."""

    SERVER_FULL = "server full"
    ADDRESS_FULL = "too many connections from your address"


Handler = Callable[[trio.SocketStream], Awaitable[None]]
Refuse = Callable[[trio.SocketStream, Refusal], Awaitable[None]]


class _Slot:
    """One accepted connection, as ``listen`` counts it against its caps."""

    def __init__(self, address: str | None) -> None:
        self.address = address
        self.established = False
        self.scope = trio.CancelScope()


# The slot of the connection the current task handles (each handler runs in
# its own task, so each sees its own).
_current_slot: contextvars.ContextVar[_Slot | None] = contextvars.ContextVar(
    "ring_net_slot", default=None
)


def mark_established() -> None:
    """Tell ``listen`` that the connection this task handles has proved itself.

    A handler calls it once its client has sent something valid (the table:
    any well-formed request; a peer: any well-formed message). Established
    connections are never evicted to make room for newcomers. Outside a
    ``listen`` handler it does nothing.
    """
    slot = _current_slot.get()
    if slot is not None:
        slot.established = True


async def listen(
    handler: Handler,
    host: str,
    port: int,
    *,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    max_per_address: int | None = None,
    exempt_loopback: bool = True,
    refuse: Refuse | None = None,
    listener: trio.SocketListener | None = None,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept connections on host:port (0 picks a free port) until cancelled; or on
    ``listener``, made by the caller (a tournament's, in its programs' box network).

    ``await nursery.start(serve, ...)`` returns the bound (host, port) once
    the socket listens. At most ``max_connections`` are open at once, and at
    most ``max_per_address`` from one address (None or 0: no such cap; the
    machine's own 127.0.0.1 and ::1 are exempt unless ``exempt_loopback`` is
    False, since benches and scenarios run every client from there;
    ``LOCAL_ADDRESSES``). A newcomer at a
    cap makes room by closing the oldest connection that has not yet proved
    itself (``mark_established``): of its own address at the per-address
    cap, of any address at the global one. If there is none, the newcomer is
    refused: ``refuse(stream, why)`` may tell it in its protocol's words
    (in its own task, at most ``REFUSAL_TIMEOUT``, shielded), then it is
    closed. So a flood of idle connections cannot lock players out, one
    address cannot take every place, and no player who has spoken is cut off.
    """
    listeners = [listener] if listener else await open_listeners(host, port)
    bound_host, bound_port = listeners[0].socket.getsockname()[:2]
    # Open connections, oldest first (a dict keeps insertion order).
    slots: dict[_Slot, None] = {}
    refusing = 0

    def evict_first_unproven(among: list[_Slot]) -> bool:
        victim = next((slot for slot in among if not slot.established), None)
        if victim is None:
            return False
        # Its task closes its stream as it unwinds; the place is ours now.
        del slots[victim]
        victim.scope.cancel()
        return True

    def make_room(address: str | None) -> Refusal | None:
        exempt = address is None or (exempt_loopback and _is_local(address))
        if max_per_address and not exempt:
            mine = [slot for slot in slots if slot.address == address]
            if len(mine) >= max_per_address and not evict_first_unproven(mine):
                return Refusal.ADDRESS_FULL
        if len(slots) >= max_connections and not evict_first_unproven(list(slots)):
            return Refusal.SERVER_FULL
        return None

    async def refused(stream: trio.SocketStream, why: Refusal) -> None:
        nonlocal refusing
        if refuse is not None and refusing < MAX_REFUSING:
            refusing += 1
            try:
                with trio.move_on_after(REFUSAL_TIMEOUT) as scope:
                    scope.shield = True
                    await refuse(stream, why)
            except (*SEND_FAILED, OSError):
                pass  # it left first: nothing more to tell it
            finally:
                refusing -= 1
        await _close(stream)

    async def capped(stream: trio.SocketStream) -> None:
        address = _peer_ip(stream)
        why = make_room(address)
        if why is not None:
            await refused(stream, why)
            return
        slot = _Slot(address)
        slots[slot] = None
        _current_slot.set(slot)
        try:
            with slot.scope:
                await handler(stream)
        finally:
            slots.pop(slot, None)
            await _close(stream)

    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(trio.serve_listeners, capped, [listener])
        task_status.started((plain_ip(bound_host), bound_port))


async def open_listeners(host: str, port: int) -> list[trio.SocketListener]:
    """Listeners on ``host``:``port`` (0: a free port). On 127.0.0.1, the default, on ::1
    too, the same port, where the machine has IPv6: ``localhost`` resolves to ::1 first on
    many machines, and a client that tries only the first address must find us there
    (a port 0 picks one free on both). The first listener is the one on ``host``."""
    if host != IPV4_LOOPBACK:
        return await trio.open_tcp_listeners(port, host=host)
    for _ in range(LOOPBACK_PORT_TRIES):
        [ipv4] = await trio.open_tcp_listeners(port, host=IPV4_LOOPBACK)
        bound = ipv4.socket.getsockname()[1]
        try:
            ipv6 = await trio.open_tcp_listeners(bound, host=IPV6_LOOPBACK)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return [ipv4]  # no IPv6 loopback here (a fresh network namespace, say)
            await ipv4.aclose()
            if port:
                raise OSError(exc.errno, f"[::1]:{port} is in use") from exc
            continue  # the free IPv4 port is taken on ::1: another
        return [ipv4, *ipv6]
    raise OSError(errno.EADDRINUSE, "no port free on both 127.0.0.1 and ::1")


def has_ipv6_loopback() -> bool:
    """Whether this machine (network namespace) can listen on ::1."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind((IPV6_LOOPBACK, 0))
    except OSError:
        return False
    return True


def _peer_ip(stream: trio.SocketStream) -> str | None:
    try:
        return plain_ip(stream.socket.getpeername()[0])
    except OSError:  # reset before we looked: it cannot be counted, nor served
        return None


def _is_local(address: str) -> bool:
    """Whether ``address`` is where this machine's own programs connect from by default."""
    try:
        return str(ipaddress.ip_address(address)) in LOCAL_ADDRESSES
    except ValueError:
        return False


async def _close(stream: trio.SocketStream) -> None:
    with trio.move_on_after(1) as scope:
        scope.shield = True
        await stream.aclose()


async def answer_once(stream: trio.SocketStream, data: bytes) -> None:
    """A refusal for a line protocol: wait briefly for the newcomer's first bytes, then send
    ``data``. Reading first means its request does not reach a closed socket, whose reset
    may destroy ``data`` unread (Windows drops received data on a reset)."""
    with trio.move_on_after(REFUSAL_READ_TIMEOUT):
        await stream.receive_some(4096)
    await stream.send_all(data)


class ServerError(Exception):
    """A server cannot run at all (its port in use, its transcripts not writable): the one
    line its user reads. Every server raises this one (Reversi's, No Tipping's, FishNet's,
    the Old Maid table)."""


class CannotListen(ServerError):
    """The server's address could not be bound."""


class ListenerConfig(Protocol):
    """What every server's config says of its listener (Reversi, No Tipping, FishNet, the table)."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def max_connections(self) -> int: ...
    @property
    def max_per_address(self) -> int | None: ...
    @property
    def exempt_loopback(self) -> bool: ...


def listening_as(
    config: ListenerConfig,
    handler: Handler,
    *,
    on_stop: Callable[[], Awaitable[object]],
    stop_timeout: float,
    refuse: Refuse | None = None,
    listener: trio.SocketListener | None = None,
) -> AbstractAsyncContextManager[tuple[str, int]]:
    """``listening`` where the config says: its address, connection caps and loopback rule
    (or on ``listener``)."""
    return listening(
        handler,
        config.host,
        config.port,
        max_connections=config.max_connections,
        on_stop=on_stop,
        stop_timeout=stop_timeout,
        max_per_address=config.max_per_address,
        exempt_loopback=config.exempt_loopback,
        refuse=refuse,
        listener=listener,
    )


@asynccontextmanager
async def listening(
    handler: Handler,
    host: str,
    port: int,
    *,
    max_connections: int,
    on_stop: Callable[[], Awaitable[object]],
    stop_timeout: float,
    max_per_address: int | None = None,
    exempt_loopback: bool = True,
    refuse: Refuse | None = None,
    listener: trio.SocketListener | None = None,
) -> AsyncIterator[tuple[str, int]]:
    """Serve (as ``listen``, with its caps and refusal) while the body runs; yields the bound
    (host, port).

    However the body ends (returning, or cancelled by Ctrl-C or SIGTERM), the
    connections stay open while ``on_stop`` tells the games under way (at most
    ``stop_timeout`` seconds, shielded), and only then are they closed: a
    server's goodbye must reach its players before their sockets go.
    ``CannotListen`` (one line) if the address cannot be bound.
    """
    connections = trio.CancelScope(shield=True)
    failure: OSError | None = None

    async def accept_all(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
        with connections:
            await listen(
                handler,
                host,
                port,
                max_connections=max_connections,
                max_per_address=max_per_address,
                exempt_loopback=exempt_loopback,
                refuse=refuse,
                listener=listener,
                task_status=task_status,
            )

    async with trio.open_nursery() as nursery:
        try:
            address = await nursery.start(accept_all)
        except OSError as exc:
            failure = exc  # raised below, outside the nursery: one plain error
        else:
            try:
                yield address
            finally:
                try:
                    with trio.CancelScope(shield=True), trio.move_on_after(stop_timeout):
                        await on_stop()
                finally:
                    # Whatever on_stop did, even raise: the listener and its
                    # connections run in a shielded scope that only this
                    # cancels, so skipping it would hang the server's exit.
                    connections.cancel()
    if failure is not None:
        reason = failure.strerror or str(failure)
        raise CannotListen(f"cannot listen on {host}:{port}: {reason}")


def wants_mdns(advertise: bool | None, host: str) -> bool:
    """The ``--advertise`` choice; by default, whether a server on ``host`` is reachable
    from the LAN (so it should advertise itself)."""
    if advertise is not None:
        return advertise
    if host in ("0.0.0.0", "::"):
        return True
    return not ipaddress.ip_address(host).is_loopback


async def dial(host: str, port: int, *, timeout: float) -> trio.SocketStream:
    """A TCP connection (TCP_NODELAY on, as trio sets it) or ``OSError``/``TooSlowError``.

    An IP address is dialled with one socket's ``connect``: ``open_tcp_stream``'s
    resolution and happy-eyeballs nursery cost more than the connect itself on
    loopback (0.27 ms against 0.11, measured), and a ring peer dials the player
    beyond an out neighbour in the middle of a handoff. A name goes the usual way.
    """
    with trio.fail_after(timeout):
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return await trio.open_tcp_stream(host, port)
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        sock = trio.socket.socket(family, socket.SOCK_STREAM)
        try:
            await sock.connect((host, port))
        except BaseException as exc:
            sock.close()
            if isinstance(exc, OSError) and exc.errno:
                # Trio words it "Error connecting to (host, port): ..."; callers say the
                # address themselves, and print the system's reason (strerror) alone.
                raise OSError(exc.errno, os.strerror(exc.errno)) from None
            raise
        return trio.SocketStream(sock)


@contextlib.contextmanager
def reserved_port(host: str, port: int) -> Iterator[int]:
    """A port bound on ``host`` but not listening, while the block runs: a dial to it is
    refused, and nothing else can take it. Yields the port (``port`` 0: any free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        yield sock.getsockname()[1]
