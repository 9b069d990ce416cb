"""A tournament from its command to its tables: schedule, resume, play, write, rank.

``run`` decides every game first (``schedule``), claims the folder (``DIR/
tournament.json`` with the fingerprint of the games and of everything that
decides them: a folder holding another tournament is refused, never mixed),
and plays only the games that have no result in ``DIR/games`` yet, so the
same command after a Ctrl-C, a kill or a reboot goes on where it stopped.

Each game's files are written into ``DIR/games/<key>/`` (transcript, the
server's log, each program's stdout and stderr) and then its result,
``DIR/games/<key>.json``, atomically and last: a game counts once its result
exists, and only then. A game that could not be played (the runner's own
failure, never a player's) is said on its own line and left without a
result: the next run plays it again. At the end: ``DIR/standings.md``,
``.csv`` and ``.json``, and the Markdown on standard output.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import msgspec

from scenarios.tournament import results
from scenarios.tournament.jobs import Entrant, GameJob, GameOutcome, Settings
from scenarios.tournament.pools import LocalPool, Pool
from scenarios.tournament.progress import Progress
from scenarios.tournament.schedule import Format, ScheduledGame, fingerprint, rings, two_player

CLAIM = "tournament.json"
# What every standings file of a tournament run with --no-sandbox says.
UNBOXED = "unsandboxed"


class TournamentError(Exception):
    """The tournament cannot run; the message is the one line to show."""


@dataclass(frozen=True)
class Tournament:
    game: str
    entrants: tuple[Entrant, ...]
    out: Path
    fmt: Format = Format.ROUND_ROBIN
    games: int = 2
    seed: int = 1
    settings: Settings = field(default_factory=Settings)
    concurrency: int = field(default_factory=lambda: os.cpu_count() or 1)
    ring_size: int = 4  # Old Maid: the players of each ring
    cluster: str | None = None  # a Dask scheduler's address; None: this machine's pool

    @property
    def rings(self) -> bool:
        return self.game == "oldmaid"

    @property
    def names(self) -> list[str]:
        return [entrant.name for entrant in self.entrants]

    def schedule(self) -> list[ScheduledGame]:
        if self.rings:
            return rings(self.names, self.ring_size, self.games, self.seed)
        return two_player(self.names, self.games, self.seed, self.fmt)

    def fingerprint(self, schedule: Sequence[ScheduledGame]) -> str:
        return fingerprint(
            schedule,
            game=self.game,
            entrants=[msgspec.to_builtins(entrant) for entrant in self.entrants],
            ring_size=self.ring_size if self.rings else None,
            **self.settings.decisive(),
        )

    def job(self, game: ScheduledGame, tag_prefix: str) -> GameJob:
        by_name = {entrant.name: entrant for entrant in self.entrants}
        return GameJob(
            game=self.game,
            number=game.number,
            seed=game.seed,
            entrants=tuple(by_name[name] for name in game.players),
            settings=self.settings,
            tag_prefix=tag_prefix,
        )


def run(
    tournament: Tournament,
    *,
    pool: Pool | None = None,
    stream: TextIO | None = None,
    progress_stream: TextIO | None = None,
) -> int:
    """Play what is missing and write the tables; the exit status (130 when stopped).
    The tables go to ``stream`` (standard output), the progress to ``progress_stream``
    (standard error)."""
    out = sys.stdout if stream is None else stream
    schedule = tournament.schedule()
    _check_bounded(tournament)
    mark = tournament.fingerprint(schedule)
    _claim(tournament, mark)
    games_dir = tournament.out / "games"
    done = results.load(games_dir)
    pending = [game for game in schedule if game.number not in done]
    prefix = run_prefix(mark, tournament.out)
    boxed = _probe(tournament)
    pool = pool or _pool(tournament)
    pool.sweep(prefix)
    problems = pool.check(tournament.entrants, tournament.settings.box)
    if problems:
        raise TournamentError(problems[0])
    progress = Progress(len(schedule), list(done.values()), stream=progress_stream)
    progress.note(boxed)
    if done:
        progress.note(f"resuming: {len(done)} of {len(schedule)} games already played")
    unplayed = 0
    try:
        for job, outcome in pool.play([tournament.job(game, prefix) for game in pending]):
            if isinstance(outcome, GameOutcome):
                write_game(games_dir, f"{job.number:05d}", outcome)
                done[job.number] = outcome.result
                progress.game(outcome.result, outcome.worker)
                # the tables as they stand: a live page (ring serve --web --tournament) reads them
                write_standings(tournament, list(done.values()), scheduled=len(schedule))
            else:
                unplayed += 1
                progress.note(f"game {job.number} could not be played: {_said(outcome)}")
    except KeyboardInterrupt:
        pool.stop()
        pool.sweep(prefix)
        progress.close()
        print(
            f"stopped: {len(done)} of {len(schedule)} games played; the same command goes on",
            file=progress.stream,
        )
        return 130
    finally:
        pool.sweep(prefix)
        pool.close()
    progress.close()
    table = write_standings(tournament, list(done.values()), scheduled=len(schedule))
    out.write(table)
    if unplayed:
        print(
            f"{unplayed} games could not be played (said above); the same command plays them",
            file=progress.stream,
        )
        return 1
    return 0


def _check_bounded(tournament: Tournament) -> None:
    """Refuse limits under which a silent program could hold its game for ever."""
    from scenarios.tournament.hosts import HOSTS

    host = HOSTS.get(tournament.game)
    if host is not None and host.game_time(tournament.settings) == math.inf:
        raise TournamentError(
            "a tournament needs a time limit (--move-time or --time-budget above 0): "
            "without one, a program that never answers holds its game for ever"
        )


def _probe(tournament: Tournament) -> str:
    """The one line on how the programs run: in which box, or unboxed."""
    box = tournament.settings.box
    if box is None:
        return f"{UNBOXED}: every program runs as this user and sees the whole machine"
    from scenarios.sandbox.box import SandboxError
    from scenarios.sandbox.probe import probe

    try:
        return probe(box.uids[0][1])
    except SandboxError as exc:
        raise TournamentError(
            f"cannot box the programs: {exc}; --no-sandbox runs them unboxed, only for "
            "programs you trust (docs/tournament.md)"
        ) from None


def _pool(tournament: Tournament) -> Pool:
    if tournament.cluster is None:
        return LocalPool(tournament.concurrency)
    from scenarios.tournament.cluster import ClusterError, DaskPool

    try:
        return DaskPool(tournament.cluster)
    except ClusterError as exc:
        raise TournamentError(str(exc)) from None


def run_prefix(mark: str, out: Path) -> str:
    """The run-token prefix of every program of this tournament in this folder: what a
    killed run left behind is found by it at the next start, and what a run started at its
    end."""
    return "t" + hashlib.sha256(f"{mark}:{out.resolve()}".encode()).hexdigest()[:10]


def _said(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _claim(tournament: Tournament, mark: str) -> None:
    """Make ``out`` this tournament's folder, or refuse one that holds another."""
    out = tournament.out
    claim = out / CLAIM
    if claim.exists():
        held = json.loads(claim.read_text())
        if held.get("fingerprint") != mark:
            raise TournamentError(
                f"{out} holds another tournament (its game, entrants, seed or settings "
                "differ): give another --out"
            )
        return
    if out.exists() and any(out.iterdir()):
        raise TournamentError(f"{out} is not empty and holds no tournament: give another --out")
    out.mkdir(parents=True, exist_ok=True)
    described = {
        "fingerprint": mark,
        "game": tournament.game,
        "format": tournament.fmt.value,
        "games": tournament.games,
        "ring_size": tournament.ring_size if tournament.rings else None,
        "seed": tournament.seed,
        "entrants": [msgspec.to_builtins(entrant) for entrant in tournament.entrants],
        "settings": msgspec.to_builtins(tournament.settings),
    }
    partial = out / f".{CLAIM}.partial"
    partial.write_text(json.dumps(described, indent=2) + "\n")
    os.replace(partial, claim)


