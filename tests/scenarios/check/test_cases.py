"""Every case of every game against real programs: our bot and a correct student client
pass all; each broken client fails the case that is there to catch its bug."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from scenarios import processes
from scenarios.check import fishnet, notipping, oldmaid, reversi
from scenarios.check.context import Case
from scenarios.check.runner import run_cases
from scenarios.check.verdicts import CaseResult, CaseVerdict
from scenarios.programs import Program

pytestmark = pytest.mark.scenario

HERE = Path(__file__).parent
INTEROP = HERE.parent.parent / "interop"
# tests/interop's cheating student peer, with the attack that follows.
CHEAT = (
    sys.executable,
    str(INTEROP / "cheat_peer.py"),
    "--nick",
    "{nick}",
    "--table",
    "{table}",
    "--attack",
)
# tests/interop's stand-in for a 2013 student's peer, correct unless given a habit.
STUDENT = (
    sys.executable,
    str(INTEROP / "student_peer.py"),
    "--nick",
    "{nick}",
    "--table",
    "{table}",
)
# tests/interop's stand-in for a student's peer with the verification extension added.
VERIFIED_STUDENT = (sys.executable, str(INTEROP / "verified_student.py"), *STUDENT[2:])
MOVE_LIMIT = 1.0  # so that a program that missed a message fails in a second
# Student programs written from the handouts by other hands (clients/README.md).
CLIENTS = HERE / "clients"
ERROR_FATAL = (sys.executable, str(CLIENTS / "bug_error_fatal.py"), "{host}", "{port}",
               "{name}", "spot")  # fmt: skip


@dataclass(frozen=True)
class Game:
    cases: list[Case]
    student: tuple[str, ...]  # the broken client's command, without --bug
    bot: tuple[str, ...]
    # case id -> (the bug it catches: --bug's value, or a whole command; what its reason says)
    caught: dict[str, tuple[str | tuple[str, ...], str]]
    # case id -> (a bug the handout allows, which the case warns of; what the warning says)
    warned: dict[str, tuple[str | tuple[str, ...], str]] = dataclasses.field(
        default_factory=dict
    )


GAMES = {
    "fishnet": Game(
        fishnet.cases(MOVE_LIMIT),
        (sys.executable, str(HERE / "broken_fishnet.py"), "{host}", "{port}", "{name}"),
        (
            "bot",
            "fishnet",
            "--server",
            "{address}",
            "--name",
            "{name}",
            "--opponent",
            "spot",
            "--level",
            "bob",
        ),
        {
            "fishnet.game.first": ("asks-back", "rank_not_held"),
            "fishnet.game.second": ("asks-back", "rank_not_held"),
            "fishnet.framing.split": ("one-recv", ""),
            "fishnet.framing.together": ("one-recv", ""),
            "fishnet.deal-book": ("deal-book", "closed its connection"),
            "fishnet.fished-the-rank": ("one-turn", "no answer to yourturn within 1 s"),
            "fishnet.opponent-passes": ("no-pass", "closed its connection"),
            "fishnet.error.at-its-turn": (ERROR_FATAL, "crashed, exited with status 1"),
            "fishnet.error.out-of-turn": (ERROR_FATAL, "crashed, exited with status 1"),
            "fishnet.end.opponent-left": (ERROR_FATAL, "crashed, exited with status 1"),
            "fishnet.end.tie": ("no-tie", "did not close its connection"),
            "fishnet.end.server-closes": ("hang-on-close", "did not exit"),
            "fishnet.time": ("slow", "no answer to yourturn within 1 s"),
        },
    ),
    "oldmaid": Game(
        oldmaid.cases(MOVE_LIMIT),
        (
            sys.executable,
            str(HERE / "broken_oldmaid.py"),
            "--nick",
            "{nick}",
            "--table",
            "{table}",
        ),
        ("peer", "--name", "{nick}", "--server", "{table}", "--host", "127.0.0.1"),
        {
            "oldmaid.game.2": ((*CHEAT, "false-out"), "rule hand_not_empty"),
            "oldmaid.game.3": ((*CHEAT, "false-out"), "rule hand_not_empty"),
            "oldmaid.game.6": ((*CHEAT, "discard-half"), "rule dealt_to_another"),
            "oldmaid.framing.split": ((*STUDENT, "--one-recv"), "checker left the table"),
            "oldmaid.framing.together": ("stream-one-recv", "in one segment"),
            "oldmaid.connect.late-neighbour": ("dial-once", "checker left the table"),
            "oldmaid.skip.out": ("no-skip", "had not passed it on"),
            "oldmaid.skip.gone": ("gone-fatal", "checker left the table"),
            "oldmaid.out.skipped": ("out-untold", "rule false_out"),
            "oldmaid.offer.none-received": ("picks-from-none", "had not passed it on"),
            "oldmaid.offer.none-sent": (
                (*STUDENT, "--leave-holding-turn"),
                "rule left_with_turn",
            ),
            "oldmaid.pick.ends": ("one-based", "it refused picker's pick of card_num 0"),
            "oldmaid.end.old-maid": ("waits-for-out", "did not exit"),
            "oldmaid.end.aborted": ("ignores-abort", "did not exit"),
            "oldmaid.end.table-dies": ("hang-on-close", "did not exit"),
            "oldmaid.time": ("slow", "it held the turn for more than 1 s"),
            # A verifying student that commits one card at every position of its offers.
            "oldmaid.verify.game": (
                (*CHEAT, "commit-one-card", "--verify"),
                "rule card_not_held",
            ),
            # tests/interop's verifying student, its picks' mac text counting card_num from 1.
            "oldmaid.verify.signed-picks": (
                (*VERIFIED_STUDENT, "--bad-pick-mac"),
                "not its own",
            ),
            # tests/interop's verifying student, which never checks a proof it is sent: it
            # takes the forged turn, draws out of turn, and breaks.
            "oldmaid.verify.forged-turn": (VERIFIED_STUDENT, "crashed"),
            # The same student, forgetting to check a card against the offer's commitment.
            "oldmaid.verify.wrong-card": (
                (*VERIFIED_STUDENT, "--no-card-check"),
                "rule false_receipt",
            ),
            # The same student, joining with witness and never making a move it owes.
            "oldmaid.verify.witness": (
                (*VERIFIED_STUDENT, "--witness"),
                "within 2 s of the table's notice",
            ),
        },
    ),
    "reversi": Game(
        reversi.cases(MOVE_LIMIT),
        (sys.executable, str(HERE / "broken_reversi.py"), "{host}", "{port}", "{name}"),
        ("bot", "reversi", "--server", "{address}", "--name", "{name}", "--level", "greedy"),
        {
            "reversi.game.black": ("swap-xy", "an illegal move"),
            "reversi.game.white": ("swap-xy", "an illegal move"),
            "reversi.framing.split": ("one-recv", ""),
            "reversi.framing.together": ("one-recv", "no move within"),
            "reversi.pass": ("no-pass", "no move within"),
            "reversi.end.empty": ("expects-full", "did not close its connection"),
            "reversi.end.draw": ("no-draw", "did not close its connection"),
            "reversi.end.opponent-left": ("expects-full", "did not close its connection"),
            "reversi.end.server-closes": ("hang-on-close", "did not exit"),
            "reversi.time": ("slow", "no move within 1 s"),
        },
        {"reversi.framing.bare": ("needs-newline", "it waits for a newline")},
    ),
    "notipping": Game(
        notipping.cases(MOVE_LIMIT),
        (
            sys.executable,
            str(HERE / "broken_notipping.py"),
            "{host}",
            "{port}",
            "{name}",
            "{seat}",
        ),
        (
            "bot",
            "notipping",
            "--server",
            "{address}",
            "--name",
            "{name}",
            "--seat",
            "{seat}",
            "--level",
            "greedy",
        ),
        {
            "notipping.game.seat0": ("swap-add", "is not allowed"),
            "notipping.game.seat1": ("swap-add", "is not allowed"),
            "notipping.framing.split": ("one-recv", "no answer to ROUND"),
            "notipping.framing.together": ("one-recv", "no answer to ROUND"),
            "notipping.framing.layout": ("by-line", ""),
            "notipping.framing.bare": ("by-line", "no answer to ROUND"),
            "notipping.remove": ("add-only", "ADD in the remove phase"),
            "notipping.end.win": ("win-waits", "did not close its connection"),
            "notipping.end.invalid": ("ignore-invalid", "did not close its connection"),
            "notipping.end.opponent-left": ("win-waits", "did not close its connection"),
            "notipping.end.server-closes": ("hang-on-close", "did not exit"),
            "notipping.time": ("slow", "no answer to ROUND"),
        },
        {"notipping.denied": ("hang-denied", "after DENIED; it waited")},
    ),
}


def check(cases: list[Case], program: Program, tmp_path: Path) -> list[CaseResult]:
    return trio.run(lambda: run_cases(cases, program, tmp_path, jobs=8))


def not_passed(results: list[CaseResult]) -> list[tuple[str, CaseVerdict, str]]:
    return [(r.case_id, r.verdict, r.reason) for r in results if r.verdict is not CaseVerdict.PASS]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_case_is_paired_with_the_bug_it_catches(game: str) -> None:
    paired = [*GAMES[game].caught, *GAMES[game].warned]
    assert sorted(paired) == sorted(case.case_id for case in GAMES[game].cases)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_our_bot_passes_every_case(game: str, tmp_path: Path) -> None:
    bot = Program((*processes.ring_command(), *GAMES[game].bot))
    assert not_passed(check(GAMES[game].cases, bot, tmp_path)) == []


# Cases of an extension: a correct student client that does not implement it gets one WARN
# saying what it would take (case id -> what the warning says).
EXTENSIONS = {
    "oldmaid.verify.game": "it does not verify",
    "oldmaid.verify.signed-picks": "it does not verify",
    "oldmaid.verify.witness": "it does not verify",
    "oldmaid.verify.forged-turn": "it does not verify",
    "oldmaid.verify.wrong-card": "it does not verify",
}
# The verifying client written from the protocol document alone (tests/interop/doc_client).
DOC_CLIENT = (sys.executable, str(INTEROP / "doc_client" / "verified_peer.py"), *STUDENT[2:])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_correct_student_client_passes_every_case(game: str, tmp_path: Path) -> None:
    results = check(GAMES[game].cases, Program(GAMES[game].student), tmp_path)
    extensions = [r for r in results if r.case_id in EXTENSIONS]
    for result in extensions:
        assert result.verdict is CaseVerdict.WARN, result.reason
        assert EXTENSIONS[result.case_id] in result.reason
        assert [rule.key for rule in result.rules] == ["oldmaid.verify"]
    results = [r for r in results if r.case_id not in EXTENSIONS]
    assert not_passed(results) == []
    for timed in (r for r in results if r.case_id.endswith(".time")):
        assert timed.figures["moves"] > 5 and timed.figures["slowest_move"] < MOVE_LIMIT


def test_a_verifying_client_passes_the_cases_of_verified_play(tmp_path: Path) -> None:
    """The client written from the doc alone; only these cases: it takes more than the
    tests' 1 s to exit when its table dies (the docs give 3 s, which it meets)."""
    wanted = {*EXTENSIONS, "oldmaid.game.3"}
    cases = [case for case in GAMES["oldmaid"].cases if case.case_id in wanted]
    assert not_passed(check(cases, Program(DOC_CLIENT), tmp_path)) == []


