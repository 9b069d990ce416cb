"""The capacity bench's spectators: browsers watching ``ring serve --web`` while it plays.

Half the viewers watch the lobby; the other half each watch the newest game
the lobby has shown, and move on to a newer one when it appears. Each reads
as fast as it can, as a browser does. Its figures count the viewers (slots),
the messages read (samples) and the viewers the server dropped (failed): a
viewer is dropped only if it falls 256 messages behind, which one that reads
should never do.
"""

from __future__ import annotations

import json
import time

import trio
from trio_websocket import ConnectionClosed, open_websocket_url

from scenarios.bench.load_figures import LoadFigures


async def viewers(address: tuple[str, int], count: int, duration: float) -> LoadFigures:
    host, port = address
    base = f"ws://{host}:{port}"
    newest: list[str] = []
    read = dropped = 0
    start = time.perf_counter()

    async def watch(path: str, follow: bool) -> None:
        nonlocal read, dropped
        try:
            async with open_websocket_url(base + path) as socket:
                while True:
                    message = json.loads(await socket.get_message())
                    read += 1
                    if not follow:
                        continue
                    game = message.get("game")
                    if isinstance(game, dict) and game.get("state") == "playing":
                        newest.append(game["id"])
        except ConnectionClosed as closed:
            if closed.reason is not None and closed.reason.code == 1013:
                dropped += 1

    async def game_watcher() -> None:
        nonlocal read, dropped
        watching = None
        while True:
            if not newest or newest[-1] == watching:
                await trio.sleep(0.1)
                continue
            watching = newest[-1]
            with trio.move_on_after(2.0):  # then on to the newest game again
                await watch(f"/ws/games/{watching}", follow=False)

    with trio.move_on_after(duration):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch, "/ws/lobby", True)
            for n in range(1, count):
                if n % 2:
                    nursery.start_soon(watch, "/ws/lobby", False)
                else:
                    nursery.start_soon(game_watcher)
    return LoadFigures(
        load="viewers",
        slots=count,
        duration=time.perf_counter() - start,
        failed=dropped,
        samples=read,
    )
