"""``ring check GAME -- COMMAND ...`` declared for the ``ring`` command (``ring.cli.registry``)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ring.cli import cliargs
from ring.cli.registry import Command

# Each game's cases, imported only when that game is checked.
GAMES: dict[str, str] = {
    "fishnet": "scenarios.check.fishnet",
    "notipping": "scenarios.check.notipping",
    "oldmaid": "scenarios.check.oldmaid",
    "reversi": "scenarios.check.reversi",
}


def manual_port(game: str) -> int:
    """Where --manual listens unless --port says otherwise: the game's server's own default
    port, the one a student's program with a built-in address most likely dials."""
    from ring.oldmaid import DEFAULT_PORT as OLDMAID
    from services.fishnet import DEFAULT_PORT as FISHNET
    from services.notipping import DEFAULT_PORT as NOTIPPING
    from services.reversi import DEFAULT_PORT as REVERSI

    ports = {"fishnet": FISHNET, "notipping": NOTIPPING, "oldmaid": OLDMAID, "reversi": REVERSI}
    return ports[game]


def _options(check: argparse.ArgumentParser) -> None:
    check.add_argument("--case", action="append", metavar="ID", help="run only this case "
                       "(repeatable; a prefix such as reversi.framing runs a group)")  # fmt: skip
    check.add_argument("--list", action="store_true", help="list the cases and exit")
    check.add_argument("--rules", action="store_true", help="list the rules the cases hold "
                       "a program to, each with the cases that test it, and exit")  # fmt: skip
    check.add_argument("--jobs", type=int, default=4, help="cases at once (default 4)")
    check.add_argument("--move-time", type=cliargs.seconds, metavar="SECONDS", help="the time "
                       "a move may take (default: the protocol's)")  # fmt: skip
    check.add_argument("--json", type=Path, metavar="FILE", help="every case, as JSON")
    check.add_argument("--junit", type=Path, metavar="FILE", help="JUnit XML, for CI")
    check.add_argument("--gradescope", type=Path, metavar="FILE",
                       help="Gradescope's results.json")  # fmt: skip
    check.add_argument("--manual", action="store_true", help="no COMMAND: you start your "
                       "program by hand for each case, when told, on one fixed port")  # fmt: skip
    check.add_argument("--port", type=int, metavar="PORT", help="with --manual: the port to "
                       "listen on (default: the game server's own)")  # fmt: skip
    check.add_argument("--keep", type=Path, metavar="DIR", help="keep each case's program "
                       "output in DIR (default: a temporary folder, removed)")  # fmt: skip
    check.add_argument("--sandbox", action="store_true", help="run the program in the box "
                       "ring tournament runs it in (a uid of its own; this folder read-only; "
                       "needs root and bubblewrap; docs/check.md)")  # fmt: skip


def _add_arguments(check: argparse.ArgumentParser) -> None:
    _options(check)
    check.add_argument("game", metavar="GAME", choices=sorted(GAMES), help="the client side to "
                       "check: " + ", ".join(sorted(GAMES)))  # fmt: skip
    # Everything after GAME: more options, then -- and the program (argparse's own
    # "--" handling under a subcommand drops the program).
    check.add_argument("rest", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                       help="the program and its arguments; {host}, {port}, {address}, "
                       "{name} and {seat} (No Tipping) in them are replaced, e.g. -- "
                       "java -jar client.jar {host} {port} {name}")  # fmt: skip


def _split_rest(args: argparse.Namespace) -> list[str]:
    """The options given after GAME, folded into ``args``; the program's command line."""
    rest = list(args.rest)
    cut = rest.index("--") if "--" in rest else len(rest)
    options, program = rest[:cut], rest[cut + 1 :]
    if options:
        parser = argparse.ArgumentParser(prog="ring check GAME")
        _options(parser)
        parser.set_defaults(**{k: v for k, v in vars(args).items() if k not in ("rest", "game")})
        # Options after GAME, and a program given without --: its words stay the program.
        parsed, unknown = parser.parse_known_args(options)
        vars(args).update(vars(parsed))
        program = unknown + program
    return program


def _run(args: argparse.Namespace) -> int:
    import importlib

    import trio

    from scenarios.check import report
    from scenarios.check.manual import ManualProgram
    from scenarios.check.runner import run_cases
    from scenarios.programs import Program, ProgramError

    argv = _split_rest(args)
    module = importlib.import_module(GAMES[args.game])
    make_cases: Callable[..., list] = module.cases
    cases = make_cases(args.move_time) if args.move_time else make_cases()
    if args.case:
        chosen = [c for c in cases if any(c.case_id.startswith(p) for p in args.case)]
        if not chosen:
            print(f"ring check: no case matches {', '.join(args.case)}", file=sys.stderr)
            return 2
        cases = chosen
    if args.rules:
        from scenarios.check.rules_table import table

        print("\n".join(table(args.game, cases)))
        return 0
    if args.list:
        for case in cases:
            print(f"{case.case_id:<{report.ID_WIDTH}} {case.section:<16} {case.title}")
        return 0
    program: Program | ManualProgram
    if args.manual:
        if argv:
            print("ring check: --manual takes no COMMAND: you start it", file=sys.stderr)
            return 2
        program = ManualProgram(args.port or manual_port(args.game), announce=_announce)
    else:
        try:
            program = Program(tuple(argv))
        except ProgramError as exc:
            print(f"ring check: {exc}", file=sys.stderr)
            return 2
        if args.sandbox:
            from scenarios.check.boxed import boxed

            try:
                program, line = boxed(program, args.keep)
            except ProgramError as exc:
                print(f"ring check: {exc}", file=sys.stderr)
                return 2
            print(line, flush=True)

    def show(result) -> None:  # type: ignore[no-untyped-def]
        print(report.case_line(result), flush=True)
        for line in report.details(result):
            print(line, flush=True)

    with tempfile.TemporaryDirectory(prefix="ring-check-") as temporary:
        logs = args.keep or Path(temporary)
        results = trio.run(lambda: run_cases(cases, program, logs, jobs=args.jobs, on_result=show))
    for line in report.summary(args.game, results, program.shown):
        print(line)
    if args.json:
        report.write_json(args.json, args.game, program.shown, results)
    if args.junit:
        report.write_junit(args.junit, args.game, results)
    if args.gradescope:
        report.write_gradescope(args.gradescope, results)
    return report.exit_status(results)


def _announce(text: str) -> None:
    print(f">>> {text}", flush=True)


COMMAND = Command(
    name="check",
    help="check a client program against the protocol, case by case",
    add_arguments=_add_arguments,
    run=_run,
)
