"""The table's timers on Trio's mock clock: the idle, wait and turn timeouts, and the
write timeout of a client that does not read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from ring.games.events import read_events
from ring.oldmaid import proofs
from ring.oldmaid.cards import split_pairs
from services.oldmaid.table.game import ONE_RECV_PAUSE
from tests.helpers.oldmaid_table import (
    HOUR,
    Game,
    MemoryTable,
    aborted,
    assert_error,
    deal_all,
    empty_hand,
    table,
    table_in_memory,
    wire,
)

pytestmark = pytest.mark.usefixtures("no_internal_errors")


# -- timers, on trio's mock clock ---------------------------------------------------
#
# These tables read memory streams instead of sockets, so that autojump_clock
# runs minutes of table time at once: the idle, wait and turn timeouts, and the
# write timeout of a client that does not read (a lockstep stream: a write to it
# waits until the test reads).


@pytest.mark.parametrize("data", [b'{"cmd": "status"}\n', b"hello table\n"], ids=["status", "junk"])
async def test_requests_do_not_keep_open_a_connection_that_never_joins(
    data: bytes, autojump_clock: trio.abc.Clock
) -> None:
    async with table_in_memory(idle_timeout=120) as t:
        start = trio.current_time()
        poller = await t.client()
        for at in (0, 50, 100):  # each answered, none buys more time
            await trio.sleep(start + at - trio.current_time())
            await poller.send_bytes(data)
            assert "result" in await poller.reply()
        assert await poller.closed_by_table()
        assert trio.current_time() - start == pytest.approx(120, abs=0.01)


async def test_a_join_that_waits_too_long_gets_an_error_reply_and_frees_its_seat(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=3, wait_timeout=600) as t:
        start = trio.current_time()
        ann = await t.join("ann")
        await trio.sleep(300)
        bob = await t.join("bob")
        assert await ann.reply() == {
            "result": "error",
            "message": "no game started within 600 s of this join (2 of 3 players joined); "
            "join again to keep waiting",
        }
        assert trio.current_time() - start == pytest.approx(600, abs=0.01)
        assert (await ann.status())["in"] == ["bob"]
        await ann.send(t.join_request("ann"))  # the same connection joins again
        cy = await t.join("cy")
        replies = [await client.reply() for client in (ann, bob, cy)]
        assert replies[0] == replies[1] == replies[2] and replies[0]["result"] == "ok"
        assert sorted(nick for _, nick in replies[0]["players"]) == ["ann", "bob", "cy"]


async def test_a_first_draw_that_never_comes_aborts_the_game_naming_player1(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=3, turn_timeout=300) as t:
        seats, clients = await t.seat(3)
        start = trio.current_time()
        for _ in range(2):  # a status is not a move: it does not put the end off
            await trio.sleep(100)
            assert (await clients[seats[1]].status())["state"] == "playing"
        reason = (
            f"{seats[0]} did not draw for 300 s while it was its turn to draw "
            "(player1 draws first, as soon as its join reply comes)"
        )
        for nick in seats:
            assert await clients[nick].notice() == aborted(reason)
        assert trio.current_time() - start == pytest.approx(300, abs=0.01)
        assert (await clients[seats[0]].status())["reason"] == reason
        assert await clients[seats[0]].closed_by_table()  # after --linger, as any end


async def test_each_move_puts_the_turn_timeout_off_and_both_suspects_are_named(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=3, turn_timeout=300) as t:
        seats, clients = await t.seat(3)
        first, second, third = (clients[nick] for nick in seats)
        assert (await first.request({"cmd": "draw"}))["result"] == "ok"
        await trio.sleep(250)
        assert (await second.request({"cmd": "draw"}))["result"] == "ok"
        start = trio.current_time()
        await trio.sleep(200)
        assert_error(await first.request({"cmd": "draw"}), "turn")  # refused: not a move
        notice = await third.notice()
        assert trio.current_time() - start == pytest.approx(300, abs=0.01)
        # The table sees draws, not the your_turn between players: either of
        # the two may have stalled, so it blames neither.
        assert notice == aborted(
            f"no draw for 300 s: it was {seats[2]}'s turn to draw, so either {seats[1]} never "
            f"passed it the turn (your_turn) or {seats[2]} never drew; the table cannot tell "
            "which, since your_turn goes from peer to peer"
        )


async def test_a_stuck_offer_phase_is_aborted_without_blaming_anyone(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=2, turn_timeout=300) as t:
        seats, clients = await t.seat(2)
        for i in range(53):
            await clients[seats[i % 2]].request({"cmd": "draw"})
        start = trio.current_time()
        notice = await clients[seats[0]].notice()
        assert trio.current_time() - start == pytest.approx(300, abs=0.01)
        assert notice == aborted(
            "nothing moved for 300 s in the offer phase (no discard, no player out); the last "
            f"the table saw: {seats[0]} drew the last card (so it held the first turn of the "
            "offers); the turn passes from peer to peer there, unseen by the table, so it "
            f"cannot tell who holds it now (still in: {', '.join(seats)})"
        )


async def test_turn_timeout_zero_waits_without_limit(autojump_clock: trio.abc.Clock) -> None:
    async with table_in_memory(players=2, turn_timeout=0) as t:
        seats, clients = await t.seat(2)
        await trio.sleep(10 * HOUR)
        assert (await clients[seats[0]].request({"cmd": "draw"}))["result"] == "ok"


async def test_players_who_do_not_read_delay_no_other_join_reply(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table_in_memory(transcript, players=8) as t:
        for i in range(7):
            await t.join(f"p{i}", lockstep=True)  # never read
        start = trio.current_time()
        reader = await t.join("p7")
        reply = await reader.reply()
        seats = [nick for _, nick in reply["players"]]
        assert seats.index("p7") > 0  # another player's reply is due before its own
        assert trio.current_time() - start < 1  # not 10 s for each player who does not read
        notice = await reader.notice()  # they are closed after the write timeout
        assert notice["aborted"] and notice["reason"].endswith("left the table")
        assert trio.current_time() - start == pytest.approx(10, abs=0.01)
    sent = [r for r in read_events(transcript) if r.get("dir") == "out"]
    # Each write is started in seat order, so the transcript lists them so.
    assert [r["nick"] for r in sent if "players" in r["msg"]] == seats


@pytest.mark.parametrize("owed_a_reply", [False, True], ids=["idle", "owed-a-reply"])
async def test_a_watcher_that_does_not_read_delays_no_other_notice(
    owed_a_reply: bool, autojump_clock: trio.abc.Clock
) -> None:
    async with table_in_memory(players=3) as t:
        ann = await t.join("ann", lockstep=True)  # first in line for every notice
        bob, cy = await t.join("bob"), await t.join("cy")
        for client in (ann, bob, cy):
            assert (await client.reply())["result"] == "ok"
        if owed_a_reply:  # its notice then waits behind that reply's write
            await ann.send({"cmd": "status"})
        start = trio.current_time()
        await cy.aclose()  # the game is aborted; ann reads no more
        assert await bob.notice() == aborted("cy left the table")
        assert trio.current_time() - start < 1


async def test_a_verified_join_gets_a_secret_and_the_proofs_an_older_one_sees_nothing() -> None:
    async with table(players=3) as running:
        clients = {}
        for nick, verify in (("ann", True), ("bob", True), ("old", False)):
            client = await running.client()
            await client.send({"cmd": "join", "nick": nick, **({"verify": True} if verify else {})})
            clients[nick] = client
        replies = {nick: await client.reply() for nick, client in clients.items()}
        assert set(replies["old"]) == {"result", "players"}  # exactly as oldmaid.md 5.1
        ann, bob = replies["ann"], replies["bob"]
        assert ann["players"] == replies["old"]["players"] == bob["players"]
        assert set(ann["proofs"]) == {"bob"} and set(bob["proofs"]) == {"ann"}
        assert ann["secret"] != bob["secret"]
        # Each proves itself with its own secret; the other expects exactly that.
        assert proofs.proof(ann["secret"], "bob") == bob["proofs"]["ann"]
        assert proofs.proof(bob["secret"], "ann") == ann["proofs"]["bob"]
        assert (await clients["old"].status())["verified"] == ["ann", "bob"]


async def test_a_table_lets_a_game_go_once_its_players_have_gone(
    autojump_clock: trio.abc.Clock,
) -> None:
    """A class's table runs all day: it holds the games forming and under way, not every
    game it ever played (each of which, records and all, it held until it stopped)."""
    async with table_in_memory(players=2, games=None) as t:
        _, clients = await t.seat(2)
        [first, forming] = t.server.games
        for client in clients.values():
            await client.aclose()  # the game is aborted: a player left
        await trio.sleep(HOUR)
        assert first.ended.is_set()
        assert t.server.games == [forming] and t.server.forming is forming


async def to_the_last_discard(t: MemoryTable, join: dict[str, bool]) -> tuple[Game, list[str]]:
    """A game of two, p1 out (its reply long past) and p0 holding one pair and the Old Maid:
    the game, and p0's discard of that pair, which ends it."""
    clients = {}
    for nick in ("p0", "p1"):
        clients[nick] = await t.client()
        await clients[nick].send({**t.join_request(nick), **join})
    replies = [await client.reply() for client in clients.values()]
    g = Game(None, [nick for _, nick in replies[0]["players"]], clients, [])  # type: ignore[arg-type]
    _, pairs = split_pairs([card for cards in (await deal_all(g)).values() for card in cards])
    await empty_hand(g, 1, pairs)
    last = pairs.pop()
    for pair in pairs:  # p0 keeps one pair and the Old Maid
        reply = await g.seat(0).request({"cmd": "discard", "cards": [wire(c) for c in pair]})
        assert reply["result"] == "ok", reply
    assert await g.seat(1).request({"cmd": "out_of_cards"}) == {"result": "ok"}
    await trio.sleep(1)  # table time: p1's last reply is long past when the game ends
    return g, [wire(c) for c in last]