def write_game(folder: Path, key: str, outcome: GameOutcome) -> None:
    """The game's files, then its result (atomically, last: then it counts)."""
    files = folder / key
    files.mkdir(parents=True, exist_ok=True)
    for name, data in outcome.files.items():
        (files / name).write_bytes(data)
    results.save(folder, key, outcome.result)


def write_standings(
    tournament: Tournament, finished: list[results.GameResult], *, scheduled: int
) -> str:
    """``standings.md``, ``.csv`` and ``.json`` in the folder (each replaced whole); the
    Markdown. The JSON also says the game and how many games there are in all."""
    out = tournament.out
    ordered = sorted(finished, key=lambda result: result.number)
    if tournament.rings:
        rings_table = results.ring_table(tournament.names, ordered)
        markdown = results.ring_markdown(rings_table)
        rows = results.ring_csv_rows(rings_table)
        as_json = results.ring_json(rings_table)
    else:
        table = results.standings(tournament.names, ordered)
        markdown = results.markdown(table)
        rows = results.csv_rows(table)
        as_json = results.as_json(table)
    described = {"game": tournament.game, "scheduled": scheduled, **as_json}
    if tournament.settings.box is None:
        said = (
            f"{UNBOXED}: this contest ran with --no-sandbox; every program ran as the "
            "runner's user and could see and change the whole machine, these results included"
        )
        markdown = f"**{said}**\n\n{markdown}"
        rows = [[f"# {said}"], *rows]
        described = {"sandbox": said, **described}
    else:
        described = {"sandbox": "every program ran in a box of its own", **described}
    _replace(out / "standings.md", markdown)
    text = io.StringIO()
    csv.writer(text).writerows(rows)
    _replace(out / "standings.csv", text.getvalue())
    _replace(out / "standings.json", json.dumps(described, indent=2) + "\n")
    return markdown


def _replace(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a reader never sees half of it."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)
