"""Student programs written by other hands from the handouts alone, through their game's
whole suite: the correct ones get no FAIL, and each with one real bug FAILs where the
bug shows, naming the rule it breaks, and nowhere else (clients/README.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from ring.games.record import read_game
from scenarios.check import fishnet, notipping, oldmaid, reversi
from scenarios.check.boxed import LIMITS, UID_FLOOR
from scenarios.check.runner import run_cases
from scenarios.check.verdicts import CaseResult, CaseVerdict
from scenarios.programs import Program
from scenarios.sandbox import Box
from tests.helpers.ring_serve_process import ring_serve
from tests.helpers.sandbox_support import box_available

pytestmark = pytest.mark.scenario

CLIENTS = Path(__file__).parent / "clients"
GAMES = {"fishnet": fishnet, "notipping": notipping, "oldmaid": oldmaid, "reversi": reversi}
UID = UID_FLOOR + 4242
# Short, so that a program that misses a message fails fast; a JVM starts well within it.
MOVE_LIMIT = 2.0


@dataclass(frozen=True)
class Expected:
    """What the suite must say of a program: the cases that must FAIL, the one rule every
    FAIL of it names (its bug's), and the cases that must WARN (what the handout allows)."""

    fails: frozenset[str] = frozenset()
    rule: str | None = None
    warns: frozenset[str] = frozenset()


def expect(fails: str = "", rule: str | None = None, warns: str = "") -> Expected:
    return Expected(frozenset(fails.split()), rule, frozenset(warns.split()))


OLDMAID_VERIFY_CASES = (
    "oldmaid.verify.game oldmaid.verify.signed-picks oldmaid.verify.witness "
    "oldmaid.verify.forged-turn oldmaid.verify.wrong-card"
)
EXPECTED = {
    # correct, each in its own language and way of reading
    "ReversiReadLine.java": expect(warns="reversi.framing.bare"),
    "reversi_bytewise.py": expect(),
    "reversi_recv1024.py": expect(warns="reversi.framing.bare"),
    "notipping_fixedbuf.c": expect(warns="notipping.denied"),
    "notipping_client.js": expect(),
    "FishnetLines.java": expect(),
    "fishnet_client.js": expect(),
    # older clients: the cases of the verify extension WARN that they do not verify
    "oldmaid_select.c": expect(warns=OLDMAID_VERIFY_CASES),
    "oldmaid_peer.js": expect(warns=OLDMAID_VERIFY_CASES),
    "oldmaid_asyncio.py": expect(warns=OLDMAID_VERIFY_CASES),  # timed reads that keep data
    "oldmaid_odd.py": expect(warns=OLDMAID_VERIFY_CASES),  # every allowed habit at once
    # one bug each
    "bug_draw_crash.py": expect("reversi.end.draw", "program.no-crash"),
    "bug_no_final_g.c": expect(
        "reversi.game.black reversi.game.white reversi.end.draw", "program.read-to-end"
    ),
    "bug_pass_crash.java": expect("reversi.pass", "program.no-crash"),
    "bug_error_fatal.py": expect(
        "fishnet.error.at-its-turn fishnet.error.out-of-turn fishnet.end.tie", "program.no-crash"
    ),
    "bug_error_offturn.java": expect("fishnet.error.out-of-turn", "program.no-crash"),
    "bug_invalid_close.c": expect("notipping.end.invalid", "program.read-to-end"),
    # a read timeout that throws away half a line (oldmaid.md 7.7 step 6): a message in
    # pieces, its second byte 0.3 s after its first, breaks it
    "OldMaidPeer.java": expect(
        "oldmaid.framing.split", "program.no-crash", warns=OLDMAID_VERIFY_CASES
    ),
    # one message a recv: a message in pieces is a must, two in one read (unasked) a should
    "oldmaid_recv1.py": expect(
        "oldmaid.framing.split",
        "program.no-crash",
        warns=f"oldmaid.framing.together {OLDMAID_VERIFY_CASES}",
    ),
}


def manifest() -> dict[str, dict]:
    files = sorted(CLIENTS.glob("manifest_*.json"))
    return {entry["file"]: entry for path in files for entry in json.loads(path.read_text())}


PROGRAMS = manifest()


def test_every_program_has_its_expected_verdicts_and_only_those() -> None:
    assert sorted(PROGRAMS) == sorted(EXPECTED)
    for name, entry in PROGRAMS.items():
        assert entry["correct"] == (EXPECTED[name].rule is None), name


def built(entry: dict, build: Path) -> tuple[str, ...]:
    """The program's command, built first where it needs a compiler (skipped, saying so,
    on a machine without that compiler: .ci/run installs them)."""

    def filled(arg: str) -> str:
        return arg.replace("{src}", str(CLIENTS)).replace("{build}", str(build))

    for tool in {entry["command"][0], *(entry["build"] or [])[:1]}:
        if tool != "python3" and not tool.startswith("{") and not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (a distribution package; .ci/run installs it)")
    if entry["build"]:
        subprocess.run([filled(arg) for arg in entry["build"]], check=True, timeout=120)
    return tuple(sys.executable if arg == "python3" else filled(arg) for arg in entry["command"])


def verdicts(results: list[CaseResult], verdict: CaseVerdict) -> dict[str, str]:
    return {r.case_id: (r.rules[0].key if r.rules else "") for r in results if r.verdict is verdict}


def told(logs: Path, cases: list[str], lines: int = 12) -> list[str]:
    """The last lines each case's program wrote to its stdout and stderr (its kept logs)."""
    said = []
    for case in cases:
        for stream in ("stdout", "stderr"):
            path = logs / f"{case}.{stream}"
            text = path.read_text(errors="replace").splitlines() if path.exists() else []
            said += [f"--- {case} {stream}, last {lines} lines:", *text[-lines:]]
    return said


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_suite_judges_a_program_written_from_the_handout(name: str, tmp_path: Path) -> None:
    entry, expected = PROGRAMS[name], EXPECTED[name]
    program = Program(built(entry, tmp_path))
    cases = GAMES[entry["game"]].cases(MOVE_LIMIT)
    results = trio.run(lambda: run_cases(cases, program, tmp_path / "logs", jobs=4))
    failed = verdicts(results, CaseVerdict.FAIL)
    reasons = {r.case_id: r.reason for r in results if r.verdict is not CaseVerdict.PASS}
    assert expected.fails <= set(failed), reasons
    unexpected = sorted(case for case, rule in failed.items() if rule != expected.rule)
    # no FAIL but for its bug; if there is one, what the program printed last says why
    assert not unexpected, "\n".join([str(reasons), *told(tmp_path / "logs", unexpected)])
    assert set(verdicts(results, CaseVerdict.WARN)) == expected.warns, reasons
    assert not verdicts(results, CaseVerdict.ERROR), reasons


# One of each language, correct and buggy, and an Old Maid peer (its ring's peers and
# table outside), in the box a tournament runs them in.
BOXED = ("ReversiReadLine.java", "notipping_fixedbuf.c", "fishnet_client.js",
         "oldmaid_select.c", "bug_pass_crash.java", "bug_invalid_close.c",
         "bug_draw_crash.py")  # fmt: skip


@pytest.mark.parametrize("name", BOXED)
def test_a_program_in_the_box_is_judged_as_outside_it(name: str, tmp_path: Path) -> None:
    """``ring check --sandbox``: the same verdicts as unboxed, so a box costs no correct
    program its grade (a JVM, Node.js and a C binary run in it as they do outside)."""
    if not box_available():
        pytest.fail("no box on this machine (needs root and bubblewrap: .ci/run installs it)")
    entry, expected = PROGRAMS[name], EXPECTED[name]
    build = tmp_path / "build"
    build.mkdir()
    argv = built(entry, build)
    box = Box(uid=UID, folders=(CLIENTS, build), workdir=CLIENTS, hidden=(tmp_path / "logs",))
    program = Program(argv, cwd=CLIENTS, limits=LIMITS, box=box)
    cases = GAMES[entry["game"]].cases(MOVE_LIMIT)
    results = trio.run(lambda: run_cases(cases, program, tmp_path / "logs", jobs=4))
    failed = verdicts(results, CaseVerdict.FAIL)
    reasons = {r.case_id: r.reason for r in results if r.verdict is not CaseVerdict.PASS}
    assert expected.fails <= set(failed), reasons
    assert set(failed.values()) <= {expected.rule}, reasons
    assert set(verdicts(results, CaseVerdict.WARN)) == expected.warns, reasons
    assert not verdicts(results, CaseVerdict.ERROR), reasons


FISHNET_PROGRAMS = sorted(name for name, entry in PROGRAMS.items() if entry["game"] == "fishnet")


@pytest.mark.parametrize("name", FISHNET_PROGRAMS)
def test_a_fishnet_program_plays_whole_games_against_spot_on_ring_serve(
    name: str, tmp_path: Path
) -> None:
    """Our server writes a step's lines in one write (fishnet.md "Lines"): each program,
    however it reads, plays to a result decided by the books, with no one at fault."""
    entry = PROGRAMS[name]
    argv = built(entry, tmp_path)
    transcripts = tmp_path / "transcripts"
    with ring_serve("--fishnet=0", "--seed", "5", "--transcripts", str(transcripts),
                    services=1) as served:  # fmt: skip
        host, _, port = served["fishnet"].rpartition(":")
        for game in range(3):
            words = {"{host}": host, "{port}": port, "{name}": f"p{game}"}
            command = [words.get(arg, arg) for arg in argv]
            ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
            assert ran.returncode == 0, ran.stdout + ran.stderr
    games = [read_game(path) for path in sorted((transcripts / "fishnet").glob("*.jsonl"))]
    assert len(games) == 3
    for played in games:
        assert played.end is not None and played.end.culprit is None, played.end
        assert played.end.draw or played.end.winners, played.end
