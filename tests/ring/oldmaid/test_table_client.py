"""The peer's table client on its own, against a scripted table over memory streams."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator

import pytest
import trio
import trio.testing

from ring.oldmaid.messages import Gave, Status, encode, ok
from ring.oldmaid.protocol import Link, Role
from ring.oldmaid.table_client import REPORT_BATCH, REPORT_DELAY, TableClient, TableError
from ring.wire.transport import Connection

TIMEOUT = 5.0


async def read_request(stream: trio.abc.Stream) -> bytes:
    with trio.fail_after(TIMEOUT):
        data = await stream.receive_some(65536)
    assert data.endswith(b"\n") and data.count(b"\n") == 1, data
    return data


async def test_a_reply_to_a_cancelled_request_never_answers_the_next_one() -> None:
    ours, table = trio.testing.memory_stream_pair()
    client = TableClient(Connection(ours, Link(Role.TABLE_CLIENT)))
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)

        # A request whose caller gives up (cancelled) after it was sent.
        with trio.CancelScope() as scope:
            nursery.start_soon(read_request, table)
            async with trio.open_nursery() as inner:
                inner.start_soon(functools.partial(client.request, Status(), timeout=TIMEOUT))
                await trio.testing.wait_all_tasks_blocked()
                scope.cancel()
        await table.send_all(encode(ok(in_=["late"], out=[])))  # its reply, late

        async def answer_second() -> None:
            assert await read_request(table) == encode(Status())
            await table.send_all(encode(ok(in_=["second"], out=[])))

        nursery.start_soon(answer_second)
        reply = await client.request(Status(), timeout=TIMEOUT)
        assert reply.in_ == ["second"]
        nursery.cancel_scope.cancel()


async def test_a_reply_that_comes_after_the_timeout_never_answers_the_next_request() -> None:
    ours, table = trio.testing.memory_stream_pair()
    client = TableClient(Connection(ours, Link(Role.TABLE_CLIENT)))
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)
        nursery.start_soon(read_request, table)
        with pytest.raises(TableError, match=r"no reply from the table to status within 0\.01 s"):
            await client.request(Status(), timeout=0.01)
        await table.send_all(encode(ok(in_=["late"], out=[])))

        async def answer_second() -> None:
            await read_request(table)
            await table.send_all(encode(ok(in_=["second"], out=[])))

        nursery.start_soon(answer_second)
        assert (await client.request(Status(), timeout=TIMEOUT)).in_ == ["second"]
        nursery.cancel_scope.cancel()


async def test_the_next_request_waits_for_the_reply_still_owed_to_one_given_up() -> None:
    # oldmaid.md 2: never a second request before the reply to the first. The first's
    # caller gave up; its reply comes only after the second request was asked for.
    ours, table = trio.testing.memory_stream_pair()
    client = TableClient(Connection(ours, Link(Role.TABLE_CLIENT)))
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)
        first = await _sent_then_given_up(client, table)
        second: list[list[str] | None] = []

        async def ask_second() -> None:
            second.append((await client.request(Status(), timeout=TIMEOUT)).in_)

        nursery.start_soon(ask_second)
        await trio.testing.wait_all_tasks_blocked()
        # Sent now, the second would break the rule (our own Link raises): it waits.
        assert first == encode(Status()) and second == []
        await table.send_all(encode(ok(in_=["late"], out=[])))
        assert await read_request(table) == encode(Status())
        await table.send_all(encode(ok(in_=["second"], out=[])))
        await trio.testing.wait_all_tasks_blocked()
        assert second == [["second"]]
        nursery.cancel_scope.cancel()


async def _sent_then_given_up(client: TableClient, table: trio.abc.Stream) -> bytes:
    """Ask for a status, read it at the table, and cancel the caller before any reply."""
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as inner:
            inner.start_soon(functools.partial(client.request, Status(), timeout=TIMEOUT))
            sent = await read_request(table)
            scope.cancel()
    return sent


async def test_after_a_write_that_failed_a_request_gets_a_table_error_not_our_own_refusal() -> None:
    # The table died: the write of a request fails once our Link has counted it as sent.
    # The next request must say the table is gone (a network error the peer handles), not
    # trip over the reply still owed (LocalProtocolError, a crash).
    ours, table = trio.testing.memory_stream_pair()
    client = TableClient(Connection(ours, Link(Role.TABLE_CLIENT)))
    await table.aclose()
    with pytest.raises((trio.BrokenResourceError, trio.ClosedResourceError)):
        await client.request(Status(), timeout=TIMEOUT)
    with pytest.raises(TableError, match="the connection to the table broke"):
        await client.request(Status(), timeout=TIMEOUT)


class Writes(trio.abc.Stream):
    """A stream that keeps each write apart, to see what went in one."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.writes: list[bytes] = []

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.stream.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.stream.aclose()


