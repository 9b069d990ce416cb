"""The Trio layer under every protocol: one connection, one sans-IO object.

``Connection`` writes each message in a single ``send_all`` (docs/protocols/oldmaid.md 2:
one message per write) and waits for events under a timeout, so no network wait
in the project can hang. A line protocol that allows several messages in one
write may ``hold`` messages and write them together (``flush``, or the next
``send``). ``observer`` sees every message in both directions; the table uses
it for its transcript.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import Any

import trio

from ring.wire.sansio import NEED_DATA, SansIO

READ_SIZE = 65536
# What a send raises when the other side is gone or does not read.
SEND_FAILED = (trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError)
Observer = Callable[[str, Any], None]


class Connection:
    def __init__(
        self,
        stream: trio.abc.Stream,
        protocol: SansIO,
        *,
        timeout: float = math.inf,
        observer: Observer | None = None,
    ) -> None:
        self.stream = stream
        self.protocol = protocol
        self.timeout = timeout
        self.observer = observer
        self._send_lock = trio.Lock()
        self._held: list[bytes] = []  # encoded by hold(), not yet written

    @property
    def remote_address(self) -> tuple[str, int] | None:
        socket = getattr(self.stream, "socket", None)
        if socket is None:
            return None
        try:
            host, port = socket.getpeername()[:2]
        except OSError:
            return None
        return plain_ip(host), port

    async def send(
        self,
        message: Any,
        *,
        timeout: float | None = None,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Encode and write one message; ``trio.TooSlowError`` past the timeout.

        Under ``nursery.start`` it is started once the observer has seen the
        message, before the write: a server that sends one notice to many
        clients starts each send in turn, so its transcript lists them in a
        fixed order, while a client that does not read holds up no other.
        """
        queued = self._send_lock.locked()
        if queued:
            # Behind a write that may take its whole timeout: the caller's
            # order cannot hold here anyway, so do not make it wait.
            task_status.started()
        await self._take_send_lock()
        try:
            data = self._take_held() + self.protocol.send(message)
            if self.observer is not None:
                self.observer("out", message)
            if not queued:
                task_status.started()
            await write(self.stream, data, self.timeout if timeout is None else timeout)
        finally:
            self._send_lock.release()

    async def send_each(self, *messages: Any, timeout: float | None = None) -> None:
        """Write ``messages`` one after the other, each in its own write
        (docs/protocols/oldmaid.md 2), with no other task run between them: a picker's ``ok``
        and ``pick`` to an offerer that reads a stream, where a turn of the loop between the
        two would only delay the pick that the offerer waits for. A checkpoint before the
        first and after the last."""
        await self._take_send_lock()
        try:
            limit = self.timeout if timeout is None else timeout
            held = self._take_held()
            for number, message in enumerate(messages, 1):
                data = self.protocol.send(message)
                if number == 1:
                    data = held + data
                if self.observer is not None:
                    self.observer("out", message)
                await write(self.stream, data, limit, last=number == len(messages))
        finally:
            self._send_lock.release()

    async def send_together(self, *messages: Any, timeout: float | None = None) -> None:
        """Encode ``messages`` and write them in one write: the other side may read them in
        one ``recv`` (``ring check``'s hasty picker: its ``ok`` and ``pick`` at once)."""
        await self._take_send_lock()
        try:
            encoded = [self.protocol.send(message) for message in messages]
            data = self._take_held() + b"".join(encoded)
            if self.observer is not None:
                for message in messages:
                    self.observer("out", message)
            await write(self.stream, data, self.timeout if timeout is None else timeout)
        finally:
            self._send_lock.release()

    def hold(self, message: Any) -> None:
        """Encode ``message`` now (the protocol's state and the observer move on as if it
        were sent) and write it with the next ``flush`` or ``send``, in one write with the
        others held: a FishNet step's lines up to its ``yourturn`` (docs/protocols/fishnet.md
        "Lines": a client reads a stream). Only for protocols that allow several messages in
        one write; never Old Maid's (oldmaid.md 2)."""
        data = self.protocol.send(message)
        if self.observer is not None:
            self.observer("out", message)
        self._held.append(data)

    async def flush(self, *, timeout: float | None = None) -> None:
        """Write what ``hold`` kept, in one write (nothing to write: no checkpoint)."""
        if not self._held:
            return
        await self._take_send_lock()
        try:
            data = self._take_held()
            if data:
                limit = self.timeout if timeout is None else timeout
                await write(self.stream, data, limit)
        finally:
            self._send_lock.release()

    def _take_held(self) -> bytes:
        if not self._held:
            return b""
        data = b"".join(self._held)
        self._held.clear()
        return data

    async def _take_send_lock(self) -> None:
        """One writer at a time (``take_lock``): the write that follows is the checkpoint
        (other tasks run after it). A yield before it as well put one turn of the loop,
        with every task that had become runnable, between a message's being decided and
        its being written: 0.03 ms a message on a handoff's path (a verified game's four
        messages, traced step by step, 2026-11-28)."""
        await take_lock(self._send_lock)

    async def send_or_close(
        self,
        message: Any,
        *,
        timeout: float | None = None,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> bool:
        """Send; if the other side cannot take it (gone, or too slow), close and return False."""
        try:
            await self.send(message, timeout=timeout, task_status=task_status)
        except SEND_FAILED:
            await self.aclose()
            return False
        return True

    async def receive(self, *, timeout: float | None = None) -> Any:
        """The next event; ``trio.TooSlowError`` if none comes within the timeout.

        A reset or broken stream counts as the other side closing, so callers
        see one ``Closed`` event whatever way the connection ended.
        """
        deadline = trio.current_time() + (self.timeout if timeout is None else timeout)
        # Let other tasks run first when the next message may be in the buffer
        # already: one read of a flood (thousands of small messages, each
        # answered by a write that need not wait) would otherwise hold up every
        # game. Before parsing, not after: a message is judged against the
        # connection's state (whose turn it is), which others may change meanwhile.
        # A protocol that says nothing is buffered (``pending`` false) needs a read,
        # and the read yields: one scheduling round less on every message of a handoff.
        if getattr(self.protocol, "pending", True):
            await trio.lowlevel.checkpoint()
        while True:
            event = self.protocol.next_event()
            if event is not NEED_DATA:
                if self.observer is not None:
                    self.observer("in", event)
                return event
            self.protocol.receive_data(await read_before(self.stream, deadline))

    async def aclose(self) -> None:
        with trio.move_on_after(1) as scope:
            scope.shield = True
            await self.stream.aclose()


async def take_lock(lock: trio.Lock) -> None:
    """Take ``lock`` without ``trio.Lock``'s yield when it is free; parks behind its
    holder otherwise. A cancelled caller takes nothing (it raises here, before anything
    the lock guards has begun). For a lock on a handoff's path, where each yield is a
    turn of the loop with every task that has become runnable (issue 46)."""
    await trio.lowlevel.checkpoint_if_cancelled()
    if lock.locked():
        await lock.acquire()
    else:
        lock.acquire_nowait()


async def read_before(
    stream: trio.abc.ReceiveStream, deadline: float, size: int = READ_SIZE
) -> bytes:
    """The next bytes (b"" once the stream ended or broke); ``trio.TooSlowError`` at the deadline.

    A bare cancel scope, and none without a deadline: ``fail_at``'s context
    manager costs more than the read itself on a busy server.
    """
    if deadline == math.inf:
        return await _read(stream, size)
    with trio.CancelScope(deadline=deadline):
        return await _read(stream, size)
    raise trio.TooSlowError  # reached only when the scope was cancelled


async def _read(stream: trio.abc.ReceiveStream, size: int) -> bytes:
    if isinstance(stream, trio.SocketStream) and sys.platform != "win32":
        return await _read_socket(stream.socket, size)
    try:
        return await stream.receive_some(size)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return b""


async def _read_socket(sock: trio.socket.SocketType, size: int) -> bytes:
    """``receive_some`` of a socket, as Trio does it, without its layers: each read
    of every connection went through five coroutines and a conflict detector, and a
    waiting connection's are live objects that every young garbage collection walks.

    As Trio's: a checkpoint whether or not the bytes were there (a flood is read one
    message per turn of the loop), a cancelled caller reads nothing, and one reader a
    socket at a time (``wait_readable`` refuses a second). b"" once the socket is
    closed or broken.
    """
    await trio.lowlevel.checkpoint_if_cancelled()
    descriptor = sock.fileno()
    data: bytes | None
    try:
        data = os.read(descriptor, size) if descriptor >= 0 else b""
    except BlockingIOError:
        data = None  # nothing there yet: wait for it
    except OSError:
        data = b""
    if data is not None:
        await trio.lowlevel.cancel_shielded_checkpoint()
        return data
    while True:
        try:
            await trio.lowlevel.wait_readable(sock)
        except trio.ClosedResourceError:
            return b""
        descriptor = sock.fileno()
        if descriptor < 0:
            return b""
        try:
            return os.read(descriptor, size)
        except BlockingIOError:
            continue
        except OSError:
            return b""


async def write(
    stream: trio.abc.SendStream, data: bytes, timeout: float, *, last: bool = True
) -> None:
    """Write all of ``data``; ``trio.TooSlowError`` if the other side takes too long.

    Most writes fit in the socket's send buffer. Those go out in one
    non-blocking call, without the cancel scope and helpers of ``send_all``,
    which the capacity bench found to be the servers' largest cost
    (docs/services.md, "Capacity"). Whatever the buffer does not take goes
    through ``send_all`` under the timeout. One writer a stream at a time, as
    with ``send_all``; like it, a write is a checkpoint: a cancelled caller
    writes nothing, and other tasks run after each write. (Without that yield
    a FishNet test's teardown once hung about one run in two: the different
    interleaving let FishNet's goodbye follow a game's end, and the refusal
    it raised skipped the listener's cancellation in ``ring.wire.net.listening``.
    Both are fixed; tests/services/fishnet/test_server.py plays that game
    with writes that do not yield.) A write that is not the ``last`` of a
    series (``Connection.send_each``) leaves that yield to the last one.
    """
    await trio.lowlevel.checkpoint_if_cancelled()
    written = _write_now(stream, data)
    if written < len(data):
        with trio.fail_after(timeout):
            await stream.send_all(data[written:])
    elif last:
        await trio.lowlevel.cancel_shielded_checkpoint()


def _write_now(stream: trio.abc.SendStream, data: bytes) -> int:
    """What the socket takes of ``data`` without waiting; 0 where only ``send_all`` can write."""
    if not isinstance(stream, trio.SocketStream) or sys.platform == "win32":
        return 0  # Windows cannot write() to a socket
    descriptor = stream.socket.fileno()
    if descriptor < 0:
        raise trio.ClosedResourceError("the stream is closed")
    try:
        return os.write(descriptor, data)
    except BlockingIOError:
        return 0
    except OSError as exc:
        raise trio.BrokenResourceError(f"the write failed: {exc}") from exc


def plain_ip(host: str) -> str:
    """Dotted IPv4 for an IPv4-mapped IPv6 address (oldmaid.md 5.1: never ``::ffff:``)."""
    return host.removeprefix("::ffff:") if host.startswith("::ffff:") and "." in host else host
