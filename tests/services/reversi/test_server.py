"""The Reversi server: real loopback sockets for names, games and bad input; memory
streams and Trio's mock clock for the move time limit.

Clients here are raw: they send exactly the bytes a test gives, and read the
server's messages through the sans-IO ``ClientConnection``. Whole games are
checked board by board against the plain reference rules in
``tests/helpers/reversi_reference.py``.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from ring.cli.registry import found_in
from ring.games.record import read_game
from ring.wire.net import Refusal
from services.reversi.protocol import Closed, Colour
from services.reversi.rules import BLACK, WHITE, Position
from services.reversi.server import ReversiConfig, ReversiServer, ServerError, serve_reversi
from tests.helpers.burst_lines import crowd_lines
from tests.helpers.reversi import Client, pair, running, square_of
from tests.helpers.reversi_reference import Game as Reference


async def play_out(clients: dict[int, Client], rng: random.Random) -> Reference:
    """Play random legal moves to the end, checking every board against the reference."""
    reference = Reference.start()
    while not reference.over():
        mover = reference.to_move
        digits = await clients[mover].board()
        assert digits == reference.digits()
        x, y = rng.choice(sorted(reference.legal_moves(mover)))
        await clients[mover].send(f"M{x}{y}\n".encode())
        reference.play(x, y)
    return reference


# -- whole games ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
async def test_a_whole_game_is_checked_board_by_board_against_the_reference(seed: int) -> None:
    reports = []
    async with running(on_end=reports.append) as server:
        clients = await pair(server)
        reference = await play_out(clients, random.Random(seed))
        winner = reference.winner()
        for colour, client in clients.items():
            result, _ = await client.end()
            assert result == (2 if winner is None else 1 if winner == colour else 0)
    [report] = reports
    assert report.discs == (reference.count(BLACK), reference.count(WHITE))
    assert report.winner == winner and report.reason == "board"


async def test_two_games_at_once_do_not_disturb_each_other() -> None:
    async with running() as server:
        one = await pair(server, "a1", "b1")
        two = await pair(server, "a2", "b2")
        first = Reference.start()
        # Interleave: a move in game one, a move in game two, and so on.
        rng = random.Random(5)
        second = Reference.start()
        for _ in range(6):
            for clients, reference in ((one, first), (two, second)):
                mover = reference.to_move
                assert await clients[mover].board() == reference.digits()
                x, y = rng.choice(sorted(reference.legal_moves(mover)))
                await clients[mover].send(f"M{x}{y}".encode())  # no newline: M and two bytes
                reference.play(x, y)
        assert await one[first.to_move].board() == first.digits()
        assert await two[second.to_move].board() == second.digits()


# -- names -----------------------------------------------------------------------------


async def test_a_name_split_across_packets_and_one_without_newline() -> None:
    async with running() as server:
        first = await Client.connect(server)
        for piece in (b"N", b"an", b"n_", b"1\r", b"\n"):
            await first.send(piece)
        second = await Client.connect(server)
        await second.send(b"Nabcdefghij")  # ten characters, no newline: the silence ends it
        colours = {(await first.message()).colour, (await second.message()).colour}
        assert colours == {0, 1}


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"Nabcdefghijk\n", "over 10 characters"),
        (b"Nmy-team\n", "bad character '-'"),
        (b"team\n", "missing N"),
        (b"N\n", "empty name"),
    ],
)
async def test_a_bad_name_is_logged_and_the_connection_closed(
    data: bytes, reason: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running() as server:
        client = await Client.connect(server)
        await client.send(data)
        assert isinstance(await client.message(), Closed)
        # The server is unharmed: two good clients still get a game.
        clients = await pair(server)
        assert await clients[BLACK].board() == Position.start().digits()
    assert reason in capfd.readouterr().err


# -- moves -------------------------------------------------------------------------------


async def test_garbage_and_illegal_moves_get_the_board_again() -> None:
    async with running() as server:
        clients = await pair(server)
        start = Position.start().digits()
        black = clients[BLACK]
        assert await black.board() == start
        for attempt in (b"M00\n", b"hello\n", b"M9\n", b"M33\n"):  # illegal, garbage, bad, taken
            await black.send(attempt)
            assert await black.board() == start
        await black.send(b"M23\n")  # legal: (2,3)
        digits = await clients[WHITE].board()
        assert digits == Position.start().play(square_of(2, 3)).digits()


async def test_a_hundred_illegal_moves_in_a_row_lose() -> None:
    reports = []
    async with running(on_end=reports.append) as server:
        clients = await pair(server)
        black = clients[BLACK]
        await black.board()
        for _ in range(99):
            await black.send(b"M00\n")
            await black.board()
        await black.send(b"M00\n")
        assert (await black.end())[0] == 0
        assert (await clients[WHITE].end())[0] == 1
    assert "100 illegal moves" in reports[0].reason


def _position(rows: dict[tuple[int, int], int], to_move: int) -> Position:
    digits = ["0"] * 64
    for (x, y), colour in rows.items():
        digits[square_of(x, y)] = str(colour)
    return Position.from_digits("".join(digits), to_move)


async def test_a_player_with_no_legal_move_is_skipped() -> None:
    # Black plays (2,0) flipping (1,0); then white has no move, and black has (2,7).
    start = _position({(0, 0): BLACK, (1, 0): WHITE, (0, 7): BLACK, (1, 7): WHITE}, BLACK)
    black_first = start.play(square_of(2, 0))
    assert black_first.to_move == BLACK  # the rules skip white
    async with running(start_position=start) as server:
        clients = await pair(server)
        assert await clients[BLACK].board() == start.digits()
        await clients[BLACK].send(b"M20\n")
        assert await clients[BLACK].board() == black_first.digits()  # black again


async def test_a_game_where_neither_can_move_ends_before_the_board_is_full() -> None:
    start = _position({(1, 0): WHITE, (2, 0): BLACK}, BLACK)  # (0,0) takes white's only disc
    after = start.play(square_of(0, 0))
    assert after.over and after.count(BLACK) == 3
    async with running(start_position=start) as server:
        clients = await pair(server)
        await clients[BLACK].board()
        await clients[BLACK].send(b"M00\n")
        assert (await clients[BLACK].end())[0] == 1
        assert (await clients[WHITE].end())[0] == 0


# -- leaving and the clock -------------------------------------------------------------------


async def test_a_player_who_leaves_loses() -> None:
    reports = []
    async with running(on_end=reports.append) as server:
        clients = await pair(server)
        await clients[BLACK].board()
        await clients[BLACK].stream.aclose()
        assert (await clients[WHITE].end())[0] == 1
    assert reports[0].winner == WHITE and reports[0].reason == "left the game"


async def _memory_pair(server: ReversiServer, nursery: trio.Nursery) -> dict[int, Client]:
    clients = []
    for name in ("ann", "bob"):
        ours, theirs = trio.testing.memory_stream_pair()
        nursery.start_soon(server.handle, theirs)
        client = Client(ours, name)
        client.timeout = 3600
        await client.send(f"N{name}\n".encode())
        clients.append(client)
    by_colour = {}
    for client in clients:
        colour = await client.message()
        by_colour[BLACK if colour.colour == 1 else WHITE] = client
    return by_colour


async def test_the_move_time_is_a_loss_on_the_mock_clock(autojump_clock: trio.abc.Clock) -> None:
    reports = []
    server = ReversiServer(ReversiConfig(move_time=30, on_end=reports.append), seed=1)
    async with trio.open_nursery() as nursery:
        clients = await _memory_pair(server, nursery)
        start = trio.current_time()
        await clients[BLACK].board()
        assert (await clients[BLACK].end())[0] == 0  # said nothing for 30 s
        assert trio.current_time() - start == pytest.approx(30, abs=0.01)
        assert (await clients[WHITE].end())[0] == 1
    assert reports[0].reason == "did not move within 30 s"


async def test_boards_sent_again_do_not_extend_the_move_time(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = ReversiServer(ReversiConfig(move_time=30), seed=1)
    async with trio.open_nursery() as nursery:
        clients = await _memory_pair(server, nursery)
        black = clients[BLACK]
        start = trio.current_time()
        await black.board()
        for _ in range(3):
            await trio.sleep(9)
            await black.send(b"M00\n")
            await black.board()
        assert (await black.end())[0] == 0
        assert trio.current_time() - start == pytest.approx(30, abs=0.01)


async def test_move_time_zero_waits_without_limit(autojump_clock: trio.abc.Clock) -> None:
    server = ReversiServer(ReversiConfig(move_time=0), seed=1)
    async with trio.open_nursery() as nursery:
        clients = await _memory_pair(server, nursery)
        await clients[BLACK].board()
        await trio.sleep(3600)
        await clients[BLACK].send(b"M23\n")
        assert await clients[WHITE].board() == Position.start().play(square_of(2, 3)).digits()
        nursery.cancel_scope.cancel()


async def test_a_waiting_player_may_not_fill_the_servers_memory(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with running() as server:
        waiting = await Client.connect(server, "ann")
        await waiting.send(b"Nann\n" + b"M34" * 1400)  # 4200 bytes of early moves
        assert isinstance(await waiting.message(), Closed)
    assert "sent over 4096 bytes before its game; closing" in capfd.readouterr().err


async def test_a_stopped_server_records_the_games_it_closed(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        config = ReversiConfig(port=0, seed=3, transcripts=tmp_path)
        server = await nursery.start(serve_reversi, config)
        clients = await pair(server)
        await clients[BLACK].board()
        nursery.cancel_scope.cancel()
    game = read_game(tmp_path / "game-000001.jsonl")
    end = game.end
    assert end is not None and end.reason == "the server shut down"
    assert not (end.winners or end.losers or end.draw or end.culprit)  # no result
    for client in clients.values():
        assert isinstance(await client.message(), Closed)  # no W, no G: the handout has none


async def test_a_board_result_names_the_winner_and_the_loser(tmp_path: Path) -> None:
    start = _position({(1, 0): WHITE, (2, 0): BLACK}, BLACK)  # (0,0) ends it, 3 - 0
    async with running(transcripts=tmp_path, start_position=start) as server:
        clients = await pair(server)
        await clients[BLACK].board()
        await clients[BLACK].send(b"M00\n")
        for client in clients.values():
            await client.end()
    game = read_game(tmp_path / "game-000001.jsonl")
    black, white = (p.name for p in game.start.players)
    assert [(p.colour, p.seat) for p in game.start.players] == [("black", None), ("white", None)]
    assert {black, white} == {"ann", "bob"}
    assert (game.start.service, game.start.game, game.start.seed) == ("reversi", 1, "3:1")
    assert game.start.options == {"move_time": 30.0}
    assert [(r["colour"], r["x"], r["y"]) for r in game.events("move")] == [("black", 0, 0)]
    assert game.records[0] == {**game.records[0], "colour": "black", "dir": "out", "line": "U1"}
    end = game.end
    assert end is not None
    assert (end.winners, end.losers, end.draw, end.culprit) == ([black], [white], False, None)
    assert end.reason == "board" and end.details == {"black": 3, "white": 0}


@pytest.mark.parametrize("fault", ["illegal", "leave"])
async def test_a_forfeits_transcript_names_its_culprit(fault: str, tmp_path: Path) -> None:
    async with running(transcripts=tmp_path, max_illegal=2) as server:
        clients = await pair(server)
        await clients[BLACK].board()
        if fault == "illegal":
            await clients[BLACK].send(b"M00\n")
            await clients[BLACK].board()
            await clients[BLACK].send(b"hello\n")
            assert (await clients[BLACK].end())[0] == 0
        else:
            await clients[BLACK].stream.aclose()
        assert (await clients[WHITE].end())[0] == 1
    game = read_game(tmp_path / "game-000001.jsonl")
    black, white = (p.name for p in game.start.players)
    end = game.end
    assert end is not None
    assert (end.winners, end.losers, end.culprit, end.draw) == ([white], [black], black, False)
    reason = "made 2 illegal moves in a row" if fault == "illegal" else "left the game"
    assert end.reason == reason and end.details == {"black": 2, "white": 2}
    if fault == "illegal":
        attempts = [r.get("line", r.get("garbled")) for r in game.records if r.get("dir") == "in"]
        assert attempts == ["M00", "hello"] and game.events("move") == []


async def test_a_port_in_use_is_one_clear_error() -> None:
    async with running() as server:
        host, port = server.address
        with pytest.raises(BaseExceptionGroup) as raised:  # through the nurseries
            async with trio.open_nursery() as nursery:
                await nursery.start(serve_reversi, ReversiConfig(host=host, port=port))
        failure = found_in(raised.value, ServerError)
        assert failure is not None
        assert re.fullmatch(f"cannot listen on {host}:{port}: .*in use", str(failure))


@pytest.mark.parametrize(
    "caps, reason",
    [
        ({"max_connections": 2}, Refusal.SERVER_FULL.value),
        ({"max_per_address": 2, "exempt_loopback": False}, Refusal.ADDRESS_FULL.value),
    ],
)
async def test_a_newcomer_refused_at_a_cap_is_closed_silently_and_logged(
    caps: dict[str, Any], reason: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running(**caps) as server:
        clients = await pair(server)  # named and in a game: never evicted
        newcomer = await Client.connect(server, "cy")
        await newcomer.send(b"Ncy\n")
        assert isinstance(await newcomer.message(), Closed)  # the protocol has no error
        assert await clients[BLACK].board() == Position.start().digits()
    [line] = [line for line in capfd.readouterr().err.splitlines() if "refused" in line]
    assert re.fullmatch(rf"reversi: 127\.0\.0\.1:\d+: refused, closing: {reason}", line)


# -- seats a tournament assigns ------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
async def test_an_assigned_seat_0_is_black_whoever_comes_first(seed: int) -> None:
    """A tournament knows who dialled which of its ports (``Lobby.handle``'s ``seat``): the
    seeded coin is not thrown, seat 0 is Black, and the match keeps its verdict and turns."""
    server = ReversiServer(ReversiConfig(port=0, seed=seed), seed)
    ended = []
    server.arena.on_match = ended.append
    async with trio.open_nursery() as nursery:
        clients = {}
        for seat, name in ((1, "late"), (0, "early")):  # seat 1 names itself first
            ours, theirs = trio.testing.memory_stream_pair()
            nursery.start_soon(server.handle, theirs, seat)
            clients[seat] = Client(ours, name)
            await clients[seat].send(f"N{name}\n".encode())
        for seat, client in clients.items():
            colour = await client.message()
            assert isinstance(colour, Colour) and colour.colour == (1 if seat == 0 else 0)
        reference = await play_out({BLACK: clients[0], WHITE: clients[1]}, random.Random(seed))
        for client in clients.values():
            await client.end()
    [match] = ended
    assert match.verdict is not None and match.fault is None
    winner = reference.winner()
    assert match.verdict.winner == (None if winner is None else 0 if winner == BLACK else 1)
    # every move had its turn on the clock, and nothing else did
    assert len(match.turn_times[0]) + len(match.turn_times[1]) == 64 - reference.count(0) - 4


# -- what the server logs --------------------------------------------------------------


async def test_a_crowd_closing_before_naming_itself_is_one_line_and_a_count(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # A lab's clients killed at once: one line with an address, then how many more
    # (ring.wire.burst_log), not thirty writes while every game waits.
    async with running() as server:
        crowd = [await Client.connect(server) for _ in range(30)]
        await trio.testing.wait_all_tasks_blocked()
        for client in crowd:
            await client.stream.aclose()
        await trio.testing.wait_all_tasks_blocked()
        clients = await pair(server)  # the server is unharmed
        assert await clients[BLACK].board() == Position.start().digits()
    err = capfd.readouterr().err
    addressed, counted = crowd_lines(err, "reversi", "closed before naming itself")
    assert counted
    assert addressed + sum(counted) == 30
    assert addressed + len(counted) < 30
