"""``ring.wire.net.listening``: however the goodbye ends, its connections close, it exits."""

from __future__ import annotations

import threading

import trio

from ring.wire.net import listening

HANG = 10.0  # seconds: far beyond the 1 s goodbye; only a hang takes this long


async def _serve_with_a_goodbye_that_raises() -> tuple[list[str], bytes]:
    handled = trio.Event()

    async def handler(stream: trio.SocketStream) -> None:
        handled.set()
        await trio.sleep_forever()

    async def goodbye() -> None:
        raise RuntimeError("a bug in the goodbye")

    raised: list[str] = []
    try:
        async with listening(
            handler, "127.0.0.1", 0, max_connections=4, on_stop=goodbye, stop_timeout=1
        ) as (host, port):
            client = await trio.open_tcp_stream(host, port)
            await handled.wait()
    except* RuntimeError as group:
        raised = [str(exc) for exc in group.exceptions]
    return raised, await client.receive_some(1)


def test_a_goodbye_that_raises_still_closes_every_connection_and_exits() -> None:
    # Issue 15's unexplained hang: FishNet's goodbye raised (it told a game
    # that had just ended), the listener's shielded scope was never cancelled,
    # and the server waited for it for ever. No cancel scope can end a wait
    # inside a shielded one, so the run is watched from another thread.
    results: list[tuple[list[str], bytes]] = []
    runner = threading.Thread(
        target=lambda: results.append(trio.run(_serve_with_a_goodbye_that_raises)), daemon=True
    )
    runner.start()
    runner.join(HANG)
    assert not runner.is_alive(), "listening() hung after its goodbye raised"
    assert results == [(["a bug in the goodbye"], b"")]  # re-raised; the client's socket closed
