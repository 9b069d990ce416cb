"""Listen and dial helpers shared by the peers and every table service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from ring.transport import plain_ip

Handler = Callable[[trio.SocketStream], Awaitable[None]]


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
    the socket listens. Past ``max_connections`` open at once, a new
    connection is closed at once, so a flood cannot starve the games.
    """
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound_host, bound_port = listeners[0].socket.getsockname()[:2]
    open_count = 0

    async def capped(stream: trio.SocketStream) -> None:
        nonlocal open_count
        if open_count >= max_connections:
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()
            return
        open_count += 1
        try:
            await handler(stream)
        finally:
            open_count -= 1
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()

    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(trio.serve_listeners, capped, [listener])
        task_status.started((plain_ip(bound_host), bound_port))


async def dial(host: str, port: int, *, timeout: float) -> trio.SocketStream:
    """A TCP connection (TCP_NODELAY on, as trio sets it) or ``OSError``/``TooSlowError``."""
    with trio.fail_after(timeout):
        return await trio.open_tcp_stream(host, port)
