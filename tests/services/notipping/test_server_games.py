"""The No Tipping server's games over real loopback sockets: whole games, moves, leaving.

Clients here are raw (``tests/helpers/notipping.py``): they send exactly the bytes a
test gives, and read the server's messages through the sans-IO ``ClientConnection``.
Whole games are checked message by message against ``rules.Game``.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from ring.games.record import Player, read_game
from services.notipping.protocol import Begin, Closed, Granted, Win
from services.notipping.rules import Add, Game, Move, Remove
from services.notipping.server import GameReport
from tests.helpers.notipping import Client, expected_round, join, lost, pair, play, running, until

# -- whole games ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_whole_game_checked_move_by_move_with_its_transcript(
    seed: int, tmp_path: Path
) -> None:
    reports: list[GameReport] = []
    async with running(on_end=reports.append, transcripts=tmp_path, max_weight=4) as server:
        clients = await pair(server)
        rng, game, torques = random.Random(seed), Game.start(4), []
        while not game.over:
            safe = [m for m in game.legal_moves() if not game.tips_after(m)]
            move = rng.choice(safe or game.legal_moves())
            game = await play(clients, game, [move])
            torques.append([game.left, game.right])
        await lost(clients[game.loser], clients[game.winner], invalid=False)
    [report] = reports
    assert (report.number, report.handles, report.winner) == (1, ("ann", "bob"), game.winner)
    assert report.line.endswith(f"{report.handles[game.loser]} tipped the board")
    record = read_game(tmp_path / "game-000001.jsonl")
    start, end = record.start, record.end
    assert (start.service, start.game, start.seed) == ("notipping", 1, 3)
    assert start.players == [Player("ann", seat=0), Player("bob", seat=1)]
    assert start.options == {"max_weight": 4, "time_budget": 120.0}
    assert [[r["left"], r["right"]] for r in record.events("move")] == torques
    assert end is not None and end.reason == "tipped the board"
    names = report.handles
    assert (end.winners, end.losers, end.culprit) == ([names[game.winner]], [names[game.loser]],
                                                      None)  # fmt: skip
    assert end.details == {"winner": game.winner, "loser": game.loser}
    lines = [(r["player"], r["dir"], r["line"]) for r in record.records if "line" in r]
    assert lines[:2] == [(0, "in", "JOINREQUEST:ann:0;"), (0, "out", "GRANTED;")]
    assert (1, "out", "BEGIN:1:4;") in lines and lines[-1][2] == "WIN;"
    assert sum(direction == "in" for _, direction, _ in lines) == game.moves_made + 2
    times = [r["t"] for r in record.records]  # the joins came before the start
    assert times == sorted(times) and times[0] < start.t < times[-1] < end.t


async def test_two_games_at_once_do_not_disturb_each_other() -> None:
    async with running() as server:
        one, two = await pair(server, "a1", "b1"), await pair(server, "a2", "b2")
        games, rng = [Game.start(), Game.start()], random.Random(5)
        for _ in range(6):  # a move in game one, a move in game two, and so on
            for index, clients in enumerate((one, two)):
                game = games[index]
                move = rng.choice([m for m in game.legal_moves() if not game.tips_after(m)])
                games[index] = await play(clients, game, [move])
        assert server.reports == [] and len(server.games_running) == 2
        assert await one[0].round() == expected_round(games[0])
        assert await two[0].round() == expected_round(games[1])


async def test_game_numbers_count_up_and_each_game_has_its_begin() -> None:
    async with running(max_weight=10) as server:
        for number in (1, 2):
            clients = [await join(server, "ann", 0), await join(server, "ann", 1)]
            for client in clients:  # one handle may hold both seats
                await client.expect(Begin(number, 10))


# -- moves ------------------------------------------------------------------------------------

REMOVE_PHASE = Game.start(1).play(Add(1, -2)).play(Add(1, -3))


@pytest.mark.parametrize(
    ("start", "before", "bad", "reason"),
    [
        (None, [], b"ADD:8:0;", "there is no weight 8 (1..7)"),
        (None, [], b"ADD:0:0;", "there is no weight 0 (1..7)"),
        (None, [Add(1, -2), Add(1, -3)], b"ADD:1:-1;", "weight 1 has already been placed"),
        (None, [Add(1, -2)], b"ADD:2:-2;", "position -2 is taken"),
        (None, [], b"ADD:1:-4;", "position -4 is taken"),  # the initial block
        (None, [], b"ADD:1:11;", "position 11 is off the board"),
        (None, [], b"ADD:1:-11;", "position -11 is off the board"),
        (None, [], b"REMOVE:-4;", "REMOVE in the add phase"),
        (REMOVE_PHASE, [], b"ADD:1:-1;", "ADD in the remove phase"),
        (REMOVE_PHASE, [], b"REMOVE:5;", "there is no block at position 5"),
        (REMOVE_PHASE, [], b"REMOVE:-11;", "position -11 is off the board"),
        (None, [], b"HELLO;", "'HELLO' (a client sends JOINREQUEST, ADD or REMOVE)"),
        (None, [], b"ADD:1;", "'ADD:1' (ADD takes a weight and a position"),
        (None, [], "ADD:1:\u00e9;".encode(), "'ADD:1:\\xc3\\xa9' (ADD takes"),  # escaped once
        (None, [], b"JOINREQUEST:ann:0;", "a JOINREQUEST during the game"),
        (None, [], b"JOINREQUEST:ann:5;", "a JOINREQUEST during the game"),
        (None, [], b"A" * 4097, "a message over 4096 bytes"),
    ],
)
async def test_every_invalid_move_gets_invalid_then_lose(
    start: Game | None, before: list[Move], bad: bytes, reason: str
) -> None:
    async with running(start_game=start) as server:
        clients = await pair(server)
        game = await play(clients, start or Game.start(), before)
        assert await clients[game.to_move].round() == expected_round(game)
        await clients[game.to_move].send(bad)
        await lost(clients[game.to_move], clients[1 - game.to_move], invalid=True)
    [report] = server.reports
    assert report.winner == 1 - game.to_move
    assert report.reason.startswith("made an invalid move: ") and reason in report.reason


@pytest.mark.parametrize(
    ("start", "balancing", "tipping", "torques"),
    [
        # Right support: 3*(0+1) + 3*(-4+1) + 2*(2+1) = 0 balances; 1 more at 0 tips.
        (None, [Add(2, 2)], Add(1, 0), (16, 0, 19, 1)),
        # Left support: 3*(0+3) + 3*(-4+3) + 2*(-6+3) = 0 balances.
        (None, [Add(2, -6), Add(1, -3)], Add(1, -5), (0, -18, -2, -22)),
        # Removing the initial block leaves exactly 0 about -1; then any removal tips.
        (REMOVE_PHASE, [Remove(-4)], Remove(-2), (10, 0, 9, 1)),
    ],
)
async def test_a_torque_of_exactly_zero_balances_and_one_unit_more_tips(
    start: Game | None, balancing: list[Move], tipping: Move, torques: tuple[int, ...]
) -> None:
    async with running(start_game=start) as server:
        clients = await pair(server)
        game = await play(clients, start or Game.start(), balancing)
        assert not game.over and (game.left, game.right) == torques[:2]
        game = await play(clients, game, [tipping])
        assert game.loser is not None and (game.left, game.right) == torques[2:]
        await lost(clients[game.loser], clients[game.winner], invalid=False)
    assert server.reports[0].reason == "tipped the board"


async def test_split_and_spaced_messages() -> None:
    async with running() as server:
        first = await Client.connect(server, "ann", 0)
        for byte in b" join REQUEST :\r\n ann : 0\n ;":
            await first.send(bytes([byte]))
        await first.expect(Granted())
        second = await join(server, "bob", 1)
        await first.expect(Begin(1, 7))
        await second.expect(Begin(1, 7))
        await first.round()
        for piece in (b"a", b"d d :", b" 3\n:", b"-", b"2\r\n", b";\n"):
            await first.send(piece)
        assert await second.round() == expected_round(Game.start().play(Add(3, -2)))


async def test_moves_sent_early_answer_the_next_rounds_in_order() -> None:
    async with running() as server:
        clients = await pair(server)
        await clients[1].send(b"ADD:1:-3;ADD:2:-1;")  # both of its next two moves, at once
        game = await play(clients, Game.start(), [Add(1, -2)])
        assert await clients[1].round() == expected_round(game)  # answered already
        game = await play(clients, game.play(Add(1, -3)), [Add(2, 0)])
        assert await clients[1].round() == expected_round(game)  # answered already, too
        assert await clients[0].round() == expected_round(game.play(Add(2, -1)))


async def test_a_waiting_player_that_sends_too_much_loses() -> None:
    async with running() as server:
        clients = await pair(server)
        await clients[1].send(b"ADD:1:-3;" * 456)  # 4104 bytes while player 0 moves
        assert await clients[0].round() == expected_round(Game.start())
        await lost(clients[1], clients[0], invalid=True)
    assert server.reports[0].reason == "sent over 4096 bytes out of turn"


# -- leaving ----------------------------------------------------------------------------------


@pytest.mark.parametrize("leaver", [0, 1])  # the mover, or the player waiting for its move
async def test_a_player_who_leaves_mid_game_loses(leaver: int) -> None:
    async with running() as server:
        clients = await pair(server)
        game = await play(clients, Game.start(), [Add(1, -2), Add(1, -3)])
        assert await clients[0].round() == expected_round(game)
        await clients[leaver].stream.aclose()
        await clients[1 - leaver].expect(Win(), Closed())
    [report] = server.reports
    winner, loser = ("ann", "bob")[1 - leaver], ("ann", "bob")[leaver]
    beat = f"{winner} (player {1 - leaver}) beat {loser} (player {leaver})"
    assert report.line == f"game 1: {beat}: {loser} left the game"


async def test_a_seat_is_freed_when_its_connection_drops_before_the_game(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with running() as server:
        leaving = await join(server, "ann", 0)
        assert server.forming == {0: "ann"}
        await leaving.stream.aclose()
        await until(lambda: server.forming == {})
        clients = await pair(server, "cat", "dan")  # seat 0 is granted again
        assert await clients[0].round() == expected_round(Game.start())
    assert re.search(
        r"ann \(127\.0\.0\.1:\d+\): left before its game began; seat 0 is free again",
        capfd.readouterr().err,
    )


async def test_a_waiting_player_may_not_fill_the_servers_memory(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with running() as server:
        waiting = await join(server, "ann", 1)
        await waiting.send(b"REMOVE:1;" * 456)  # 4104 bytes
        await waiting.expect(Closed())
        await until(lambda: server.forming == {})
    assert "sent over 4096 bytes before its game" in capfd.readouterr().err
