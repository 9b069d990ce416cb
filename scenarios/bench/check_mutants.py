"""``make bench-check``: how strong ``ring check`` is, measured by mutating our own clients.

For each game, the client-side protocol code of our reference client (``ring bot
reversi``, ``ring bot notipping``, ``ring bot fishnet``, and ``ring peer`` for
``oldmaid``: the wire parsing, the client loop and the turn logic, not the
players' strategy nor the verified play's cryptography) is mutated one change at
a time (``scenarios.bench.mutation``), and the game's checker cases are run
against each mutant, in-process from the real tree, as ``ring check`` runs them
(``scenarios.check.runner.run_cases``). A mutant is written into a copy of
``ring/``, ``services/`` and ``scenarios/`` that only the program under test
imports (``env PYTHONPATH=COPY python -m ring ...``, run in COPY), so the
checker, which imports the same modules for the server's side, is never
mutated. A mutant is killed when a case FAILs (the rest are then cancelled),
and survives otherwise (a WARN is noted). First the unmutated copy must pass
every case, or that game is not measured.

Each survivor is then played against the unmutated client in seeded games
through our real server (``scenarios.bench.mutant_games``): "equivalent" if it
sent the same in every game, a "gap" otherwise, with the first difference: a
behaviour the checker does not see. An equivalent survivor plays as before in
those games; it may still differ where they never go (a garbled server line, a
rare situation), which only reading it can tell.

A measurement, not a test: exits 0 whatever it finds, 1 when a game's baseline
fails (then nothing of that game can be measured).
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import trio

from scenarios.bench import mutant_games
from scenarios.bench.mutant_games import Equivalence, References, Table, old_maid, ring
from scenarios.bench.mutation import Mutant, mutate_file
from scenarios.check.context import Case
from scenarios.check.runner import run_cases
from scenarios.check.verdicts import CaseResult, CaseVerdict

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("ring", "services", "scenarios")
LIMIT = 80  # mutants a game, spread evenly over the chosen code
MOVE_TIME = 2.0  # the cases' move limit: a mutant that hangs fails in seconds
JOBS = 4  # cases at once, as ring check
SEEDS = 3  # seeded games a survivor plays
# Reversi's and No Tipping's client loop.
_SHARED_LOOP = (
    "ring/wire/client.py",
    ("Conversation.send", "Conversation.next_event", "Conversation.while_thinking"),
)


@dataclass(frozen=True)
class Game:
    """One game's client code to mutate, its client for the checker, and its seeded games."""

    name: str  # the checker's: scenarios.check.<name>
    targets: tuple[tuple[str, tuple[str, ...]], ...]  # (file, qualified names)
    program: tuple[str, ...]  # ring arguments, with the checker's placeholders
    table: Table


def _bot(game: str, *more: str) -> tuple[str, ...]:
    return ("bot", game, "--server", "{address}", *more, "--timeout", "20")


