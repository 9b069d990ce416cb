"""A peer's connection to the table.

One task owns the reading side, because the table may push ``game_over`` at
any moment, including while a request waits for its reply. Requests from
the peer's tasks are serialised by a lock: one request in flight, as the
protocol demands.
"""

from __future__ import annotations

import math

import trio

from ring.oldmaid.messages import GameOver, Message, Reply
from ring.oldmaid.protocol import Answered, Closed, Invalid, RemoteProtocolError
from ring.transport import Connection


class TableError(Exception):
    """The table connection failed or the table broke the protocol."""


class TableClient:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.game_over = trio.Event()
        self.notice: GameOver | None = None
        self._lock = trio.Lock()
        self._replies_in, self._replies_out = trio.open_memory_channel[Reply](1)
        # Replies still to come to requests whose caller was cancelled after
        # sending: each is dropped on arrival, so it cannot answer the next.
        self._orphaned = 0

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read until the table closes; raises ``TableError`` if that is early."""
        task_status.started()
        while True:
            try:
                event = await self.connection.receive(timeout=math.inf)
            except RemoteProtocolError as exc:
                raise TableError(f"the table broke the protocol: {exc}") from None
            if isinstance(event, Answered):
                if self._orphaned:
                    self._orphaned -= 1
                else:
                    self._replies_in.send_nowait(event.reply)
            elif isinstance(event, GameOver):
                self.notice = event
                self.game_over.set()
            elif isinstance(event, Invalid):
                raise TableError(f"the table sent something that is not Old Maid: {event.reason}")
            elif isinstance(event, Closed):
                if self.game_over.is_set():
                    return
                raise TableError("the table closed the connection")
            else:
                raise TableError(f"the table sent an unexpected request: {event!r}")

    async def request(self, message: Message, *, timeout: float) -> Reply:
        async with self._lock:
            await self.connection.send(message, timeout=timeout)
            try:
                with trio.move_on_after(timeout):
                    return await self._replies_out.receive()
            except trio.Cancelled:
                try:
                    self._replies_out.receive_nowait()  # it came just in time: drop it
                except trio.WouldBlock:
                    self._orphaned += 1
                raise
            self._orphaned += 1  # if it ever comes, it must not answer the next request
            name = type(message).__struct_config__.tag
            raise TableError(f"no reply from the table to {name} within {timeout:g} s")
