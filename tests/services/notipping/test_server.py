"""The No Tipping server: real loopback sockets for joins, games and bad input; memory
streams and Trio's mock clock for the time budget and the other timeouts.

Clients here are raw: they send exactly the bytes a test gives, and read the
server's messages through the sans-IO ``ClientConnection``. Whole games are
checked message by message against ``rules.Game``.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import trio
import trio.testing

from ring.cli.app import build_parser
from ring.cli.registry import found_in
from ring.cli.serve import settings_for
from ring.games.record import Player, read_game
from ring.wire.net import Refusal
from ring.wire.sansio import NEED_DATA
from services.notipping.protocol import (
    Begin,
    ClientConnection,
    Closed,
    Denied,
    Granted,
    Invalid,
    Lose,
    Round,
    Win,
)
from services.notipping.rules import ADD, Add, Game, Move, Remove
from services.notipping.server import (
    GameReport,
    NoTippingConfig,
    NoTippingServer,
    ServerError,
    serve_notipping,
)
from services.notipping.service import SERVICE
from tests.services.burst_lines import crowd_lines

TIMEOUT = 10.0


class Client:
    """One raw connection to the server."""

    def __init__(self, stream: trio.abc.Stream, handle: str = "x", seat: int = 0) -> None:
        self.stream = stream
        self.protocol = ClientConnection(handle, seat)
        self.timeout = TIMEOUT  # the mock-clock tests wait longer than a budget

    @classmethod
    async def connect(cls, server: NoTippingServer, handle: str = "x", seat: int = 0) -> Client:
        with trio.fail_after(TIMEOUT):
            return cls(await trio.open_tcp_stream(*server.address), handle, seat)

    async def send(self, data: bytes) -> None:
        with trio.fail_after(TIMEOUT):
            await self.stream.send_all(data)

    async def message(self) -> Any:
        with trio.fail_after(self.timeout):
            while (event := self.protocol.next_event()) is NEED_DATA:
                try:
                    data = await self.stream.receive_some(4096)
                except trio.BrokenResourceError:
                    data = b""
                self.protocol.receive_data(data)
            return event

    async def expect(self, *messages: object) -> None:
        """Exactly these messages next (``Closed()`` for the close)."""
        for message in messages:
            assert await self.message() == message

    async def round(self) -> Round:
        message = await self.message()
        assert isinstance(message, Round), message
        return message


@asynccontextmanager
async def running(**settings: Any) -> AsyncIterator[NoTippingServer]:
    config = NoTippingConfig(**{"port": 0, "seed": 3, **settings})
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_notipping, config)
        yield server
        nursery.cancel_scope.cancel()


async def join(server: NoTippingServer, handle: str, seat: int) -> Client:
    client = await Client.connect(server, handle, seat)
    await client.send(client.protocol.start())
    await client.expect(Granted())
    return client


async def pair(server: NoTippingServer, a: str = "ann", b: str = "bob") -> list[Client]:
    """Two clients in seats 0 and 1 of a game that has begun."""
    clients = [await join(server, a, 0), await join(server, b, 1)]
    for client in clients:
        assert isinstance(await client.message(), Begin)
    return clients


async def until(condition: Callable[[], bool]) -> None:
    """Let the server run until ``condition`` holds (it reacts to bytes already sent)."""
    with trio.fail_after(TIMEOUT):
        while not condition():
            await trio.testing.wait_all_tasks_blocked()


def expected_round(game: Game) -> Round:
    seat = game.to_move
    if game.phase == ADD:
        mine, theirs = (tuple(sorted(game.hands[p])) for p in (seat, 1 - seat))
        return Round(game.round, seat, ADD, mine, theirs, game.weights)
    return Round(game.round, seat, "REMOVE", None, None, game.weights)


def encoded(move: Move) -> bytes:
    if isinstance(move, Add):
        return f"ADD:{move.weight}:{move.position};".encode()
    return f"REMOVE:{move.position};".encode()


async def play(clients: list[Client], game: Game, moves: list[Move]) -> Game:
    """Each move by the player to move, checking each ROUND against the rules."""
    for move in moves:
        assert await clients[game.to_move].round() == expected_round(game)
        await clients[game.to_move].send(encoded(move))
        game = game.play(move)
    return game


async def lost(loser: Client, winner: Client, *, invalid: bool) -> None:
    await loser.expect(*([Invalid()] if invalid else []), Lose(), Closed())
    await winner.expect(Win(), Closed())


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


# -- joining --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_bytes", "reason"),
    [
        (b"JOINREQUEST:bob:0;", "seat 0 is taken"),
        (b"JOINREQUEST:bob:2;", "'2': the player number is 0 or 1"),
        (b"JOINREQUEST:b/b:1;", "'b/b': a handle is 1-32"),
        (b"JOINREQUEST:bob;", "'JOINREQUEST:bob': JOINREQUEST takes a handle and a player number"),
    ],
)
async def test_a_denied_join_may_ask_again(
    request_bytes: bytes, reason: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running() as server:
        first = await join(server, "ann", 0)
        second = await Client.connect(server, "bob", 1)
        await second.send(request_bytes)
        await second.expect(Denied())
        await second.send(b"JOINREQUEST:bob:1;")  # the same connection, the other seat
        await second.expect(Granted(), Begin(1, 7))
        await first.expect(Begin(1, 7))
    assert f"JOINREQUEST denied: {reason}" in capfd.readouterr().err


async def test_ten_requests_and_no_more(capfd: pytest.CaptureFixture[str]) -> None:
    async with running() as server:
        first = await join(server, "ann", 0)
        client = await Client.connect(server)
        await client.send(b"JOINREQUEST:x:0;" * 9 + b"JOINREQUEST:x:1;")
        await client.expect(*[Denied()] * 9, Granted(), Begin(1, 7))
        await first.expect(Begin(1, 7))
        greedy = await Client.connect(server)
        await greedy.send(b"JOINREQUEST:x:7;" * 11)
        await greedy.expect(*[Denied()] * 10, Closed())
    assert "10 join requests; closing" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("data", "logged"),
    [
        (b"ADD:1:1;", "'ADD:1:1;' before joining"),
        (b"REMOVE:1;", "'REMOVE:1;' before joining"),
        (b"HELLO;", "'HELLO' (a client sends JOINREQUEST, ADD or REMOVE) before joining"),
        (b"x" * 4097, "a message over 4096 bytes before joining"),
    ],
)
async def test_anything_else_before_a_seat_is_denied_and_closed(
    data: bytes, logged: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running() as server:
        client = await Client.connect(server)
        await client.send(data)
        await client.expect(Denied(), Closed())
        await pair(server)  # the server is unharmed
    assert f"denied, closing: {logged}" in capfd.readouterr().err


# -- the clock ---------------------------------------------------------------------------------


async def memory_client(server: NoTippingServer, nursery: trio.Nursery, seat: int) -> Client:
    ours, theirs = trio.testing.memory_stream_pair()
    nursery.start_soon(server.handle, theirs)
    client = Client(ours, ("ann", "bob")[seat], seat)
    client.timeout = 36000
    return client


async def memory_pair(server: NoTippingServer, nursery: trio.Nursery) -> list[Client]:
    clients = [await memory_client(server, nursery, seat) for seat in (0, 1)]
    for client in clients:
        await client.send(client.protocol.start())
        await client.expect(Granted())
    for client in clients:
        await client.expect(Begin(1, 7))
    return clients


async def test_the_time_budget_counts_all_of_a_players_moves(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = NoTippingServer(NoTippingConfig(time_budget=30))
    async with trio.open_nursery() as nursery:
        clients = await memory_pair(server, nursery)
        start = trio.current_time()
        await clients[0].round()
        await trio.sleep(20)
        await clients[0].send(b"ADD:1:-2;")
        await clients[1].round()
        await trio.sleep(29)  # player 1 has 1 s left, and 29 s for nothing
        await clients[1].send(b"ADD:1:-3;")
        await clients[0].round()  # 10 s left of player 0's 30
        await lost(clients[0], clients[1], invalid=True)
        assert trio.current_time() - start == pytest.approx(59, abs=0.01)
    assert server.reports[0].reason == "ran out of time (30 s)"


async def test_without_a_budget_one_move_may_take_the_wait_timeout(
    autojump_clock: trio.abc.Clock,
) -> None:
    server = NoTippingServer(NoTippingConfig(time_budget=0, wait_timeout=600))
    async with trio.open_nursery() as nursery:
        clients = await memory_pair(server, nursery)
        await clients[0].round()
        await trio.sleep(599)
        await clients[0].send(b"ADD:1:-2;")
        await clients[1].round()
        start = trio.current_time()
        await lost(clients[1], clients[0], invalid=True)
        assert trio.current_time() - start == pytest.approx(600, abs=0.01)
    assert server.reports[0].reason == "did not move within 600 s"


async def test_silent_connections_are_closed_after_the_timeouts(
    autojump_clock: trio.abc.Clock, capfd: pytest.CaptureFixture[str]
) -> None:
    server = NoTippingServer(NoTippingConfig(idle_timeout=120, wait_timeout=600))
    async with trio.open_nursery() as nursery:
        start = trio.current_time()
        silent = await memory_client(server, nursery, 0)
        await silent.expect(Closed())
        assert trio.current_time() - start == pytest.approx(120, abs=0.01)
        lonely = await memory_client(server, nursery, 0)
        await lonely.send(b"JOINREQUEST:ann:0;")
        await lonely.expect(Granted(), Closed())
        assert trio.current_time() - start == pytest.approx(720, abs=0.01)
        assert server.forming == {}
    err = capfd.readouterr().err
    assert "no JOINREQUEST within 120 s; closing" in err
    assert "ann (?): no opponent within 600 s" in err


# -- the server ----------------------------------------------------------------------------------


def test_game_report_lines() -> None:
    for reason in ("tipped the board", "made an invalid move: position 4 is taken",
                   "ran out of time (120 s)", "left the game"):  # fmt: skip
        report = GameReport(3, ("ann", "bob"), 0, reason)
        assert report.line == f"game 3: ann (player 0) beat bob (player 1): bob {reason}"
    assert GameReport(4, ("ann", "bob"), 1, "left the game").line == (
        "game 4: bob (player 1) beat ann (player 0): ann left the game"
    )


@pytest.mark.parametrize("settings", [{"max_weight": 0}, {"max_weight": 11}, {"time_budget": -1}])
def test_the_config_checks_its_values(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        NoTippingConfig(**settings)


async def test_a_stopped_server_records_the_games_it_closed(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        config = NoTippingConfig(port=0, transcripts=tmp_path)
        server = await nursery.start(serve_notipping, config)
        clients = await pair(server)
        await clients[0].round()
        nursery.cancel_scope.cancel()
    end = read_game(tmp_path / "game-000001.jsonl").end
    assert end is not None and end.reason == "the server shut down"
    assert not (end.winners or end.losers or end.draw or end.culprit or end.details)  # no result
    for client in clients:
        await client.expect(Closed())  # no WIN, no LOSE: the handout has none


@pytest.mark.parametrize("fault", ["invalid", "leave", "out of turn"])
async def test_a_forfeits_transcript_names_its_culprit(fault: str, tmp_path: Path) -> None:
    async with running(transcripts=tmp_path) as server:
        clients = await pair(server)
        await clients[0].round()
        if fault == "invalid":  # the mover
            await clients[0].send(b"ADD:8:0;")
            await lost(clients[0], clients[1], invalid=True)
        elif fault == "leave":
            await clients[0].stream.aclose()
            await clients[1].expect(Win(), Closed())
        else:  # the player waiting for the other's move
            await clients[1].send(b"ADD:1:-3;" * 456)
            await lost(clients[1], clients[0], invalid=True)
    culprit = 1 if fault == "out of turn" else 0
    end = read_game(tmp_path / "game-000001.jsonl").end
    assert end is not None and end.reason == server.reports[0].reason
    handles = ("ann", "bob")
    assert (end.winners, end.losers, end.culprit, end.draw) == (
        [handles[1 - culprit]],
        [handles[culprit]],
        handles[culprit],
        False,
    )
    assert end.details == {"winner": 1 - culprit, "loser": culprit}


async def test_the_ring_serve_declaration_maps_its_options() -> None:
    parser = build_parser([SERVICE], [])
    args = parser.parse_args(["serve", "--notipping", "0", "--max-weight", "3",
                              "--time-budget", "0", "--wait-timeout", "5"])  # fmt: skip
    said: list[str] = []
    settings = dataclasses.replace(settings_for(args, SERVICE, seed=9), say=said.append)
    async with trio.open_nursery() as nursery:
        address = await nursery.start(SERVICE.serve, settings)
        clients = await pair(cast(NoTippingServer, SimpleNamespace(address=address)))
        assert clients[0].protocol.player == 0
        assert await clients[0].round() == expected_round(Game.start(3))
        await clients[0].send(b"ADD:3:4;")
        await lost(clients[0], clients[1], invalid=False)
        nursery.cancel_scope.cancel()
    assert said == ["notipping: game 1: bob (player 1) beat ann (player 0): ann tipped the board"]


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--max-weight", "11"],
        ["serve", "--max-weight", "0"],
        ["serve", "--time-budget", "-1"],
        ["bot", "notipping", "--name", "a b", "--seat", "0", "--level", "solver"],
        ["bot", "notipping", "--name", "ann", "--seat", "2", "--level", "solver"],
        ["bot", "notipping", "--name", "ann", "--seat", "0", "--level", "deep"],
        ["play", "notipping", "--name", "ann"],
        ["play", "notipping", "--seat", "1"],
    ],
)
def test_bad_command_lines_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser([SERVICE], []).parse_args(argv)


def test_the_client_commands() -> None:
    parser = build_parser([SERVICE], [])
    bot = parser.parse_args(["bot", "notipping", "--name", "a.b-c_1", "--seat", "1",
                             "--level", "greedy", "--games", "3", "--seed", "4"])  # fmt: skip
    assert (bot.command, bot.declared, bot.server) == ("bot", SERVICE.bot, ("127.0.0.1", 10987))
    assert (bot.name, bot.seat, bot.level, bot.games, bot.seed) == (
        "a.b-c_1",
        1,
        "greedy",
        3,
        4,
    )
    play = parser.parse_args(["play", "notipping", "--name", "ann", "--seat", "0",
                              "--server", "10.0.0.2:5000", "--timeout", "30"])  # fmt: skip
    assert (play.command, play.declared, play.server, play.timeout) == (
        "play",
        SERVICE.play,
        ("10.0.0.2", 5000),
        30.0,
    )


async def test_a_port_in_use_is_one_clear_error() -> None:
    async with running() as server:
        host, port = server.address
        with pytest.raises(BaseExceptionGroup) as raised:  # through the nurseries
            async with trio.open_nursery() as nursery:
                await nursery.start(serve_notipping, NoTippingConfig(host=host, port=port))
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
async def test_a_newcomer_refused_at_a_cap_is_denied_then_closed(
    caps: dict[str, Any], reason: str, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running(**caps) as server:
        clients = await pair(server)  # seated: never evicted
        newcomer = await Client.connect(server, "cy", 0)
        await newcomer.send(newcomer.protocol.start())
        await newcomer.expect(Denied(), Closed())
        assert await clients[0].round() == expected_round(Game.start())
    [line] = [line for line in capfd.readouterr().err.splitlines() if reason in line]
    assert re.fullmatch(rf"notipping: 127\.0\.0\.1:\d+: denied, closing: {reason}", line)


async def test_a_seat_assigned_by_a_tournament_is_the_only_one_granted() -> None:
    """A program told {seat} 0 that asks for seat 1 is denied, and says why in the log."""
    server = NoTippingServer(NoTippingConfig(port=0, seed=3))
    logged: list[str] = []
    server.log = logged.append  # type: ignore[method-assign]
    async with trio.open_nursery() as nursery:
        ours, theirs = trio.testing.memory_stream_pair()
        nursery.start_soon(server.handle, theirs, 0)
        client = Client(ours, "ann", 1)
        await client.send(client.protocol.start())
        await client.expect(Denied())
        assert logged == ["?: JOINREQUEST denied: seat 1 is not its seat: it was told 0"]
        client.protocol = ClientConnection("ann", 0)
        await client.send(client.protocol.start())
        await client.expect(Granted())
        assert server.forming == {0: "ann"}
        nursery.cancel_scope.cancel()


async def test_a_crowd_closing_before_joining_is_one_line_and_a_count(
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
        assert await clients[0].round() == expected_round(Game.start())
    addressed, counted = crowd_lines(capfd.readouterr().err, "notipping", "closed before joining")
    assert counted
    assert addressed + sum(counted) == 30
    assert addressed + len(counted) < 30
