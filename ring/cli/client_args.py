"""The arguments of every game's ``ring play`` and ``ring bot``, spelled once.

The same thing has the same flag in every game: ``--server HOST:PORT``,
``--name``, ``--seat`` (where the players choose their seats), ``--timeout``,
and for a built-in player ``--level``, ``--games N`` and ``--seed``. A game's
declaration (``services/*/service.py``) gives only what differs: its port,
what its protocol takes as a name, its seats, its players, the few arguments
of its own, and the old spellings of renamed flags (hidden from ``--help``).
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ring.cli import cliargs
from ring.cli.registry import ClientCommand

TIMEOUT_HELP = "longest wait for the server (for an opponent, or the opponent's move)"


def _nothing(parser: argparse.ArgumentParser) -> None:
    pass


@dataclass(frozen=True)
class Names:
    """What a game's protocol takes as a player's name."""

    rule: str  # for people, in --help and when a --name is refused: "1-10 of A-Z a-z 0-9 _"
    check: Callable[[str], bool]

    def __call__(self, text: str) -> str:
        """``text`` as a --name, or the ``ArgumentTypeError`` that says what a name is."""
        if not self.check(text):
            raise argparse.ArgumentTypeError(f"a name is {self.rule}, not {text!r}")
        return text


@dataclass(frozen=True)
class GameClients:
    """One game's ``ring play`` (a person at the terminal) and ``ring bot`` (a built-in player)."""

    default_port: int  # --server's default port, on 127.0.0.1
    names: Names  # --name
    levels: Sequence[str]  # the built-in players, for ring bot --level
    run: Callable[[argparse.Namespace], int]  # both commands: args.command is "play" or "bot"
    seats: Sequence[int] = ()  # --seat's choices; none: the server seats the players
    seat_help: str = "the seat to ask for"
    add_own: Callable[[argparse.ArgumentParser], None] = _nothing  # both commands' own arguments
    add_bot_own: Callable[[argparse.ArgumentParser], None] = _nothing  # ring bot's own
    old_flags: Mapping[str, str] = field(default_factory=dict)  # flag -> its hidden old spelling

    @property
    def play(self) -> ClientCommand:
        return ClientCommand(self.add_play_arguments, self.run)

    @property
    def bot(self) -> ClientCommand:
        return ClientCommand(self.add_bot_arguments, self.run)

    def add_play_arguments(self, parser: argparse.ArgumentParser) -> None:
        self._add(
            parser,
            "--server",
            type=cliargs.address,
            default=("127.0.0.1", self.default_port),
            metavar="HOST:PORT",
            help=f"where the server listens (default 127.0.0.1:{self.default_port})",
        )
        self._add(
            parser,
            "--name",
            required=True,
            type=self.names,
            help=f"your name in the game ({self.names.rule})",
        )
        if self.seats:
            self._add(
                parser, "--seat", required=True, type=int, choices=self.seats, help=self.seat_help
            )
        self._add(
            parser,
            "--timeout",
            type=cliargs.seconds,
            default=600.0,
            metavar="SECONDS",
            help=TIMEOUT_HELP,
        )
        self.add_own(parser)

    def add_bot_arguments(self, parser: argparse.ArgumentParser) -> None:
        self.add_play_arguments(parser)
        self._add(
            parser,
            "--level",
            required=True,
            type=str.lower,
            choices=self.levels,
            help="which built-in player plays",
        )
        self._add(
            parser,
            "--games",
            type=cliargs.positive,
            default=1,
            metavar="N",
            help="play N games in a row",
        )
        self._add(parser, "--seed", type=int, help="seed for the player's choices")
        self.add_bot_own(parser)

    def _add(self, parser: argparse.ArgumentParser, flag: str, **kwargs: Any) -> None:
        old = self.old_flags.get(flag)
        if old is None:
            parser.add_argument(flag, **kwargs)
        else:
            cliargs.add_renamed(parser, flag, old, **kwargs)


def run_client(
    args: argparse.Namespace, bot: Callable[[argparse.Namespace], Awaitable[int]], terminal: str
) -> int:
    """``ring bot GAME`` (``bot``) or ``ring play GAME`` (the ``run_terminal`` of module
    ``terminal``, imported only then) under ``trio.run``: its exit status; 130 on Ctrl-C."""
    import importlib
    import sys

    import trio

    main = bot if args.command == "bot" else importlib.import_module(terminal).run_terminal
    try:
        return int(trio.run(main, args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