CAUGHT = [(game, case_id) for game in sorted(GAMES) for case_id in sorted(GAMES[game].caught)]
WARNED = [(game, case_id) for game in sorted(GAMES) for case_id in sorted(GAMES[game].warned)]


def run_one(game: str, case_id: str, bug: str | tuple[str, ...], tmp_path: Path) -> CaseResult:
    argv = bug if isinstance(bug, tuple) else (*GAMES[game].student, "--bug", bug)
    [case] = [case for case in GAMES[game].cases if case.case_id == case_id]
    [result] = check([case], Program(argv), tmp_path)
    return result


@pytest.mark.parametrize(("game", "case_id"), CAUGHT)
def test_each_case_catches_its_broken_client(game: str, case_id: str, tmp_path: Path) -> None:
    bug, says = GAMES[game].caught[case_id]
    result = run_one(game, case_id, bug, tmp_path)
    assert result.verdict is CaseVerdict.FAIL, (bug, result.reason)
    assert says in result.reason, result.reason
    assert result.transcript or result.stdout  # a FAIL shows what happened
    [rule] = result.rules  # a FAIL names the one "must" it breaks
    assert rule.level.value == "must"


@pytest.mark.parametrize(("game", "case_id"), WARNED)
def test_what_the_handout_allows_is_a_warn(game: str, case_id: str, tmp_path: Path) -> None:
    bug, says = GAMES[game].warned[case_id]
    result = run_one(game, case_id, bug, tmp_path)
    assert result.verdict is CaseVerdict.WARN, (bug, result.reason)
    assert says in result.reason, result.reason
    assert [rule.level.value for rule in result.rules] == ["should"]


def test_a_verifying_client_that_does_not_take_part_in_the_witness_gets_a_warn(
    tmp_path: Path,
) -> None:
    """The verifying student without witness (14.6, the table as witness): a should."""
    result = run_one("oldmaid", "oldmaid.verify.witness", VERIFIED_STUDENT, tmp_path)
    assert result.verdict is CaseVerdict.WARN, result.reason
    assert 'did not join with "witness":true' in result.reason
    assert [rule.key for rule in result.rules] == ["oldmaid.witness"]


def test_a_verifying_client_that_takes_offers_unchecked_fails_the_witness_case(
    tmp_path: Path,
) -> None:
    """The doc-only client with ``--no-offer-check`` (written by another hand: a student who
    forgot 14.6 "Checking an offer"): it answers our garbled offer ok, unchecked."""
    result = run_one("oldmaid", "oldmaid.verify.witness", (*DOC_CLIENT, "--no-offer-check"),
                     tmp_path)  # fmt: skip
    assert result.verdict is CaseVerdict.FAIL, result.reason
    assert "without checking it with the table" in result.reason, result.reason
    assert [rule.key for rule in result.rules] == ["oldmaid.verified-play"]
