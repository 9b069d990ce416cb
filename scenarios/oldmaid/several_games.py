"""``ring scenario GxN-players``: G Old Maid games of N players at once, at one table.

``run_games`` starts one ``ring table --players N --games G --transcripts
DIR`` and then all G*N ``ring peer`` processes (p1, p2, ...) together, as
``scenarios.oldmaid.game`` starts one game's (``oldmaid_game.Run``). Joins
fill the game that is forming and the next one forms as it starts, so the G
rings play side by side against the one table, each game with the first N
joins to reach it.

Which peer plays in which game depends on the join order, so the peers are
grouped afterwards (``group_peers``): a peer's ``start`` record names its
game's seat order, which is the ``started`` record of exactly one game
transcript. Each game is then verified exactly as ``ring scenario
N-players`` verifies its one game (``oldmaid_game.verify_game``), over that
game's transcript, its peers' logs and exit codes, and the table's exit code
and its ``game K: game over: ...`` line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios.oldmaid.game import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    TABLE,
    Run,
    ScenarioResult,
    finding_lines,
    peer_seeds,
    stderr_lines,
    summary_lines,
    verify_game,
)
from scenarios.oldmaid.verifier import verify
from scenarios.processes import ProcessResult, ring_command
from services.oldmaid.table.outcome import game_seed

MIN_GAMES, MAX_GAMES = 2, 4

Record = dict[str, Any]


@dataclass
class GamesResult:
    games: int
    players: int
    seed: int  # the table's; each game's own is in its result
    workdir: Path
    processes: dict[str, ProcessResult] = field(default_factory=dict)
    # One per game, in game order: that game's processes (the table and its
    # peers), records, summary and checks.
    results: list[ScenarioResult] = field(default_factory=list)
    started: float | None = None  # time.monotonic() as the first process started
    wall_time: float | None = None  # first process start to last exit
    still_running: list[str] = field(default_factory=list)  # at the deadline
    # The run itself went wrong: the table never listened, a timeout, or a
    # peer that cannot be placed in exactly one game.
    error: str | None = None

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and len(self.results) == self.games
            and all(game.ok for game in self.results)
        )


def transcript_path(workdir: Path, number: int) -> Path:
    """Where ``ring table --transcripts WORKDIR`` writes game ``number``."""
    return workdir / f"game-{number:06d}.jsonl"


def run_games(
    games: int, players: int, seed: int, *, workdir: Path, timeout: float = 60
) -> GamesResult:
    """Play ``games`` games of ``players`` at one table, all at once, then verify each.

    One deadline, ``timeout`` seconds after the start, covers everything;
    processes still running then are killed and named in ``still_running``.
    """
    if not MIN_GAMES <= games <= MAX_GAMES:
        raise ValueError(f"this scenario plays {MIN_GAMES} to {MAX_GAMES} games")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"an Old Maid game has {MIN_PLAYERS} to {MAX_PLAYERS} players")
    workdir.mkdir(parents=True, exist_ok=True)
    result = GamesResult(games=games, players=players, seed=seed, workdir=workdir)
    numbers = range(1, games + 1)
    # A transcript or log left from an earlier run (--keep DIR) must not be read as this one's.
    for number in numbers:
        transcript_path(workdir, number).unlink(missing_ok=True)
    nicks = [f"p{i}" for i in range(1, games * players + 1)]
    event_logs = {nick: workdir / f"{nick}.events.jsonl" for nick in nicks}
    for path in event_logs.values():
        path.unlink(missing_ok=True)
    ring = ring_command()
    run = Run(workdir, timeout)
    try:
        options = ["--players", str(players), "--games", str(games), "--transcripts", str(workdir)]
        listening = run.start_table(ring, options, seed)
        if isinstance(listening, str):
            result.error = listening
        else:
            run.start_peers(ring, nicks, peer_seeds(seed, len(nicks)), event_logs, listening)
            result.wall_time = run.wait()
    finally:
        run.kill()
    result.started = run.started
    result.processes = run.results()
    result.still_running = run.still_running
    exits, lines = run.exits(), run.lines()

    transcripts = {
        number: verify.load_records(transcript_path(workdir, number), {}).transcript
        for number in numbers
    }
    groups, problems = group_peers(transcripts, verify.load_records(None, event_logs).events)
    # A peer of no game is in no game's exit check.
    placed = {nick for group in groups.values() for nick in group}
    for nick in nicks:
        if nick not in placed and exits.get(nick, 0) not in (0, None):
            problems.append(f"{nick} exited {exits[nick]}")
    for number in numbers:
        started = started_players(transcripts[number])
        if started is not None and len(started) != players:
            problems.append(f"game {number} seated {len(started)} players, not {players}")
        group = groups[number]
        game = ScenarioResult(
            players=players, seed=game_seed_of(transcripts[number], seed, number), workdir=workdir
        )
        names = [TABLE, *group]
        game.processes = {
            name: result.processes[name] for name in names if name in result.processes
        }
        game.still_running = [name for name in result.still_running if name in names]
        game_lines = {nick: lines[nick] for nick in group if nick in lines}
        if TABLE in lines:
            game_lines[TABLE] = table_lines(lines[TABLE], number)
        verify_game(
            game,
            transcript_path(workdir, number),
            {nick: event_logs[nick] for nick in group},
            {name: exits[name] for name in names if name in exits},
            game_lines,
        )
        result.results.append(game)
    error = "; ".join([*([result.error] if result.error else []), *problems]) or None
    result.error = run.late(error)
    return result


def started_players(transcript: list[Record]) -> list[str] | None:
    """The seat order of a game's ``started`` record; None if the game never started."""
    for record in transcript:
        if record.get("event") == "started":
            return [str(nick) for nick in record.get("players") or []]
    return None


