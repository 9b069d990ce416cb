"""The No Tipping server itself: its game reports, its config, its ``ring serve``
declaration and command lines, a port in use, its caps and seats assigned by a tournament.

Its games, joins and clock are tested beside it (``test_server_games.py``,
``test_server_joins.py``, ``test_server_clock.py``). Clients here are raw
(``tests/helpers/notipping.py``): they send exactly the bytes a test gives.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import trio
import trio.testing

from ring.cli.app import build_parser
from ring.cli.registry import found_in
from ring.cli.serve import settings_for
from ring.games.record import read_game
from ring.wire.net import Refusal
from services.notipping.protocol import ClientConnection, Closed, Denied, Granted, Win
from services.notipping.rules import Game
from services.notipping.server import (
    GameReport,
    NoTippingConfig,
    NoTippingServer,
    ServerError,
    serve_notipping,
)
from services.notipping.service import SERVICE
from tests.helpers.burst_lines import crowd_lines
from tests.helpers.notipping import Client, expected_round, lost, pair, running

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
