"""``ring.games.workers``: calls answered by worker processes, the loop free, deadlines kept.

The functions sent are the standard library's, so a worker imports nothing of
the tests. No timing is asserted: a call past its deadline is one that
sleeps for a minute against a deadline of a fraction of a second.
"""

from __future__ import annotations

import math
import os
import time

import pytest
import trio

from ring.games.workers import WorkerError, Workers

WAIT = 30.0  # seconds: a spawned worker's first answer (it imports Python first)


async def test_a_call_is_answered_by_a_worker_process() -> None:
    workers = Workers(1)
    try:
        assert await workers.run(math.factorial, 30, timeout=WAIT) == math.factorial(30)
        assert await workers.run(sorted, [3, 1, 2], timeout=WAIT) == [1, 2, 3]
        assert workers.calls == 2
    finally:
        await workers.aclose()


async def test_a_worker_lives_apart_and_what_a_function_prints_garbles_nothing() -> None:
    workers = Workers(1)
    try:
        assert await workers.run(print, "to stderr", timeout=WAIT) is None
        assert await workers.run(math.factorial, 4, timeout=WAIT) == 24
        [worker] = workers._idle
        # A session of its own: Ctrl-C at the server's terminal does not reach it.
        assert os.getsid(worker.process.pid) == worker.process.pid != os.getsid(0)
    finally:
        await workers.aclose()


async def test_the_loop_runs_other_tasks_while_a_worker_computes() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.sleep(0)

    workers = Workers(1)
    try:
        await workers.run(math.factorial, 1, timeout=WAIT)  # the worker has started
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            await trio.sleep(0)
            before = ticks
            # A tenth of a second of sleep in the worker: on the loop it would
            # be one step, and the ticker would not move.
            await workers.run(time.sleep, 0.1, timeout=WAIT)
            during = ticks - before
            nursery.cancel_scope.cancel()
        assert during > 1
    finally:
        await workers.aclose()


async def test_what_the_function_raises_comes_back_as_a_worker_error() -> None:
    workers = Workers(1)
    try:
        with pytest.raises(WorkerError, match="ValueError: math domain error"):
            await workers.run(math.sqrt, -1, timeout=WAIT)
        assert await workers.run(math.sqrt, 4, timeout=WAIT) == 2.0  # the worker lives on
    finally:
        await workers.aclose()


async def test_a_call_past_its_deadline_kills_its_worker_and_the_next_gets_a_new_one() -> None:
    workers = Workers(1)
    try:
        await workers.run(math.factorial, 1, timeout=WAIT)
        with pytest.raises(trio.TooSlowError):
            await workers.run(time.sleep, 60, timeout=0.5)
        assert await workers.run(math.factorial, 5, timeout=WAIT) == 120
        assert workers._started == 2
    finally:
        await workers.aclose()


async def test_no_deadline_left_sends_nothing() -> None:
    workers = Workers(1)
    try:
        with pytest.raises(trio.TooSlowError):
            await workers.run(math.factorial, 5, timeout=0)
        assert workers._started == 0  # no process was started for it
    finally:
        await workers.aclose()


async def test_calls_beyond_the_size_wait_for_a_free_worker() -> None:
    workers = Workers(1)
    answers: list[int] = []

    async def call(n: int) -> None:
        answers.append(await workers.run(math.factorial, n, timeout=WAIT))

    try:
        async with trio.open_nursery() as nursery:
            for n in range(5):
                nursery.start_soon(call, n)
        assert sorted(answers) == [1, 1, 2, 6, 24]
        assert workers._started == 1
    finally:
        await workers.aclose()


async def test_closing_ends_the_workers() -> None:
    workers = Workers(2)
    async with trio.open_nursery() as nursery:
        for n in range(2):
            nursery.start_soon(lambda n=n: workers.run(time.sleep, 0.2, timeout=WAIT))
    processes = [worker.process for worker in workers._idle]
    assert len(processes) == 2
    await workers.aclose()
    with pytest.raises(WorkerError):
        await workers.run(math.factorial, 1, timeout=WAIT)
    for process in processes:
        assert process.returncode == 0  # it ended at the end of its input, and was reaped
