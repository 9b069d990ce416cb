"""Faults that must end cleanly: a table and peers as OS processes, then a fault.

``ring scenario fault-kill-peer``
    SIGKILL the first peer to log ``phase: offer`` holding three cards or more. The table
    must abort the game naming it (transcript, ``status``, watchers, its last
    line and exit status 1), and every other peer must exit non-zero within
    5 s with one line on stderr and no traceback.
``ring scenario fault-kill-table``
    SIGKILL the table once the last card is dealt: every peer exits non-zero
    within 5 s, one line each.
``ring scenario fault-stop-peer``
    SIGSTOP seat 2 while it waits for the game to start, so player1's first
    ``your_turn`` waits on it. The game is witnessed (``ring peer`` joins with
    verify and witness), so player1 does not give up: 2 s after its draw the
    table hands the stopped player the draw turn, and 2 s later names it
    (``no_answer``, protocol 14.6 "The draw turn"), never the one that waited
    for it; everyone else exits within 5 s. The stopped peer is then resumed
    and must end by itself too.

Every moment is chosen from the logs (or, for a join, which the transcript
keeps until the game starts, from the table's ``status``), not from a clock,
and the seed fixes the game, so a run is reproducible. Whatever happens,
every process started here is killed and reaped before the scenario returns.

Here are the three faults and ``ring scenario fault-...``; the game they
interrupt and the watching of its logs and processes are
``scenarios.oldmaid.fault_game``, and what a run found and its checks
``scenarios.oldmaid.fault_findings``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import tempfile
import time
from pathlib import Path

from scenarios import processes
from scenarios.oldmaid import game as oldmaid_game
from scenarios.oldmaid.fault_findings import (
    FaultResult,
    exit_findings,
    seconds,
    status_finding,
    stop_peer_findings,
    table_abort_findings,
    watcher_finding,
)
from scenarios.oldmaid.fault_game import (
    FaultGame,
    LogTail,
    Record,
    StatusPoller,
    wait_exits,
    watch,
)
from scenarios.oldmaid.game import TABLE
from services.oldmaid.verified.draw_clock import DRAW_WAIT
from services.oldmaid.verified.witness import MOVE_TIMEOUT

NAMES = ("fault-kill-peer", "fault-kill-table", "fault-stop-peer")
PLAYERS = 6
KILL_HAND = 3  # cards the victim of fault-kill-peer holds as the offers begin, at least
EXIT_BOUND = 5.0  # seconds from the fault (or the first failure) to every exit
STOP_PEER_TIMEOUT = 2.0  # the peers' --peer-timeout in fault-stop-peer
# fault-stop-peer: the table hands the draw turn on 2 s after a draw and names the player
# that then does not draw 2 s later (protocol 14.6); the rest is slack for a loaded machine.
NAMED_WITHIN = DRAW_WAIT + MOVE_TIMEOUT + 2.0
JOIN_POLL = 0.05  # seconds between status requests while fault-stop-peer waits for a join


# -- one game with a fault -----------------------------------------------------------


def run_fault(
    name: str,
    seed: int = oldmaid_game.DEFAULT_SEED,
    *,
    workdir: Path,
    timeout: float = 60.0,
    players: int = PLAYERS,
) -> FaultResult:
    """Play one game as OS processes, inflict the fault ``name`` on it, and check the end."""
    if name not in NAMES:
        raise ValueError(f"unknown fault scenario {name!r}")
    workdir.mkdir(parents=True, exist_ok=True)
    result = FaultResult(name=name, players=players, seed=seed, workdir=workdir)
    stopping = name == "fault-stop-peer"
    peer_args = ["--peer-timeout", f"{STOP_PEER_TIMEOUT:g}"] if stopping else []
    game = FaultGame(players, seed, workdir, peer_args)
    deadline = time.monotonic() + timeout
    try:
        if stopping:
            _stop_peer(game, result, deadline)
        else:
            result.error = game.start(deadline)
            if result.error is None and name == "fault-kill-peer":
                _kill_peer(game, result, deadline)
            elif result.error is None:
                _kill_table(game, result, deadline)
    finally:
        result.processes = game.reap()
    return result


def _kill_peer(game: FaultGame, result: FaultResult, deadline: float) -> None:
    # The victim: the first peer to enter the offer phase holding KILL_HAND cards or more
    # (its hand from its own draws and discards), so that it is still in when the signal
    # lands; a peer whose hand is empty then goes out at once, and the game would end as
    # ever without it.
    hands: dict[str, int] = {}

    def holding_enough(nick: str, record: Record) -> bool:
        event = record.get("event")
        if event == "draw":
            hands[nick] = hands.get(nick, 0) + 1
        elif event == "discard":
            hands[nick] = hands.get(nick, 0) - 2
        entering = event == "phase" and record.get("phase") == "offer"
        return entering and hands.get(nick, 0) >= KILL_HAND

    tails = {nick: LogTail(game.event_logs[nick]) for nick in game.nicks}
    seen = watch(tails, holding_enough, list(game.processes.values()), deadline)
    if seen is None:
        result.error = f"no peer logged phase offer holding {KILL_HAND} cards or more"
        return
    victim = seen[0]
    poller = StatusPoller(game.host, game.port, deadline)
    result.victim = victim
    result.fault = f"SIGKILL {victim} once it logged phase offer holding {hands[victim]} cards"
    result.fault_at = game.signal(victim, signal.SIGKILL)
    poller.start()
    survivors = game.peers(but=victim)
    wait_exits(
        [*survivors, game.processes[TABLE]],
        min(deadline, result.fault_at + EXIT_BOUND + 5),
        result.exit_at,
    )
    poller.join(timeout=max(0.0, deadline - time.monotonic()))
    result.status = poller.last
    result.processes = game.reap()
    result.findings = [
        *exit_findings(result, survivors, EXIT_BOUND),
        *table_abort_findings(game, result, victim),
        status_finding(result, victim),
        watcher_finding(game, result, survivors, victim),
    ]


def _kill_table(game: FaultGame, result: FaultResult, deadline: float) -> None:
    tails = {TABLE: LogTail(game.transcript)}
    seen = watch(
        tails,
        lambda _n, r: r.get("event") == "dealt" and r.get("last") is True,
        list(game.processes.values()),
        deadline,
    )
    if seen is None:
        result.error = "the table never dealt the last card"
        return
    result.victim = TABLE
    result.fault = "SIGKILL the table once it dealt the last card"
    result.fault_at = game.signal(TABLE, signal.SIGKILL)
    survivors = game.peers()
    wait_exits(survivors, min(deadline, result.fault_at + EXIT_BOUND + 5), result.exit_at)
    result.processes = game.reap()
    result.findings = exit_findings(result, survivors, EXIT_BOUND)


def _stop_peer(game: FaultGame, result: FaultResult, deadline: float) -> None:
    # A stopped peer is noticed only by someone waiting on its reply, and a
    # peer that holds the turn is waited on by no one. Mid-game, whether it
    # holds the turn at the moment the signal lands is a race; so stop it
    # while it waits for the game to start, which only this scenario can let
    # happen. Player1's first your_turn then goes to it, and waits.
    seats = game.seating()
    victim, waiter = seats[1], seats[0]
    late = next(nick for nick in reversed(game.nicks) if nick != victim)
    result.error = game.start(deadline, hold_back=late)
    if result.error is not None:
        return

    if not _wait_joined(game, victim, deadline):
        result.error = f"the table never seated {victim}'s join"
        return
    result.victim = victim
    result.fault = (
        f"SIGSTOP {victim} (seat 2) once the table has its join; then {late} joins, the game "
        f"starts, and {waiter} (player1) hands {victim} the draw turn"
    )
    result.fault_at = game.signal(victim, signal.SIGSTOP)
    game.start_peer(late)
    survivors = game.peers(but=victim)
    bound = NAMED_WITHIN + EXIT_BOUND
    wait_exits(survivors, min(deadline, time.monotonic() + bound + 5), result.exit_at)
    # Resumed, the stopped peer finds the game aborted and ends by itself;
    # then the table, whose last player has gone, ends too.
    with contextlib.suppress(ProcessLookupError):
        os.kill(game.processes[victim].popen.pid, signal.SIGCONT)
    wait_exits(
        [game.processes[victim], game.processes[TABLE]],
        min(deadline, time.monotonic() + EXIT_BOUND),
        result.exit_at,
    )
    result.processes = game.reap()
    result.findings = stop_peer_findings(
        game,
        result,
        survivors,
        waiter=waiter,
        named_within=NAMED_WITHIN,
        exit_bound=EXIT_BOUND,
    )


def _wait_joined(game: FaultGame, nick: str, deadline: float) -> bool:
    """Ask the table's ``status`` until it lists ``nick`` among those who joined the
    game forming; False at the deadline, or if the table closes or exits first.

    The transcript cannot tell: a game's records, its joins among them, are
    kept until it starts (docs/logs.md), and this game starts only later.
    """
    table = game.processes[TABLE].popen
    with (
        contextlib.suppress(OSError, ValueError, AttributeError),
        socket.create_connection((game.host, game.port), timeout=2) as sock,
    ):
        replies = sock.makefile("rb")
        while time.monotonic() < deadline and table.poll() is None:
            sock.sendall(b'{"cmd": "status"}\n')
            line = replies.readline()
            if not line:
                return False
            if nick in (json.loads(line).get("in") or []):
                return True
            time.sleep(JOIN_POLL)
    return False


# -- ring scenario fault-... -----------------------------------------------------------


def format_result(result: FaultResult) -> str:
    lines = [f"scenario {result.name}, seed {result.seed}, {result.players} players"]
    if result.fault:
        at = "" if result.fault_at is None else f" at t={result.fault_at:.6f}"
        lines.append(f"  fault     {result.fault}{at}")
    for name, process in result.processes.items():
        if name == result.victim and name != TABLE and result.name == "fault-kill-peer":
            continue
        after = result.after_fault(name)
        said = (
            (process.stderr if process.returncode and name != TABLE else None)
            or process.stdout
            or process.stderr
            or [""]
        )[-1]
        lines.append(f"  {name:<9} exit {process.returncode} after {seconds(after)}: {said}")
    if result.error:
        lines.append(f"ERROR {result.error}")
    for check in result.findings:
        lines.append(f"{'PASS' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """``ring scenario fault-...``: the summary and checks; exit 0 only if all pass."""
    seed = oldmaid_game.DEFAULT_SEED if args.seed is None else args.seed
    keep = Path(args.keep) if args.keep else None
    workdir = keep or Path(tempfile.mkdtemp(prefix=f"ring-{args.name}-"))
    result = run_fault(args.name, seed, workdir=workdir, timeout=args.timeout)
    return processes.finish(format_result(result), result.ok, workdir, keep)
