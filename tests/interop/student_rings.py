"""Mixed rings with one 2013-style client: play a game, judge it, measure many.

One game is ``ring table``, ``players - 1`` ``ring peer`` processes and one
``student_peer.py`` (nick ``s``) with some of its old habits switched on, all
real OS processes on loopback. ``judge`` says what, if anything, went wrong
against issue 10's promise:

- if the old client did not leave holding the turn, the game ends with a
  loser: the table says ``game over``, everyone exits 0 with a line that
  agrees with the table's out order;
- if it did, the game still ends, within ``END_WITHIN`` seconds of its
  leaving: aborted with a line naming it and the rule, on the table and on
  every ``ring peer`` (or, if it left the last player in, as a normal end).

Run as a script it plays a sweep and prints the figures issue 10 asks for::

    python tests/interop/student_rings.py --seeds 10      # sizes 2-8, ten seeds each
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RING = Path(sys.executable).with_name("ring")
STUDENT = Path(__file__).with_name("student_peer.py")
STUDENT_NICK = "s"
ALL = ("--all",)
GAME_TIMEOUT = 40.0  # every process of one game, at the most
END_WITHIN = 10.0  # seconds from the old client leaving with the turn to the game's end
OUT_RE = re.compile(r"^out (\d+)(st|nd|rd|th) of (\d+)$")
LOST = "lost: holds the Old Maid"
OVER_RE = re.compile(r"^game over: loser (\S+); out: ([^;]*)(; (\d+) pairs? never discarded)?$")
RULE = (
    f"{STUDENT_NICK} went out holding the turn and left without passing it (a player who "
    "goes out holding the turn must pass it on with an offer of num_cards 0)"
)


@dataclass
class Exit:
    code: int | None
    out: str
    err: str


@dataclass
class RingGame:
    players: int
    seed: int
    flags: tuple[str, ...]
    table: Exit
    peers: dict[str, Exit]  # every process but the table, the old client included
    report: dict = field(default_factory=dict)  # the old client's --report
    transcript: list[dict] = field(default_factory=list)
    wall: float = 0.0

    @property
    def left_with_turn(self) -> bool:
        return bool(self.report.get("left_holding_turn"))

    @property
    def ended_at(self) -> float | None:
        """The table's monotonic time of ``over`` or ``aborted``."""
        ends = [r["t"] for r in self.transcript if r.get("event") in ("over", "aborted")]
        return ends[0] if ends else None

    @property
    def end_delay(self) -> float | None:
        """Seconds from the old client leaving to the end of the game, if it left early."""
        left, ended = self.report.get("left_at"), self.ended_at
        return None if left is None or ended is None else ended - left

    def describe(self) -> str:
        lines = [f"{self.players} players, seed {self.seed}, flags {' '.join(self.flags)}"]
        lines.append(f"  table: {self.table}")
        lines += [f"  {nick}: {exit_}" for nick, exit_ in self.peers.items()]
        lines.append(f"  report: {self.report}")
        return "\n".join(lines)


def _first_line(proc: subprocess.Popen[bytes], deadline: float) -> str:
    """The first stdout line, read byte by byte so that communicate() gets the rest."""
    assert proc.stdout is not None
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(proc.stdout.fileno(), 1) if ready else b""
        if not chunk:
            raise RuntimeError(f"no first line from the table (got {data!r}, exit {proc.poll()})")
        data += chunk
    return data.decode().strip()


