"""The flood rule (docs/protocols/oldmaid.md 3, fishnet.md "Errors") on the servers that
answer bad messages and go on (the Old Maid table, FishNet): the 100th bad message in a
row is answered, then the connection is closed; a good one between starts the count
again; other games are untouched. (Reversi and No Tipping end a game on far fewer: their
own tests.)"""

from __future__ import annotations

from dataclasses import replace

from ring.wire.flood import BAD_IN_A_ROW
from tests.helpers.fishnet import BASE, LineClient, play_until_my_turn, running
from tests.helpers.oldmaid_table import assert_error, assert_undisturbed, game


async def test_the_table_closes_the_hundredth_bad_message_in_a_row_after_answering_it() -> None:
    async with game(players=2) as g:
        sloppy = await g.running.client()
        await sloppy.send_bytes(b"nonsense\n" * (BAD_IN_A_ROW - 1))
        for _ in range(BAD_IN_A_ROW - 1):
            assert_error(await sloppy.reply(), "not a JSON object")
        await sloppy.send({"cmd": "status"})  # a good one: the count starts again
        assert (await sloppy.reply())["result"] == "ok"
        await sloppy.send_bytes(b'{"cmd": "draw"}\n' * (BAD_IN_A_ROW - 1) + b"nonsense\n")
        for _ in range(BAD_IN_A_ROW - 1):
            assert_error(await sloppy.reply(), "join")  # a draw that makes no sense now
        assert_error(await sloppy.reply(), "not a JSON object")  # the 100th: answered
        assert await sloppy.closed_by_table()
        await assert_undisturbed(g, g.seat(0), g.seat(1))


async def test_fishnet_closes_the_hundredth_bad_line_in_a_row_before_play() -> None:
    async with running() as server:
        sloppy = await LineClient.connect(server)
        await sloppy.send("hello\n" * (BAD_IN_A_ROW - 1))
        for _ in range(BAD_IN_A_ROW - 1):
            assert (await sloppy.line() or "").startswith("error")
        await sloppy.send("play sloppy spot\n")  # taken: the count starts again
        assert (await sloppy.line() or "").startswith("fish")
        await sloppy.aclose()
        flood = await LineClient.connect(server)
        await flood.send("hello\n" * (BAD_IN_A_ROW + 5))
        lines = await flood.rest()
        assert len(lines) == BAD_IN_A_ROW and all(line.startswith("error") for line in lines)


async def test_fishnet_closes_a_player_flooding_its_own_turn() -> None:
    """Refused requests on its turn count too, whoever refuses them (the game: not held;
    the reader, for those read while the last is judged: not your turn), yourturn between
    them starting nothing again: the 100th error is the last line, then the close."""
    async with running(replace(BASE, bot_moves="second")) as server:
        client = await LineClient.connect(server)
        hand = await play_until_my_turn(client, "me")
        missing = next(rank for rank in range(13) if rank not in hand)
        await client.send(f"request {missing}\n" * (BAD_IN_A_ROW + 5))
        lines = await client.rest()  # to the close
        errors = [line for line in lines if line.startswith("error")]
        assert len(errors) == BAD_IN_A_ROW and set(errors) <= {
            "error rank_not_held",
            "error not_your_turn",
        }
        assert lines[-1].startswith("error") and set(lines) - set(errors) == {"yourturn"}