GAVE = [Gave(to="p2", seq=seq, mac="ab" * 16) for seq in (1, 2)]


@contextlib.asynccontextmanager
async def two_reports_posted() -> AsyncIterator[tuple[TableClient, Writes, trio.abc.Stream]]:
    """A running client with ``GAVE`` posted, what it wrote, and the table's end."""
    memory, table = trio.testing.memory_stream_pair()
    ours = Writes(memory)
    client = TableClient(Connection(ours, Link(Role.TABLE_CLIENT)))
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)
        for report in GAVE:
            await client.post(report, timeout=TIMEOUT)
        yield client, ours, table
        nursery.cancel_scope.cancel()


async def reports_and_request_then_replies(table: trio.abc.Stream, last: bytes) -> None:
    """Read two reports and a request, then answer all three (``last`` for the request)."""
    data = b""
    while data.count(b"\n") < 3:
        with trio.fail_after(TIMEOUT):
            data += await table.receive_some(65536)
    await table.send_all(encode(ok()) + encode(ok()) + last)


async def test_reports_go_out_right_before_the_next_request() -> None:
    """Two reports and a request: the reports first (the table hears everything in the
    order it happened), each in its own write (docs/protocols/oldmaid.md 2); their replies
    answer no one."""
    async with two_reports_posted() as (client, ours, table), trio.open_nursery() as nursery:
        last = encode(ok(in_=["p1"], out=[]))
        nursery.start_soon(reports_and_request_then_replies, table, last)
        assert (await client.request(Status(), timeout=TIMEOUT)).in_ == ["p1"]
        assert ours.writes == [encode(GAVE[0]), encode(GAVE[1]), encode(Status())]


async def test_a_request_ahead_of_the_reports_goes_first_and_gets_its_own_reply() -> None:
    """A status in the middle of a handoff does not wait behind queued reports: it is
    written alone, its reply is its own, and the reports follow with the next request."""
    async with two_reports_posted() as (client, ours, table), trio.open_nursery() as nursery:

        async def table_side() -> None:
            assert await read_request(table) == encode(Status())
            await table.send_all(encode(ok(in_=["first"], out=["p3"])))
            await reports_and_request_then_replies(table, encode(ok(in_=["second"], out=[])))

        nursery.start_soon(table_side)
        reply = await client.request(Status(), timeout=TIMEOUT, ahead_of_reports=True)
        assert reply.in_ == ["first"] and reply.out == ["p3"]
        assert ours.writes == [encode(Status())]
        assert (await client.request(Status(), timeout=TIMEOUT)).in_ == ["second"]
        assert ours.writes == [encode(Status()), encode(GAVE[0]), encode(GAVE[1]), encode(Status())]


async def test_a_report_alone_goes_out_within_the_report_delay(
    autojump_clock: trio.testing.MockClock,
) -> None:
    ours, table = trio.testing.memory_stream_pair()
    client = TableClient(Connection(ours, Link(Role.TABLE_CLIENT)))
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)
        posted = trio.current_time()
        await client.post(Gave(to="p2", seq=1, mac="ab" * 16), timeout=TIMEOUT)
        with trio.fail_after(TIMEOUT):
            data = await table.receive_some(65536)
        assert data == encode(Gave(to="p2", seq=1, mac="ab" * 16))
        assert trio.current_time() - posted == pytest.approx(REPORT_DELAY)
        # at_once: now (the peer then waits for the table's verdict on it)
        posted = trio.current_time()
        await client.post(Gave(to="p2", seq=2, mac="ab" * 16), timeout=TIMEOUT, at_once=True)
        assert await table.receive_some(65536) == encode(Gave(to="p2", seq=2, mac="ab" * 16))
        assert trio.current_time() == posted
        nursery.cancel_scope.cancel()


async def test_a_full_batch_of_reports_goes_out_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """REPORT_BATCH reports do not wait for the delay (a long burst of them kept other
    peers from a core); fewer do."""
    ours, table = trio.testing.memory_stream_pair()
    client = TableClient(Connection(ours, Link(Role.TABLE_CLIENT)))
    reports = [Gave(to="p2", seq=seq, mac="ab" * 16) for seq in range(1, REPORT_BATCH + 1)]
    expected = b"".join(encode(report) for report in reports)
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)
        posted = trio.current_time()
        for report in reports[:-1]:
            await client.post(report, timeout=TIMEOUT)
        await trio.testing.wait_all_tasks_blocked()
        assert trio.current_time() == posted  # still waiting: one short of a batch
        await client.post(reports[-1], timeout=TIMEOUT)
        data = b""
        while len(data) < len(expected):
            with trio.fail_after(TIMEOUT):
                data += await table.receive_some(65536)
        assert data == expected
        assert trio.current_time() == posted
        nursery.cancel_scope.cancel()
