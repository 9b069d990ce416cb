"""``ring.wire.burst_log``: of each kind of line, one at once and a count a window later."""

from __future__ import annotations

import trio
import trio.testing

from ring.wire.burst_log import BurstLog

KIND = "closed before naming itself"


def timed_log() -> tuple[list[tuple[float, str]], BurstLog]:
    """A log of one-second windows that notes when each line went out."""
    lines: list[tuple[float, str]] = []
    return lines, BurstLog(lambda line: lines.append((trio.current_time(), line)), window=1.0)


async def test_without_its_task_every_line_goes_out() -> None:
    lines: list[str] = []
    log = BurstLog(lines.append)
    for port in range(3):
        log.say(KIND, f"10.0.0.1:{port}: {KIND}")
    assert lines == [f"10.0.0.1:{port}: {KIND}" for port in range(3)]


async def test_a_burst_is_its_first_line_and_one_count_when_the_window_ends(
    autojump_clock: trio.abc.Clock,
) -> None:
    lines, log = timed_log()
    async with trio.open_nursery() as nursery:
        await nursery.start(log.run)
        start = trio.current_time()
        for port in range(300):
            log.say(KIND, f"10.0.0.1:{port}: {KIND}")
        log.say("no name within 120 s", "10.0.0.2:1: no name within 120 s")  # its own kind
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    assert [(t - start, line) for t, line in lines] == [
        (0.0, f"10.0.0.1:0: {KIND}"),
        (0.0, "10.0.0.2:1: no name within 120 s"),
        (1.0, f"and 299 more within 1 s: {KIND}"),
    ]


async def test_after_a_count_the_next_line_waits_its_window_then_goes_out_alone(
    autojump_clock: trio.abc.Clock,
) -> None:
    lines, log = timed_log()
    async with trio.open_nursery() as nursery:
        await nursery.start(log.run)
        start = trio.current_time()
        log.say(KIND, "a")
        log.say(KIND, "b")  # held: written at 1.0
        await trio.sleep(1.5)
        log.say(KIND, "c")  # within the count's window: held, said at 2.0
        await trio.sleep(1.0)
        log.say(KIND, "d")  # at 2.5, within the second count's window (until 3.0)
        await trio.sleep(2.0)
        log.say(KIND, "e")  # at 4.5: the windows are over, out at once
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert [(t - start, line) for t, line in lines] == [
        (0.0, "a"),
        (1.0, "b"),  # one held line is written as itself
        (2.0, "c"),
        (3.0, "d"),
        (4.5, "e"),
    ]


async def test_a_count_still_held_is_said_when_its_task_ends(
    autojump_clock: trio.abc.Clock,
) -> None:
    lines: list[str] = []
    log = BurstLog(lines.append, window=1.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(log.run)
        for _ in range(5):
            log.say(KIND, KIND)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert lines == [KIND, f"and 4 more within 1 s: {KIND}"]
    log.say(KIND, "after")  # its task is gone: lines go out as they come again
    assert lines[-1] == "after"
