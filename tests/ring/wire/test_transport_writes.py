"""``ring.wire.transport``'s writes: one message a write, one writer at a time, and a checkpoint.

A send takes the connection's lock without Trio's yield when the lock is
free (the write is the checkpoint), and ``send_each`` writes several messages
back to back, each in a write of its own, with no other task run between
them. What must still hold, on a real socket pair: a cancelled send writes
nothing and leaves the protocol as it was; every send is a checkpoint;
a second writer waits for the first; each message is its own write.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing

from ring.wire import transport
from ring.wire.sansio import NEED_DATA
from ring.wire.transport import Connection

WAIT = 10.0


class LineProtocol:
    """A sans-IO stand-in that sends ``str`` messages as lines and counts them."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.pending = False

    def send(self, message: str) -> bytes:
        self.sent.append(message)
        return message.encode() + b"\n"

    def receive_data(self, data: bytes) -> None:
        pass

    def next_event(self) -> object:
        return NEED_DATA


def connection_pair() -> tuple[Connection, trio.SocketStream]:
    ours, theirs = trio.socket.socketpair()
    return Connection(trio.SocketStream(ours), LineProtocol(), timeout=WAIT), trio.SocketStream(
        theirs
    )


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every ``os.write`` the transport makes, in order."""
    seen: list[bytes] = []
    real_write = os.write

    def recording_write(descriptor: int, data: bytes) -> int:
        seen.append(bytes(data))
        return real_write(descriptor, data)

    monkeypatch.setattr(transport.os, "write", recording_write)
    return seen


async def ticking(log: list[bytes], task_status: trio.TaskStatus[None]) -> None:
    """Note each turn of the loop this task gets, as a write would be noted."""
    task_status.started()
    while True:
        log.append(b"tick")
        await trio.lowlevel.checkpoint()


async def send_beside_a_ticking_task(
    writes: list[bytes], send: Callable[[], Awaitable[None]]
) -> None:
    """``send`` with another task ready to run, its turns noted in ``writes``."""
    async with trio.open_nursery() as nursery:
        await nursery.start(ticking, writes)
        writes.clear()
        with trio.fail_after(WAIT):
            await send()
        nursery.cancel_scope.cancel()


async def test_each_message_is_its_own_write_with_no_task_run_between(
    writes: list[bytes],
) -> None:
    connection, other_end = connection_pair()
    await send_beside_a_ticking_task(writes, lambda: connection.send_each("ok", "pick"))
    assert writes[:2] == [b"ok\n", b"pick\n"]
    assert connection.protocol.sent == ["ok", "pick"]
    with trio.fail_after(WAIT):
        assert await other_end.receive_some(100) == b"ok\npick\n"


@pytest.mark.parametrize("how", ["send", "send_each", "send_together"])
async def test_every_send_is_a_checkpoint(how: str) -> None:
    connection, _other_end = connection_pair()
    with trio.testing.assert_checkpoints(), trio.fail_after(WAIT):
        if how == "send":
            await connection.send("offer")
        else:
            await getattr(connection, how)("ok", "pick")


async def test_a_send_on_a_free_connection_writes_before_any_other_task_runs(
    writes: list[bytes],
) -> None:
    connection, _other_end = connection_pair()
    await send_beside_a_ticking_task(writes, lambda: connection.send("offer"))
    assert writes[0] == b"offer\n"


@pytest.mark.parametrize("how", ["send", "send_each", "send_together"])
async def test_a_cancelled_send_writes_nothing_and_leaves_the_protocol_alone(
    writes: list[bytes], how: str
) -> None:
    connection, _other_end = connection_pair()
    with trio.CancelScope() as scope:
        scope.cancel()
        if how == "send":
            await connection.send("offer")
        else:
            await getattr(connection, how)("ok", "pick")
    assert scope.cancelled_caught
    assert writes == []
    assert connection.protocol.sent == []
    assert not connection._send_lock.locked()


async def test_a_second_writer_waits_for_the_first() -> None:
    """The first write does not fit in the socket's buffer, so it waits in ``send_all``
    for the other side to read; a second send must not slip its bytes in between."""
    connection, other_end = connection_pair()
    big = "x" * 2_000_000
    received = bytearray()

    async def read_all(task_status: trio.TaskStatus[None]) -> None:
        task_status.started()
        while len(received) < len(big) + len("\nsecond\n"):
            received.extend(await other_end.receive_some(1 << 16))

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.send, big)
            await trio.testing.wait_all_tasks_blocked()
            assert connection._send_lock.locked()  # the first waits for a reader
            nursery.start_soon(connection.send, "second")
            await trio.testing.wait_all_tasks_blocked()
            await nursery.start(read_all)
    assert bytes(received) == big.encode() + b"\nsecond\n"
    assert connection.protocol.sent == [big, "second"]