@pytest.mark.parametrize(
    ("join", "pause"), [({}, ONE_RECV_PAUSE), ({"stream": True}, 0.0)], ids=["one-recv", "stream"]
)
async def test_the_notice_behind_the_reply_that_ends_the_game_waits_for_a_one_recv_reader(
    join: dict[str, bool], pause: float, autojump_clock: trio.abc.Clock
) -> None:
    """oldmaid.md 5.6, 13.2: the last discard's reply, then the game_over notice, apart
    for a client that did not say it reads a stream; the other watcher's at once."""
    async with table_in_memory(players=2) as t:
        g, last = await to_the_last_discard(t, join)
        ender, other = g.seat(0), g.seat(1)
        answered = await ender.request({"cmd": "discard", "cards": last})
        at = trio.current_time()
        assert answered["result"] == "ok" and not ender.notices
        assert (await other.notice())["loser"] == g.seats[0]
        assert trio.current_time() == at  # a watcher not answered just now: at once
        assert (await ender.notice())["loser"] == g.seats[0]
        assert trio.current_time() - at == pytest.approx(pause)


async def test_a_game_ended_by_another_while_a_one_recv_reader_is_answered_waits_too(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The end may come from another player's request while this one's reply is written:
    the notice still comes a moment after that reply, not right behind it."""
    async with table_in_memory(players=2) as t:
        g, last = await to_the_last_discard(t, {})
        assert (await g.seat(1).status())["state"] == "playing"
        at = trio.current_time()
        assert (await g.seat(0).request({"cmd": "discard", "cards": last}))["result"] == "ok"
        assert trio.current_time() == at  # the same moment, in the table's time
        assert (await g.seat(1).notice())["loser"] == g.seats[0]
        assert trio.current_time() - at == pytest.approx(ONE_RECV_PAUSE)
