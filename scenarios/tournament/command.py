"""``ring tournament GAME --player NAME=COMMAND ... --out DIR``, declared for ``ring``."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from pathlib import Path

from ring.cli import cliargs
from ring.cli.registry import Command

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
        metavar="NAME[@DIR]=COMMAND",
        help="a program: its name, its folder (default: that of the first word of COMMAND "
        "that names a file or folder; the box shows it read-only), and its command "
        "line with the placeholders ({host} {port} {address} {name} "
        "{seat} {nick} {table}), e.g. alice@alice='java -jar a.jar {host} {port} {name}'",
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
    limits.add_argument(
        "--verified",
        action="store_true",
        help="Old Maid: every game verified and witnessed; a program that does not join "
        "with verify and witness is refused (docs/protocols/oldmaid.md 14.5, 14.6)",
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
    box = parser.add_argument_group("the box every program runs in (docs/tournament.md)")
    box.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        help="run every program as this user, seeing the whole machine: only for programs "
        "you trust (every standings file then says so)",
    )
    box.add_argument(
        "--scratch",
        type=cliargs.positive,
        default=256,
        metavar="MB",
        help="its private writable /tmp (default 256)",
    )
    box.add_argument(
        "--processes",
        type=cliargs.positive,
        default=256,
        metavar="N",
        help="processes and threads of one entrant at once (default 256)",
    )
    box.add_argument(
        "--cpus",
        type=float,
        default=1.0,
        metavar="N",
        help="the machine's cores one program may use, all its processes together "
        "(default 1; needs cgroups, else unbounded: the first line says which)",
    )


def entrants_of(
    game: str, given: list[tuple[str, str]], *, boxed: bool = False
) -> list[object]:
    """The entrants, in the order given; ``argparse.ArgumentTypeError`` names a bad one.
    ``boxed``: each program needs a folder of its own (``folder_of``)."""
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
            name, at, given_folder = name.partition("@")
            argv = tuple(shlex.split(command))
            folder, cwd = folder_of(name, argv, given_folder if at else None, boxed=boxed)
            entrant = Entrant(name, argv, cwd=cwd, folder=folder)
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


def folder_of(
    name: str, argv: tuple[str, ...], given: str | None, *, boxed: bool
) -> tuple[str | None, str | None]:
    """An entrant's folder and working folder (absolute), as docs/tournament.md says:
    ``NAME@DIR``'s DIR for both; else the folder of the first word of the command that
    names a file (or the folder it names), and the working folder stays this one."""
    here = Path.cwd()
    if given is not None:
        folder = (here / given).resolve()
        if not folder.is_dir():
            raise argparse.ArgumentTypeError(f"{name}'s folder {given!r} is not a folder")
        return str(folder), str(folder)
    for word in argv:
        path = here / word
        if word and not word.startswith("-") and path.exists():
            found = (path if path.is_dir() else path.parent).resolve()
            if boxed and found in (here, *here.parents):
                raise argparse.ArgumentTypeError(
                    f"{name}'s program is in the folder the tournament runs from, which its "
                    f"box would show whole: give it a folder of its own ({name}@DIR=COMMAND)"
                )
            return str(found), None
    return None, None


def _run(args: argparse.Namespace) -> int:
    from scenarios.tournament.jobs import Settings
    from scenarios.tournament.runner import Tournament, TournamentError, run
    from scenarios.tournament.schedule import Format, ScheduleError

    try:
        given = getattr(args, "entrants", None) or []
        entrants = entrants_of(args.game, given, boxed=args.sandbox)
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
        verified=args.verified,
    )
    if args.verified and args.game != "oldmaid":
        print("ring tournament: --verified is for oldmaid", file=sys.stderr)
        return 2
    if args.sandbox:
        from scenarios.tournament.boxes import box_settings

        try:
            settings = box_settings(
                settings, entrants, args.out, args.scratch, args.processes, args.cpus
            )
        except ValueError as exc:
            print(f"ring tournament: {exc}", file=sys.stderr)
            return 2
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
