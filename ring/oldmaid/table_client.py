"""A peer's connection to the table.

One task owns the reading side, because the table may push ``game_over`` at
any moment, including while a request waits for its reply. Requests from
the peer's tasks are serialised by a lock: one request in flight, as the
protocol demands. Reports of a verified game (protocol 14.6) are the one
exception: ``post`` queues one without waiting for its reply, so it stays
off the handoff's critical path; the table answers requests in the order
they came, so every reply is matched to its request in that order.

A queued report goes out right before the next message to the table (so the
table still hears everything in the order it happened), or at most
``REPORT_DELAY`` after it was queued, or as soon as ``REPORT_BATCH`` wait:
a burst of writes, each message in its own (docs/protocols/oldmaid.md 2: a
sender never puts two messages in one write), that the table reads in one
wakeup, later than the handoff that made them. On a machine with fewer cores than players, a
report written and read at once took the core the next handoff needed
(``make bench-ring``: about 0.4 ms of a 1.2 ms handoff); a burst of thirty,
written and answered one by one, kept another peer from a core for 1-3 ms
(the ring's slowest handoffs), hence the cap.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from ring.oldmaid.messages import DrawTurn, GameOver, Message, Reply, Witnessed
from ring.oldmaid.protocol import Answered, Closed, Invalid, RemoteProtocolError
from ring.wire.transport import SEND_FAILED, Connection, take_lock

# How long a report may wait for other messages to go out with, and how many may wait
# (see the module's text; the batch was chosen by make bench-ring, 8, 12 and 16 tried).
REPORT_DELAY = 0.05
REPORT_BATCH = 12


class TableError(Exception):
    """The table connection failed or the table broke the protocol."""


@dataclass
class _Awaited:
    """A request sent, whose reply is still to come; ``wanted`` False drops it on arrival."""

    name: str
    wanted: bool = True
    request: bool = True  # False: a report (any request may follow reports, 14.6)
    reply: Reply | None = None
    came: trio.Event = field(default_factory=trio.Event)


class TableClient:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.game_over = trio.Event()
        self.notice: GameOver | None = None
        self._lock = trio.Lock()  # one request waiting for its reply at a time
        self._broken: str | None = None  # why a write to the table failed, once one has
        self._send_lock = trio.Lock()  # a write and its place in the queue go together
        # Every request sent whose reply is still to come, in the order sent: a
        # request whose caller gave up, and every posted report, is dropped on
        # arrival, so it cannot answer the next.
        self._awaited: collections.deque[_Awaited] = collections.deque()
        self.refused_reports: list[str] = []  # the table's errors to posted reports
        self._reports: list[Message] = []  # posted, not written yet
        self._reports_queued = trio.Event()  # set while _reports holds any
        self._batch_full = trio.Event()  # set once _reports holds REPORT_BATCH
        self._report_timeout = math.inf
        # Where a witnessed game's notices go (protocol 14.6).
        self.on_witnessed: Callable[[Witnessed | DrawTurn], None] | None = None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read until the table closes; raises ``TableError`` if that is early. Meanwhile
        writes the reports that no other message took along within ``REPORT_DELAY``."""
        error: TableError | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._write_reports_later)
            task_status.started()
            try:
                await self._read()
            except TableError as exc:
                error = exc
            nursery.cancel_scope.cancel()
        if error is not None:
            raise error

    async def _read(self) -> None:
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
            elif isinstance(event, Witnessed | DrawTurn):
                if self.on_witnessed is not None:
                    self.on_witnessed(event)
            elif isinstance(event, Invalid):
                raise TableError(f"the table sent something that is not Old Maid: {event.reason}")
            elif isinstance(event, Closed):
                if self.game_over.is_set():
                    return
                raise TableError("the table closed the connection")
            else:
                raise TableError(f"the table sent an unexpected request: {event!r}")

    async def request(
        self, message: Message, *, timeout: float, ahead_of_reports: bool = False
    ) -> Reply:
        """``message``'s reply. ``ahead_of_reports``: it goes before the queued reports,
        whose replies the table would write first (a status in the middle of a handoff
        waited ~1.5 ms behind fourteen of them): only for a request that changes
        nothing at the table, which therefore does not care what it hears first."""
        await take_lock(self._lock)  # (no yield when free: the check is on a handoff's path)
        try:
            await self._owed_reply(timeout)
            awaited = await self._send(message, timeout=timeout, with_reports=not ahead_of_reports)
            try:
                with trio.move_on_after(timeout):
                    await awaited.came.wait()
            finally:
                awaited.wanted = False  # a reply after we stopped waiting answers no one
        finally:
            self._lock.release()
        if awaited.reply is not None:
            return awaited.reply
        raise TableError(f"no reply from the table to {awaited.name} within {timeout:g} s")

    async def _owed_reply(self, timeout: float) -> None:
        """One request at a time (oldmaid.md 2): a request whose caller gave up (timed
        out, or cancelled once it was written) is still owed its reply, and the next
        goes only once that has come."""
        owed = next((sent for sent in reversed(self._awaited) if sent.request), None)
        if owed is None:
            return
        with trio.move_on_after(timeout):
            await owed.came.wait()
        if not owed.came.is_set():
            raise TableError(f"no reply from the table to {owed.name} within {timeout:g} s")

    async def post(self, message: Message, *, timeout: float, at_once: bool = False) -> None:
        """Queue a report, not waiting for its reply (protocol 14.6): it goes out with
        the next message, or within ``REPORT_DELAY``, or once ``REPORT_BATCH`` are queued;
        ``at_once``: now. An error reply is kept in ``refused_reports``."""
        self._reports.append(message)
        self._report_timeout = timeout
        self._reports_queued.set()
        if len(self._reports) >= REPORT_BATCH:
            self._batch_full.set()  # written by _write_reports_later, beside the caller
        if at_once:
            await self.write_reports()

    async def write_reports(self) -> None:
        """Write the queued reports now."""
        await take_lock(self._send_lock)
        try:
            await self._write(None, timeout=self._report_timeout)
        finally:
            self._send_lock.release()

    async def _write_reports_later(self) -> None:
        while True:
            await self._reports_queued.wait()
            with trio.move_on_after(REPORT_DELAY):
                await self._batch_full.wait()
            self._batch_full = trio.Event()
            try:
                await self.write_reports()
            except SEND_FAILED:
                return  # the table is gone: the reader sees it close

    async def _send(self, message: Message, *, timeout: float, with_reports: bool) -> _Awaited:
        await take_lock(self._send_lock)
        try:
            awaited = await self._write(message, timeout=timeout, with_reports=with_reports)
        finally:
            self._send_lock.release()
        assert awaited is not None
        return awaited

    async def _write(
        self, message: Message | None, *, timeout: float, with_reports: bool = True
    ) -> _Awaited | None:
        """Write the queued reports (unless not ``with_reports``), then ``message``, each in
        its own write (the send lock held). Each takes its place in the queue of replies:
        the reports' are dropped on arrival."""
        reports: list[Message] = []
        if with_reports:
            reports, self._reports = self._reports, []
            if self._reports_queued.is_set():  # (an event never set is the one waited on)
                self._reports_queued = trio.Event()
        if self._broken is not None:
            raise TableError(f"the connection to the table broke: {self._broken}")
        awaited = None
        for sent in [*reports, message] if message is not None else reports:
            awaited = _Awaited(_name(sent), wanted=sent is message, request=sent is message)
            self._awaited.append(awaited)
            try:
                await self.connection.send(sent, timeout=timeout)
            except BaseException as exc:
                # Not sent whole, and no reply will come. A write that failed may have
                # begun (and our Link counts it as sent): nothing more can go after it.
                if awaited in self._awaited:
                    self._awaited.remove(awaited)
                if isinstance(exc, SEND_FAILED):
                    self._broken = str(exc) or type(exc).__name__
                raise
        return awaited if message is not None else None


def _name(message: Message) -> str:
    name = type(message).__struct_config__.tag
    assert isinstance(name, str)
    return name
