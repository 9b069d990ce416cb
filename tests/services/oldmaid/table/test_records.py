"""The Old Maid table's game records: one envelope (``ring.games.record``) around its own records.

Each game's transcript reads back with ``ring.games.record.read_game``: a ``start``
naming the players in seat order, the game's seed and options; the records
the game made while it formed, then its own; an ``end`` with the result, or
with none and the reason (and culprit) of an abort.
"""

from __future__ import annotations

from pathlib import Path

import trio

from ring.games.record import Player, read_game
from services.oldmaid.table.records import FORMING_RECORDS
from tests.helpers.oldmaid_table import (
    deal_all,
    join_all,
    join_game,
    play_out,
    table,
    table_in_memory,
)


async def test_a_game_file_reads_back_with_its_players_seed_and_result(tmp_path: Path) -> None:
    folder = tmp_path / "games"
    async with table(players=3, transcripts=folder, seed=5, start_after=30.0) as running:
        g = await join_game(running, ["ann", "bob", "cy"])
        loser = await play_out(g, seed=1)
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()
    game = read_game(folder / "game-000001.jsonl")
    assert (game.start.service, game.start.game, game.start.seed) == ("oldmaid", 1, outcome.seed)
    assert game.start.players == [Player(nick, seat=seat) for seat, nick in enumerate(g.seats)]
    assert game.start.options == {
        "players": 3,
        "start_after": 30.0,
        "last_pair_grace": 2.0,
        "turn_timeout": 300.0,
    }
    assert game.end is not None
    assert (game.end.winners, game.end.losers) == (list(outcome.out), [loser])
    assert (game.end.draw, game.end.culprit, game.end.details) == (False, None, {"undiscarded": 0})
    # The table's own records keep their meaning: the referee's, then the messages.
    assert [r["loser"] for r in game.events("over")] == [loser]
    assert [r["nick"] for r in game.events("out")] == list(outcome.out)


async def test_an_aborted_game_ends_without_a_result_naming_the_culprit(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=3, transcript=transcript) as running:
        g = await join_all(running, 3)
        await deal_all(g)
        leaver = g.seats[2]
        await g.seat(2).aclose()
        for i in (0, 1):
            await g.seat(i).notice()
            await g.seat(i).aclose()
        outcome = await running.finished()
    game = read_game(transcript)
    assert game.end is not None
    assert (game.end.reason, game.end.culprit) == (f"{leaver} left the table", leaver)
    assert (game.end.winners, game.end.losers, game.end.draw) == ([], [], False)
    assert [r["culprit"] for r in game.events("aborted")] == [leaver] == [outcome.culprit]


async def test_a_table_stopped_while_a_game_forms_writes_its_start_and_an_end(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "games"
    async with table(players=3, transcripts=folder) as running:
        poller = await running.client()
        players = {}  # kept open: a closed connection frees its seat
        for nick in ("bob", "ann"):
            players[nick] = await running.client()
            await players[nick].send({"cmd": "join", "nick": nick})
            while (await poller.status())["in"] != list(players):
                await trio.sleep(0.01)
        running.stop()
        await running.finished_all()
    game = read_game(folder / "game-000001.jsonl")
    assert game.start.players == [Player("bob"), Player("ann")]  # joined, never seated
    assert game.end is not None
    assert (game.end.reason, game.end.winners, game.end.losers) == ("the table shut down", [], [])
    assert (game.end.draw, game.end.culprit) == (False, None)
    joins = [r["msg"]["nick"] for r in game.records if r.get("msg", {}).get("cmd") == "join"]
    assert joins == ["bob", "ann"]
    assert [r["event"] for r in game.records if "event" in r] == ["listening", "aborted"]
    assert game.events("aborted")[0]["culprit"] is None
    # All of it was kept until the stop wrote the start record, and keeps its own time.
    assert all(r["t"] <= game.start.t for r in game.records)


async def test_a_status_flood_while_a_game_forms_is_counted_not_kept(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    polls = FORMING_RECORDS * 2  # two records each: the request and its reply
    async with table_in_memory(transcript, players=2) as t:
        game = t.server.forming
        poller = await t.client()
        for _ in range(polls):
            assert (await poller.status())["state"] == "waiting"
        # The listening record, FORMING_RECORDS messages, and the count of the rest.
        assert game.transcript.kept == FORMING_RECORDS + 2
        # Joins still come through: they are kept apart from the other messages.
        ann, bob = await t.join("ann"), await t.join("bob")
        for client in (ann, bob):
            assert (await client.reply())["result"] == "ok"
        for client in (ann, bob, poller):
            await client.aclose()
        with trio.fail_after(5):
            await game.ended.wait()
    records = read_game(transcript).records
    forming = records[: records.index(next(r for r in records if r.get("event") == "started"))]
    [dropped] = [r for r in forming if r.get("event") == "dropped"]
    messages = [r for r in forming if "dir" in r]
    assert len(messages) == FORMING_RECORDS + 2
    assert dropped["count"] == polls * 2 - FORMING_RECORDS
    assert [r["msg"]["nick"] for r in messages if r["msg"].get("cmd") == "join"] == ["ann", "bob"]
    assert forming.index(dropped) == FORMING_RECORDS + 1  # where the first one would have been
