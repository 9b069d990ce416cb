"""The table over real loopback sockets: joining, before the start and as it starts.

Raw clients (``tests/helpers/oldmaid_table.py``); every read has a timeout.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import trio
import trio.testing

from tests.helpers.oldmaid_table import TIMEOUT, assert_error, join_all, table, until_in

pytestmark = pytest.mark.usefixtures("no_internal_errors")


# -- joining ----------------------------------------------------------------------


async def test_bad_joins_before_the_start() -> None:
    async with table(players=2) as running:
        first = await running.client()
        await first.send({"cmd": "join", "nick": "ann", "host": "10.1.1.1", "port": 4000})
        other = await running.client()
        assert (await other.status())["in"] == ["ann"]
        assert_error(await other.request({"cmd": "draw"}), "not started")
        assert_error(await other.request({"cmd": "join", "nick": "ann"}), "taken")
        same_address = {"cmd": "join", "nick": "bob", "host": "10.1.1.1", "port": 4000}
        assert_error(await other.request(same_address), "10.1.1.1:4000", "ann")
        assert_error(await other.request({"cmd": "join", "nick": ""}), "$.nick")
        assert_error(await other.request({"cmd": "join", "nick": "x" * 33}), "$.nick")
        assert_error(await other.request({"cmd": "join", "nick": "b", "host": "nohost"}), "host")
        assert_error(await other.request({"cmd": "join", "nick": "b", "port": 0}), "port")
        assert_error(await other.request({"cmd": "join", "nick": "b", "port": 65536}), "port")
        assert_error(await other.request({"cmd": "join", "nick": "b", "watch": "y"}), "watch")
        assert (await other.status())["in"] == ["ann"]
        # The connection is still good for a join that works.
        await other.send({"cmd": "join", "nick": "bob"})
        ann, bob = await first.reply(), await other.reply()
        assert ann == bob and ann["result"] == "ok"
        addresses = {nick: address for address, nick in ann["players"]}
        assert addresses == {"ann": ["10.1.1.1", 4000], "bob": ["127.0.0.1", other.local_port]}


async def test_requests_while_a_join_waits_are_refused_and_the_reply_still_comes() -> None:
    async with table(players=2) as running:
        ann = await running.client()
        # Pipelined: the join and two more requests in one write.
        await ann.send_bytes(b'{"cmd":"join","nick":"ann"}\n{"cmd":"status"}{"cmd":"draw"}\n')
        for _ in range(2):
            assert_error(await ann.reply(), "wait for the reply to join")
        bob = await running.client()
        await bob.send({"cmd": "join", "nick": "bob", "port": 5000})
        reply = await ann.reply()
        assert reply["result"] == "ok"
        assert [nick for _, nick in reply["players"]] in (["ann", "bob"], ["bob", "ann"])
        assert ["127.0.0.1", ann.local_port] in [address for address, _ in reply["players"]]
        assert (await ann.status())["state"] == "playing"


def join_then_draw_if_first(port: int, nick: str) -> tuple[socket.socket, str | None]:
    """A blocking client in its own thread: it answers as fast as another process would."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with sock.makefile("rb") as lines:
        sock.sendall(json.dumps({"cmd": "join", "nick": nick}).encode() + b"\n")
        players = json.loads(lines.readline())["players"]
        if players[0][1] != nick:
            return sock, None
        sock.sendall(b'{"cmd": "draw"}\n')
        return sock, json.loads(lines.readline())["result"]


async def eight_threaded_players(port: int) -> list[str | None]:
    results: list[tuple[socket.socket, str | None]] = []

    async def player(nick: str) -> None:
        results.append(await trio.to_thread.run_sync(join_then_draw_if_first, port, nick))

    async with trio.open_nursery() as nursery:
        for i in range(8):
            nursery.start_soon(player, f"p{i}")
    for sock, _ in results:
        sock.close()
    return [draw for _, draw in results]


async def test_player1_may_draw_the_moment_its_join_reply_arrives() -> None:
    # The join replies go out one by one; player1's first draw can arrive
    # while the table is still writing the others'. Ten games make a lost
    # race near certain if the table got this wrong.
    for seed in range(10):
        async with table(players=8, seed=seed) as running:
            draws = await eight_threaded_players(running.port)
        assert [draw for draw in draws if draw is not None] == ["ok"]


