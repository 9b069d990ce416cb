"""Reversi clients over TCP: ``ring bot reversi`` and ``ring play reversi``.

Both play through ``services.reversi.conversation.play_one_game``; here the
agent is a built-in player (``BotAgent``), there a person at the terminal
(``services.reversi.terminal``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import trio

from ring.cli.client_args import run_client
from services.reversi.conversation import (
    COLOUR_WORDS,
    RESULT_WORDS,
    ClientError,
    play_one_game,
)
from services.reversi.rules import Position, coordinates

if TYPE_CHECKING:
    from services.reversi.bots import Player


class BotAgent:
    """A built-in player as a client: it sees exactly what a student's client sees."""

    def __init__(self, player: Player, move_time: float | None) -> None:
        self.player = player
        self.move_time = move_time

    @classmethod
    def of_level(
        cls, level: str, seed: int | str, move_time: float | None, depth: int | None = None
    ) -> BotAgent:
        from services.reversi.bots import make_player

        return cls(make_player(level, seed, move_time=move_time, depth=depth), move_time)

    async def started(self, colour: int) -> None:
        return None

    async def move(self, position: Position) -> tuple[int, int]:
        # Searching takes up to a second: in a thread, so the server is still read.
        sq = await trio.to_thread.run_sync(
            self.player.choose, position, self.move_time, abandon_on_cancel=True
        )
        return coordinates(sq)


async def _run_bot(args: argparse.Namespace) -> int:
    tally = {1: 0, 2: 0, 0: 0}
    for game in range(args.games):
        seed = f"{args.seed}:{game}" if args.seed is not None else f"{args.name}:{game}"
        agent = BotAgent.of_level(args.level, seed, args.move_time, args.depth)
        try:
            end = await play_one_game(args.server, args.name, agent, timeout=args.timeout)
        except ClientError as exc:
            print(f"{args.name}: {exc}", file=sys.stderr)
            return 1
        tally[end.result] += 1
        print(
            f"{args.name} ({args.level}) {RESULT_WORDS[end.result]} as {COLOUR_WORDS[end.colour]}",
            flush=True,
        )
    print(f"{args.name}: {tally[1]} won, {tally[2]} tied, {tally[0]} lost", flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    """``ring bot reversi`` and ``ring play reversi``: 0 after full games, 1 otherwise."""
    return run_client(args, _run_bot, "services.reversi.terminal")
