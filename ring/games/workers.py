"""CPU-heavy work off the event loop: worker processes, each call awaited under a deadline.

A server's Trio loop serves every game of every service at once, so one step
that computes for long (a built-in player's exhaustive search) stops them
all: replies wait, and clocks run. A worker *thread* does not help enough in
CPython: the search holds the GIL and hands it back to the loop only at each
switch interval (5 ms), twice over for every reply (docs/measurements/stall.md has the
figures). So the work goes to another process.

``Workers(size)`` starts up to ``size`` processes, each when a call first
finds no idle one: ``python -m ring.games.workers``, a fresh interpreter in a
session of its own, so it inherits none of the server's sockets, re-runs
none of its main module, and no Ctrl-C at the terminal reaches it; calls go
in on its standard input and answers come out on its standard output
(``multiprocessing.connection`` framing; what the function prints goes to
standard error). ``await workers.run(function, *args, timeout=T)`` hands
the call to an idle worker (waiting for one if all are busy), waits for the
answer without blocking the loop and returns it, or raises what the
function raised (as ``WorkerError``). Past ``T`` seconds, the wait for a
worker included, it raises ``trio.TooSlowError``; a worker still computing
then is killed, so a runaway call costs no more than its deadline and the
next call gets a fresh worker. The function and its arguments travel by
pickle: a module-level function of plain values.

``aclose()`` ends every worker; a worker whose server has gone ends by itself
(its standard input closes). Windows has no such pipes for Trio to wait on:
there a call runs in a thread instead (the loop is then less free).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

import trio

T = TypeVar("T")
# How long a worker may take to be reaped once told to end (off the loop, in a thread).
REAP_TIMEOUT = 5.0
NICENESS = 10  # added to a worker's: the OS runs the server first


def default_size() -> int:
    """One worker a core, less the server's own, between 1 and 4."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


class WorkerError(Exception):
    """The function raised in the worker (its type and message), or the worker died."""


def _serve() -> None:
    """A worker's life (``python -m ring.games.workers``): calls in, answers out, to stdin's end."""
    calls = Connection(os.dup(0), writable=False)
    answers = Connection(os.dup(1), readable=False)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # a print in a function must not garble the answers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The server's loop comes first: on a machine with few cores a worker
    # computing beside it would otherwise take turns with it for a core.
    os.nice(NICENESS)
    while True:
        try:
            function, args = calls.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[bool, Any] = (True, function(*args))
        except Exception as exc:  # handed back to the caller, which raises it
            answer = (False, f"{type(exc).__name__}: {exc}")
        try:
            answers.send(answer)
        except OSError:
            return


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ring.games.workers"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.calls = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.answers = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()

    async def call(self, function: Callable[..., T], args: tuple[Any, ...]) -> T:
        try:
            self.calls.send((function, args))  # a few hundred bytes: the pipe takes them at once
            await trio.lowlevel.wait_readable(self.answers.fileno())
            ok, value = self.answers.recv()
        except (EOFError, OSError) as exc:
            raise WorkerError(f"the worker process died: {exc!r}") from None
        if not ok:
            raise WorkerError(value)
        return value  # type: ignore[no-any-return]

    async def end(self, *, kill: bool) -> None:
        """Stop the worker (at once if ``kill``, else once it reads the end of its input)
        and reap it, off the loop."""
        if kill:
            self.process.kill()
        self.calls.close()
        self.answers.close()
        with trio.CancelScope(shield=True):
            try:
                await trio.to_thread.run_sync(self.process.wait, REAP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                await trio.to_thread.run_sync(self.process.wait, REAP_TIMEOUT)


class Workers:
    """Up to ``size`` worker processes, started as calls need them."""

    def __init__(self, size: int | None = None) -> None:
        self.size = default_size() if size is None else size
        if self.size < 1:
            raise ValueError("a pool needs at least one worker")
        self.calls = 0  # calls answered, for tests and benches
        self._idle: list[_Worker] = []
        self._started = 0
        self._alive = 0
        self._freed = trio.Event()  # set whenever a worker becomes idle or goes
        self._closed = False

    async def run(self, function: Callable[..., T], *args: Any, timeout: float) -> T:
        """``function(*args)`` in a worker; ``trio.TooSlowError`` past ``timeout`` seconds."""
        if sys.platform == "win32":
            with trio.fail_after(timeout):
                return await trio.to_thread.run_sync(function, *args, abandon_on_cancel=True)
        with trio.fail_after(timeout):
            await trio.lowlevel.checkpoint_if_cancelled()  # no time left: start nothing
            worker = await self._take()
            try:
                answer = await worker.call(function, args)
            except BaseException:
                # Cancelled or timed out mid-call, or the worker died: it may
                # still be computing, and its next answer would be this one's.
                await self._discard(worker)
                raise
        await self._give_back(worker)
        self.calls += 1
        return answer

    async def _take(self) -> _Worker:
        while True:
            if self._closed:
                raise WorkerError("the workers are closed")
            if self._idle:
                return self._idle.pop()
            if self._alive < self.size:
                self._started += 1
                self._alive += 1
                return _Worker()
            self._freed = trio.Event() if self._freed.is_set() else self._freed
            await self._freed.wait()

    async def _give_back(self, worker: _Worker) -> None:
        if self._closed:
            self._alive -= 1
            await worker.end(kill=False)
            return
        self._idle.append(worker)
        self._freed.set()

    async def _discard(self, worker: _Worker) -> None:
        self._alive -= 1
        self._freed.set()
        await worker.end(kill=True)

    async def aclose(self) -> None:
        """End every idle worker (a busy one ends as its call does); shielded from cancellation."""
        self._closed = True
        idle, self._idle = self._idle, []
        self._alive -= len(idle)
        self._freed.set()
        for worker in idle:
            await worker.end(kill=False)


if __name__ == "__main__":
    _serve()