def play(players: int, seed: int, flags: tuple[str, ...], workdir: Path) -> RingGame:
    """One game with ``players`` seats, one of them the old client with ``flags``."""
    workdir.mkdir(parents=True, exist_ok=True)
    transcript = workdir / "table.jsonl"
    report = workdir / "student.json"
    started = time.monotonic()
    deadline = started + GAME_TIMEOUT
    procs: dict[str, subprocess.Popen[bytes]] = {}
    table = subprocess.Popen(
        [str(RING), "table", "--players", str(players), "--port", "0", "--seed", str(seed),
         "--transcript", str(transcript)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        match = re.fullmatch(r"table listening on (\S+)", _first_line(table, deadline))
        assert match, "unexpected first line from the table"
        address = match.group(1)
        for i in range(players - 1):
            procs[f"p{i}"] = subprocess.Popen(
                [str(RING), "peer", "--nick", f"p{i}", "--table", address,
                 "--seed", str(seed * 100 + i), "--events", str(workdir / f"p{i}.jsonl")],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
        procs[STUDENT_NICK] = subprocess.Popen(
            [sys.executable, str(STUDENT), "--nick", STUDENT_NICK, "--table", address,
             "--seed", str(seed * 100 + 99), "--report", str(report),
             "--timeout", str(GAME_TIMEOUT), *flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        exits = {nick: _wait(proc, deadline) for nick, proc in procs.items()}
        table_exit = _wait(table, deadline)
    finally:
        for proc in [table, *procs.values()]:
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
                proc.communicate(timeout=5)
    game = RingGame(players, seed, flags, table_exit, exits, wall=time.monotonic() - started)
    if report.exists():
        game.report = json.loads(report.read_text())
    if transcript.exists():
        game.transcript = [json.loads(line) for line in transcript.read_text().splitlines()]
    return game


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> Exit:
    try:
        out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += b" (killed: still running at the game timeout)"
    return Exit(proc.returncode, out.decode().strip(), err.decode().strip())


def judge(game: RingGame) -> list[str]:
    """What went wrong in ``game``; empty when it kept issue 10's promise."""
    if game.report.get("two_in_one_read"):
        return ["the old client read two of our messages in one recv"]
    table_lines = game.table.out.splitlines()
    last = table_lines[-1] if table_lines else ""
    over = OVER_RE.match(last)
    problems: list[str] = []
    if game.left_with_turn:
        delay = game.end_delay
        if delay is None or delay > END_WITHIN:
            problems.append(f"the game ended {delay} s after the old client left with the turn")
        if over:  # it left the last player in: a normal end is the best end
            return problems + _judge_over(game, over)
        if game.table.code != 1 or not last.startswith(f"game aborted: {RULE}; reported by "):
            problems.append(f"the table did not abort naming the old client: {last!r}")
        reason = last.removeprefix("game aborted: ")
        for nick, exit_ in game.peers.items():
            if nick != STUDENT_NICK and (exit_.code, exit_.err) != (
                1,
                f"{nick}: game aborted: {reason}",
            ):
                problems.append(f"{nick} did not stop with the table's reason: {exit_}")
        return problems
    if not over:
        return [f"the table did not end the game with a loser: {last!r}"]
    return _judge_over(game, over)


def _judge_over(game: RingGame, over: re.Match[str]) -> list[str]:
    problems = []
    if game.table.code != 0:
        problems.append(f"the table exited {game.table.code}")
    loser, out = over.group(1), [nick.strip() for nick in over.group(2).split(",")]
    if sorted([loser, *out]) != sorted(game.peers):
        problems.append("the table's loser and out list are not the players")
    undiscarded = int(over.group(4) or 0)
    if game.report.get("kept_pair") and undiscarded == 0:
        problems.append("the old client kept its last pair, yet the table counts none missing")
    if not game.report.get("kept_pair") and undiscarded:
        problems.append(f"{undiscarded} pairs never discarded, yet the old client kept none")
    for nick, exit_ in game.peers.items():
        if exit_.code != 0:
            problems.append(f"{nick} exited {exit_.code}: {exit_.err}")
            continue
        if nick == loser:
            expected = LOST
        elif nick == STUDENT_NICK and game.report.get("left_when_out"):
            expected = "out"  # it left before the end, so it cannot know its place
        else:
            place = out.index(nick) + 1 if nick in out else 0
            expected = f"out {place}{_suffix(place)} of {game.players}"
        if exit_.out != expected:
            problems.append(f"{nick} printed {exit_.out!r}, expected {expected!r}")
    return problems


def _suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="play mixed rings with one old client")
    parser.add_argument("--seeds", type=int, default=10, help="games per ring size")
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--sizes", default="2-8", help="ring sizes, e.g. 2-8 or 3")
    parser.add_argument("flags", nargs="*", default=list(ALL), help="the old client's flags")
    args = parser.parse_args(argv)
    low, _, high = args.sizes.partition("-")
    sizes = range(int(low), int(high or low) + 1)
    flags = tuple(args.flags)
    workdir = Path(tempfile.mkdtemp(prefix="student-rings-"))
    totals = {
        "games": 0,
        "ended with a loser": 0,
        "left with the turn, aborted naming it": 0,
        "left with the turn, ended with a loser": 0,
        "failed": 0,
    }
    delays: list[float] = []
    for players in sizes:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            game = play(players, seed, flags, workdir / f"{players}-{seed}")
            problems = judge(game)
            last = (game.table.out.splitlines() or [""])[-1]
            totals["games"] += 1
            if problems:
                totals["failed"] += 1
                print(f"FAILED {game.describe()}\n  " + "\n  ".join(problems), flush=True)
                continue
            if game.left_with_turn:
                delays.append(game.end_delay or 0.0)
                how = (
                    "aborted naming it" if last.startswith("game aborted") else "ended with a loser"
                )
                totals[f"left with the turn, {how}"] += 1
                last = f"left with the turn, ended {game.end_delay:.2f} s later: {last}"
            else:
                totals["ended with a loser"] += 1
            print(f"{players} players seed {seed}: wall {game.wall:.2f} s, {last}", flush=True)
    print()
    print(f"old client flags: {' '.join(flags)}; sizes {args.sizes}, {args.seeds} seeds each")
    for name, count in totals.items():
        print(f"  {name:<40} {count}")
    if delays:
        print(
            f"  end after leaving with the turn: max {max(delays):.2f} s, "
            f"min {min(delays):.2f} s (goal <= {END_WITHIN:g} s)"
        )
    print(f"logs in {workdir}")
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
