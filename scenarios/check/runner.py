"""Run a game's cases against a program: one program run a case, each under a deadline.

For each case the runner listens on a fresh loopback port, starts the
program with the placeholders of docs/protocols/programs.md
(``scenarios.programs``), lets the case play the server's side
(``Case.play`` with a ``CaseContext``), stops the program whole when the
case is over, whatever happened, and judges how it ended
(``scenarios.check.exits``). A case ends in FAIL when it raises
``CaseFailed`` (the judge's ``fail``, naming the rule), when its deadline
passes, when its program cannot be started, or when the program crashed; in
WARN when it finished with warnings; else in PASS.

Independent cases run ``jobs`` at a time, and a case whose program has used
no CPU for a second gives its place to the next (``IDLE_RELEASE``): a
program that waits for ever waits in every case at once, so such a suite
takes about its longest wait, not that wait once a ``jobs``; a program that
thinks keeps its place, so its moves never compete with more cases than
``jobs``.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import trio

from scenarios.check import exits, obligations
from scenarios.check.boxed import boxed_for
from scenarios.check.context import HOST, Case, CaseContext
from scenarios.check.manual import ManualProgram
from scenarios.check.obligations import Rule
from scenarios.check.verdicts import CaseFailed, CaseResult, CaseVerdict
from scenarios.programs import Program, ProgramError, RunningProgram

# A case whose program used no CPU for this long gives its place to the next case.
IDLE_RELEASE = 1.0
IDLE_SAMPLE = 0.25  # how often its CPU time is read
IDLE_CPU = 0.01  # seconds of CPU in IDLE_RELEASE that still count as idle
# After a case failed on what the program did (a close, say), how long to wait for it
# to exit, so that a crash is said as the cause.
CRASH_WAIT = 1.0


async def run_case(
    case: Case,
    program: Program | ManualProgram,
    logs: Path,
    place: trio.Semaphore | None = None,
) -> CaseResult:
    """One case, start to finish; the program is stopped whatever happens, then how it
    ended is judged. ``place``: the case's place among those running, released once the
    case is over or its program idle (``IDLE_RELEASE``)."""
    began = time.monotonic()
    # A case that starts its own servers (Old Maid's table) takes the fixed port itself.
    manual = isinstance(program, ManualProgram) and not case.starts_itself
    network = None
    if isinstance(program, Program) and program.box is not None:
        # Boxed: a network of the case's own, holding only its listener; an Old Maid
        # case's program is dialled by our peers, so it keeps the machine's.
        program, network = await boxed_for(program, case.starts_itself)
    if network is not None:
        try:
            listener = await network.listen(HOST)
        except BaseException:
            with trio.CancelScope(shield=True):
                await network.aclose()
            raise
    else:
        listener = (await trio.open_tcp_listeners(program.port if manual else 0, host=HOST))[0]
    context = CaseContext(case, program, logs, listener)
    released = trio.Event()
    if place is None:
        released.set()
    verdict, reason, rule = CaseVerdict.ERROR, "the case was stopped", None  # until it has played
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_give_up_place_when_idle, context, place, released)
            verdict, reason, rule = await _played(case, context)
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            closed = any(wire.closed_by_client for wire in context.wires) or not context.wires
            failed = verdict is CaseVerdict.FAIL
            if failed and closed and isinstance(context.running, RunningProgram):
                await context.running.wait(CRASH_WAIT)  # a crash, if it is one, says why
            for wire in context.wires:
                await wire.close()
            await listener.aclose()
            if context.running is not None:
                await context.running.stop()
            if network is not None:
                await network.aclose()
            if not released.is_set() and place is not None:
                place.release()
    judged = verdict in (CaseVerdict.PASS, CaseVerdict.FAIL)
    if judged and isinstance(context.running, RunningProgram):
        crash = _how_it_ended(context, context.running)
        # A crash explains a FAIL that followed from it, but for one before the program
        # even connected: that one says how it exited already.
        explains = crash is not None and crash[0] is obligations.CRASH
        if crash is not None and (
            verdict is CaseVerdict.PASS or (explains and rule is not obligations.CONNECT)
        ):
            was = f" (so {reason})" if verdict is CaseVerdict.FAIL else ""
            tested = _read_as_a_stream(case) if explains else ""
            rule, reason = crash[0], crash[1] + was + tested
            verdict = CaseVerdict.FAIL
    rules: list[Rule] = [rule] if rule is not None else []
    if verdict is CaseVerdict.PASS and context.judge.warnings:
        verdict, reason = CaseVerdict.WARN, "; ".join(context.judge.warnings)
        rules = list(context.judge.warned)
    stdout, stderr = context.running.output() if context.running else ([], [])
    return CaseResult(
        case.case_id,
        case.title,
        case.section,
        verdict,
        reason,
        time.monotonic() - began,
        transcript=context.transcript(),
        stdout=stdout,
        stderr=stderr,
        notes=context.judge.notes,
        figures=context.judge.figures,
        rules=rules,
    )


async def _played(case: Case, context: CaseContext) -> tuple[CaseVerdict, str, Rule | None]:
    """The case played to its verdict, as far as the game goes: what it raised, said."""
    try:
        with trio.fail_after(case.deadline):
            if not case.starts_itself:
                await context.start()
            await case.play(context)
    except CaseFailed as failed:
        return CaseVerdict.FAIL, str(failed), failed.rule
    except trio.TooSlowError:
        # Every wait of a case has its own limit, each a rule's; the deadline is a backstop
        # sized for the slowest legal program, so passing it is the checker's failure.
        reason = (
            f"the case did not finish within {case.deadline:g} s, although each of its waits "
            "has a limit of its own; please report it"
        )
        return CaseVerdict.ERROR, reason, None
    except ProgramError as exc:
        return CaseVerdict.FAIL, str(exc), obligations.CONNECT
    except Exception as exc:  # our bug: said as ours, never as the program's
        reason = f"the checker itself failed ({type(exc).__name__}: {exc}); please report it"
        return CaseVerdict.ERROR, reason, None
    return CaseVerdict.PASS, "as the protocol says", None


def _how_it_ended(context: CaseContext, running: RunningProgram) -> tuple[Rule, str] | None:
    """The rule the program's ending breaks, and why (``scenarios.check.exits``). What it
    crashed on is the last message sent before it last wrote to stderr (a crash's trace),
    else the last message sent."""
    after, _ = context.last_sent_before(exits.trace_offset(running.stderr_path))
    # A trace counts as a crash only once the game's last message was sent (exits.py).
    sent = [size for _, size in context.sends if size >= 0]
    mark = sent[-1] if sent else 0
    ending = exits.Ending(
        returncode=running.returncode,
        killed_by_us=running.killed,
        stderr_after=running.stderr_since(mark),
        stderr_tail=running.stderr_since(0),
    )
    if not context.wires and context.last_seen is not None:  # Old Maid: what our side saw
        after = context.last_seen() or after
    return exits.judge(
        ending, game_over=context.game_over, broken_off=context.broken_off, after=after
    )


def _read_as_a_stream(case: Case) -> str:
    """For a crash in a case there for reading a stream (the framing cases), most likely
    its cause: the rule broken is still the crash, but the line names the rule tested."""
    stream = next((rule for rule in case.tests if rule.key.endswith(".stream")), None)
    return "" if stream is None else f"; this case is there for {stream.cited}: {stream.text}"


async def _give_up_place_when_idle(
    context: CaseContext, place: trio.Semaphore | None, released: trio.Event
) -> None:
    """Release ``place`` once the case's program has used no CPU for ``IDLE_RELEASE``:
    it waits (for a message it missed, say), and waiting takes no core from the others."""
    if place is None:
        return
    samples: collections.deque[tuple[float, float]] = collections.deque()
    while True:
        await trio.sleep(IDLE_SAMPLE)
        running = context.running
        if not isinstance(running, RunningProgram) or running.exited:
            samples.clear()
            continue
        now = trio.current_time()
        samples.append((now, running.cpu_seconds()))
        # Keep the newest sample at least IDLE_RELEASE old, and those since.
        while len(samples) > 1 and now - samples[1][0] >= IDLE_RELEASE:
            samples.popleft()
        window_old, window_now = samples[0], samples[-1]
        if now - window_old[0] >= IDLE_RELEASE and window_now[1] - window_old[1] < IDLE_CPU:
            released.set()
            place.release()
            return


async def run_cases(
    cases: Sequence[Case],
    program: Program | ManualProgram,
    logs: Path,
    *,
    jobs: int = 4,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Every case, ``jobs`` at a time but for those whose program is idle (one by one for
    a program started by hand); results in the cases' order."""
    results: dict[str, CaseResult] = {}
    places = trio.Semaphore(max(1, jobs))

    async def one(case: Case) -> None:  # holding a place, which run_case gives back
        result = await run_case(case, program, logs, places)
        results[case.case_id] = result
        if on_result is not None:
            on_result(result)

    if isinstance(program, ManualProgram):  # a person starts each run: in order, one by one
        for case in cases:
            results[case.case_id] = result = await run_case(case, program, logs)
            if on_result is not None:
                on_result(result)
    else:
        async with trio.open_nursery() as nursery:
            for case in cases:
                await places.acquire()  # in order, each as a place frees up
                nursery.start_soon(one, case)
    return [results[case.case_id] for case in cases]
