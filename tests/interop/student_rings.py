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
from collections.abc import Iterator
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
# The end line may say which seats were verified (protocol 14.5, 14.6): " [verified: p0]".
OVER_RE = re.compile(
    r"^game over: loser (\S+); out: ([^;[]*?)(; (\d+) pairs? never discarded)?( \[[^\]]*\])?$"
)
VERIFIED_SUFFIX = re.compile(r" \[[^\]]*\]$")  # the table's word on who verified, not the reason
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
    silent_skips: int = 0  # our peers' skips of the old client as out and silent

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
        # Output to files, not pipes: a client that prints as it goes must
        # never block on a pipe that nobody reads while we wait for another.
        for i in range(players - 1):
            procs[f"p{i}"] = _start(
                [str(RING), "peer", "--name", f"p{i}", "--server", address,
                 "--seed", str(seed * 100 + i), "--events", str(workdir / f"p{i}.jsonl")],
                workdir / f"p{i}",
            )  # fmt: skip
        procs[STUDENT_NICK] = _start(
            [sys.executable, str(STUDENT), "--nick", STUDENT_NICK, "--table", address,
             "--seed", str(seed * 100 + 99), "--report", str(report),
             "--timeout", str(GAME_TIMEOUT), *flags],
            workdir / STUDENT_NICK,
        )  # fmt: skip
        exits = {nick: _wait_file(proc, deadline, workdir / nick) for nick, proc in procs.items()}
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
    for log in workdir.glob("p*.jsonl"):
        records = map(json.loads, log.read_text().splitlines())
        game.silent_skips += sum(r["event"] == "skip" and bool(r.get("silent")) for r in records)
    return game


def _start(command: list[str], stem: Path) -> subprocess.Popen[bytes]:
    with open(f"{stem}.out", "wb") as out, open(f"{stem}.err", "wb") as err:
        return subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)


def _wait_file(proc: subprocess.Popen[bytes], deadline: float, stem: Path) -> Exit:
    """The exit of a process writing to ``stem``.out/.err: its last line of each."""
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        killed = ""
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        killed = " (killed: still running at the game timeout)"
    out = Path(f"{stem}.out").read_text(errors="replace").strip().splitlines()
    err = Path(f"{stem}.err").read_text(errors="replace").strip().splitlines()
    return Exit(proc.returncode, out[-1] if out else "", (err[-1] if err else "") + killed)


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> Exit:
    try:
        out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += b" (killed: still running at the game timeout)"
    return Exit(proc.returncode, out.decode().strip(), err.decode().strip())


def judge(game: RingGame) -> list[str]:
    """What went wrong in ``game``; empty when it kept the promise (module docstring)."""
    if game.report.get("two_in_one_read"):
        return ["the old client read two of our messages in one recv"]
    problems = _wrongly_named(game)
    table_lines = game.table.out.splitlines()
    last = table_lines[-1] if table_lines else ""
    over = OVER_RE.match(last)
    if game.left_with_turn:
        delay = game.end_delay
        if delay is None or delay > END_WITHIN:
            problems.append(f"the game ended {delay} s after the old client left with the turn")
        if over:  # it left the last player in: a normal end is the best end
            return problems + _judge_over(game, over)
        if game.table.code != 1 or not last.startswith(f"game aborted: {RULE}; reported by "):
            problems.append(f"the table did not abort naming the old client: {last!r}")
        reason = VERIFIED_SUFFIX.sub("", last.removeprefix("game aborted: "))
        for nick, exit_ in game.peers.items():
            if nick != STUDENT_NICK and (exit_.code, exit_.err) != (
                1,
                f"{nick}: game aborted: {reason}",
            ):
                problems.append(f"{nick} did not stop with the table's reason: {exit_}")
        return problems
    if not over:
        return [*problems, f"the table did not end the game with a loser: {last!r}"]
    return problems + _judge_over(game, over)


def _wrongly_named(game: RingGame) -> list[str]:
    """Every abort that names someone other than the old client, the only one at fault here.

    The table's ``aborted`` record carries the culprit it named; in these rings
    our own peers do nothing wrong, so any other name is a wrong blame.
    """
    problems = []
    for record in game.transcript:
        if record.get("event") == "aborted" and record.get("culprit") != STUDENT_NICK:
            problems.append(
                f"the abort names {record.get('culprit')!r}, not the old client: "
                f"{record.get('reason')!r}"
            )
    return problems


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
        # The old client prints from its threads too: print() writes its text and its
        # newline apart, so a thread's line may run into the result ("...'lost: ...").
        said = exit_.out.endswith(expected) if nick == STUDENT_NICK else exit_.out == expected
        if not said:
            problems.append(f"{nick} printed {exit_.out!r}, expected {expected!r}")
    return problems


def _suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


# Each habit alone, then all together (three ways: leaving once out, or
# staying deaf or mute once out), as ``make oldclients-sweep`` plays them.
HABITS: dict[str, tuple[str, ...]] = {
    "listen late": ("--listen-late", "0.3"),
    "one recv": ("--one-recv",),
    "pick 0..n": ("--pick-inclusive",),
    "leave when out": ("--leave-when-out",),
    "keep last pair": ("--keep-last-pair",),
    "leave holding turn": ("--leave-holding-turn",),
    "deaf when out": ("--deaf-when-out",),
    "mute when out": ("--mute-when-out",),
    "chatty": ("--chatty",),
    "all, leaving": ("--all",),
    "all, deaf": ("--all-deaf",),
    "all, mute": ("--all-mute",),
}
BUSY_LIMIT = 3600.0  # a load process stops by itself after this long, whatever happens


