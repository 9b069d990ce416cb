"""FishNet's game records (ring.games.record): who played, how each game ended, who was at fault."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio

from ring.games.record import KEEP, GameKey, GameRecord, Held, RecordHub, read_game
from services.fishnet.bots import make_player
from services.fishnet.client import BotAgent
from services.fishnet.conversation import play_one_game
from services.fishnet.rules import Result
from services.fishnet.server import FishNetServer
from tests.helpers.fishnet import BASE, RESULTS, WAIT, LineClient, running


def _game(folder: Path, number: int = 1) -> GameRecord:
    return read_game(folder / f"game-{number:06d}.jsonl")


async def test_a_game_by_books_names_its_players_seed_options_winner_and_books(
    tmp_path: Path,
) -> None:
    async with running(replace(BASE, transcript_dir=tmp_path, bot_moves="second")) as server:
        agent = BotAgent(make_player("alice", 1))
        end = await play_one_game(server.address, "ann", "Spot", agent, timeout=WAIT)
    [report] = server.reports
    game = _game(tmp_path)
    start = game.start
    assert (start.service, start.game, start.seed) == ("fishnet", 1, "7:ann:spot:0")
    # Seat 0 is the client, seat 1 the built-in player, by its own name.
    assert [(p.name, p.seat) for p in start.players] == [("ann", 0), ("spot", 1)]
    assert start.options == {
        "youmake": False, "bot_moves": "second", "max_moves": 1000, "move_timeout": 120.0,
        "search_timeout": 5.0,
    }  # fmt: skip
    # What came before the start (the play line) follows it, with its own earlier time.
    assert game.records[0]["line"] == "play ann Spot" and game.records[0]["t"] < start.t
    [deal] = game.events("deal")
    assert deal["first"] == 0 and deal["bots"] == [False, True]
    assert game.end is not None and game.end.details == {"books": list(report.books)}
    assert (game.end.reason, game.end.culprit) == ("by books", None)
    if end.result is Result.TIE:
        assert game.end.draw and game.end.winners == game.end.losers == []
    else:
        winner = "ann" if end.result is Result.WIN else "spot"
        assert game.end.winners == [winner]
        assert game.end.losers == [{"ann": "spot", "spot": "ann"}[winner]]


async def _waiting(client: LineClient, team: str, opponent: str) -> None:
    """``client`` plays and is surely waiting: the line after its play was answered."""
    await client.send(f"play {team} {opponent}\nhello\n")
    assert await client.line() == "error unknown_command"


async def _pair(server: FishNetServer, first: str, second: str) -> tuple[LineClient, LineClient]:
    """Two clients that name each other; ``first`` plays first, so takes seat 0."""
    a, b = await LineClient.connect(server), await LineClient.connect(server)
    await _waiting(a, first, second)
    await b.send(f"play {second} {first}\n")
    return a, b


@pytest.mark.parametrize(
    ("leave", "reasons"),
    [
        ("quit", {"a quit"}),
        # Its close, or a write to it that fails first, whichever the server meets first.
        (
            "close",
            {
                "a's connection closed",
                "a could not be told: it stopped reading, or its connection closed",
            },
        ),
    ],
)
async def test_a_player_who_leaves_is_named_the_culprit(
    leave: str, reasons: set[str], tmp_path: Path
) -> None:
    async with running(replace(BASE, transcript_dir=tmp_path)) as server:
        a, b = await _pair(server, "a", "b")
        await a.line()  # dealt: the game is on
        if leave == "quit":
            await a.send("quit\n")
        else:
            await a.aclose()
        assert (await b.rest())[-2:] == ["error opponent_left", "youwin"]
    game = _game(tmp_path)
    assert [(p.name, p.seat) for p in game.start.players] == [("a", 0), ("b", 1)]
    assert game.end is not None
    assert (game.end.winners, game.end.losers, game.end.culprit) == (["b"], ["a"], "a")
    assert game.end.reason in reasons and not game.end.draw
    assert game.end.details == {"books": list(server.reports[0].books)}


async def test_a_player_out_of_time_is_named_the_culprit(tmp_path: Path) -> None:
    config = replace(BASE, transcript_dir=tmp_path, move_timeout=0.3, bot_moves="second")
    async with running(config) as server:
        slow = await LineClient.connect(server)
        await slow.send("play slow spot\n")
        assert (await slow.rest())[-2:] == ["error move_timeout", "youlose"]
    end = _game(tmp_path).end
    assert end is not None
    assert (end.winners, end.losers, end.culprit) == (["spot"], ["slow"], "slow")
    assert end.reason == "slow timed out: no answer to yourturn in 0.3 s"


async def test_the_move_limit_ends_by_books_and_names_no_culprit(tmp_path: Path) -> None:
    async with running(replace(BASE, transcript_dir=tmp_path, max_moves=2)) as server:
        a, b = await _pair(server, "a", "b")

        async def pass_to_the_end(client: LineClient) -> None:
            while (line := await client.line()) is not None and line not in RESULTS:
                if line == "yourturn":
                    await client.send("pass\n")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(pass_to_the_end, a)
            nursery.start_soon(pass_to_the_end, b)
    end = _game(tmp_path).end
    assert end is not None and end.culprit is None
    assert end.reason == "the move limit (2 requests and passes): by books"
    winner = server.reports[0].winner
    assert end.draw == (winner is None)
    assert end.winners == ([] if winner is None else [["a", "b"][winner]])


async def test_a_game_cut_off_by_the_server_stopping_ends_without_a_result(
    tmp_path: Path,
) -> None:
    async with running(replace(BASE, transcript_dir=tmp_path, bot_moves="second")) as server:
        playing = await LineClient.connect(server)
        await playing.send("play ann spot\n")
        await playing.lines_until("yourturn")  # and never answers
        waiting = await LineClient.connect(server)
        await _waiting(waiting, "wanda", "nobody")
    assert (await playing.rest())[-1] == "error server_shutting_down"
    assert await waiting.rest() == ["error server_shutting_down"]
    cut = _game(tmp_path, 1)
    assert cut.end is not None and cut.end.reason == "the server shut down"
    assert (cut.end.winners, cut.end.losers, cut.end.draw, cut.end.culprit) == ([], [], False, None)
    assert set(cut.end.details) == {"books"}
    assert cut.records[-1]["line"] == "error server_shutting_down"  # the goodbye is recorded
    # A game still waiting for its opponent: the one player who came, no seed.
    alone = _game(tmp_path, 2)
    assert [p.name for p in alone.start.players] == ["wanda"] and alone.start.seed is None
    assert alone.end is not None and alone.end.reason == "the server shut down"


async def test_games_that_never_started_still_end_in_their_record(tmp_path: Path) -> None:
    async with running(replace(BASE, transcript_dir=tmp_path, wait_timeout=0.3)) as server:
        lonely = await LineClient.connect(server)
        await lonely.send("play lonely nobody\n")
        assert await lonely.rest() == ["error no_opponent_came"]
        gone = await LineClient.connect(server)
        await gone.send("play gone nobody\n")
        await gone.send("quit\n")
        assert await gone.rest() == []
    lonely_game, gone_game = _game(tmp_path, 1), _game(tmp_path, 2)
    assert [p.name for p in lonely_game.start.players] == ["lonely"]
    assert lonely_game.end is not None
    assert lonely_game.end.reason == "no opponent: nobody did not come in 0.3 s"
    assert lonely_game.records[-1]["line"] == "error no_opponent_came"
    assert gone_game.end is not None
    assert gone_game.end.reason == "gone left before an opponent came"
    for game in (lonely_game, gone_game):
        assert (game.end.winners, game.end.losers, game.end.culprit) == ([], [], None)


async def test_every_record_goes_to_the_hub_given_and_the_files_leave_it_at_the_end(
    tmp_path: Path,
) -> None:
    hub = RecordHub()
    seen: list[tuple[GameKey, dict[str, Any]]] = []
    hub.subscribe(lambda key, record: seen.append((key, record)))
    async with running(replace(BASE, hub=hub, transcript_dir=tmp_path)) as server:
        agent = BotAgent(make_player("bob", 2))
        await play_one_game(server.address, "ann", "bob", agent, timeout=WAIT)
    assert {key for key, _ in seen} == {GameKey("fishnet", 1)}
    assert (seen[0][1]["event"], seen[-1][1]["event"]) == ("start", "end")
    assert _game(tmp_path).records == [record for _, record in seen[1:-1]]
    # Stopped, the server no longer writes this hub's games.
    hub.open_game("fishnet", 2, []).end("later")
    assert not (tmp_path / "game-000002.jsonl").exists()


async def test_without_transcripts_or_a_hub_the_lines_are_not_recorded() -> None:
    async with running() as server:
        assert not server.recording
        await play_one_game(server.address, "ann", "spot", BotAgent(make_player("bob", 2)),
                            timeout=WAIT)  # fmt: skip
        assert server.reports[0].reason == "books"


def test_records_before_the_start_are_kept_up_to_a_cap_and_the_rest_counted() -> None:
    early = Held()
    for i in range(KEEP + 5):
        early.add({"dir": "in", "line": f"hello {i}"})
    game = Held()
    game.add({"dir": "in", "line": "play a b"})
    game.take(early)
    assert early.records == []
    assert len(game.records) == KEEP + 1
    assert game.records[-1]["event"] == "dropped" and game.records[-1]["count"] == 6
    game.take(Held())
    game.add({"line": "one more"})
    assert game.records[-1]["count"] == 7
