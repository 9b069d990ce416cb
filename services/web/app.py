"""The live page's web application: Starlette routes over ``ring.games.spectators``.

Read-only by construction: every route reads, none writes, and what a browser
sends on a WebSocket is read only to notice it leaving (hypercorn closes a
socket whose message is over ``MAX_MESSAGE``, that socket alone).

- ``GET /``: the page (``static/index.html``, assets in ``static/``, no build
  step, nothing from a CDN).
- ``GET /api/games``: every game's summary, newest first (docs/web.md).
- ``GET /api/games/{id}``: one game's summary and its records so far.
- ``WS /ws/lobby``: the summaries, then each change.
- ``WS /ws/games/{id}``: the game's records so far, then each new one.
- With a tournament's folder (``ring serve --web --tournament DIR``, ``ring
  replay DIR``): ``GET /standings`` (the page), ``GET /api/standings`` (its
  ``standings.json``, which the runner rewrites after every game) and ``WS
  /ws/standings`` (it, then again each time it changes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ring.games.spectators import Spectators, TooManyViewers, Viewer

STATIC = Path(__file__).with_name("static")
# Close codes (RFC 6455 7.4.1): the server is at its cap (1013, try again later);
# no such game (1008, policy).
TRY_AGAIN_LATER = 1013
NO_SUCH_GAME = 1008


# How often a standings feed looks at the tournament's standings.json.
STANDINGS_CHECK = 0.5
# A browser that takes no message for this long (it stopped reading, its network died)
# is closed: a write never waits longer for one.
SEND_TIMEOUT = 10.0


def make_app(spectators: Spectators, tournament: Path | None = None) -> Starlette:
    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def games(request: Request) -> Response:
        return JSONResponse(spectators.lobby())

    async def one_game(request: Request) -> Response:
        game = spectators.games.get(request.path_params["game"])
        if game is None:
            return JSONResponse({"error": "no such game"}, status_code=404)
        return JSONResponse({"game": game.summary(), "records": game.records})

    async def lobby_feed(socket: WebSocket) -> None:
        await _feed(socket, spectators, None)

    async def game_feed(socket: WebSocket) -> None:
        await _feed(socket, spectators, socket.path_params["game"])

    async def standings_page(request: Request) -> Response:
        return FileResponse(STATIC / "standings.html")

    async def standings(request: Request) -> Response:
        found = _standings(tournament)
        if found is None:
            return JSONResponse({"error": "no standings yet"}, status_code=404)
        return Response(found, media_type="application/json")

    async def standings_feed(socket: WebSocket) -> None:
        await socket.accept()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_until_gone, socket, nursery.cancel_scope)
            last = None
            while True:
                found = _standings(tournament)
                if found is not None and found != last:
                    if not await _send(socket, found.decode()):
                        break
                    last = found
                await trio.sleep(STANDINGS_CHECK)
            nursery.cancel_scope.cancel()

    routes = [
        Route("/standings", standings_page),
        Route("/api/standings", standings),
        WebSocketRoute("/ws/standings", standings_feed),
        Route("/", page),
        Route("/api/games", games),
        Route("/api/games/{game}", one_game),
        WebSocketRoute("/ws/lobby", lobby_feed),
        WebSocketRoute("/ws/games/{game}", game_feed),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes)


def _standings(tournament: Path | None) -> bytes | None:
    """The tournament's standings.json as it stands (written whole by the runner), or None."""
    if tournament is None:
        return None
    try:
        return (tournament / "standings.json").read_bytes()
    except OSError:
        return None


async def _feed(socket: WebSocket, spectators: Spectators, watching: str | None) -> None:
    """Send the viewer's messages until it leaves or is dropped; read only to see it go."""
    await socket.accept()
    try:
        with spectators.watch(watching) as viewer:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_until_gone, socket, nursery.cancel_scope)
                await _send_all(socket, viewer)
                nursery.cancel_scope.cancel()
    except TooManyViewers:
        await socket.close(code=TRY_AGAIN_LATER)
    except KeyError:
        await socket.close(code=NO_SUCH_GAME)


async def _send_all(socket: WebSocket, viewer: Viewer) -> None:
    while True:
        try:
            message: dict[str, Any] = await viewer.receive()
        except trio.EndOfChannel:  # dropped: it fell too far behind
            await socket.close(code=TRY_AGAIN_LATER)
            return
        if not await _send(socket, json.dumps(message)):
            return


async def _send(socket: WebSocket, text: str) -> bool:
    """Send ``text``; False (and the socket closed) if the browser did not take it within
    SEND_TIMEOUT."""
    with trio.move_on_after(SEND_TIMEOUT):
        await socket.send_text(text)
        return True
    with trio.move_on_after(1.0) as closing:
        closing.shield = True
        await socket.close(code=TRY_AGAIN_LATER)
    return False


async def _until_gone(socket: WebSocket, scope: trio.CancelScope) -> None:
    """Read whatever the browser sends (nothing is asked of it) until it closes."""
    try:
        while (await socket.receive())["type"] != "websocket.disconnect":
            pass
    except (WebSocketDisconnect, RuntimeError):  # gone, or already closed by us
        pass
    scope.cancel()