@contextlib.contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """``count`` processes that each keep a core busy, for as long as the block runs."""
    spin = (
        "import time\n"
        f"end = time.monotonic() + {BUSY_LIMIT}\n"
        "while time.monotonic() < end:\n"
        "    sum(range(1000))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


@dataclass
class Row:
    """The figures of one habit set in one condition."""

    games: int = 0
    over: int = 0
    aborted_naming_it: int = 0
    left_then_over: int = 0
    failed: int = 0
    wrongly_named: int = 0
    two_in_one_read: int = 0
    exercised: int = 0
    delays: list[float] = field(default_factory=list)


def exercised(game: RingGame, flags: tuple[str, ...]) -> bool:
    """Whether the old client's habit really showed in this game (its report says)."""
    report = game.report
    signs = {
        "--listen-late": report.get("listened_late"),
        "--one-recv": True,  # every read of the game
        "--pick-inclusive": report.get("picks_total", 0) > 0,
        "--leave-when-out": report.get("left_when_out"),
        "--keep-last-pair": report.get("kept_pair"),
        "--leave-holding-turn": report.get("left_holding_turn"),
        "--deaf-when-out": game.silent_skips > 0,
        "--mute-when-out": game.silent_skips > 0,
        "--chatty": True,
        "--all": report.get("listened_late"),
        "--all-deaf": game.silent_skips > 0,
        "--all-mute": game.silent_skips > 0,
    }
    return bool(signs.get(flags[0]))


def sweep(
    sizes: range, seeds: range, habits: dict[str, tuple[str, ...]], workdir: Path
) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for name, flags in habits.items():
        row = rows[name] = Row()
        for players in sizes:
            for seed in seeds:
                game = play(
                    players, seed, flags, workdir / name.replace(" ", "_") / f"{players}-{seed}"
                )
                problems = judge(game)
                last = (game.table.out.splitlines() or [""])[-1]
                row.games += 1
                row.exercised += exercised(game, flags)
                row.wrongly_named += bool(_wrongly_named(game))
                row.two_in_one_read += bool(game.report.get("two_in_one_read"))
                if problems:
                    row.failed += 1
                    print(f"FAILED {game.describe()}\n  " + "\n  ".join(problems), flush=True)
                    continue
                if game.left_with_turn:
                    row.delays.append(game.end_delay or 0.0)
                    if last.startswith("game aborted"):
                        row.aborted_naming_it += 1
                    else:
                        row.left_then_over += 1
                else:
                    row.over += 1
                print(
                    f"{name}: {players} players seed {seed}: {game.wall:.2f} s, {last}", flush=True
                )
    return rows


def table(rows: dict[str, Row]) -> str:
    lines = [
        "| habit | games | habit shown | ended with a loser | left holding the turn: aborted "
        "naming it / ended with a loser | slowest end after leaving | two in one read "
        "| an honest player named | failed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        slowest = f"{max(row.delays):.2f} s" if row.delays else "-"
        lines.append(
            f"| {name} | {row.games} | {row.exercised} | {row.over} | "
            f"{row.aborted_naming_it} / {row.left_then_over} | {slowest} | "
            f"{row.two_in_one_read} | {row.wrongly_named} | {row.failed} |"
        )
    total = Row()
    for row in rows.values():
        for key in ("games", "over", "aborted_naming_it", "left_then_over", "failed",
                    "wrongly_named", "two_in_one_read", "exercised"):  # fmt: skip
            setattr(total, key, getattr(total, key) + getattr(row, key))
        total.delays += row.delays
    slowest = f"{max(total.delays):.2f} s" if total.delays else "-"
    lines.append(
        f"| **all** | {total.games} | {total.exercised} | {total.over} | "
        f"{total.aborted_naming_it} / {total.left_then_over} | {slowest} | "
        f"{total.two_in_one_read} | {total.wrongly_named} | {total.failed} |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="play mixed rings with one old client")
    parser.add_argument("--seeds", type=int, default=2, help="games per ring size and habit")
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--sizes", default="2-8", help="ring sizes, e.g. 2-8 or 3")
    parser.add_argument(
        "--load", choices=("idle", "busy", "both"), default="both",
        help="idle machine, both cores kept busy by other processes, or one then the other",
    )  # fmt: skip
    parser.add_argument(
        "--habit", action="append", choices=sorted(HABITS), help="only these (default: all)"
    )
    args = parser.parse_args(argv)
    low, _, high = args.sizes.partition("-")
    sizes = range(int(low), int(high or low) + 1)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    habits = {name: HABITS[name] for name in args.habit} if args.habit else HABITS
    workdir = Path(tempfile.mkdtemp(prefix="student-rings-"))
    conditions = ["idle", "busy"] if args.load == "both" else [args.load]
    reports, failed = [], 0
    for condition in conditions:
        started = time.monotonic()
        with busy_cores(os.cpu_count() or 2) if condition == "busy" else contextlib.nullcontext():
            rows = sweep(sizes, seeds, habits, workdir / condition)
        minutes = (time.monotonic() - started) / 60
        failed += sum(row.failed for row in rows.values())
        where = (
            "idle machine"
            if condition == "idle"
            else f"every core kept busy by {os.cpu_count() or 2} other processes"
        )
        reports.append(
            f"### {where}: sizes {args.sizes}, seeds {seeds.start}-{seeds.stop - 1} "
            f"({minutes:.1f} min)\n\n{table(rows)}"
        )
    print()
    print("\n\n".join(reports))
    print(f"\nlogs in {workdir}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
