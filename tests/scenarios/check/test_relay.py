"""The relay between a program and our table in ring check oldmaid: what the table said
reaches the program whole, however the connection then ends (real loopback TCP)."""

from __future__ import annotations

import functools
import socket
import struct
from collections.abc import Awaitable, Callable

import trio
import trio.testing

from scenarios.check.relay import SplitSends, relay

NOTICE = b'{"cmd":"game_over","loser":"checker","out":["ours"]}\n'
BOUND = 10.0


async def serve(
    nursery: trio.Nursery, handler: Callable[[trio.SocketStream], Awaitable[None]]
) -> tuple[str, int]:
    """A stand-in for the table on a loopback port; its (host, port)."""
    serving = functools.partial(trio.serve_tcp, handler, 0, host="127.0.0.1")
    [listener] = await nursery.start(serving)
    return listener.socket.getsockname()[:2]


async def relayed(
    nursery: trio.Nursery, table: tuple[str, int], **how: object
) -> trio.SocketStream:
    """A program's connection to ``table`` through the relay."""
    address = await nursery.start(functools.partial(relay, table, **how))
    return await trio.open_tcp_stream(*address)


async def read_to_the_end(stream: trio.SocketStream) -> bytes:
    got = b""
    try:
        while data := await stream.receive_some(4096):
            got += data
    except trio.BrokenResourceError:  # reset: what came before it is what the program saw
        pass
    return got


async def table_that_says_its_last_and_goes(closed: trio.Event, stream: trio.SocketStream) -> None:
    """Waits until the program's request is in its buffer, never reads it, writes the notice
    and closes at once: with a request unread, its close resets the connection."""
    while not await stream.socket.recv(1, socket.MSG_PEEK):
        pass
    await stream.send_all(NOTICE)
    await stream.aclose()
    closed.set()


async def test_the_last_notice_reaches_the_program_though_it_writes_to_a_table_gone() -> None:
    closed = trio.Event()
    with trio.fail_after(BOUND):
        async with trio.open_nursery() as nursery:
            table = await serve(
                nursery, functools.partial(table_that_says_its_last_and_goes, closed)
            )
            program = await relayed(nursery, table, split=True)
            await program.send_all(b'{"cmd":"status"}\n')
            first = await program.receive_some(1)  # the notice has begun, a byte at a time
            await closed.wait()
            await program.send_all(b'{"cmd":"status"}\n')  # the relay's write to it fails
            rest = await read_to_the_end(program)
            nursery.cancel_scope.cancel()
    assert first + rest == NOTICE


async def test_a_program_that_stops_writing_still_hears_the_answer() -> None:
    """A program may close its side for writing (half-close) and read the answer: the table
    sees the end of the request, and its answer still comes back."""

    async def table(stream: trio.SocketStream) -> None:
        asked = await read_to_the_end(stream)
        await stream.send_all(b'{"result":"ok","asked":%d}\n' % len(asked))
        await stream.aclose()

    with trio.fail_after(BOUND):
        async with trio.open_nursery() as nursery:
            program = await relayed(nursery, await serve(nursery, table))
            await program.send_all(b'{"cmd":"status"}\n')
            await program.send_eof()
            answer = await read_to_the_end(program)
            nursery.cancel_scope.cancel()
    assert answer == b'{"result":"ok","asked":17}\n'


async def test_cut_closes_the_program_at_once() -> None:
    """The table dies (end.table-dies): the program's connection is closed at once."""

    async def table(stream: trio.SocketStream) -> None:
        await stream.send_all(b'{"result":"ok"}\n')
        await trio.sleep_forever()

    cut = trio.Event()
    with trio.fail_after(BOUND):
        async with trio.open_nursery() as nursery:
            program = await relayed(nursery, await serve(nursery, table), cut=cut)
            assert await program.receive_some(4096) == b'{"result":"ok"}\n'
            cut.set()
            assert await read_to_the_end(program) == b""
            nursery.cancel_scope.cancel()


async def test_the_table_hears_a_program_that_resets_its_connection() -> None:
    """A program that dies resets its connection: the table must see it gone at once."""
    heard = trio.Event()

    async def table(stream: trio.SocketStream) -> None:
        await read_to_the_end(stream)
        heard.set()

    with trio.fail_after(BOUND):
        async with trio.open_nursery() as nursery:
            program = await relayed(nursery, await serve(nursery, table))
            await program.send_all(b'{"cmd":"status"}\n')
            linger = struct.pack("ii", 1, 0)  # on, 0 s: the close resets the connection
            program.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            await program.aclose()
            await heard.wait()
            nursery.cancel_scope.cancel()


async def test_a_split_write_begun_is_finished_though_its_writer_leaves() -> None:
    """Our peer leaving at the end of its game (its task cancelled) mid-message: the program
    still gets the whole message, as it would from a peer writing it whole."""
    message = b'{"result":"out"}\n'
    with trio.fail_after(BOUND):
        async with trio.open_nursery() as nursery:
            accepted: list[trio.SocketStream] = []

            async def keep(stream: trio.SocketStream) -> None:
                accepted.append(stream)
                await trio.sleep_forever()

            program_side = await trio.open_tcp_stream(*await serve(nursery, keep))
            peer = trio.CancelScope()

            async def write() -> None:
                with peer:
                    await SplitSends(accepted[0]).send_all(message)
                    await trio.sleep_forever()

            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(write)
            got = await program_side.receive_some(1)  # begun, a byte at a time
            peer.cancel()  # the peer leaves
            while len(got) < len(message):
                got += await program_side.receive_some(4096)
            nursery.cancel_scope.cancel()
    assert got == message


async def test_the_relay_says_where_each_connection_really_comes_from_while_it_lasts() -> None:
    """The table sees the relay's address; ``sources`` maps it to the program's, so that a
    join without host and port is seated where the program is (oldmaid.md 5.1)."""
    seen: list[tuple[str, int]] = []
    done = trio.Event()

    async def table(stream: trio.SocketStream) -> None:
        seen.append(stream.socket.getpeername()[:2])
        await read_to_the_end(stream)
        done.set()

    sources: dict[tuple[str, int], tuple[str, int]] = {}
    with trio.fail_after(BOUND):
        async with trio.open_nursery() as nursery:
            program = await relayed(nursery, await serve(nursery, table), sources=sources)
            await program.send_all(b'{"cmd":"join","nick":"checker"}\n')
            while not seen:
                await trio.testing.wait_all_tasks_blocked()
            assert sources == {seen[0]: program.socket.getsockname()[:2]}
            await program.aclose()
            await done.wait()
            await trio.testing.wait_all_tasks_blocked()
            assert sources == {}
            nursery.cancel_scope.cancel()