def game_seed_of(transcript: list[Record], table_seed: int, number: int) -> int:
    """The seed the transcript's ``listening`` record gives the game, else the table's rule."""
    for record in transcript:
        if record.get("event") == "listening" and isinstance(record.get("seed"), int):
            return record["seed"]
    return game_seed(table_seed, number)


def group_peers(
    transcripts: Mapping[int, list[Record]], events: Mapping[str, list[Record]]
) -> tuple[dict[int, list[str]], list[str]]:
    """The peers (nicks, in ``events`` order) of each game, and what does not fit.

    A peer belongs to the game whose ``started`` record has the seat order of
    the peer's own ``start`` record. A peer that logged no ``start`` (it
    failed before its join reply) goes to the game that seated it, if any, so
    that game's checks show what is missing. A peer in no game, or whose
    ``start`` matches no game, is a problem.
    """
    started = {number: started_players(t) for number, t in transcripts.items()}
    groups: dict[int, list[str]] = {number: [] for number in transcripts}
    problems: list[str] = []
    nowhere: list[str] = []
    for nick, log in events.items():
        starts = [e for e in log if e.get("event") == "start"]
        own = [str(n) for n in starts[0].get("players") or []] if starts else None
        by_own = [n for n, seats in started.items() if own is not None and seats == own]
        by_table = [n for n, seats in started.items() if seats is not None and nick in seats]
        homes = by_own or by_table
        if own is not None and not by_own:
            problems.append(f"{nick} logged the seating {own}, which no game started with")
        if not homes:
            nowhere.append(nick)
        elif len(homes) > 1:
            problems.append(f"{nick} was seated in games {', '.join(map(str, homes))}")
        for number in homes:
            groups[number].append(nick)
    if nowhere:
        problems.append(f"seated in no game: {', '.join(nowhere)}")
    return groups, problems


def table_lines(stdout: list[str], number: int) -> list[str]:
    """The table's lines about game ``number``, as ``ring table`` prints them for one game.

    With several games it prints ``game N: game over: ...``; without such a
    line the check gets the whole output, to show what the table said instead.
    """
    prefix = f"game {number}: "
    mine = [line.strip() for line in stdout if line.strip().startswith(prefix)]
    return [line.removeprefix(prefix) for line in mine] or list(stdout)


def played(result: GamesResult, game: ScenarioResult) -> str:
    """When the game started and ended, in seconds from the start of the run (the
    transcripts' ``t`` is the same monotonic clock): the games overlap."""
    if game.records is None or result.started is None:
        return ""
    times = []
    for events in (("started",), ("over", "aborted")):
        found = [r["t"] for event in events for r in verify.table_events(game.records, event)]
        times.append("?" if not found else f"{found[0] - result.started:.3f} s")
    return f", played {times[0]} to {times[1]}"


def format_games(result: GamesResult) -> str:
    """The summary ``ring scenario GxN-players`` prints: each game's as ``N-players`` prints
    it, prefixed with the game's number."""
    name = f"{result.games}x{result.players}-players"
    lines = [
        f"scenario {name}, seed {result.seed}",
        f"  games     {result.games} of {result.players} players at one table, "
        f"{result.games * result.players} peers",
    ]
    wall = "n/a" if result.wall_time is None else f"{result.wall_time:.3f} s"
    lines.append(f"  wall time {wall}")
    for number, game in enumerate(result.results, 1):
        prefix = f"game {number}: "
        transcript = transcript_path(result.workdir, number).name
        lines.append(f"{prefix}seed {game.seed}, transcript {transcript}{played(result, game)}")
        lines += [prefix + line for line in [*summary_lines(game), *finding_lines(game.findings)]]
    if result.error:
        lines.append(f"ERROR {result.error}")
    if not result.ok:
        lines += stderr_lines(result.processes.values())
    return "\n".join(lines)
