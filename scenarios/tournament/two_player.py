"""One two-player game of a tournament: its server, its two programs, and the verdict.

The game's own server (``hosts``) plays it; the runner listens on one
loopback port per seat and hands the first connection on each to the server
with that seat (``Lobby.handle``'s ``seat``), so a program is known by the
port it dialled, never by the name it gives (two programs may well both call
themselves "client"). A later connection on a seat's port is closed and
logged. Each program is started with programs.md 1's placeholders, that seat's
port among them, under the tournament's limits.

The game goes in three steps, each with its deadline:

1. **Joining.** Every program has ``connect_within`` from its start to take
   its seat (connect and introduce itself). One that cannot be started, that
   exits with an error first, or that has not taken its seat by then loses,
   and its reason says which; if both fail, neither wins (a draw for the
   ratings, a fault for each).
2. **The game**, under the server's clocks (move time, time budget, send
   timeouts). If it has not ended by the game's longest time by those clocks
   (``TwoPlayerHost.game_time``), the runner gives up on it: no result, no
   one blamed, the game is played again on a resume.
3. **The exit.** Each program has ``exit_within`` to exit; then its process
   group and every process carrying its run token is killed.

The verdict is the server's: the match's winner, and for a forfeit the
match's own finding (``ring.games.match.Fault``), made specific here from what the
program did: a connection that closed because its program died is a crash
("crashed (exited with status 1)"), not a leave.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import msgspec
import trio

from ring.games.match import Fault, Match
from ring.games.record import GameKey, RecordHub
from scenarios.programs import Program, ProgramError, RunningProgram
from scenarios.sandbox import BoxNetwork, box_network
from scenarios.tournament import boxes
from scenarios.tournament.hosts import HOST, TwoPlayerHost
from scenarios.tournament.jobs import GameJob
from scenarios.tournament.results import GameResult

# After a connection closed, how long its program has to be seen exiting for the close
# to count as a crash: a dying process closes its sockets just before it is reaped.
EXIT_AFTER_CLOSE = 1.0
# How long the server has to end its game once the runner stops it.
STOP_TIMEOUT = 2.0

FAULT_WORDS = {
    Fault.TIMED_OUT: "timed out",
    Fault.FLOODED: "flooded the server (sent too much out of turn)",
    Fault.REFUSED: "sent moves the server refused, too many in a row (illegal or garbled)",
}


class Unfinished(Exception):
    """The game did not end by its own clocks: the runner's failure, blaming no one."""


