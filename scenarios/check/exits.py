"""How a program ended, judged (docs/protocols/programs.md 3).

Every case ends by looking at how its program ended: the exit status, death
by a signal, and a traceback or a panic on its standard error. A crash in
the middle of a game is the better explanation of whatever the game then
saw (a close at its turn), so it replaces that reason; a crash once the
game is over is a FAIL of its own, and so is a non-zero status after a game
played to the end. Where the server broke the game off (it closed mid-game,
the table died or aborted) any ending is accepted: the program was told
nothing it could finish.

Only what the program printed *after* the last message it was sent counts
as a crash's trace: a program that logs a caught exception mid-game and
plays on has not crashed.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from pathlib import Path

from scenarios.check import obligations
from scenarios.check.obligations import Rule

# What runtimes print when a program dies of an error it did not catch.
CRASH_TRACES = re.compile(
    "|".join(
        [
            r"^Traceback \(most recent call last\):",  # Python
            r"^Exception in thread ",  # Java, a thread's uncaught exception
            r"^Caused by: ",  # Java
            r"^thread '.*' panicked at",  # Rust
            r"^panic: ",  # Go
            r"^goroutine \d+ \[running\]:",  # Go
            r"^terminate called after throwing",  # C++
            r"^Unhandled exception\.",  # .NET
            r"^\S+\.js:\d+$",  # Node's first line of an uncaught error
            r"^\s+at .*\(node:internal",  # Node
            r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error: ",  # C sanitizers
            r"^\*\*\* (stack smashing|buffer overflow) detected",  # glibc
            r"^(double free|free\(\): invalid|malloc\(\): )",  # glibc
            r"Segmentation fault|core dumped",  # a shell wrapper's report of a child
        ]
    ),
    re.MULTILINE,
)
TRACE_LINES = 6  # of the trace, quoted in the reason's details


@dataclass(frozen=True)
class Ending:
    """How one run ended, as far as the checker saw it."""

    returncode: int | None  # None: still running when the case stopped it
    killed_by_us: bool  # the case's stop found it running (its signal is ours)
    stderr_after: str  # what it printed on stderr after the last message it was sent
    stderr_tail: str = ""  # the last of all it printed there (a non-zero exit's why)


def crash_trace(text: str) -> list[str]:
    """The lines from the first crash trace in ``text`` on (empty: none)."""
    match = CRASH_TRACES.search(text)
    if match is None:
        return []
    start = text.rfind("\n", 0, match.start()) + 1
    lines = text[start:].splitlines()
    return lines[:TRACE_LINES] + ([lines[-1]] if len(lines) > TRACE_LINES else [])


def trace_offset(stderr: Path, limit: int = 1 << 20) -> int | None:
    """The byte offset in the file ``stderr`` where its first crash trace begins (None:
    none, or a file past ``limit`` bytes: then the last message sent is said)."""
    try:
        data = stderr.read_bytes() if stderr.stat().st_size <= limit else b""
    except OSError:
        return None
    match = CRASH_TRACES.search(data.decode("latin-1"))  # one character a byte
    return None if match is None else match.start()


def _last_line(text: str) -> str | None:
    """The last line of ``text`` with something on it, cut short (``_cut``)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return _cut(lines[-1]) if lines else None


def _telling(trace: list[str]) -> str:
    """The line of a trace that names the error: a Python traceback's last, else the
    first (Java's "Exception in thread ...: ...", a panic's message)."""
    return _cut((trace[-1] if trace[0].startswith("Traceback") else trace[0]).strip())


def _cut(line: str, limit: int = 160) -> str:
    """A line a reason quotes, at most ``limit`` characters."""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def describe_code(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def judge(ending: Ending, *, game_over: bool, broken_off: bool, after: str) -> (
    tuple[Rule, str] | None
):
    """The rule the ending breaks and the line that says so, or None if it breaks none.

    ``game_over``: the game reached its last message; ``broken_off``: the server (or the
    table) ended the game early, and any ending is accepted; ``after``: the last message
    the program was sent, to say what it crashed on.
    """
    if broken_off or ending.killed_by_us:
        return None
    code = ending.returncode
    trace = crash_trace(ending.stderr_after)
    shown = trace or (crash_trace(ending.stderr_tail) if code else [])
    said = f" ({_telling(shown)})" if shown else ""
    last = _last_line(ending.stderr_tail) if code and not shown else None
    if last:  # no trace: a program that ends itself on an error says why on its way out
        said = f" (its last line on stderr: {last})"
    signalled = code is not None and code < 0
    crashed = signalled or bool(trace) or (bool(code) and (not game_over or bool(shown)))
    if crashed and code:
        return obligations.CRASH, f"it crashed, {describe_code(code)}, after {after}{said}"
    if crashed:
        return obligations.CRASH, f"it printed a crash on stderr after {after}{said}"
    if code:
        return obligations.STATUS, f"it {describe_code(code)} at the end of its game{said}"
    return None
