"""One Old Maid ring of a tournament: our real table, its K programs as peers, the places.

The table is ``services.oldmaid.table.server.serve_table`` (the same referee, deal,
verification and aborts as ``ring table``), for one game of K players,
seeded with the game's seed. Each program is started with programs.md 1's
placeholders ({table} and {nick} among them) and known by its nick: a ring's
peers dial each other, so there is no port per seat to tell them apart. The
table starts the game once all K have joined, or ``connect_within`` after
the second join with those who came (the table's ``start_after``): a
program that never joins loses that ring alone, and the others still play.

Places: first out first, then the loser; every player at fault (it did not
join, crashed, left, or an abort names it) comes after the loser, and has
lost that ring too. A game aborted with a culprit counts only against the
culprit (``places`` None: nobody else has a place in it); one aborted with
no culprit blames no one and counts for no one.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import trio

from ring.cli.client_args import Names
from ring.games.record import GameKey, RecordHub
from ring.games.seeds import keyed_seed
from scenarios.programs import Program, ProgramError, RunningProgram
from scenarios.sandbox import BoxNetwork, box_network
from scenarios.tournament import boxes
from scenarios.tournament.jobs import GameJob
from scenarios.tournament.results import GameResult
from scenarios.tournament.two_player import played_span, program_files

HOST = "127.0.0.1"
# A game is aborted when nothing moves for this long (the table's turn_timeout); a
# ring's game has at most this many moves (draws, discards, outs) of 53 cards.
TURN_TIMEOUT = 30.0
MOVES = 120
TITLE = "Old Maid"
LEVELS = ("peer",)  # the built-in player: ring peer
NAMES = Names("1-32 of A-Z a-z 0-9 _ -", lambda text: _is_nick(text))


def _is_nick(text: str) -> bool:
    return 1 <= len(text) <= 32 and all(c.isascii() and (c.isalnum() or c in "_-") for c in text)


def builtin_command(job: GameJob, seat: int) -> list[str]:
    """``ring peer``, seeded from the game's seed."""
    seed = keyed_seed(job.seed, "builtin", seat) % 2**63
    return [sys.executable, "-m", "ring", "peer", "--name", "{nick}", "--server", "{table}",
            "--host", HOST, "--port", "0", "--seed", str(seed)]  # fmt: skip


def game_time(job: GameJob) -> float:
    return job.settings.connect_within + MOVES * TURN_TIMEOUT


async def play(job: GameJob, logs: Path) -> tuple[GameResult, dict[str, bytes]]:
    """Play the ring; its result and its files. Boxed, the ring's programs share one
    network namespace (they dial each other), where the table listens."""
    async with contextlib.AsyncExitStack() as stack:
        network = None
        if job.settings.box is not None:
            network = await stack.enter_async_context(box_network())
        return await _played(job, logs, network)


