"""``ring serve --web [PORT]``: the live page, declared like the game services.

It serves alongside the games (``companion``): ``ring serve --web`` runs every
game service and the page; naming games chooses them as before. It reads the
record hub all services of the process share, and listens where they do
(loopback unless ``--host`` says otherwise).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ring.cli.registry import ServerError, ServeSettings, Service

if TYPE_CHECKING:
    from ring.games.spectators import Spectators

DEFAULT_PORT = 8080
# A browser has nothing to send: a message over this closes its socket (hypercorn's 1009).
MAX_MESSAGE = 4096


def _add_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--max-viewers",
        type=int,
        default=200,
        metavar="N",
        help="browsers watching at once (default 200); more are told to try again later",
    )
    group.add_argument(
        "--tournament",
        type=Path,
        metavar="DIR",
        help="also show this ring tournament's standings at /standings, live as it runs",
    )


async def _serve(settings: ServeSettings, *, task_status: trio.TaskStatus[tuple[str, int]]) -> None:
    from ring.games.spectators import Spectators

    spectators = Spectators(settings.hub, max_viewers=settings.options.max_viewers)
    try:
        async with trio.open_nursery() as nursery:
            try:
                address = await nursery.start(
                    serve_page,
                    spectators,
                    settings.host,
                    settings.port,
                    settings.options.tournament,
                )
            except OSError as exc:
                raise ServerError(
                    f"cannot listen on {settings.host}:{settings.port}: {exc}"
                ) from None
            task_status.started(address)
    finally:
        spectators.unsubscribe()


async def serve_page(
    spectators: Spectators,
    host: str,
    port: int,
    tournament: Path | None = None,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the page of ``spectators`` on ``host:port`` until cancelled; ``started`` gives
    the address bound (``port`` 0: any free one). Raises ``OSError`` if it cannot listen."""
    from hypercorn.config import Config
    from hypercorn.trio import serve

    from ring.wire.net import open_listeners
    from services.web.app import make_app

    config = Config()
    # Our listeners (on 127.0.0.1, on ::1 too: ring.wire.net.open_listeners), handed to
    # hypercorn by file descriptor: the page is at localhost whichever address a browser
    # tries first.
    listeners = await open_listeners(host, port)
    config.bind = [f"fd://{os.dup(listener.socket.fileno())}" for listener in listeners]
    for listener in listeners:
        await listener.aclose()
    config.websocket_max_message_size = MAX_MESSAGE
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 1.0

    async def serving(task_status: trio.TaskStatus[list[str]]) -> None:
        app = make_app(spectators, tournament)
        await serve(app, config, task_status=task_status)  # type: ignore[arg-type]

    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serving)
        bound_host, bound_port = binds[0].removeprefix("http://").rsplit(":", 1)
        task_status.started((bound_host, int(bound_port)))


SERVICE = Service(
    name="web",
    default_port=DEFAULT_PORT,
    summary="the live page: every game of this ring serve in a browser",
    serve=_serve,
    add_options=_add_options,
    companion=True,
)
