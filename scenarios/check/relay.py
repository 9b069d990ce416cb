"""Between the program and servers that are not the checker's own wire: split, or cut.

``ring check oldmaid`` plays the program against our real table and peers,
which write each message whole. For its framing case every byte they send
the program must arrive on its own: our peers' links go through
``SplitSends`` (``StandIns.wrap_stream``), and the program reaches the
table through ``relay``, which passes its bytes on as they come and hands
the table's back a byte at a time. For the case of a table that dies, the
relay cuts the program's connection when told.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Any

import trio

from ring.wire.net import dial
from ring.wire.transport import plain_ip
from scenarios.check.wire import SPLIT_PAUSE

RELAY_DIAL_TIMEOUT = 5.0
# Once a connection, the first message of two bytes or more pauses this long after its
# first byte, as a segment lost and sent again would make it (Linux waits at least 0.2 s
# before sending again): longer than the 0.2 s grace oldmaid.md 7.7 step 6 describes, so a
# program that waits with a socket read timeout that throws away half a line (7.7 step 6)
# loses it every time, not only on a slow day; far shorter than any peer timeout.
RESENT_GAP = 0.3
# The longest a split write may take to finish once its writer is cancelled (or the program
# stops reading): the write ends there, so that nothing waits for ever.
SPLIT_FINISH = 10.0
READ_SIZE = 65536


class PassThrough(trio.abc.HalfCloseableStream):
    """A socket stream as it is: the base of a peer's link bent one way
    (``StandIns.wrap_stream``), which overrides the part it bends."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self._stream = stream
        self.socket = stream.socket  # who is on the other end: the peer checks addresses

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        return await self._stream.receive_some(max_bytes)

    async def send_eof(self) -> None:
        await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()


class SplitSends(PassThrough):
    """A socket stream whose every write leaves a byte at a time, ``SPLIT_PAUSE`` apart:
    each byte its own TCP segment (Trio sets TCP_NODELAY); in the first message of two
    bytes or more, ``RESENT_GAP`` after the first.

    A write begun is finished, even if the writer is cancelled meanwhile (within
    ``SPLIT_FINISH``): our peer leaving at the end of its game must not leave the
    program half a message. A whole write does not, and the program is not to be
    judged on a truncation that only our splitting made."""

    def __init__(self, stream: trio.SocketStream) -> None:
        super().__init__(stream)
        self._gap_made = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        gap = not self._gap_made and len(data) > 1
        self._gap_made = self._gap_made or gap
        with trio.CancelScope(shield=True), trio.move_on_after(SPLIT_FINISH):
            for i in range(len(data)):
                if i:
                    await trio.sleep(RESENT_GAP if gap and i == 1 else SPLIT_PAUSE)
                await self._stream.send_all(bytes(data[i : i + 1]))
        await trio.lowlevel.checkpoint_if_cancelled()  # the writer's cancellation, if any


async def relay(
    target: tuple[str, int],
    *,
    port: int = 0,
    split: bool = False,
    cut: trio.Event | None = None,
    sources: dict[tuple[str, int], tuple[str, int]] | None = None,
    task_status: trio.TaskStatus[tuple[str, int]],
) -> None:
    """Listen on loopback ``port``; relay each connection to ``target``: its answers a byte
    at a time if ``split``; every connection closed at once when ``cut`` is set (the
    program sees its server die). ``sources``: kept up to date with where each relayed
    connection really comes from, by the address the server sees it come from (for the
    table's ``real_source``: a join without host and port is seated where the program
    is, as the handout's join is). Reports the (host, port) it listens on; runs until
    cancelled."""
    [listener] = await trio.open_tcp_listeners(port, host="127.0.0.1")
    cut = trio.Event() if cut is None else cut
    handler = functools.partial(_relay_one, target, split, cut, {} if sources is None else sources)
    async with listener, trio.open_nursery() as nursery:
        task_status.started(("127.0.0.1", listener.socket.getsockname()[1]))
        await trio.serve_listeners(handler, [listener], handler_nursery=nursery)


async def _relay_one(
    target: tuple[str, int],
    split: bool,
    cut: trio.Event,
    sources: dict[tuple[str, int], tuple[str, int]],
    client: trio.SocketStream,
) -> None:
    try:
        server = await dial(*target, timeout=RELAY_DIAL_TIMEOUT)
    except (OSError, trio.TooSlowError):
        await client.aclose()
        return
    try:
        relayed = _address(server.socket.getsockname())
        real = _address(client.socket.getpeername())
    except OSError:  # the program is gone already
        await server.aclose()
        await client.aclose()
        return
    sources[relayed] = real  # before any byte of the program's is passed on
    try:
        await _pass_on(server, client, split, cut)
    finally:
        sources.pop(relayed, None)


def _address(sockaddr: tuple[Any, ...]) -> tuple[str, int]:
    """A socket's (host, port), IPv4-mapped addresses plain, as the table writes them."""
    return plain_ip(sockaddr[0]), sockaddr[1]


async def _pass_on(
    server: trio.SocketStream, client: trio.SocketStream, split: bool, cut: trio.Event
) -> None:
    # Each direction runs to its own end, so whatever the server said reaches the program
    # however the connection ends: a program that writes once more to a server that has
    # closed (a status poll as the game ends) must still read the game_over notice that
    # came before the close. The server's bytes are read as they come, not as fast as a
    # split write passes them on, so a reset at its close loses none of them.
    said, heard = trio.open_memory_channel[bytes](math.inf)
    async with client, server, trio.open_nursery() as nursery:

        async def from_server() -> None:
            with said:
                try:
                    while data := await server.receive_some(READ_SIZE):
                        said.send_nowait(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass

        async def to_program() -> None:
            sink = SplitSends(client) if split else client
            try:
                async for data in heard:
                    await sink.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the program is gone: nothing more to relay
            nursery.cancel_scope.cancel()  # the server said all it will, and it is passed on

        async def to_server() -> None:
            try:
                while data := await client.receive_some(READ_SIZE):
                    try:
                        await server.send_all(data)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        return  # the server is gone: what it said still reaches the program
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # the program reset its connection: it is gone, as if it had closed it
            # The program stopped writing: the server hears its end, and it may still read.
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await server.send_eof()

        async def cut_when_told() -> None:
            await cut.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(from_server)
        nursery.start_soon(to_program)
        nursery.start_soon(to_server)
        nursery.start_soon(cut_when_told)