class TwoPlayerGame:
    """One game's state while it is played (``play`` drives it)."""

    def __init__(self, job: GameJob, host: TwoPlayerHost, logs: Path) -> None:
        self.job = job
        self.host = host
        self.logs = logs
        self.records: list[bytes] = []
        self.end: dict[str, Any] = {}  # the game's end record
        self.server_log: list[str] = []
        self.hub = RecordHub()
        self.hub.subscribe(self._record)
        self.server = host.server(job, self.hub)
        # The server's log lines are the game's evidence: kept with it, not on our stderr.
        self.server.log = self.log  # type: ignore[method-assign]
        self.match: Match[Any] | None = None
        self.server.arena.on_begin = self._begun
        self.server.arena.on_match = self._ended
        self.begun = trio.Event()
        self.over = trio.Event()
        self.changed = trio.Event()
        self.connected = [False, False]
        self.runs: list[RunningProgram | None] = [None, None]
        self.programs: list[Program | None] = [None, None]
        self.faults: dict[int, str] = {}
        self.programs_ended: float | None = None  # when the last program had ended
        self._encoder = msgspec.json.Encoder()

    def _record(self, key: GameKey, record: dict[str, Any]) -> None:
        self.records.append(self._encoder.encode(record))
        if record.get("event") == "end":
            self.end = record

    def log(self, line: str) -> None:
        self.server_log.append(f"{time.monotonic():.3f} {line}")

    def _begun(self, match: Match[Any]) -> None:
        self.begun.set()
        self._poke()

    def _ended(self, match: Match[Any]) -> None:
        self.match = match
        self.over.set()
        self._poke()

    def _poke(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    # -- the seats' doors --------------------------------------------------------------

    async def door(self, seat: int, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        """The seat's port: its first connection plays; any later one is closed."""
        while True:
            stream = await listener.accept()
            if self.connected[seat]:
                self.log(f"seat {seat}: a second connection, closed")
                await stream.aclose()
                continue
            self.connected[seat] = True
            self._poke()
            nursery.start_soon(self.server.handle, stream, seat)

    # -- the programs ----------------------------------------------------------------------

    async def start(self, seat: int, port: int, network: BoxNetwork | None) -> None:
        entrant = self.job.entrants[seat]
        if entrant.level is not None:
            argv = tuple(self.host.builtin_command(entrant.level, self.job, seat))
        else:
            argv = entrant.command
        program = boxes.program(self.job, seat, argv, network)
        self.programs[seat] = program
        values = {"host": HOST, "port": str(port), "address": f"{HOST}:{port}"}
        values["name"] = entrant.name
        if self.host.seat_values:
            values["seat"] = str(seat)
        try:
            self.runs[seat] = await program.start(values, self.logs, f"seat{seat}")
        except ProgramError as exc:
            self.faults[seat] = f"did not start ({exc})"
            self._poke()

    async def watch_exit(self, seat: int) -> None:
        """Poke when the program exits (a crash before joining decides at once)."""
        running = self.runs[seat]
        if running is None:
            return
        await running.process.wait()
        self._poke()

    def joined(self, seat: int) -> bool:
        return self.begun.is_set() or self.host.joined(self.server, seat)

    def join_fault(self, seat: int, final: bool) -> str | None:
        """Why ``seat`` cannot play: at once for a program that failed, else at the deadline."""
        if seat in self.faults:
            return self.faults[seat]
        if self.joined(seat):
            return None
        running = self.runs[seat]
        assert running is not None
        failed = running.exited and running.status != 0
        if failed:
            return f"crashed ({running.describe_exit()}) before its game began"
        if not final:
            return None
        within = f"{self.job.settings.connect_within:g} s"
        if running.exited:
            return f"exited ({running.describe_exit()}) without joining its game"
        if self.connected[seat]:
            return f"connected but did not join its game within {within}"
        return f"did not connect within {within}"

    async def culprit_fault(self, seat: int, fault: Fault | None, reason: str) -> str:
        """The loser's fault, said from what its program did."""
        running = self.runs[seat]
        if fault is Fault.LEFT and running is not None:
            await running.wait(EXIT_AFTER_CLOSE)
            if running.exited and running.status != 0:
                return f"crashed ({running.describe_exit()})"
            if running.exited:
                return f"left (it {running.describe_exit()} during its game)"
            return "left (it closed its connection during its game)"
        if fault in FAULT_WORDS:
            return FAULT_WORDS[fault]
        return f"broke the rules ({reason})"


async def play(
    job: GameJob, host: TwoPlayerHost, logs: Path
) -> tuple[GameResult, dict[str, bytes]]:
    """Play ``job``; its result and its files. Raises ``Unfinished`` if it never ends."""
    game = TwoPlayerGame(job, host, logs)
    began = time.monotonic()
    settings = job.settings
    async with contextlib.AsyncExitStack() as stack:
        # Boxed, each seat has a network namespace of its own, holding only its listener.
        networks: list[BoxNetwork | None] = [None, None]
        if settings.box is not None:
            networks = [await stack.enter_async_context(box_network()) for _ in range(2)]
        result = await _served(game, networks, began)
    result = msgspec.structs.replace(
        result, played=round(played_span(game.runs, game.programs_ended), 6)
    )
    return result, _files(game)


async def _served(
    game: TwoPlayerGame, networks: list[BoxNetwork | None], began: float
) -> GameResult:
    """The game played with a door on each seat's port (in the seat's network, if boxed)."""
    settings = game.job.settings
    listeners = [
        await network.listen(HOST) if network else (await trio.open_tcp_listeners(0, host=HOST))[0]
        for network in networks
    ]
    ports = [listener.socket.getsockname()[1] for listener in listeners]
    try:
        async with trio.open_nursery() as served:
            for seat, listener in enumerate(listeners):
                served.start_soon(game.door, seat, listener, served)
            try:
                result = await _play(game, ports, networks, began)
            finally:
                with trio.CancelScope(shield=True):
                    await _stop_programs(game, settings.exit_within)
                    game.server.arena.stop("the tournament stopped the game")
                served.cancel_scope.cancel()
            await game.server.aclose()
    finally:
        for listener in listeners:
            with contextlib.suppress(trio.ClosedResourceError):
                await listener.aclose()
    return result


def played_span(runs: list[RunningProgram | None], ended: float | None) -> float:
    """Seconds from the first program's start to ``ended`` (0 when none started)."""
    starts = [run.started for run in runs if run is not None]
    if not starts or ended is None:
        return 0.0
    return max(0.0, ended - min(starts))


async def _play(
    game: TwoPlayerGame, ports: list[int], networks: list[BoxNetwork | None], began: float
) -> GameResult:
    job, settings = game.job, game.job.settings
    async with trio.open_nursery() as watchers:
        # Both at once: a box's start waits on the kernel (its control group) for ~15 ms.
        async with trio.open_nursery() as starting:
            for seat in (0, 1):
                starting.start_soon(game.start, seat, ports[seat], networks[seat])
        for seat in (0, 1):
            watchers.start_soon(game.watch_exit, seat)
        deadline = trio.current_time() + settings.connect_within
        # 1. joining
        while not game.begun.is_set():
            faults = {seat: game.join_fault(seat, final=False) for seat in (0, 1)}
            resolved = all(faults[s] is not None or game.joined(s) for s in (0, 1))
            if any(faults.values()) and resolved:
                break
            if trio.current_time() >= deadline:
                break
            with trio.move_on_at(deadline):
                await game.changed.wait()
        if not game.begun.is_set():
            watchers.cancel_scope.cancel()
            faults = {s: game.join_fault(s, final=True) for s in (0, 1)}
            return _forfeited(job, {s: f for s, f in faults.items() if f}, began)
        # 2. the game, by its own clocks
        limit = game.host.game_time(settings)
        with trio.move_on_after(limit):
            await game.over.wait()
        watchers.cancel_scope.cancel()
    if game.match is None or game.match.verdict is None:
        raise Unfinished(f"game {job.number} did not end within {limit:g} s by its own clocks")
    return await _judged(game, game.match, began)


def _forfeited(job: GameJob, faults: dict[int, str], began: float) -> GameResult:
    names = [entrant.name for entrant in job.entrants]
    by_name = {names[seat]: why for seat, why in faults.items()}
    if len(faults) == 2:
        scores = [0.5, 0.5]
        reason = f"neither played: {names[0]} {faults[0]}; {names[1]} {faults[1]}"
    else:
        ((seat, why),) = faults.items()
        scores = [0.0, 1.0] if seat == 0 else [1.0, 0.0]
        reason = f"{names[seat]} {why}; {names[1 - seat]} wins"
    return GameResult(
        number=job.number,
        players=names,
        seed=str(job.seed),
        reason=reason,
        scores=scores,
        faults=by_name,
        seconds=time.monotonic() - began,
    )


async def _judged(game: TwoPlayerGame, match: Match[Any], began: float) -> GameResult:
    job = game.job
    verdict = match.verdict
    assert verdict is not None
    names = [entrant.name for entrant in job.entrants]
    # The match's seats in entrant order: a server may seat by arrival (FishNet does).
    entrant_of = [
        seat if (assigned := getattr(player, "assigned", None)) is None else assigned
        for seat, player in enumerate(match.players)
    ]
    faults: dict[str, str] = {}
    how = verdict.reason
    if game.host.score_line is not None and game.end.get("details"):
        line = game.host.score_line(game.end["details"], [names[e] for e in entrant_of])
        how += f", {line}" if line else ""
    if verdict.winner is None:
        scores = [0.5, 0.5]
        reason = f"a draw ({how})"
    else:
        winner = entrant_of[verdict.winner]
        scores = [1.0, 0.0] if winner == 0 else [0.0, 1.0]
        reason = f"{names[winner]} wins ({how})"
    if verdict.culprit is not None:
        culprit = entrant_of[verdict.culprit]
        why = await game.culprit_fault(culprit, match.fault, verdict.reason)
        faults[names[culprit]] = why
        reason = f"{names[culprit]} {why}; {names[1 - culprit]} wins"
    times = {names[entrant_of[seat]]: match.turn_times[seat] for seat in (0, 1)}
    return GameResult(
        number=job.number,
        players=names,
        seed=str(job.seed),
        reason=reason,
        scores=scores,
        faults=faults,
        move_times={name: [round(t, 6) for t in times[name]] for name in names},
        seconds=time.monotonic() - began,
    )


async def _stop_programs(game: TwoPlayerGame, exit_within: float) -> None:
    """Each program has ``exit_within`` to exit by itself; then all it started is killed."""
    running = [run for run in game.runs if run is not None]
    with trio.move_on_after(exit_within):
        for run in running:
            await run.process.wait()
    game.programs_ended = trio.current_time()
    for seat, run in enumerate(game.runs):
        if run is None:
            continue
        lingered = not run.exited
        await run.stop()
        if lingered and game.begun.is_set():
            game.log(f"seat {seat}: did not exit within {exit_within:g} s of its game; stopped")


def _files(game: TwoPlayerGame) -> dict[str, bytes]:
    files = {"transcript.jsonl": b"".join(line + b"\n" for line in game.records)}
    files["server.log"] = "".join(line + "\n" for line in game.server_log).encode()
    files["boxes.json"] = json.dumps(boxes.described(game.job, game.programs), indent=2).encode()
    return files | program_files(game.job, game.logs)


def program_files(job: GameJob, logs: Path) -> dict[str, bytes]:
    """Each program's stdout and stderr (their ends, past ``OUTPUT_KEPT``), by entrant."""
    from scenarios.tournament.jobs import OUTPUT_KEPT

    files = {}
    for seat, entrant in enumerate(job.entrants):
        for stream in ("stdout", "stderr"):
            path = logs / f"seat{seat}.{stream}"
            files[f"{entrant.name}.{stream}"] = _tail(path, OUTPUT_KEPT)
    return files


def _tail(path: Path, limit: int) -> bytes:
    try:
        with path.open("rb") as file:
            size = file.seek(0, 2)
            if size <= limit:
                file.seek(0)
                return file.read()
            file.seek(size - limit)
            return b"[... %d bytes cut ...]\n" % (size - limit) + file.read()
    except OSError:
        return b""