async def _played(
    job: GameJob, logs: Path, network: BoxNetwork | None
) -> tuple[GameResult, dict[str, bytes]]:
    from services.oldmaid.table.config import TableConfig
    from services.oldmaid.table.server import ServerError, serve_table

    settings = job.settings
    names = [entrant.name for entrant in job.entrants]
    records: list[bytes] = []
    encoder = msgspec.json.Encoder()
    started, ended = trio.Event(), trio.Event()
    joined: set[str] = set()
    unverified: set[str] = set()  # refused at a --verified table: joined without verify
    outcomes: list[Any] = []

    def record(key: GameKey, line: dict[str, Any]) -> None:
        records.append(encoder.encode(line))
        if line.get("event") == "start":
            started.set()

    hub = RecordHub()
    hub.subscribe(record)
    config = TableConfig(
        players=len(names),
        host=HOST,
        port=0,
        seed=job.seed,
        games=1,
        hub=hub,
        idle_timeout=settings.connect_within,
        start_after=settings.connect_within,
        wait_timeout=None,
        turn_timeout=TURN_TIMEOUT,
        verified=settings.verified,
        linger=settings.exit_within,
        advertise=False,
        on_join=joined.add,
        on_unverified=unverified.add,
        expected=frozenset(names),
        listener=None if network is None else await network.listen(HOST),
        admit=None if network is None else boxes.admitting(job, network),
    )

    async def serve(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
        outcomes.append(await serve_table(config, task_status=task_status))
        ended.set()

    began = time.monotonic()
    runs: list[RunningProgram | None] = [None] * len(names)
    programs: list[Program | None] = [None] * len(names)
    faults: dict[str, str] = {}
    async with trio.open_nursery() as nursery:
        try:
            host, port = await nursery.start(serve)
        except ServerError as exc:
            raise RuntimeError(f"the table could not start: {exc}") from None
        table = f"{host}:{port}"
        values = {"host": host, "port": str(port), "address": table, "table": table}
        try:
            async def start(seat: int) -> None:
                programs[seat] = _program(job, seat, network)
                runs[seat] = await _start(programs[seat], job, seat, values, logs, faults)

            # All at once: a box's start waits on the kernel (its control group) for ~15 ms.
            async with trio.open_nursery() as starting:
                for seat in range(len(names)):
                    starting.start_soon(start, seat)
            # The table starts once all have joined, or connect_within after the second.
            with trio.move_on_after(2 * settings.connect_within + 1):
                await started.wait()
            if started.is_set():
                with trio.move_on_after(game_time(job)):
                    await ended.wait()
                if not ended.is_set():
                    raise RuntimeError(f"ring {job.number} did not end within {game_time(job):g} s")
        finally:
            # How each had ended before we stop them all (a stop is no crash of theirs).
            exits = [None if run is None else run.status for run in runs]
            with trio.CancelScope(shield=True):
                programs_ended = await _stop(runs, settings.exit_within)
            nursery.cancel_scope.cancel()
    outcome = outcomes[0] if outcomes else None
    for name in unverified - joined:
        faults.setdefault(
            name,
            'joined without "verify":true and "witness":true, which a --verified tournament '
            "refuses (docs/protocols/oldmaid.md 14.5, 14.6)",
        )
    result = _judged(job, outcome, joined, runs, exits, faults, began)
    result = msgspec.structs.replace(result, played=round(played_span(runs, programs_ended), 6))
    files = {"transcript.jsonl": b"".join(line + b"\n" for line in records)}
    files["boxes.json"] = json.dumps(boxes.described(job, programs), indent=2).encode()
    return result, files | program_files(job, logs)


def _program(job: GameJob, seat: int, network: BoxNetwork | None) -> Program:
    entrant = job.entrants[seat]
    argv = tuple(builtin_command(job, seat)) if entrant.level else entrant.command
    return boxes.program(job, seat, argv, network)


async def _start(
    program: Program,
    job: GameJob,
    seat: int,
    values: dict[str, str],
    logs: Path,
    faults: dict[str, str],
) -> RunningProgram | None:
    entrant = job.entrants[seat]
    named = values | {"nick": entrant.name, "name": entrant.name}
    try:
        return await program.start(named, logs, f"seat{seat}")
    except ProgramError as exc:
        faults[entrant.name] = f"did not start ({exc})"
        return None


async def _stop(runs: list[RunningProgram | None], exit_within: float) -> float:
    """Each program has ``exit_within`` to exit; then all is killed. When they had ended."""
    with trio.move_on_after(exit_within):
        for run in runs:
            if run is not None:
                await run.process.wait()
    ended = trio.current_time()
    for run in runs:
        if run is not None:
            await run.stop()
    return ended


def _judged(
    job: GameJob,
    outcome: Any,
    joined: set[str],
    runs: list[RunningProgram | None],
    exits: list[int | None],
    faults: dict[str, str],
    began: float,
) -> GameResult:
    names = [entrant.name for entrant in job.entrants]
    within = f"{job.settings.connect_within:g} s"
    for seat, name in enumerate(names):
        if name in faults or name in joined:
            continue
        run = runs[seat]
        if run is not None and exits[seat] not in (None, 0):
            faults[name] = f"crashed ({run.describe_exit()}) before its game began"
        elif run is not None and exits[seat] == 0:
            faults[name] = "exited (status 0) without joining the table"
        else:
            faults[name] = f"did not join the table within {within}"
    if outcome is None:  # fewer than two ever joined: the ring never began
        reason = "the ring never began: " + "; ".join(f"{n} {w}" for n, w in faults.items())
        return GameResult(job.number, names, str(job.seed), reason, faults=faults,
                          seconds=time.monotonic() - began)  # fmt: skip
    culprit = outcome.culprit if outcome.culprit in names else None
    if culprit is not None:
        seat = names.index(culprit)
        run = runs[seat]
        if run is not None and exits[seat] not in (None, 0):
            faults[culprit] = f"crashed ({run.describe_exit()})"
        else:
            rule = f" ({outcome.rule})" if outcome.rule else ""
            faults[culprit] = f"was named by the referee{rule}: {outcome.reason}"
    from services.oldmaid.referee.rules import GameState

    places: list[str] | None
    if outcome.state is GameState.OVER and outcome.loser is not None:
        ranked = [p for p in outcome.out if p not in faults and p != outcome.loser]
        rest = [p for p in outcome.players if p not in ranked and p not in faults]
        places = ranked + [p for p in rest if p != outcome.loser] + [outcome.loser]
        places += [name for name in names if name in faults]
        reason = f"{outcome.loser} holds the Old Maid; out: {', '.join(outcome.out) or '-'}"
    else:
        places = None
        reason = f"aborted: {outcome.reason}" if outcome.reason else "aborted"
    if faults:
        reason += "; " + "; ".join(f"{name} {why}" for name, why in faults.items())
    return GameResult(
        number=job.number,
        players=names,
        seed=str(job.seed),
        reason=reason,
        places=places,
        faults=faults,
        seconds=time.monotonic() - began,
    )
