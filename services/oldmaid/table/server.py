"""The Old Maid table over TCP: a thin Trio layer around the referee.

``serve_tables`` listens and runs a ``TableServer`` (``services.oldmaid.
table_server``: the connections, and the games they join) as its
``TableConfig`` says (``services.oldmaid.table.config``); this module
re-exports both, for the service declaration and the tests. ``ring table``
runs it for a set number of games (one by default) and returns when they
have ended and their players have gone (or ``linger`` seconds passed);
``ring serve --oldmaid`` runs it until stopped.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import trio

from ring.cli.shutdown import EXIT_TERMINATED, raise_on_stop_signals, stop_code
from ring.games.record import RecordHub
from ring.games.seeds import new_secret
from ring.games.transcripts import TranscriptFile, TranscriptFiles, recording_to, transcript_files
from ring.oldmaid.messages import error
from ring.oldmaid.protocol import Closed, Link, RemoteProtocolError, Role
from ring.wire.net import (
    REFUSAL_READ_TIMEOUT,
    CannotListen,
    Refusal,
    ServerError,
    listening_as,
)
from ring.wire.transport import Connection
from services.oldmaid.referee.rules import GameState
from services.oldmaid.table.config import DEFAULT_PORT, TableConfig
from services.oldmaid.table.connections import TableServer
from services.oldmaid.table.game import SHUTDOWN_NOTICE_TIMEOUT
from services.oldmaid.table.outcome import GameOutcome

if TYPE_CHECKING:
    from ring.mdns.discovery import Advertiser

# Imported from here by the service declaration and the tests.
__all__ = [
    "DEFAULT_PORT",
    "ServerError",
    "TableConfig",
    "TableOutcome",
    "TableServer",
    "run",
    "serve_table",
    "serve_tables",
]


# A game's outcome, as ``serve_table`` returns it and ``ring table`` prints it.
TableOutcome = GameOutcome


def _seed_line(config: TableConfig) -> str:
    """What ``ring table`` says of its seed on stderr: never a secret key."""
    if config.keyed:
        return (
            "table: deals come from a secret that is printed nowhere; each game's "
            "transcript holds the seed that replays it (ring table --seed)"
        )
    return (
        f"table seed {config.seed} (replay with --seed {config.seed}; whoever knows this "
        "seed can predict every deal)"
    )


def _transcript_writer(config: TableConfig) -> TranscriptFile | TranscriptFiles | None:
    """The subscriber that writes the games' records, as the config asks; OSError if it cannot."""
    if config.transcript is not None:
        return TranscriptFile(config.transcript, "oldmaid")
    return transcript_files(config.transcripts, "oldmaid")


# -- entry points ---------------------------------------------------------------


async def _refuse(config: TableConfig, stream: trio.SocketStream, why: Refusal) -> None:
    """What a newcomer the table cannot take is told (``ring.wire.net.listen`` refused it).

    The protocol only ever answers a request, so the newcomer's first request,
    if it comes soon, gets the error; one that says nothing is closed silently.
    """
    conn = Connection(stream, Link(Role.TABLE_SERVER, config.max_message))
    try:
        event = await conn.receive(timeout=REFUSAL_READ_TIMEOUT)
    except (trio.TooSlowError, RemoteProtocolError):
        return
    if isinstance(event, Closed):
        return
    if why is Refusal.SERVER_FULL:
        reason = f"the table is full (at most {config.max_connections} connections at once)"
        reason += "; try again later"
    else:
        reason = f"too many connections from your address (at most {config.max_per_address})"
        reason += "; close one and try again"
    await conn.send_or_close(error(reason))


async def serve_tables(
    config: TableConfig,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> list[TableOutcome]:
    """Serve ``config.games`` games (None: until cancelled), then return how each ended.

    ``await nursery.start(serve_tables, config)`` gives the bound (host, port).
    If the table advertises itself over mDNS, ``on_advertise`` gets the
    ``ring.mdns.discovery.Advertiser`` before its registration starts. Cancelled,
    it first aborts the games under way and tells their watchers. Raises
    ``ServerError`` before listening if the table cannot run.
    """
    if config.seed is None:
        config = replace(config, seed=new_secret(), keyed=True)
    seed = config.seed
    assert seed is not None
    try:
        writer = _transcript_writer(config)
    except OSError as exc:
        where = config.transcript or config.transcripts
        raise ServerError(f"cannot write the transcript {where}: {exc}") from None
    hub = config.hub or RecordHub()
    server = TableServer(config, seed, hub)
    failure: CannotListen | None = None
    with recording_to(hub, writer):
        try:
            async with trio.open_nursery() as nursery:
                server.nursery = nursery
                listening = listening_as(
                    config,
                    server.handle,
                    on_stop=server.shut_down,
                    stop_timeout=SHUTDOWN_NOTICE_TIMEOUT,
                    refuse=functools.partial(_refuse, config),
                    listener=config.listener,
                )
                try:
                    async with listening as address:
                        server.address = address
                        server.open_game()
                        server.advertise(*address, on_advertise)
                        task_status.started(address)
                        await server.all_ended.wait()
                except CannotListen as exc:
                    failure = exc
                nursery.cancel_scope.cancel()
        finally:
            server.stopped()
    if failure is not None:
        raise ServerError(str(failure))
    ended = server.outcomes + [game.outcome() for game in server.games if game.ended.is_set()]
    return sorted(ended, key=lambda outcome: outcome.number)


async def serve_table(
    config: TableConfig,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> TableOutcome:
    """Run one game: listen, seat, referee, tell the watchers, linger, return its outcome."""
    if config.games != 1:
        raise ValueError("serve_table plays one game; use serve_tables for more")
    outcomes = await serve_tables(config, task_status=task_status, on_advertise=on_advertise)
    return outcomes[0]


async def _serve_and_announce(config: TableConfig) -> list[TableOutcome]:
    outcomes: list[TableOutcome] = []
    failure: ServerError | None = None

    async def play(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
        outcomes.extend(await serve_tables(config, task_status=task_status))
        nursery.cancel_scope.cancel()  # the SIGTERM watcher

    async with trio.open_nursery() as nursery:
        nursery.start_soon(raise_on_stop_signals)
        try:
            host, port = await nursery.start(play)
        except ServerError as exc:
            failure = exc
            nursery.cancel_scope.cancel()
        else:
            # A scenario runner reads this first line to learn the port.
            mode = " (verified games only: protocol 14.5, 14.6)" if config.verified else ""
            print(f"table listening on {host}:{port}{mode}", flush=True)
            print(_seed_line(config), file=sys.stderr)
    if failure is not None:
        raise failure
    return outcomes


def run(args: argparse.Namespace) -> int:
    """``ring table``: 0 after games over, 1 if one was aborted, 2 if it could not run."""
    config = TableConfig.from_args(args)
    if config.seed is None:
        config = replace(config, seed=new_secret(), keyed=True)
    try:
        outcomes = trio.run(_serve_and_announce, config)
    except ServerError as exc:
        print(f"table: {exc}", file=sys.stderr)
        return 2
    except BaseException as exc:
        code = stop_code(exc)
        if code is None:
            raise
        how = "terminated" if code == EXIT_TERMINATED else "interrupted"
        print(f"game aborted: the table was {how}", flush=True)
        return code
    for outcome in outcomes:
        prefix = f"game {outcome.number}: " if len(outcomes) > 1 else ""
        print(prefix + outcome.line, flush=True)
    return 0 if all(o.state is GameState.OVER for o in outcomes) else 1
