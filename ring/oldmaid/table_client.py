"""A peer's connection to the table.

One task owns the reading side, because the table may push ``game_over`` at
any moment, including while a request waits for its reply. Requests from
the peer's tasks are serialised by a lock: one request in flight, as the
protocol demands. Reports of a verified game (protocol 14.6) are the one
exception: ``post`` writes one without waiting for its reply, so it stays
off the handoff's critical path; the table answers requests in the order
they came, so every reply is matched to its request in that order.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field

import trio

from ring.oldmaid.messages import GameOver, Message, Reply
from ring.oldmaid.protocol import Answered, Closed, Invalid, RemoteProtocolError
from ring.transport import Connection


class TableError(Exception):
    """The table connection failed or the table broke the protocol."""


@dataclass
class _Awaited:
    """A request sent, whose reply is still to come; ``wanted`` False drops it on arrival."""

    name: str
    wanted: bool = True
    reply: Reply | None = None
    came: trio.Event = field(default_factory=trio.Event)


class TableClient:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.game_over = trio.Event()
        self.notice: GameOver | None = None
        self._lock = trio.Lock()  # one request waiting for its reply at a time
        self._send_lock = trio.Lock()  # a write and its place in the queue go together
        # Every request sent whose reply is still to come, in the order sent: a
        # request whose caller gave up, and every posted report, is dropped on
        # arrival, so it cannot answer the next.
        self._awaited: collections.deque[_Awaited] = collections.deque()
        self.refused_reports: list[str] = []  # the table's errors to posted reports

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read until the table closes; raises ``TableError`` if that is early."""
        task_status.started()
        while True:
            try:
                event = await self.connection.receive(timeout=math.inf)
            except RemoteProtocolError as exc:
                raise TableError(f"the table broke the protocol: {exc}") from None
            if isinstance(event, Answered):
                if not self._awaited:
                    raise TableError(f"the table sent a reply to no request: {event.reply!r}")
                awaited = self._awaited.popleft()
                awaited.reply = event.reply
                awaited.came.set()
                if not awaited.wanted and event.reply.result == "error":
                    self.refused_reports.append(f"{awaited.name}: {event.reply.message}")
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
            awaited = await self._send(message, timeout=timeout)
            try:
                with trio.move_on_after(timeout):
                    await awaited.came.wait()
            finally:
                awaited.wanted = False  # a reply after we stopped waiting answers no one
            if awaited.reply is not None:
                return awaited.reply
            raise TableError(f"no reply from the table to {awaited.name} within {timeout:g} s")

    async def post(self, message: Message, *, timeout: float) -> None:
        """Send a report without waiting for its reply (protocol 14.6); an error reply
        is kept in ``refused_reports``."""
        awaited = await self._send(message, timeout=timeout)
        awaited.wanted = False

    async def _send(self, message: Message, *, timeout: float) -> _Awaited:
        name = type(message).__struct_config__.tag
        assert isinstance(name, str)
        async with self._send_lock:
            awaited = _Awaited(name)
            self._awaited.append(awaited)
            try:
                await self.connection.send(message, timeout=timeout)
            except BaseException:
                # Not sent whole: the connection is broken, and no reply will come.
                if awaited in self._awaited:
                    self._awaited.remove(awaited)
                raise
        return awaited
