"""``ring.wire.transport``'s socket reads keep Trio's promises without Trio's layers.

Every connection's reads go through ``read_before``; on a socket it reads the
descriptor itself (fewer live objects per waiting connection for the garbage
collector to walk). What ``SocketStream.receive_some`` promised must still hold,
on a real socket pair: a read is a checkpoint even when the bytes are there, a
cancelled read takes nothing, and an ended or broken socket reads as b"".
"""

from __future__ import annotations

import math
import socket

import pytest
import trio
import trio.testing

from ring.wire.transport import read_before

WAIT = 10.0


def stream_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    ours, theirs = trio.socket.socketpair()
    return trio.SocketStream(ours), trio.SocketStream(theirs)


async def test_bytes_already_there_are_read_after_a_checkpoint() -> None:
    reader, writer = stream_pair()
    await writer.send_all(b"hello\n")
    # A flood's bytes are always there: without the yield it would starve the others.
    # (Which of the runnable tasks Trio runs first after it is Trio's choice, made at
    # random: a test that expects one order fails about one run in two.)
    with trio.testing.assert_checkpoints():
        assert await read_before(reader, trio.current_time() + WAIT) == b"hello\n"


async def test_a_read_waits_for_the_bytes() -> None:
    reader, writer = stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.send_all, b"late\n")
        assert await read_before(reader, trio.current_time() + WAIT) == b"late\n"


async def test_a_cancelled_read_takes_nothing() -> None:
    reader, writer = stream_pair()
    await writer.send_all(b"keep\n")
    with trio.CancelScope() as scope:
        scope.cancel()
        await read_before(reader, math.inf)
    assert await read_before(reader, trio.current_time() + WAIT) == b"keep\n"


async def test_the_deadline_is_too_slow() -> None:
    reader, _writer = stream_pair()
    with pytest.raises(trio.TooSlowError):
        await read_before(reader, trio.current_time())


@pytest.mark.parametrize("how", ["closed by the other side", "reset by the other side"])
async def test_an_ended_or_broken_socket_reads_as_nothing(how: str) -> None:
    reader, writer = stream_pair()
    if how.startswith("reset"):
        # SO_LINGER 0: the close sends a reset, which the read sees as an error.
        writer.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00" * 2)
        await reader.send_all(b"unread\n")  # unread data at close also makes a reset
    await writer.aclose()
    with trio.fail_after(WAIT):
        assert await read_before(reader, math.inf) == b""


async def test_a_socket_closed_while_its_read_waits_reads_as_nothing() -> None:
    reader, _writer = stream_pair()
    async with trio.open_nursery() as nursery:

        async def close_soon() -> None:
            await trio.testing.wait_all_tasks_blocked()
            await reader.aclose()

        nursery.start_soon(close_soon)
        with trio.fail_after(WAIT):
            assert await read_before(reader, math.inf) == b""
    assert await read_before(reader, math.inf) == b""  # and so does a read after the close