GAMES: dict[str, Game] = {
    "reversi": Game(
        "reversi",
        (
            ("services/reversi/client_connection.py", tuple(f"ClientConnection.{m}" for m in (
                "start", "move", "_line", "receive_data", "next_event", "_server_event",
                "_decode"))),
            ("services/reversi/conversation.py", ("play_one_game",)),
            ("services/reversi/messages.py", ("_Order.apply",)),
            _SHARED_LOOP,
            ("services/reversi/client.py", ("BotAgent.move", "run")),
        ),
        _bot("reversi", "--name", "{name}", "--level", "greedy", "--seed", "1"),
        Table(
            "reversi",
            lambda s: _bot("reversi", "--name", "ours", "--level", "greedy", "--seed", str(s)),
            lambda s: [_bot("reversi", "--name", "opp", "--level", "random", "--seed", str(s))],
        ),
    ),
    "notipping": Game(
        "notipping",
        (
            ("services/notipping/protocol.py", (
                "_Messages.receive_data", "_Messages.next", "_integer", "_numbers",
                *(f"ClientConnection.{m}" for m in ("start", "receive_data", "next_event",
                                                    "_parse", "_round_of", "add", "remove",
                                                    "_answer")))),
            ("services/notipping/conversation.py", ("follow", "play_one_game", "_play",
                                                    "_encode")),
            _SHARED_LOOP,
            ("services/notipping/client.py", ("BotAgent.move", "run")),
        ),
        _bot("notipping", "--name", "{name}", "--seat", "{seat}", "--level", "greedy",
             "--seed", "1"),
        Table(
            "notipping",
            lambda s: _bot("notipping", "--name", "ours", "--seat", str(s % 2),
                           "--level", "greedy", "--seed", str(s)),
            lambda s: [_bot("notipping", "--name", "opp", "--seat", str(1 - s % 2),
                            "--level", "random", "--seed", str(s))],
        ),
    ),
    "fishnet": Game(
        "fishnet",
        (
            ("services/fishnet/conversation.py", ("play_one_game", "_answer")),
            ("services/fishnet/protocol.py", (
                "LineBuffer.feed", "LineBuffer.next_line", "LineBuffer.take_rest",
                *(f"Link.{m}" for m in ("_client_says", "_server_says", "send", "receive_data",
                                        "next_event", "_no_line", "_received_line", "_bad")))),
            ("services/fishnet/messages.py", ("parse_line",)),
            ("services/fishnet/bots/base.py", ("Player.hear", "Player.fished", "Player.got",
                                                  "Player.opponent_asked")),
            ("services/fishnet/client.py", ("BotAgent.hear", "run")),
        ),
        _bot("fishnet", "--name", "{name}", "--opponent", "spot", "--level", "bob", "--seed", "1"),
        Table(
            "fishnet",
            lambda s: _bot("fishnet", "--name", "ours", "--opponent", "spot", "--level", "bob",
                           "--seed", str(s)),
        ),
    ),
    "oldmaid": Game(
        "oldmaid",
        (
            ("ring/oldmaid/peer.py", tuple(f"Peer.{m}" for m in (
                "_take_turns", "_next_turn", "_draw_turn", "_hand_on_draw", "_offer_turn"))),
            ("ring/oldmaid/taking.py", tuple(f"Taking.{m}" for m in (
                "take_request", "answer_your_turn", "answer_offer"))),
            ("ring/oldmaid/turns.py", tuple(f"Turns.{m}" for m in (
                "seats_to_ask", "drawn", "discarded", "enter_offer_phase", "out_of_cards",
                "went_out", "took", "no_one_took", "give", "answer", "choose_pick", "picked"))),
            ("ring/oldmaid/walk.py", ("Walk.find_taker",)),
            ("ring/oldmaid/picks.py", ("Picks.serve_pick", "Picks.take_pick")),
            ("ring/oldmaid/links.py", ("Links.ask", "Links.link_to")),
        ),
        ("peer", "--name", "{nick}", "--server", "{table}", "--host", "127.0.0.1", "--seed", "1"),
        Table(
            "oldmaid",
            lambda s: ("peer", "--name", "ours", "--server", "{address}", "--host", "127.0.0.1",
                       "--seed", str(s)),
            lambda s: [("peer", "--name", f"p{i}", "--server", "{address}", "--host",
                        "127.0.0.1", "--seed", f"{s}{i}") for i in (1, 2)],
            serve=("--players", "3"),
            normalize=old_maid,
        ),
    ),
}


@dataclass
class Outcome:
    """One mutant's run of the cases, and for a survivor its seeded games."""

    mutant: Mutant
    status: str  # "killed", "survived" or "error" (the checker failed, not the program)
    case: str = ""  # the FAIL (or ERROR) that decided it
    reason: str = ""
    warnings: list[str] = field(default_factory=list)  # "case: reason" of each WARN
    cases_run: int = 0
    seconds: float = 0.0  # the cases
    game_seconds: float = 0.0  # a survivor's seeded games
    equivalence: Equivalence | None = None

    def as_dict(self) -> dict[str, Any]:
        mutant = {k: v for k, v in asdict(self.mutant).items() if k != "source"}
        fields = {k: v for k, v in asdict(self).items() if k not in ("mutant", "equivalence")}
        equivalence = asdict(self.equivalence) if self.equivalence else None
        return {**mutant, **fields, "equivalence": equivalence}


def snapshot(dest: Path) -> Path:
    """The packages as they are now, copied once: every run starts from the same code."""
    for package in PACKAGES:
        shutil.copytree(REPO / package, dest / package, ignore=shutil.ignore_patterns("*.egg-info"))
    return dest


