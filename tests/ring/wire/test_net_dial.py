"""``ring.wire.net.dial``: an address is dialled with one socket's connect, a name resolved."""

from __future__ import annotations

import socket
from functools import partial

import pytest
import trio

from ring.wire.net import dial, reserved_port


async def _echo_once(stream: trio.SocketStream) -> None:
    async with stream:
        data = await stream.receive_some(100)
        await stream.send_all(data.upper())


@pytest.mark.parametrize(
    ("listen_on", "dial_to"),
    [("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("127.0.0.1", "localhost")],
)
async def test_dial_reaches_a_listener_by_address_or_name(listen_on: str, dial_to: str) -> None:
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, _echo_once, 0, host=listen_on))
        port = listeners[0].socket.getsockname()[1]
        stream = await dial(dial_to, port, timeout=5)
        async with stream:
            # The handoff's small writes must not wait for Nagle's algorithm.
            assert stream.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            await stream.send_all(b"offer")
            with trio.fail_after(5):
                assert await stream.receive_some(100) == b"OFFER"
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
async def test_a_refused_dial_is_an_os_error(host: str) -> None:
    # link_to retries on OSError (an older client that listens late): a refusal
    # must arrive as one, whichever path dialled.
    with reserved_port(host, 0) as port, pytest.raises(OSError) as raised:
        await dial(host, port, timeout=5)
    assert raised.value.strerror == "Connection refused"  # what our clients print
