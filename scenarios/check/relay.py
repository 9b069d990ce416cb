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

import functools

import trio

from ring.wire.net import dial
from scenarios.check.wire import SPLIT_PAUSE

RELAY_DIAL_TIMEOUT = 5.0
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
    each byte its own TCP segment (Trio sets TCP_NODELAY)."""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        for i in range(len(data)):
            if i:
                await trio.sleep(SPLIT_PAUSE)
            await self._stream.send_all(bytes(data[i : i + 1]))


async def relay(
    target: tuple[str, int],
    *,
    port: int = 0,
    split: bool = False,
    cut: trio.Event | None = None,
    task_status: trio.TaskStatus[tuple[str, int]],
) -> None:
    """Listen on loopback ``port``; relay each connection to ``target``: its answers a byte
    at a time if ``split``; every connection closed at once when ``cut`` is set (the
    program sees its server die). Reports the (host, port) it listens on; runs until
    cancelled."""
    [listener] = await trio.open_tcp_listeners(port, host="127.0.0.1")
    handler = functools.partial(_relay_one, target, split, trio.Event() if cut is None else cut)
    async with listener, trio.open_nursery() as nursery:
        task_status.started(("127.0.0.1", listener.socket.getsockname()[1]))
        await trio.serve_listeners(handler, [listener], handler_nursery=nursery)


async def _relay_one(
    target: tuple[str, int], split: bool, cut: trio.Event, client: trio.SocketStream
) -> None:
    try:
        server = await dial(*target, timeout=RELAY_DIAL_TIMEOUT)
    except (OSError, trio.TooSlowError):
        await client.aclose()
        return
    async with client, server, trio.open_nursery() as nursery:

        async def pump(source: trio.abc.ReceiveStream, sink: trio.abc.SendStream) -> None:
            try:
                while data := await source.receive_some(READ_SIZE):
                    await sink.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            nursery.cancel_scope.cancel()  # one side is gone: so is the relay

        async def cut_when_told() -> None:
            await cut.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(pump, client, server)
        nursery.start_soon(pump, server, SplitSends(client) if split else client)
        nursery.start_soon(cut_when_told)
