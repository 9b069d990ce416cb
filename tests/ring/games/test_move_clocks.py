"""Every service's move clock charges a player only for its own time (issue 28).

Each test gives a player a short limit, then holds the server's loop for
twice that long in one step (``time.sleep``: what a search on the loop did
to every game), lets the server see its deadline pass, and only then has the
player answer. The answer counts: the player's own time was nearly nothing.
Before ``ring.games.clock``, each of these players lost on time. Real loopback
sockets; no timing is asserted.
"""

from __future__ import annotations

import time
from dataclasses import replace

import trio
import trio.testing

from services.notipping.protocol import Round
from services.reversi.rules import BLACK, WHITE, Position
from tests.helpers import fishnet, notipping, reversi

LIMIT = 0.5  # seconds a player has
STALL = 2 * LIMIT  # the server's loop held in one step


async def stall_the_loop() -> None:
    """Once the server waits for the player, hold the loop past the limit; then let the
    server notice its deadline."""
    await trio.testing.wait_all_tasks_blocked()
    time.sleep(STALL)
    await trio.testing.wait_all_tasks_blocked()


async def test_fishnet_move_timeout() -> None:
    config = replace(fishnet.BASE, move_timeout=LIMIT)
    async with fishnet.running(config) as server:
        client = await fishnet.LineClient.connect(server)
        await client.send("play ann spot\n")
        await client.lines_until("yourturn")
        await stall_the_loop()
        await client.send("pass\n")
        lines = await client.lines_until("yourturn", *fishnet.RESULTS)
        assert "error move_timeout" not in lines
        await client.aclose()
    assert all("timed out" not in report.reason for report in server.reports)


async def test_reversi_move_time() -> None:
    async with reversi.running(move_time=LIMIT) as server:
        clients = await reversi.pair(server)
        black, white = clients[BLACK], clients[WHITE]
        await black.board()
        await stall_the_loop()
        await black.send(b"M23\n")
        start = Position.start()
        assert await white.board() == start.play(reversi.square_of(2, 3)).digits()
        for client in (black, white):
            await client.stream.aclose()


async def test_notipping_time_budget() -> None:
    async with notipping.running(time_budget=LIMIT) as server:
        clients = await notipping.pair(server)
        await clients[0].round()
        await stall_the_loop()
        await clients[0].send(b"ADD:1:-2;")
        assert isinstance(await clients[1].message(), Round)  # not INVALID; LOSE; for seat 0
        for client in clients:
            await client.stream.aclose()
    assert all("ran out of time" not in report.reason for report in server.reports)
