"""``ring serve --web``: the live page's API and WebSockets over real loopback sockets, while
real games play on the same ring serve."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import chosen_services, seeded_settings, serve_all
from services.reversi.client import BotAgent
from services.reversi.conversation import play_one_game

WAIT = 20.0


@asynccontextmanager
async def serving(*words: str) -> AsyncIterator[dict[str, tuple[str, int]]]:
    words = ("--host", "127.0.0.1", "--seed", "3", "--no-advertise", *words)
    args = build_parser().parse_args(["serve", "--reversi=0", "--web=0", *words])
    chosen = chosen_services(args, declared_services())
    assert [service.name for service in chosen] == ["reversi", "web"]
    settings = seeded_settings(args, chosen)
    async with trio.open_nursery() as nursery:
        yield await nursery.start(serve_all, list(zip(chosen, settings, strict=True)))
        nursery.cancel_scope.cancel()


async def get(address: tuple[str, int], path: str) -> tuple[int, Any]:
    """One HTTP/1.1 GET, as any tool would send it; the status and the JSON body."""
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream(*address)
        async with stream:
            host = f"{address[0]}:{address[1]}"
            await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
                                  "Connection: close\r\n\r\n".encode())  # fmt: skip
            data = b""
            while chunk := await stream.receive_some(65536):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


async def play(address: tuple[str, int]) -> None:
    async def one(name: str, level: str) -> None:
        await play_one_game(address, name, BotAgent.of_level(level, name, None), timeout=WAIT)

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(one, "ann", "random")
            nursery.start_soon(one, "bob", "greedy")


async def test_the_lobby_shows_a_game_playing_then_over_and_the_api_agrees() -> None:
    async with serving() as addresses:
        web = addresses["web"]
        url = f"ws://{web[0]}:{web[1]}/ws/lobby"
        async with open_websocket_url(url) as lobby:
            first = json.loads(await lobby.get_message())
            assert first == {"type": "lobby", "games": []}
            await play(addresses["reversi"])
            states = []
            with trio.fail_after(WAIT):
                while "over" not in states:
                    message = json.loads(await lobby.get_message())
                    states.append(message["game"]["state"])
        # A Reversi game's first record is its start (an Old Maid table's come before it,
        # while the game forms).
        assert states == ["playing", "over"]
        status, games = await get(web, "/api/games")
        assert status == 200 and [g["id"] for g in games] == ["reversi-1"]
        assert sorted(games[0]["players"]) == ["ann", "bob"] and games[0]["state"] == "over"
        status, game = await get(web, "/api/games/reversi-1")
        assert status == 200 and game["records"][0]["event"] == "start"
        assert game["records"][-1]["event"] == "end"
        assert game["records"][-1]["winners"] == games[0]["winners"]
        status, missing = await get(web, "/api/games/reversi-9")
        assert (status, missing) == (404, {"error": "no such game"})


async def test_a_game_feed_sends_the_game_so_far_then_nothing_from_other_games() -> None:
    async with serving() as addresses:
        web = addresses["web"]
        await play(addresses["reversi"])
        async with open_websocket_url(f"ws://{web[0]}:{web[1]}/ws/games/reversi-1") as feed:
            snapshot = json.loads(await feed.get_message())
        assert snapshot["type"] == "snapshot" and snapshot["game"]["state"] == "over"
        _, game = await get(web, "/api/games/reversi-1")
        assert snapshot["records"] == game["records"]


async def test_garbage_or_oversized_input_closes_that_socket_only() -> None:
    async with serving() as addresses:
        web = addresses["web"]
        url = f"ws://{web[0]}:{web[1]}/ws/lobby"
        async with open_websocket_url(url) as calm, open_websocket_url(url) as loud:
            await calm.get_message()
            await loud.get_message()
            await loud.send_message("x" * 100_000)  # a browser has nothing to send
            with trio.fail_after(WAIT), pytest.raises(ConnectionClosed) as closed:
                while True:
                    await loud.get_message()
            assert closed.value.reason.code == 1009  # message too big
            await play(addresses["reversi"])
            with trio.fail_after(WAIT):
                message = json.loads(await calm.get_message())
            assert message["type"] == "game"


async def test_viewers_past_the_cap_are_told_to_try_again_later() -> None:
    async with serving("--max-viewers", "1") as addresses:
        web = addresses["web"]
        url = f"ws://{web[0]}:{web[1]}/ws/lobby"
        async with open_websocket_url(url) as first:
            await first.get_message()
            async with open_websocket_url(url) as second:
                with trio.fail_after(WAIT), pytest.raises(ConnectionClosed) as closed:
                    await second.get_message()
            assert closed.value.reason.code == 1013
