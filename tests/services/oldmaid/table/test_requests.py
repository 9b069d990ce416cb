"""The table over real loopback sockets: bad requests during a game, and framing.

Each test runs the table in-process on port 0 and talks to it through ``Client``
(``tests/helpers/oldmaid_table.py``), a raw TCP client that sends exactly the bytes it
is given, so the tests can send what students' clients send: garbage, bare objects,
objects split byte by byte. Every read has a timeout, so a failure cannot hang.
"""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from tests.helpers.oldmaid_table import (
    a_pair,
    assert_error,
    assert_undisturbed,
    deal_all,
    game,
    table,
    wire,
)

pytestmark = pytest.mark.usefixtures("no_internal_errors")


# -- bad input during a game --------------------------------------------------------

PAIR = [["3", "spades"], ["3", "clubs"]]
BAD_REQUESTS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "not JSON": (b"hello table\n", ("not a JSON object",)),
    "a JSON array": (b'[{"cmd": "draw"}]\n', ("not a JSON object",)),
    "a JSON string": (b'"draw"\n', ("not a JSON object",)),
    "a truncated object": (b'{"cmd": "draw"\n', ("incomplete",)),
    "invalid JSON": (b'{"cmd": draw}\n', ("JSON",)),
    "unknown cmd": (b'{"cmd": "shuffle"}\n', ("unknown cmd", "shuffle")),
    "a peer's cmd": (b'{"cmd": "your_turn"}\n', ("your_turn",)),
    "no cmd": (b'{"nick": "p9"}\n', ('"cmd"',)),
    "cmd not a string": (b'{"cmd": 7}\n', ("$.cmd",)),
    "missing cards": (b'{"cmd": "discard"}\n', ("cards",)),
    "cards mistyped": (b'{"cmd": "discard", "cards": "3S 3C"}\n', ("$.cards",)),
    "one card": (b'{"cmd": "discard", "cards": [["3", "spades"]]}\n', ("two cards",)),
    "a card mistyped": (b'{"cmd": "discard", "cards": [3, ["3", "clubs"]]}\n', ("$.cards",)),
    "flag mistyped": (
        json.dumps({"cmd": "discard", "cards": PAIR, "last_cards": "maybe"}).encode() + b"\n",
        ("last_cards",),
    ),
    "flag a number": (
        json.dumps({"cmd": "discard", "cards": PAIR, "last_card": 1}).encode() + b"\n",
        ("last_card",),
    ),
    "unknown card": (
        b'{"cmd": "discard", "cards": [["3", "spades"], ["3", "stars"]]}\n',
        ("unknown card", "stars"),
    ),
    "the joker": (
        b'{"cmd": "discard", "cards": [["joker", "maid"], ["3", "clubs"]]}\n',
        ("Old Maid",),
    ),
    "the same card twice": (
        b'{"cmd": "discard", "cards": [["3", "spades"], ["3", "SPADES"]]}\n',
        ("same card twice",),
    ),
    "not a pair": (
        b'{"cmd": "discard", "cards": [["3", "spades"], ["3", "hearts"]]}\n',
        ("not a pair",),
    ),
    "an undrawn pair": (
        json.dumps({"cmd": "discard", "cards": PAIR}).encode() + b"\n",
        ("not been drawn",),
    ),
    "join again": (b'{"cmd": "join", "nick": "again"}\n', ("already joined",)),
    "join with a bad nick": (b'{"cmd": "join", "nick": "two words"}\n', ("$.nick",)),
}


@pytest.mark.parametrize("data, words", BAD_REQUESTS.values(), ids=list(BAD_REQUESTS))
async def test_a_bad_request_from_a_player_gets_an_error_and_the_game_goes_on(
    data: bytes, words: tuple[str, ...]
) -> None:
    async with game(players=2) as g:
        player = g.seat(1)
        await player.send_bytes(data)
        assert_error(await player.reply(), *words)
        await assert_undisturbed(g, player, g.seat(0))


async def test_draw_out_of_turn_names_whose_turn_it_is() -> None:
    async with game(players=3) as g:
        assert_error(await g.seat(1).request({"cmd": "draw"}), f"it is {g.seats[0]}'s turn")
        await assert_undisturbed(g, g.seat(1))
        assert_error(await g.seat(1).request({"cmd": "draw"}), f"it is {g.seats[2]}'s turn")