async def test_closing_before_the_start_frees_the_seat() -> None:
    async with table(players=2) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        watcher = await running.client()
        assert (await watcher.status())["in"] == ["ann"]
        await ann.aclose()
        await until_in(watcher, [])
        g = await join_all(running, 2)  # the nick is free again, and the game starts
        assert sorted(g.seats) == ["p0", "p1"]


async def test_start_after_starts_with_fewer_players() -> None:
    async with table(players=4, start_after=0.2) as running:
        g = await join_all(running, 2)
        assert sorted(g.seats) == ["p0", "p1"]
        status = await g.seat(0).status()
        assert (status["state"], status["in"]) == ("playing", g.seats)
        late = await running.client()
        assert_error(await late.request({"cmd": "join", "nick": "p2"}), "already started")


async def test_start_after_needs_two_players_and_forgets_one_who_left() -> None:
    async with table(players=4, start_after=0.25) as running:
        ann, bob, cy = await running.client(), await running.client(), await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        await trio.sleep(0.3)  # past start_after: one player alone must not start
        assert (await cy.status())["in"] == ["ann"]
        await bob.send({"cmd": "join", "nick": "bob"})
        await until_in(cy, ["ann", "bob"])
        await bob.aclose()
        await until_in(cy, ["ann"])
        await cy.send({"cmd": "join", "nick": "cy"})
        reply = await ann.reply()
        assert sorted(nick for _, nick in reply["players"]) == ["ann", "cy"]


# -- a table of verified games only (--verified) ----------------------------------------


async def test_a_verified_table_refuses_an_older_clients_join_naming_the_sections(
    tmp_path: Path,
) -> None:
    transcript = tmp_path / "t.jsonl"
    async with table(players=2, verified=True, transcript=transcript) as running:
        older = await running.client()
        reply = await older.request({"cmd": "join", "nick": "ann"})
        assert_error(reply, "verified games only", '"verify":true', "14.5 and 14.6")
        assert (await older.status()).get("report") is True  # the mode, before any join
        # Verifying without witness is not enough: every game here is witnessed (14.6).
        reply = await older.request({"cmd": "join", "nick": "ann", "verify": True})
        assert_error(reply, "verified games only", '"witness":true', "14.5 and 14.6")
        # The same connection, joining with verify and witness, is seated; so is a second.
        await older.send({"cmd": "join", "nick": "ann", "verify": True, "witness": True})
        bob = await running.client()
        await bob.send({"cmd": "join", "nick": "bob", "verify": True, "witness": True})
        ann_reply, bob_reply = await older.reply(), await bob.reply()
        for reply in (ann_reply, bob_reply):
            assert reply["result"] == "ok" and reply["report"] is True
            assert reply["witness"] is True
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    start = next(r for r in records if r.get("event") == "start")
    assert start["options"]["verified"] is True


async def test_a_table_told_whom_to_expect_starts_once_the_last_is_refused() -> None:
    """A tournament's ring at a verified table (``expected``): the one program that joins
    without verify is refused, and the game starts with the others at once, not after
    ``start_after``."""
    expected = frozenset({"ann", "bob", "cy"})
    async with table(players=3, verified=True, start_after=600.0, expected=expected) as running:
        ann, bob, cy = [await running.client() for _ in range(3)]
        for client, nick in ((ann, "ann"), (bob, "bob")):
            await client.send({"cmd": "join", "nick": nick, "verify": True, "witness": True})
        await until_in(cy, ["ann", "bob"])
        assert_error(await cy.request({"cmd": "join", "nick": "cy"}), "verified games only")
        with trio.fail_after(TIMEOUT):
            replies = [await ann.reply(), await bob.reply()]
        for reply in replies:
            assert reply["result"] == "ok" and reply["report"] is True
        assert (await cy.status())["state"] == "playing"


async def test_a_table_of_any_games_says_nothing_of_the_mode(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    async with table(players=2, transcript=transcript) as running:
        game = await join_all(running, 2)
        assert "report" not in await game.seat(0).status()
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    start = next(r for r in records if r.get("event") == "start")
    assert "verified" not in start["options"]