def write_tree(base: Path, tree: Path, mutant: Mutant | None = None) -> Path:
    """A copy of ``base`` with ``mutant`` written in; its stale byte code removed."""
    shutil.copytree(base, tree, symlinks=True)
    if mutant is not None:
        target = tree / mutant.path
        target.write_text(mutant.source)
        for compiled in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
            compiled.unlink()
    return tree


def confined(tree: Path) -> bool:
    """Whether a program started as the checker starts it imports the copy, not the tree."""
    probe = (*ring(tree).argv[:3], "-c", "import ring, services; print(ring.__file__)")
    out = subprocess.run(probe, cwd=tree, capture_output=True, text=True, check=False).stdout
    return out.strip().startswith(str(tree))


def sample(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most ``limit`` of ``mutants``, evenly spread over them (all when ``limit`` is 0)."""
    if limit <= 0 or len(mutants) <= limit:
        return mutants
    return [mutants[i * len(mutants) // limit] for i in range(limit)]


async def until_first_fail(
    cases: Sequence[Case], tree: Path, game: Game, logs: Path, jobs: int, stop: bool = True
) -> list[CaseResult]:
    """The cases against the client in ``tree``; with ``stop``, the rest cancelled at a FAIL."""
    results: list[CaseResult] = []
    with trio.CancelScope() as scope:

        def seen(result: CaseResult) -> None:
            results.append(result)
            if stop and result.verdict is CaseVerdict.FAIL:
                scope.cancel()

        await run_cases(cases, ring(tree, *game.program), logs, jobs=jobs, on_result=seen)
    return results


def judge(mutant: Mutant, results: list[CaseResult], seconds: float) -> Outcome:
    outcome = Outcome(mutant, "survived", cases_run=len(results), seconds=seconds)
    warned = [r for r in results if r.verdict is CaseVerdict.WARN]
    outcome.warnings = [f"{r.case_id}: {r.reason}" for r in warned]
    for verdict, status in ((CaseVerdict.FAIL, "killed"), (CaseVerdict.ERROR, "error")):
        decided = [r for r in results if r.verdict is verdict]
        if decided:
            outcome.status, outcome.case = status, decided[0].case_id
            outcome.reason = decided[0].reason
            break
    return outcome


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s" if seconds >= 60 else f"{seconds:.1f} s"


def measure(game: Game, base: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One game: the baseline, every chosen mutant, the survivors' games; printed as it goes."""
    began = time.monotonic()
    cases = importlib.import_module(f"scenarios.check.{game.name}").cases(args.move_time)
    possible = [m for path, names in game.targets for m in mutate_file(base, path, names)]
    chosen = sample(possible, args.limit)
    print(f"\n{game.name}: {len(chosen)} of {len(possible)} possible mutants, {len(cases)} cases "
          f"at --move-time {args.move_time:g}", flush=True)  # fmt: skip
    report: dict[str, Any] = {"possible": len(possible), "run": len(chosen), "mutants": []}
    with tempfile.TemporaryDirectory(prefix="ring-mutants-") as scratch:
        logs = Path(scratch) / "baseline"
        results = trio.run(until_first_fail, cases, base, game, logs, args.jobs, False)
        bad = [r for r in results if r.verdict is not CaseVerdict.PASS]
        report["baseline"] = {r.case_id: r.verdict.value for r in results}
        if bad:
            for r in bad:
                print(f"  baseline {r.verdict.value} {r.case_id}: {r.reason}")
            print(f"  {game.name}: the unmutated client does not pass every case: not measured")
            report["seconds"] = time.monotonic() - began
            return report
        print(f"  baseline: {len(results)} cases PASS", flush=True)
        references = References(game.table, base)
        seeds = list(range(1, args.seeds + 1))
        outcomes: list[Outcome] = []
        for number, mutant in enumerate(chosen, start=1):
            tree = write_tree(base, Path(scratch) / f"m{number}", mutant)
            started = time.monotonic()
            results = trio.run(until_first_fail, cases, tree, game, tree / "_logs", args.jobs)
            outcome = judge(mutant, results, time.monotonic() - started)
            if outcome.status == "survived" and seeds:
                started = time.monotonic()
                outcome.equivalence = trio.run(mutant_games.compare, references, tree, seeds)
                outcome.game_seconds = time.monotonic() - started
            shutil.rmtree(tree, ignore_errors=True)
            outcomes.append(outcome)
            print(f"  [{number}/{len(chosen)}] {_line(outcome)}", flush=True)
    report["mutants"] = [o.as_dict() for o in outcomes]
    report["seconds"] = time.monotonic() - began
    _summary(game.name, outcomes, report["seconds"])
    return report


def _line(outcome: Outcome) -> str:
    mutant = outcome.mutant
    head = f"{mutant.id} {mutant.where} {mutant.operator}: {mutant.description}"
    if outcome.status != "survived":
        return f"{head}\n      {outcome.status} by {outcome.case}: {outcome.reason[:110]}"
    warned = f" (WARN: {outcome.warnings[0][:80]})" if outcome.warnings else ""
    verdict = outcome.equivalence.line() if outcome.equivalence else "not played"
    return f"{head}\n      survived{warned}: {verdict}"


def _count(outcomes: list[Outcome]) -> dict[str, int]:
    counts = collections.Counter(o.status for o in outcomes)
    counts.update(o.equivalence.verdict for o in outcomes if o.equivalence)
    return {k: counts[k] for k in ("killed", "survived", "equivalent", "gap", "unsure", "error")}


def _summary(name: str, outcomes: list[Outcome], seconds: float) -> None:
    c = _count(outcomes)
    print(f"\n{name}: {len(outcomes)} mutants: {c['killed']} killed, {c['survived']} survived "
          f"({c['equivalent']} equivalent, {c['gap']} gaps, {c['unsure']} unsure), "
          f"{c['error']} checker errors; {_minutes(seconds)} (the cases "
          f"{_minutes(sum(o.seconds for o in outcomes))}, the survivors' games "
          f"{_minutes(sum(o.game_seconds for o in outcomes))})")  # fmt: skip
    killers = collections.Counter(o.case for o in outcomes if o.status == "killed")
    counted = ", ".join(f"{case} {n}" for case, n in killers.most_common())
    print(f"  killed by: {counted or 'no case'}")
    warned = [o for o in outcomes if o.status == "survived" and o.warnings]
    if warned:
        print(f"  survivors with a WARN: {', '.join(o.mutant.id for o in warned)}")
    for verdict in ("gap", "unsure"):
        for o in outcomes:
            if o.equivalence and o.equivalence.verdict == verdict:
                print(f"  {verdict.upper()} {o.mutant.id} {o.mutant.where} {o.mutant.operator}: "
                      f"{o.mutant.description}\n      {o.equivalence.line()}")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.check_mutants",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--game", action="append", choices=sorted(GAMES),
                        help="this game only (repeatable; default: all four)")  # fmt: skip
    parser.add_argument("--limit", type=int, default=LIMIT,
                        help=f"mutants a game, spread over the code (default {LIMIT}; 0: all)")
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"cases at once (default {JOBS})")
    parser.add_argument("--move-time", type=float, default=MOVE_TIME,
                        help=f"the cases' move limit (default {MOVE_TIME:g} s)")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=SEEDS,
                        help=f"seeded games a survivor plays (default {SEEDS}; 0: none)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="every mutant and its outcome")
    args = parser.parse_args(argv)
    games = [GAMES[name] for name in (args.game or GAMES)]
    reports: dict[str, Any] = {}
    status = 0
    with tempfile.TemporaryDirectory(prefix="ring-snapshot-") as scratch:
        base = snapshot(Path(scratch))
        if not confined(base):
            print("a program started from the copy imports the real tree: nothing measured")
            return 1
        for game in games:
            reports[game.name] = measure(game, base, args)
            status = max(status, 0 if reports[game.name]["mutants"] else 1)
    _table(reports)
    if args.json:
        args.json.write_text(json.dumps({"move_time": args.move_time, "games": reports}, indent=1))
    return status


def _table(reports: dict[str, Any]) -> None:
    print("\ngame        possible  run  killed  equivalent  gaps  unsure  errors  time")
    for name, report in reports.items():
        outcomes = report["mutants"]
        verdicts = collections.Counter((o["equivalence"] or {}).get("verdict") for o in outcomes)
        statuses = collections.Counter(o["status"] for o in outcomes)
        print(f"{name:<11} {report['possible']:>8} {report['run']:>4} {statuses['killed']:>7} "
              f"{verdicts['equivalent']:>11} {verdicts['gap']:>5} {verdicts['unsure']:>7} "
              f"{statuses['error']:>7}  {_minutes(report['seconds'])}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