async def test_a_connection_that_has_not_joined_may_only_ask_status() -> None:
    async with game(players=2) as g:
        outsider = await g.running.client()
        for request in ({"cmd": "draw"}, {"cmd": "out_of_cards"}):
            assert_error(await outsider.request(request), "join first")
        assert_error(await outsider.request({"cmd": "discard", "cards": PAIR}), "join first")
        late = await outsider.request({"cmd": "join", "nick": "late"})
        assert_error(late, "already started")
        assert (await outsider.status())["in"] == g.seats
        await assert_undisturbed(g, outsider)


async def test_draw_after_the_deck_is_empty_and_a_pair_discarded_twice() -> None:
    async with game(players=2) as g:
        got = await deal_all(g)
        player = g.seat(0)
        assert_error(await player.request({"cmd": "draw"}), "deck is empty")
        first, second = a_pair(got[g.seats[1]])
        # Anyone may discard any drawn pair: the table cannot see who holds what.
        discard = {"cmd": "discard", "cards": [wire(first), wire(second)]}
        assert await player.request(discard) == {"result": "ok", "message": "ok"}
        again = await player.request({**discard, "cards": [wire(second), wire(first)]})
        assert_error(again, "already discarded", g.seats[0])
        assert (await g.seat(1).status())["state"] == "playing"
        assert_error(await g.seat(1).request({"cmd": "draw"}), "deck is empty")
        # A second player claiming the same cards: one of the two lies, and the
        # table cannot tell which, so it names both and blames neither.
        twice = await g.seat(1).request({**discard, "cards": [wire(second), wire(first)]})
        assert_error(twice, "a card claimed twice", g.seats[0], g.seats[1], "blames neither")
        status = await g.seat(1).status()
        assert (status["state"], status["reason"]) == ("aborted", twice["message"])


# -- framing ---------------------------------------------------------------------


async def test_bare_objects_back_to_back_and_split_byte_by_byte() -> None:
    async with table() as running:
        client = await running.client()
        await client.send_bytes(b'{"cmd":"status"}{"cmd":"status"}')
        assert (await client.reply())["result"] == "ok"
        assert (await client.reply())["result"] == "ok"
        for byte in b'{"cmd": "draw"}':
            await client.send_bytes(bytes([byte]))
            await trio.sleep(0)
        assert_error(await client.reply(), "not started")
        await client.send_bytes(b'{"cmd":')
        await trio.sleep(0)
        await client.send_bytes(b'"status"}')
        assert (await client.reply())["state"] == "waiting"


async def test_crlf_and_blank_lines() -> None:
    async with table() as running:
        client = await running.client()
        await client.send_bytes(b'\r\n\r\n{"cmd":"status"}\r\n\r\n\n  \n{"cmd":"draw"}\r\n')
        assert (await client.reply())["result"] == "ok"
        # Exactly one reply per request: the blank lines got none.
        assert_error(await client.reply(), "not started")
        assert (await client.status())["result"] == "ok"


async def test_an_oversized_message_gets_an_error_then_the_connection_closes() -> None:
    async with game(players=2, max_message=1024) as g:
        outsider = await g.running.client()
        await outsider.send_bytes(b'{"cmd": "status", "pad": "' + b"x" * 2000 + b'"}\n')
        assert_error(await outsider.reply(), "1024-byte limit")
        assert await outsider.closed_by_table()
        garbage = await g.running.client()
        await garbage.send_bytes(b"y" * 3000)  # not JSON, and no newline in sight
        assert_error(await garbage.reply(), "not a JSON object")
        assert_error(await garbage.reply(), "limit")
        assert await garbage.closed_by_table()
        await assert_undisturbed(g, g.seat(0), g.seat(1))


async def test_a_reply_sent_to_the_table_gets_a_last_error() -> None:
    async with game(players=2) as g:
        outsider = await g.running.client()
        await outsider.send({"result": "ok"})
        assert_error(await outsider.reply(), "no request")
        # Closed, so that two broken ends cannot bounce errors for ever.
        assert await outsider.closed_by_table()
        await assert_undisturbed(g, g.seat(0))
