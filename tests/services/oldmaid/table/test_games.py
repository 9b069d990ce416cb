"""The table over real loopback sockets: whole games, played as the peers would, with
their transcripts; and a table for a class, game after game, several at once.

Raw clients (``tests/helpers/oldmaid_table.py``); every read has a timeout.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ring.games.record import Player, read_game
from ring.oldmaid.cards import JOKER
from services.oldmaid.referee.rules import GameState
from tests.helpers.oldmaid_table import (
    TIMEOUT,
    Driver,
    Game,
    assert_error,
    join_all,
    join_game,
    play_out,
    table,
)

pytestmark = pytest.mark.usefixtures("no_internal_errors")


# -- whole games ----------------------------------------------------------------


@pytest.mark.parametrize("players, seed", [(2, 11), (3, 12), (5, 13), (8, 14)])
async def test_a_whole_game(players: int, seed: int, tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=players, seed=seed, transcript=transcript) as running:
        g = await join_all(running, players, watch=lambda i: i % 2 == 0)
        driver = Driver(g, random.Random(seed))
        loser = await driver.play()

        assert driver.hands[loser] == [JOKER]
        assert driver.discards == 26
        for i in range(players):
            client = g.clients[f"p{i}"]
            if i % 2 == 0:
                notice = await client.notice()
                assert notice == {"cmd": "game_over", "loser": loser, "out": driver.went_out}
            status = await client.status()
            assert status == {
                "result": "ok",
                "in": [loser],
                "out": driver.went_out,
                "state": "over",
                "game_over": True,
                "loser": loser,
                "undiscarded": 0,
            }
            assert client.notices == []  # one notice to each watcher, none to the others
            assert_error(await client.request({"cmd": "draw"}), "game is over")
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()

    assert (outcome.state, outcome.loser) == (GameState.OVER, loser)
    assert list(outcome.out) == driver.went_out
    assert outcome.line == f"game over: loser {loser}; out: {', '.join(driver.went_out)}"
    check_transcript(transcript, g, loser, driver.went_out)


def check_transcript(path: Path, g: Game, loser: str, went_out: list[str]) -> None:
    game = read_game(path)  # one game: start, its own records, end (ring.games.record)
    start, records, end = game.start, game.records, game.end
    config = g.running.config
    assert (start.service, start.game, start.seed) == ("oldmaid", 1, config.seed)
    assert start.players == [Player(nick, seat=seat) for seat, nick in enumerate(g.seats)]
    assert start.options == config.game_options()
    assert end is not None and end.reason == f"{loser} was left holding the Old Maid"
    assert (end.winners, end.losers, end.draw, end.culprit) == (went_out, [loser], False, None)
    assert end.details == {"undiscarded": 0}
    referee = [r for r in records if "event" in r]
    messages = [r for r in records if "dir" in r]
    assert len(referee) + len(messages) == len(records)
    # What the game recorded while it formed follows start, with its own earlier t.
    forming = records[: records.index(referee[1])]
    kinds = [r.get("event") or r["msg"]["cmd"] for r in forming]
    assert kinds == ["listening", *["join"] * len(g.seats)]
    assert all(r["t"] <= start.t <= referee[1]["t"] for r in forming)
    assert end.t >= records[-1]["t"]
    assert referee[0]["event"] == "listening"
    assert referee[0]["port"] == g.running.port and referee[0]["seed"] == g.running.config.seed
    assert referee[1] == {
        "t": referee[1]["t"],
        "event": "started",
        "players": g.seats,
        "addresses": [address for address, _ in g.players],
    }
    kinds = [r["event"] for r in referee]
    assert kinds.count("dealt") == 53 and kinds.count("discarded") == 26
    assert [(r["nick"], r["place"]) for r in referee if r["event"] == "out"] == [
        (nick, place) for place, nick in enumerate(went_out, 1)
    ]
    assert referee[-1] == {
        "t": referee[-1]["t"],
        "event": "over",
        "loser": loser,
        "out": went_out,
        "undiscarded": 0,
    }
    times = [r["t"] for r in records]
    assert times == sorted(times)
    for record in messages:
        assert set(record) == {"t", "conn", "peer", "nick", "dir", "msg"}
        assert record["dir"] in ("in", "out")
    joins = [r for r in messages if r["dir"] == "in" and r["msg"]["cmd"] == "join"]
    assert all(r["nick"] is None for r in joins)  # null until the join succeeds
    assert sorted(r["conn"] for r in joins) == list(range(1, len(g.seats) + 1))
    draws = [r for r in messages if r["msg"].get("cmd") == "draw"]
    # 53 cards, and one refused draw from each player after the end.
    assert len(draws) == 53 + len(g.seats) and all(r["nick"] for r in draws)


async def test_the_transcript_records_invalid_input(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(transcript=transcript) as running:
        client = await running.client()
        port = client.local_port
        await client.send_bytes(b"garbage\n")
        await client.reply()
        await client.aclose()
    game = read_game(transcript)  # the table stopped while it formed: no one joined
    records = game.records
    assert records[0]["event"] == "listening"
    assert records[1]["conn"] == 1 and records[1]["nick"] is None
    assert records[1]["invalid"] == "not a JSON object"
    assert records[1]["peer"] == f"127.0.0.1:{port}"
    assert records[2]["msg"] == {"result": "error", "message": "not a JSON object"}
    assert game.players == [] and game.end is not None
    assert (game.end.reason, game.end.winners, game.end.losers) == ("the table shut down", [], [])


# -- a table for a class: game after game, several at once -----------------------


async def test_three_games_at_once_each_with_its_own_seed_status_and_transcript(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "games"
    async with table(players=2, games=3, transcripts=folder, seed=40) as running:
        games = [await join_game(running, [f"g{n}a", f"g{n}b"]) for n in range(3)]
        # All three under way at once: each player's status is its own game's.
        for n, g in enumerate(games):
            status = await g.seat(0).status()
            assert (status["state"], sorted(status["in"])) == ("playing", [f"g{n}a", f"g{n}b"])
        losers = []
        for n, g in enumerate(reversed(games)):  # the last to start ends first
            losers.append(await play_out(g, seed=n))
        for g in games:
            for client in g.clients.values():
                await client.aclose()
        outcomes = await running.finished_all()
    assert [o.number for o in outcomes] == [1, 2, 3]
    assert all(o.state is GameState.OVER for o in outcomes)
    assert sorted(o.loser for o in outcomes) == sorted(losers)
    seeds = [o.seed for o in outcomes]
    assert seeds[0] == 40 and len(set(seeds)) == 3  # the first game keeps the table's seed
    for number, outcome in enumerate(outcomes, 1):
        game = read_game(folder / f"game-{number:06d}.jsonl")
        assert (game.start.game, game.start.seed, game.players) == (
            number,
            outcome.seed,
            list(outcome.players),
        )
        assert game.end is not None and game.end.losers == [outcome.loser]
        records = game.records
        assert records[0]["event"] == "listening"
        assert (records[0]["game"], records[0]["seed"]) == (number, outcome.seed)
        started = next(r for r in records if r.get("event") == "started")
        assert started["players"] == list(outcome.players)
        overs = [r for r in records if r.get("event") == "over"]
        assert [r["loser"] for r in overs] == [outcome.loser]
        # Only this game's players appear in its message records.
        nicks = {r["nick"] for r in records if "dir" in r and r["nick"] is not None}
        assert nicks == set(outcome.players)


async def test_a_game_forms_while_another_plays() -> None:
    async with table(players=2, games=None, seed=41) as running:
        first = await join_game(running, ["ann", "bob"])
        assert (await first.seat(0).request({"cmd": "draw"}))["result"] == "ok"
        # A newcomer's status is the forming game's, not the one under way.
        newcomer = await running.client()
        assert await newcomer.status() == {"result": "ok", "in": [], "out": [], "state": "waiting"}
        await newcomer.send({"cmd": "join", "nick": "ann", "watch": True})  # a nick free there
        other = await running.client()
        status = await other.status()
        assert (status["state"], status["in"]) == ("waiting", ["ann"])
        await other.send({"cmd": "join", "nick": "cy", "watch": True})
        second_replies = [await newcomer.reply(), await other.reply()]
        assert second_replies[0] == second_replies[1]
        assert sorted(nick for _, nick in second_replies[0]["players"]) == ["ann", "cy"]
        # The first game goes on undisturbed.
        assert (await first.seat(1).request({"cmd": "draw"}))["result"] == "ok"
        assert (await first.seat(0).status())["in"] == first.seats


async def test_a_table_of_one_game_refuses_joins_once_it_started() -> None:
    async with table(players=2, games=1) as running:
        g = await join_game(running, ["ann", "bob"])
        late = await running.client()
        assert_error(await late.request({"cmd": "join", "nick": "cy"}), "already started")
        assert (await late.status())["in"] == g.seats  # the one game


async def test_stopping_a_table_tells_every_game_under_way() -> None:
    async with table(players=2, games=None, linger=TIMEOUT) as running:
        games = [await join_game(running, [f"g{n}a", f"g{n}b"]) for n in range(2)]
        running.stop()
        for g in games:
            for client in g.clients.values():
                notice = await client.notice()
                assert notice == {
                    "cmd": "game_over",
                    "aborted": True,
                    "reason": "the table shut down",
                }
