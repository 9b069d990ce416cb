"""Listen and dial helpers shared by the peers and every table service."""

from __future__ import annotations

import contextvars
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import trio

from ring.transport import plain_ip

Handler = Callable[[trio.SocketStream], Awaitable[None]]


class _Slot:
    """One accepted connection, as ``serve`` counts it against its cap."""

    def __init__(self) -> None:
        self.established = False
        self.scope = trio.CancelScope()


# The slot of the connection the current task handles (each handler runs in
# its own task, so each sees its own).
_current_slot: contextvars.ContextVar[_Slot | None] = contextvars.ContextVar(
    "ring_net_slot", default=None
)


def mark_established() -> None:
    """Tell ``serve`` that the connection this task handles has proved itself.

    A handler calls it once its client has sent something valid (the table:
    any well-formed request; a peer: any well-formed message). Established
    connections are never evicted to make room for newcomers. Outside a
    ``serve`` handler it does nothing.
    """
    slot = _current_slot.get()
    if slot is not None:
        slot.established = True


async def serve(
    handler: Handler,
    host: str,
    port: int,
    *,
    max_connections: int = 256,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept connections on host:port (0 picks a free port) until cancelled.

    ``await nursery.start(serve, ...)`` returns the bound (host, port) once
    the socket listens. At most ``max_connections`` are open at once. When a
    new connection arrives at the cap, the oldest connection that has not yet
    proved itself (``mark_established``) is closed to make room; if every
    open connection is established, the newcomer is closed at once. So a
    flood of idle connections cannot lock players out, and can never cut off
    a player who has already spoken.
    """
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound_host, bound_port = listeners[0].socket.getsockname()[:2]
    # Open connections, oldest first (a dict keeps insertion order).
    slots: dict[_Slot, None] = {}

    async def capped(stream: trio.SocketStream) -> None:
        if len(slots) >= max_connections:
            victim = next((slot for slot in slots if not slot.established), None)
            if victim is None:
                with trio.move_on_after(1) as scope:
                    scope.shield = True
                    await stream.aclose()
                return
            # Its task closes its stream as it unwinds; the place is ours now.
            del slots[victim]
            victim.scope.cancel()
        slot = _Slot()
        slots[slot] = None
        _current_slot.set(slot)
        try:
            with slot.scope:
                await handler(stream)
        finally:
            slots.pop(slot, None)
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()

    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(trio.serve_listeners, capped, [listener])
        task_status.started((plain_ip(bound_host), bound_port))


class CannotListen(Exception):
    """The server's address could not be bound: the one line its user reads."""


@asynccontextmanager
async def serving(
    handler: Handler,
    host: str,
    port: int,
    *,
    max_connections: int,
    on_stop: Callable[[], Awaitable[object]],
    stop_timeout: float,
) -> AsyncIterator[tuple[str, int]]:
    """Serve (as ``serve``) while the body runs; yields the bound (host, port).

    However the body ends (returning, or cancelled by Ctrl-C or SIGTERM), the
    connections stay open while ``on_stop`` tells the games under way (at most
    ``stop_timeout`` seconds, shielded), and only then are they closed: a
    server's goodbye must reach its players before their sockets go.
    ``CannotListen`` (one line) if the address cannot be bound.
    """
    connections = trio.CancelScope(shield=True)
    failure: OSError | None = None

    async def listen(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
        with connections:
            await serve(
                handler, host, port, max_connections=max_connections, task_status=task_status
            )

    async with trio.open_nursery() as nursery:
        try:
            address = await nursery.start(listen)
        except OSError as exc:
            failure = exc  # raised below, outside the nursery: one plain error
        else:
            try:
                yield address
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(stop_timeout):
                    await on_stop()
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
    """A TCP connection (TCP_NODELAY on, as trio sets it) or ``OSError``/``TooSlowError``."""
    with trio.fail_after(timeout):
        return await trio.open_tcp_stream(host, port)
