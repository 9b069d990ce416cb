"""The No Tipping server's joins over real loopback sockets: a denied join may ask again,
ten requests and no more, anything else before a seat is denied and closed.
"""

from __future__ import annotations

import pytest

from services.notipping.protocol import Begin, Closed, Denied, Granted
from tests.helpers.notipping import Client, join, pair, running

# -- joining --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_bytes", "reason"),
    [
        (b"JOINREQUEST:bob:0;", "seat 0 is taken"),
        (b"JOINREQUEST:bob:2;", "'2': the player number is 0 or 1"),
        (b"JOINREQUEST:b/b:1;", "'b/b': a handle is 1-32"),
        (b"JOINREQUEST:bob;", "'JOINREQUEST:bob': JOINREQUEST takes a handle and a player number"),
    ],
)
async def test_a_denied_join_may_ask_again(
    request_bytes: bytes, reason: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running() as server:
        first = await join(server, "ann", 0)
        second = await Client.connect(server, "bob", 1)
        await second.send(request_bytes)
        await second.expect(Denied())
        await second.send(b"JOINREQUEST:bob:1;")  # the same connection, the other seat
        await second.expect(Granted(), Begin(1, 7))
        await first.expect(Begin(1, 7))
    assert f"JOINREQUEST denied: {reason}" in capfd.readouterr().err


async def test_ten_requests_and_no_more(capfd: pytest.CaptureFixture[str]) -> None:
    async with running() as server:
        first = await join(server, "ann", 0)
        client = await Client.connect(server)
        await client.send(b"JOINREQUEST:x:0;" * 9 + b"JOINREQUEST:x:1;")
        await client.expect(*[Denied()] * 9, Granted(), Begin(1, 7))
        await first.expect(Begin(1, 7))
        greedy = await Client.connect(server)
        await greedy.send(b"JOINREQUEST:x:7;" * 11)
        await greedy.expect(*[Denied()] * 10, Closed())
    assert "10 join requests; closing" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("data", "logged"),
    [
        (b"ADD:1:1;", "'ADD:1:1;' before joining"),
        (b"REMOVE:1;", "'REMOVE:1;' before joining"),
        (b"HELLO;", "'HELLO' (a client sends JOINREQUEST, ADD or REMOVE) before joining"),
        (b"x" * 4097, "a message over 4096 bytes before joining"),
    ],
)
async def test_anything_else_before_a_seat_is_denied_and_closed(
    data: bytes, logged: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running() as server:
        client = await Client.connect(server)
        await client.send(data)
        await client.expect(Denied(), Closed())
        await pair(server)  # the server is unharmed
    assert f"denied, closing: {logged}" in capfd.readouterr().err
