"""No Tipping clients over TCP: ``ring bot notipping`` and ``ring play notipping``.

Both play through ``services.notipping.conversation.play_one_game``; here the
agent is a built-in player (``BotAgent``), there a person at the terminal
(``services.notipping.terminal``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import trio

from ring.cli.client_args import run_client
from services.notipping import rules
from services.notipping.conversation import ClientError, GameEnd, View, play_one_game

if TYPE_CHECKING:
    from services.notipping.bots import Player


class BotAgent:
    """A built-in player as a client: it sees exactly what a student's client sees."""

    def __init__(self, player: Player) -> None:
        self.player = player

    @classmethod
    def of_level(cls, level: str, seed: int | str, depth: int | None = None) -> BotAgent:
        from services.notipping.bots import make_player

        return cls(make_player(level, seed, depth=depth))

    async def begin(self, game_number: int, max_weight: int, player: int) -> None:
        return None

    async def move(self, view: View) -> rules.Move:
        # The solver takes up to ~2 s: in a thread, so the server is still read meanwhile.
        return await trio.to_thread.run_sync(
            self.player.choose, view.game, None, abandon_on_cancel=True
        )


def game_seed(args: argparse.Namespace, game: int) -> str:
    """Each game of a run its own seed: replayable from --seed, else from the --name."""
    base = args.seed if args.seed is not None else args.name
    return f"{base}:{game}"


def result_line(handle: str, level: str, end: GameEnd) -> str:
    line = f"{handle} ({level}, player {end.player}) {end.result} game {end.game_number}"
    return f"{line} (invalid move)" if end.invalid else line


async def _run_bot(args: argparse.Namespace) -> int:
    won = lost = 0
    for game in range(args.games):
        agent = BotAgent.of_level(args.level, game_seed(args, game), args.depth)
        try:
            end = await play_one_game(
                args.server, args.name, args.seat, agent, timeout=args.timeout
            )
        except ClientError as exc:
            print(f"{args.name}: {exc}", file=sys.stderr, flush=True)
            return 1
        if end.won:
            won += 1
        else:
            lost += 1
        print(result_line(args.name, args.level, end), flush=True)
    print(f"{args.name}: {won} won, {lost} lost", flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    """``ring bot notipping`` and ``ring play notipping``: 0 after full games, 1 otherwise."""
    return run_client(args, _run_bot, "services.notipping.terminal")
