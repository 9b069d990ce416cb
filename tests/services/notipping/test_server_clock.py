"""The No Tipping server's clock: memory streams and Trio's mock clock for the time budget
and the other timeouts.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

from services.notipping.protocol import Begin, Closed, Granted
from services.notipping.server import NoTippingConfig, NoTippingServer
from tests.helpers.notipping import Client, lost

# -- the clock ---------------------------------------------------------------------------------


async def memory_client(server: NoTippingServer, nursery: trio.Nursery, seat: int) -> Client:
    ours, theirs = trio.testing.memory_stream_pair()
    nursery.start_soon(server.handle, theirs)
    client = Client(ours, ("ann", "bob")[seat], seat)
    client.timeout = 36000
    return client


async def memory_pair(server: NoTippingServer, nursery: trio.Nursery) -> list[Client]:
    clients = [await memory_client(server, nursery, seat) for seat in (0, 1)]
    for client in clients:
        await client.send(client.protocol.start())
        await client.expect(Granted())
    for client in clients:
        await client.expect(Begin(1, 7))
    return clients


async def test_the_time_budget_counts_all_of_a_players_moves(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = NoTippingServer(NoTippingConfig(time_budget=30))
    async with trio.open_nursery() as nursery:
        clients = await memory_pair(server, nursery)
        start = trio.current_time()
        await clients[0].round()
        await trio.sleep(20)
        await clients[0].send(b"ADD:1:-2;")
        await clients[1].round()
        await trio.sleep(29)  # player 1 has 1 s left, and 29 s for nothing
        await clients[1].send(b"ADD:1:-3;")
        await clients[0].round()  # 10 s left of player 0's 30
        await lost(clients[0], clients[1], invalid=True)
        assert trio.current_time() - start == pytest.approx(59, abs=0.01)
    assert server.reports[0].reason == "ran out of time (30 s)"


async def test_without_a_budget_one_move_may_take_the_wait_timeout(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = NoTippingServer(NoTippingConfig(time_budget=0, wait_timeout=600))
    async with trio.open_nursery() as nursery:
        clients = await memory_pair(server, nursery)
        await clients[0].round()
        await trio.sleep(599)
        await clients[0].send(b"ADD:1:-2;")
        await clients[1].round()
        start = trio.current_time()
        await lost(clients[1], clients[0], invalid=True)
        assert trio.current_time() - start == pytest.approx(600, abs=0.01)
    assert server.reports[0].reason == "did not move within 600 s"


async def test_silent_connections_are_closed_after_the_timeouts(
    autojump_clock: trio.abc.Clock, capfd: pytest.CaptureFixture[str]
) -> None:
    server = NoTippingServer(NoTippingConfig(idle_timeout=120, wait_timeout=600))
    async with trio.open_nursery() as nursery:
        start = trio.current_time()
        silent = await memory_client(server, nursery, 0)
        await silent.expect(Closed())
        assert trio.current_time() - start == pytest.approx(120, abs=0.01)
        lonely = await memory_client(server, nursery, 0)
        await lonely.send(b"JOINREQUEST:ann:0;")
        await lonely.expect(Granted(), Closed())
        assert trio.current_time() - start == pytest.approx(720, abs=0.01)
        assert server.forming == {}
    err = capfd.readouterr().err
    assert "no JOINREQUEST within 120 s; closing" in err
    assert "ann (?): no opponent within 600 s" in err
