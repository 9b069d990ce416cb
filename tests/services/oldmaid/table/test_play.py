"""The table over real loopback sockets during a game: going out, status, the end,
players who leave, accusations, idle connections and the caps.

Raw clients (``tests/helpers/oldmaid_table.py``); every read has a timeout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from ring.games.events import read_events
from ring.games.record import read_game
from ring.oldmaid.cards import Card, split_pairs
from services.oldmaid.referee.rules import REPORT_QUIET, GameState
from tests.helpers.oldmaid_table import (
    TIMEOUT,
    aborted,
    assert_error,
    deal_all,
    empty_hand,
    game,
    join_all,
    table,
    until_in,
    wire,
)

pytestmark = pytest.mark.usefixtures("no_internal_errors")


# -- going out, status, the end -------------------------------------------------------


async def test_either_flag_spelling_counts_out_and_status_lists_the_winner_first() -> None:
    async with game(players=3) as g:
        got = await deal_all(g)
        drawn = [card for cards in got.values() for card in cards]
        _, pairs = split_pairs(drawn)

        async def discard(seat: int, pair: tuple[Card, Card], **flag: Any) -> None:
            request = {"cmd": "discard", "cards": [wire(c) for c in pair], **flag}
            reply = await g.seat(seat).request(request)
            assert reply == {"result": "ok", "message": "ok"}

        await empty_hand(g, 2, pairs, keep=1)
        await empty_hand(g, 0, pairs, keep=1)
        while len(pairs) > 4:
            await discard(1, pairs.pop())
        await discard(1, pairs[0], last_cards="false")
        await discard(2, pairs[1], last_card=True)
        await discard(1, pairs[2], last_cards=False)
        await discard(0, pairs[3], last_cards="TRUE")
        status = await g.seat(1).status()
        assert status == {
            "result": "ok",
            "in": [g.seats[1]],
            "out": [g.seats[2], g.seats[0]],
            "state": "over",
            "game_over": True,
            "loser": g.seats[1],
            "undiscarded": 0,
        }
        # Repeated out_of_cards is fine and changes nothing.
        assert await g.seat(2).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert (await g.seat(0).status())["out"] == [g.seats[2], g.seats[0]]


async def test_the_last_player_in_claiming_an_empty_hand_ends_the_game() -> None:
    async with game(players=3) as g:
        got = await deal_all(g)
        _, pairs = split_pairs([card for cards in got.values() for card in cards])
        await empty_hand(g, 2, pairs)
        await empty_hand(g, 0, pairs)
        while len(pairs) > 1:
            request = {"cmd": "discard", "cards": [wire(c) for c in pairs.pop()]}
            await g.seat(1).request(request)
        for seat in (2, 0):
            assert await g.seat(seat).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        # The last player in holds the Old Maid: it or a player out lies.
        reply = await g.seat(1).request({"cmd": "out_of_cards"})
        assert_error(reply, "the Old Maid vanished", "the last player in", g.seats[1])
        notice = await g.seat(0).notice()
        assert notice == {"cmd": "game_over", "aborted": True, "reason": reply["message"]}


async def test_out_of_cards_during_the_draw_is_ok_and_changes_nothing() -> None:
    async with game(players=2) as g:
        assert await g.seat(1).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert (await g.seat(1).status())["out"] == []


async def test_a_dropped_player_aborts_the_game() -> None:
    async with table(players=3, linger=TIMEOUT) as running:
        g = await join_all(running, 3, watch=lambda i: i != 1)
        await g.seat(0).request({"cmd": "draw"})
        leaver = g.seats[2]
        await g.clients[leaver].aclose()
        for nick in g.seats[:2]:
            client = g.clients[nick]
            if nick != "p1":
                expected = f"{leaver} left the table"
                notice = await client.notice()
                assert notice == {"cmd": "game_over", "aborted": True, "reason": expected}
            status = await client.status()
            assert status["state"] == "aborted"
            assert status["aborted"] is True
            assert status["reason"] == f"{leaver} left the table"
            assert_error(await client.request({"cmd": "draw"}), "aborted", leaver)
        assert g.clients["p1"].notices == []  # not watching: no notice
        for nick in g.seats[:2]:
            await g.clients[nick].aclose()
        outcome = await running.finished()
        assert (outcome.state, outcome.reason) == (GameState.ABORTED, f"{leaver} left the table")
        assert outcome.line == f"game aborted: {leaver} left the table"


async def test_a_player_who_is_out_may_leave_and_the_game_goes_on(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=3, transcript=transcript) as running:
        g = await join_all(running, 3)
        got = await deal_all(g)
        await empty_hand(g, 0, split_pairs([c for cards in got.values() for c in cards])[1])
        assert await g.seat(0).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        await g.seat(0).aclose()
        await until_in(g.seat(1), g.seats[1:])
        status = await g.seat(1).status()
        assert (status["state"], status["out"]) == ("playing", [g.seats[0]])
        assert g.seat(1).notices == []
        # A player who is still in leaving is the end, as before.
        await g.seat(2).aclose()
        notice = await g.seat(1).notice()
        assert notice == {
            "cmd": "game_over",
            "aborted": True,
            "reason": f"{g.seats[2]} left the table",
        }
    left = [r for r in read_events(transcript) if r.get("event") == "left"]
    assert [r["nick"] for r in left] == [g.seats[0]]


async def test_a_game_decided_without_its_last_pair_ends_after_the_grace(
    tmp_path: Path,
) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=2, transcript=transcript, last_pair_grace=0.2) as running:
        g = await join_all(running, 2)
        got = await deal_all(g)
        drawn = [card for cards in got.values() for card in cards]
        _, pairs = split_pairs(drawn)
        await empty_hand(g, 1, pairs)
        for pair in pairs[1:]:  # the last pair goes out in a hand, undiscarded
            reply = await g.seat(0).request({"cmd": "discard", "cards": [wire(c) for c in pair]})
            assert reply["result"] == "ok", reply
        pairs[-1] = pairs[0]
        assert await g.seat(1).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert (await g.seat(0).status())["state"] == "playing"  # the pair may still come
        notice = await g.seat(0).notice()
        assert notice == {
            "cmd": "game_over",
            "loser": g.seats[0],
            "out": [g.seats[1]],
            "undiscarded": 1,
        }
        status = await g.seat(0).status()
        assert (status["game_over"], status["undiscarded"]) == (True, 1)
        last = {"cmd": "discard", "cards": [wire(c) for c in pairs[-1]]}
        assert_error(await g.seat(0).request(last), "game is over")
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()
    assert (
        outcome.line == f"game over: loser {g.seats[0]}; out: {g.seats[1]}; 1 pair never discarded"
    )
    over = [r for r in read_events(transcript) if r.get("event") == "over"]
    assert [(r["loser"], r["undiscarded"]) for r in over] == [(g.seats[0], 1)]
    end = read_game(transcript).end
    assert end is not None and (end.winners, end.losers) == ([g.seats[1]], [g.seats[0]])
    assert end.reason == f"{g.seats[0]} was left holding the Old Maid (1 pair never discarded)"
    assert end.details == {"undiscarded": 1}


async def test_the_last_pair_within_the_grace_ends_the_game_as_usual() -> None:
    async with table(players=2, last_pair_grace=TIMEOUT * 2) as running:
        g = await join_all(running, 2)
        got = await deal_all(g)
        _, pairs = split_pairs([card for cards in got.values() for card in cards])
        await empty_hand(g, 1, pairs)
        for pair in pairs[1:]:
            await g.seat(0).request({"cmd": "discard", "cards": [wire(c) for c in pair]})
        pairs[-1] = pairs[0]
        await g.seat(1).request({"cmd": "out_of_cards"})
        last = {"cmd": "discard", "cards": [wire(c) for c in pairs[-1]]}
        assert await g.seat(0).request(last) == {"result": "ok", "message": "ok"}
        notice = await g.seat(0).notice()
        assert notice == {"cmd": "game_over", "loser": g.seats[0], "out": [g.seats[1]]}


async def test_left_with_turn_is_checked_then_aborts_naming_the_player() -> None:
    async with table(players=3, linger=TIMEOUT) as running:
        g = await join_all(running, 3)
        reporter, leaver = g.seat(0), g.seats[1]
        report = {"cmd": "left_with_turn", "nick": leaver}
        assert_error(await reporter.request(report), "still in the game")
        got = await deal_all(g)
        await empty_hand(g, 1, split_pairs([c for cards in got.values() for c in cards])[1])
        assert await g.seat(1).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert_error(await reporter.request(report), "still connected")
        assert_error(await reporter.request({"cmd": "left_with_turn", "nick": "ghost"}), "ghost")
        assert_error(await reporter.request({"cmd": "left_with_turn"}), "nick")
        stranger = await running.client()
        assert_error(await stranger.request(report), "join first")
        await g.seat(1).aclose()
        await until_in(reporter, [g.seats[0], g.seats[2]])
        # Only the player that handed it the turn can know; and a stalled game stands still.
        assert_error(await g.seat(2).request(report), "cannot have handed")
        await trio.sleep(REPORT_QUIET)
        assert await reporter.request(report) == {"result": "ok"}
        expected = (
            f"{leaver} went out holding the turn and left without passing it (a player who "
            "goes out holding the turn must pass it on with an offer of num_cards 0); "
            f"reported by {g.seats[0]}"
        )
        for nick in (g.seats[0], g.seats[2]):
            notice = await g.clients[nick].notice()
            assert notice == {"cmd": "game_over", "aborted": True, "reason": expected}
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()
    assert outcome.line == f"game aborted: {expected}"


async def test_an_accusation_names_the_accused_after_its_window(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=3, transcript=transcript, accuse_window=0.1) as running:
        g = await join_all(running, 3)
        accuser, accused = g.seats[0], g.seats[1]
        wrong = {"cmd": "accuse", "accused": g.seats[2], "rule": "second_pick"}
        assert_error(await g.seat(0).request(wrong), "not the player", g.seats[1])
        assert_error(await g.seat(0).request({**wrong, "nick": g.seats[2]}), "this connection")
        accuse = {
            "cmd": "accuse",
            "nick": accuser,
            "accused": accused,
            "rule": "second_pick",
            "evidence": {"what": "picked card 2 after its card", "card_num": 2},
        }
        reply = await g.seat(0).request(accuse)
        assert reply["result"] == "ok" and f"naming {accused}" in reply["message"]
        reason = (
            f"{accused} picked twice from one offer of {accuser}'s (one pick per accepted "
            f"offer, protocol 6.3); reported by {accuser} (picked card 2 after its card)"
        )
        assert await g.seat(2).notice() == aborted(reason)
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()
    assert (outcome.culprit, outcome.rule) == (accused, "second_pick")
    game = read_game(transcript)
    records = [r for r in game.records if r.get("event") in ("accused", "aborted")]
    assert [r["event"] for r in records] == ["accused", "accused", "aborted"]
    assert (records[0]["verdict"], records[1]["verdict"]) == ("refused", "pending")
    assert (records[2]["culprit"], records[2]["rule"]) == (accused, "second_pick")
    assert game.end is not None and game.end.details == {"rule": "second_pick"}


async def test_the_table_closes_lingering_players() -> None:
    async with table(players=2, linger=0.1) as running:
        g = await join_all(running, 2)
        await g.seat(0).aclose()
        assert await g.seat(1).closed_by_table()
        assert (await running.finished()).state is GameState.ABORTED


async def test_idle_connections_are_closed_but_waiting_players_are_not() -> None:
    async with table(players=2, idle_timeout=0.2) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        idle = await running.client()
        assert await idle.closed_by_table()
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")


async def test_the_connection_cap() -> None:
    async with table(max_connections=2) as running:
        g = await join_all(running, 2)  # players: never evicted
        third = await running.client()
        assert await third.closed_by_table()
        assert (await g.seat(0).status())["result"] == "ok"


async def test_a_status_poller_stays_evictable_a_player_does_not() -> None:
    async with table(players=3, max_connections=2) as running:
        poller = await running.client()
        assert (await poller.status())["in"] == []
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        newcomer = await running.client()  # at the cap: the poller makes room
        assert await poller.closed_by_table()
        assert (await newcomer.status())["in"] == ["ann"]


@pytest.mark.parametrize(
    "caps, message",
    [
        (
            {"max_connections": 1},
            "the table is full (at most 1 connections at once); try again later",
        ),
        (
            {"max_per_address": 1, "exempt_loopback": False},
            "too many connections from your address (at most 1); close one and try again",
        ),
    ],
)
async def test_a_newcomer_refused_at_a_cap_gets_an_error_reply_to_its_first_request(
    caps: dict[str, Any], message: str
) -> None:
    async with table(**caps) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        # Answered, so the join was read: a player is never evicted.
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        newcomer = await running.client()
        await newcomer.send({"cmd": "join", "nick": "bob"})
        assert await newcomer.reply() == {"result": "error", "message": message}
        assert await newcomer.closed_by_table()
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        await ann.aclose()


async def test_a_newcomer_refused_at_the_cap_that_asks_nothing_is_closed_without_a_word() -> None:
    async with table(max_connections=1) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        silent = await running.client()
        start = trio.current_time()
        assert await silent.closed_by_table()  # within REFUSAL_READ_TIMEOUT, 1 s
        assert not silent._buffer and trio.current_time() - start < TIMEOUT
        await ann.aclose()
