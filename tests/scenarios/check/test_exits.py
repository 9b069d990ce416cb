"""How a program ended, judged (scenarios.check.exits): a crash, a status, or nothing."""

from __future__ import annotations

import signal

from scenarios.check import obligations
from scenarios.check.exits import Ending, crash_trace, judge

PYTHON_TRACE = (
    "thinking...\n"
    "Traceback (most recent call last):\n"
    '  File "client.py", line 40, in <module>\n'
    "    print(RESULTS[msg])\n"
    "KeyError: 'W2'\n"
)
JAVA_TRACE = (
    'Exception in thread "main" java.lang.ArrayIndexOutOfBoundsException: Index -1\n'
    "\tat Client.main(Client.java:88)\n"
)


def judged(
    code: int | None,
    *,
    after: str = "",
    tail: str = "",
    over: bool = True,
    broken: bool = False,
    ours: bool = False,
) -> tuple[obligations.Rule, str] | None:
    ending = Ending(returncode=code, killed_by_us=ours, stderr_after=after, stderr_tail=tail)
    return judge(ending, game_over=over, broken_off=broken, after="b'W2\\n'")


def test_a_clean_exit_after_the_game_breaks_nothing() -> None:
    assert judged(0) is None
    assert judged(0, tail=PYTHON_TRACE) is None  # printed mid-game, and it played on


def test_a_traceback_and_a_status_is_a_crash_that_names_the_error() -> None:
    rule, line = judged(1, after=PYTHON_TRACE)
    assert rule is obligations.CRASH
    assert line == "it crashed, exited with status 1, after b'W2\\n' (KeyError: 'W2')"


def test_a_status_without_a_trace_after_a_whole_game_is_the_status_rule() -> None:
    rule, line = judged(1)
    assert rule is obligations.STATUS and "exited with status 1 at the end" in line


def test_a_status_before_the_game_is_over_is_a_crash() -> None:
    assert judged(2, over=False)[0] is obligations.CRASH


def test_a_status_without_a_trace_quotes_the_programs_last_line_on_stderr() -> None:
    tail = "joined\nchecker: garbage from ours: \"result\":\"ok\"}\n\n"
    rule, line = judged(1, tail=tail, over=False)
    assert rule is obligations.CRASH
    assert line == (
        "it crashed, exited with status 1, after b'W2\\n' "
        '(its last line on stderr: checker: garbage from ours: "result":"ok"})'
    )
    rule, line = judged(1, tail="p1: game aborted: the table shut down\n")
    assert rule is obligations.STATUS and line.endswith(
        "at the end of its game (its last line on stderr: p1: game aborted: the table shut down)"
    )
    assert judged(0, tail=tail) is None  # a clean exit is judged on nothing it printed


def test_a_signal_of_its_own_is_a_crash() -> None:
    rule, line = judged(-signal.SIGSEGV)
    assert rule is obligations.CRASH and "killed by SIGSEGV" in line


def test_a_trace_after_the_last_message_with_status_0_is_a_crash() -> None:
    rule, line = judged(0, after=JAVA_TRACE)
    assert rule is obligations.CRASH
    assert line.startswith("it printed a crash on stderr after")


def test_any_ending_goes_once_the_server_broke_off_or_we_stopped_it() -> None:
    assert judged(1, after=PYTHON_TRACE, broken=True) is None
    assert judged(-signal.SIGKILL, ours=True) is None


def test_crash_trace_quotes_from_the_first_line_of_the_trace() -> None:
    assert crash_trace(PYTHON_TRACE)[0] == "Traceback (most recent call last):"
    assert crash_trace(JAVA_TRACE)[-1].strip().startswith("at Client.main")
    assert crash_trace("an ordinary log line\nmoves: 12\n") == []
    assert crash_trace("thread 'main' panicked at src/main.rs:10:5:\n")
