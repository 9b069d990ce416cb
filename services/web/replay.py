"""``ring replay FILE`` or ``ring replay DIR``: the live page's views of a finished game,
from its transcript; or a ``ring tournament`` folder's standings (live while it runs).

The transcript of any game (``ring serve --transcripts``, a tournament's
``games/<key>/transcript.jsonl``, ``ring table --transcript``) is read with
``ring.games.record.read_games``, its records published to a hub of its own, and
the same page served from it: each game of the file is in the lobby, its view
has the step control (one record back or on, a slider, the end), and the API
is the same. It prints the page's address and serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec
import trio

from ring.cli import cliargs
from ring.cli.console import say
from ring.cli.registry import Command
from ring.cli.shutdown import raise_on_stop_signals, stop_code
from ring.games.record import GameKey, RecordError, RecordHub, read_games
from ring.games.spectators import Spectators, game_id


def load(path: Path, hub: RecordHub, number: int | None = None) -> list[str]:
    """Publish every game of ``path`` to ``hub``; the games' ids, in order. ``number``: the
    game's number to show (a tournament's, whose every game is its own server's first)."""
    ids = []
    for game in read_games(path):
        key = GameKey(game.start.service, number or game.start.game)
        hub.publish(key, msgspec.to_builtins(game.start))
        for record in game.records:
            hub.publish(key, record)
        if game.end is not None:
            hub.publish(key, msgspec.to_builtins(game.end))
        ids.append(game_id(key))
    return ids


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    what = "a game's transcript (JSON lines), or a ring tournament folder"
    parser.add_argument("file", type=Path, metavar="FILE", help=what)
    parser.add_argument("--host", default="127.0.0.1", help="listen here (default 127.0.0.1)")
    parser.add_argument("--port", type=cliargs.port, default=8080, help="(default 8080; 0: any)")


def _run(args: argparse.Namespace) -> int:
    from services.web.service import serve_page

    hub = RecordHub()
    spectators = Spectators(hub)
    if (args.file / "tournament.json").is_file():
        # A tournament's folder: its standings page, and each game in the lobby.
        for transcript in sorted(args.file.glob("games/*/transcript.jsonl")):
            try:
                load(transcript, hub, int(transcript.parent.name))
            except (RecordError, ValueError):
                continue  # a game cut off mid-write: its result is not counted either
        tournament, what, where = args.file, "standings", "standings"
    else:
        try:
            ids = load(args.file, hub)
        except (OSError, RecordError) as exc:
            print(f"ring replay: cannot read {args.file}: {exc}", file=sys.stderr)
            return 2
        if not ids:
            print(f"ring replay: {args.file} holds no game (no start record)", file=sys.stderr)
            return 2
        tournament, what, where = None, "replay", f"#{ids[0]}"

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raise_on_stop_signals)
            host, port = await nursery.start(
                serve_page, spectators, args.host, args.port, tournament
            )
            say(f"{what} of {args.file}: http://{host}:{port}/{where}")

    try:
        trio.run(main)
    except BaseException as exc:
        code = stop_code(exc)
        if code is not None:
            return code
        if isinstance(exc, OSError):
            print(f"ring replay: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
            return 2
        raise
    return 0


COMMAND = Command(
    name="replay",
    help="serve the live page's views of a game's transcript, with a step control",
    add_arguments=_add_arguments,
    run=_run,
)
