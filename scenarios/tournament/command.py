"""``ring tournament GAME --player NAME=COMMAND ... --out DIR``, declared for ``ring``."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from pathlib import Path

from ring import cliargs
from ring.registry import Command

GAMES = ("fishnet", "notipping", "oldmaid", "reversi")


class _Entrant(argparse.Action):
    """``--player`` and ``--builtin`` append to one list, so their order is kept (the
    gauntlet's first entrant is whichever came first)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        entrants = list(getattr(namespace, "entrants", None) or [])
        entrants.append((self.const, values))
        namespace.entrants = entrants


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME", choices=GAMES, help=", ".join(GAMES))
    entrants = parser.add_argument_group("entrants (in order: a gauntlet's first is its host)")
    entrants.add_argument(
        "--player",
        action=_Entrant,
        const="player",
        dest="entrants",
        metavar="NAME=COMMAND",
        help="a program: its name, and its command "
        "line with WIRE.md's placeholders ({host} {port} {address} {name} "
        "{seat} {nick} {table}), e.g. alice='java -jar a.jar {host} {port} {name}'",
    )
    entrants.add_argument(
        "--builtin",
        action=_Entrant,
        const="builtin",
        dest="entrants",
        metavar="[NAME=]LEVEL",
        help="a built-in player, e.g. deep or strong=deep",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="the results folder; the same command with the same DIR resumes",
    )
    parser.add_argument(
        "--ring-size",
        type=cliargs.positive,
        default=4,
        metavar="K",
        help="Old Maid: the players of each ring (2-8, default 4); --games: how many rings",
    )
    parser.add_argument("--format", choices=["round-robin", "gauntlet"], default="round-robin")
    parser.add_argument(
        "--games",
        type=cliargs.positive,
        default=2,
        metavar="N",
        help="games each pair plays, half with each colour (default 2)",
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="decides the seats and every game's seed (default 1)"
    )
    parser.add_argument(
        "--cluster",
        metavar="tcp://HOST:8786",
        help="play the games on a Dask cluster's workers (docs/tournament.md; needs "
        "cardring[cluster]) instead of this machine",
    )
    parser.add_argument(
        "--concurrency",
        type=cliargs.positive,
        default=os.cpu_count() or 1,
        metavar="N",
        help="games at once (default: the cores)",
    )
    limits = parser.add_argument_group("the game's limits (default: its server's)")
    limits.add_argument(
        "--move-time", type=cliargs.seconds, metavar="SECONDS", help="Reversi, FishNet: each move"
    )
    limits.add_argument(
        "--time-budget",
        type=cliargs.seconds,
        metavar="SECONDS",
        help="No Tipping: all of a player's moves",
    )
    limits.add_argument(
        "--max-weight",
        type=cliargs.positive,
        metavar="W",
        help="No Tipping: each player's weights 1..W",
    )
    limits.add_argument(
        "--depth",
        type=cliargs.positive,
        metavar="N",
        help="the built-in searching player's depth (Reversi deep 5, No Tipping solver 2)",
    )
    programs = parser.add_argument_group("each program's run")
    programs.add_argument(
        "--connect-within",
        type=cliargs.seconds,
        default=10.0,
        metavar="SECONDS",
        help="to start and join its game (default 10)",
    )
    programs.add_argument(
        "--exit-within",
        type=cliargs.seconds,
        default=3.0,
        metavar="SECONDS",
        help="to exit after its game (default 3; then it is killed)",
    )
    programs.add_argument(
        "--memory",
        type=cliargs.count,
        default=2048,
        metavar="MB",
        help="its data memory (default 2048; 0: no limit)",
    )
    programs.add_argument(
        "--cpu-time",
        type=cliargs.positive,
        metavar="SECONDS",
        help="its CPU time in a game (default: no limit)",
    )
    programs.add_argument(
        "--open-files",
        type=cliargs.positive,
        default=1024,
        metavar="N",
        help="its open files (default 1024)",
    )
    programs.add_argument(
        "--output",
        type=cliargs.positive,
        default=64,
        metavar="MB",
        help="its stdout, stderr or any file it writes (default 64)",
    )


def entrants_of(game: str, given: list[tuple[str, str]]) -> list[object]:
    """The entrants, in the order given; ``argparse.ArgumentTypeError`` names a bad one."""
    from scenarios.tournament import ring_game
    from scenarios.tournament.hosts import HOSTS
    from scenarios.tournament.jobs import Entrant

    if game == "oldmaid":
        title, levels, names = ring_game.TITLE, ring_game.LEVELS, ring_game.NAMES
    else:
        host = HOSTS[game]
        title, levels, names = host.title, host.levels, host.names
    entrants: list[Entrant] = []
    for kind, text in given:
        if kind == "player":
            name, sep, command = text.partition("=")
            if not sep or not command.strip():
                raise argparse.ArgumentTypeError(f"--player is NAME=COMMAND, not {text!r}")
            entrant = Entrant(name, tuple(shlex.split(command)))
        else:
            name, sep, level = text.rpartition("=")
            level = level.lower()
            if level not in levels:
                raise argparse.ArgumentTypeError(
                    f"no built-in {title} player {level!r}: {', '.join(levels)}"
                )
            if not sep:
                taken = {e.name for e in entrants}
                name = level
                number = 2
                while name in taken:
                    name, number = f"{level[:8]}{number}", number + 1
            entrant = Entrant(name, level=level)
        if not names.check(entrant.name):
            raise argparse.ArgumentTypeError(
                f"{entrant.name!r} is not a {title} name ({names.rule})"
            )
        entrants.append(entrant)
    return list(entrants)


def _run(args: argparse.Namespace) -> int:
    from scenarios.tournament.jobs import Settings
    from scenarios.tournament.runner import Tournament, TournamentError, run
    from scenarios.tournament.schedule import Format, ScheduleError

    try:
        entrants = entrants_of(args.game, getattr(args, "entrants", None) or [])
    except argparse.ArgumentTypeError as exc:
        print(f"ring tournament: {exc}", file=sys.stderr)
        return 2
    settings = Settings(
        move_time=args.move_time,
        time_budget=args.time_budget,
        max_weight=args.max_weight,
        connect_within=args.connect_within,
        exit_within=args.exit_within,
        memory_mb=args.memory or None,
        cpu_seconds=args.cpu_time,
        open_files=args.open_files,
        output_mb=args.output,
        depth=args.depth,
    )
    tournament = Tournament(
        game=args.game,
        entrants=tuple(entrants),  # type: ignore[arg-type]
        out=args.out,
        fmt=Format(args.format),
        games=args.games,
        seed=args.seed,
        settings=settings,
        concurrency=args.concurrency,
        ring_size=args.ring_size,
        cluster=args.cluster,
    )
    # A kill (SIGTERM) stops the runner as Ctrl-C does: the games under way are ended,
    # their programs killed, and the same command resumes.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return run(tournament)
    except (TournamentError, ScheduleError) as exc:
        print(f"ring tournament: {exc}", file=sys.stderr)
        return 2


COMMAND = Command(
    name="tournament",
    help="play every program against every other and rank them",
    add_arguments=_add_arguments,
    run=_run,
)
