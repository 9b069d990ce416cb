"""FishNet clients over TCP: ``ring bot fishnet`` and ``ring play fishnet``.

A client plays through ``services.fishnet.conversation.play_one_game``, which
hands every server line to an agent: here ``BotAgent``, a built-in player
(``ring bot fishnet``), or the terminal's agent for a person
(``services.fishnet.terminal``: ``ring play fishnet``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from ring.cli.client_args import run_client
from services.fishnet.bots import Player, make_player
from services.fishnet.conversation import ClientError, play_one_game
from services.fishnet.protocol import Error
from services.fishnet.rules import Result


class BotAgent:
    """A built-in player as a client: it hears exactly what a student's client hears."""

    def __init__(self, player: Player, *, errors: TextIO | None = None) -> None:
        self.player = player
        self.errors = errors

    async def hear(self, line: str) -> str | None:
        if line.startswith(Error.command) and self.errors is not None:
            print(f"server says: {line}", file=self.errors, flush=True)
        return self.player.hear(line)


# -- the commands ------------------------------------------------------------------------


_RESULT_WORDS = {Result.WIN: "won", Result.LOSE: "lost", Result.TIE: "tied"}


async def _run_bot(args: argparse.Namespace) -> int:
    tally = {result: 0 for result in Result}
    for game in range(args.games):
        seed = None if args.seed is None else f"{args.seed}:{game}"
        agent = BotAgent(make_player(args.level, seed), errors=sys.stderr)
        try:
            end = await play_one_game(
                args.server,
                args.name,
                args.opponent,
                agent,
                timeout=args.timeout,
                send_quit=args.quit,
            )
        except ClientError as exc:
            print(f"{args.name}: {exc}", file=sys.stderr)
            return 1
        tally[end.result] += 1
        print(f"{args.name} ({args.level}) {_RESULT_WORDS[end.result]} against {args.opponent}")
    if args.games > 1:
        wins, ties, losses = (tally[r] for r in (Result.WIN, Result.TIE, Result.LOSE))
        print(f"{args.name}: {wins} won, {ties} tied, {losses} lost")
    return 0


def run(args: argparse.Namespace) -> int:
    """``ring bot fishnet`` and ``ring play fishnet``: 0 after full games, 1 otherwise."""
    return run_client(args, _run_bot, "services.fishnet.terminal")
