"""``ring.games.transcripts``: a service's games in files, read back by ``ring.games.record``."""

from __future__ import annotations

from pathlib import Path

from ring.games.record import Player, RecordHub, read_game, read_games
from ring.games.transcripts import TranscriptFile, TranscriptFiles


def _two_players() -> list[Player]:
    return [Player("ann", colour="black"), Player("bob", colour="white")]


def test_transcript_files_write_one_file_per_game_of_their_service(tmp_path: Path) -> None:
    hub = RecordHub()
    files = TranscriptFiles(tmp_path, "reversi")
    hub.subscribe(files)
    one = hub.open_game("reversi", 1, _two_players(), seed=1)
    other_service = hub.open_game("notipping", 1, _two_players())
    two = hub.open_game("reversi", 2, _two_players(), seed=2)
    one.record(event="move", x=2, y=3)
    two.end("the server shut down")
    one.end("board", draw=True)
    other_service.end("tipped")
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "game-000001.jsonl",
        "game-000002.jsonl",
    ]
    game = read_game(files.path(1))
    assert (game.start.service, game.start.game, game.start.seed) == ("reversi", 1, 1)
    assert game.players == ["ann", "bob"]
    assert game.events("move") == [game.records[0]]
    assert game.end is not None and game.end.draw and game.end.winners == []
    assert read_game(files.path(2)).end.reason == "the server shut down"


def test_transcript_files_close_games_that_never_ended(tmp_path: Path) -> None:
    hub = RecordHub()
    files = TranscriptFiles(tmp_path, "fishnet")
    hub.subscribe(files)
    hub.open_game("fishnet", 1, _two_players()).record(event="turn")
    files.close()
    (game,) = read_games(files.path(1))
    assert game.end is None and len(game.records) == 1


def test_one_transcript_file_holds_games_one_after_another(tmp_path: Path) -> None:
    hub = RecordHub()
    path = tmp_path / "all.jsonl"
    writer = TranscriptFile(path, "oldmaid")
    hub.subscribe(writer)
    for number in (1, 2):
        game = hub.open_game("oldmaid", number, [Player("p1", seat=0), Player("p2", seat=1)])
        game.record(event="dealt", nick="p1")
        game.end("p2 holds the Old Maid", winners=["p1"], losers=["p2"])
    writer.close()
    games = read_games(path)
    assert [game.start.game for game in games] == [1, 2]
    assert all(game.end.losers == ["p2"] for game in games)


def test_overlapping_games_in_one_file_read_back_apart(tmp_path: Path) -> None:
    hub = RecordHub()
    path = tmp_path / "all.jsonl"
    writer = TranscriptFile(path, "oldmaid")
    hub.subscribe(writer)
    one = hub.open_game("oldmaid", 1, [Player("a", seat=0)])
    two = hub.open_game("oldmaid", 2, [Player("b", seat=0)])
    three = hub.open_game("oldmaid", 3, [Player("c", seat=0)])
    two.record(event="dealt", nick="b")
    one.record(event="dealt", nick="a")
    three.end("shut down")
    two.end("over", losers=["b"])
    one.record(event="over", loser="a")
    one.end("over", losers=["a"])
    four = hub.open_game("oldmaid", 4, [Player("d", seat=0)])
    four.record(event="dealt", nick="d")
    writer.close()  # game 4 never ended: its records are still in the file
    games = read_games(path)
    assert [game.start.game for game in games] == [1, 2, 3, 4]
    assert [[r.get("nick") or r.get("loser") for r in game.records] for game in games] == [
        ["a", "a"],
        ["b"],
        [],
        ["d"],
    ]
    assert [game.end is None for game in games] == [False, False, False, True]
