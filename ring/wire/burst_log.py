"""Log lines that come in bursts, at most one of each kind a second.

A server logs a line for each connection that leaves before it names itself
or is refused at a cap. One such line is worth reading; three hundred in
the same millisecond (a lab's machines closing their clients at once, a
flood of connections at a cap) are one write each, while every game waits:
in the fairness bench's crowd, Reversi's and No Tipping's stall when 300
connections closed at once fell from 133-159 ms to 42-60 ms without those
lines. So the first line of a kind goes out at once, the others of that kind
within ``window`` seconds are counted, and one line says how many when the
window is over ("and 299 more within 1 s: closed before naming itself"; a
single one is written as itself).

The count is said by ``run``, a task of the server's (``await
nursery.start(burst_log.run)``); without it, as in a tournament's lobby or
a test, every line goes out as it comes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import trio

WINDOW = 1.0  # seconds: at most one line of a kind this often


class BurstLog:
    """Writes lines through ``write``; of each kind, at most one a ``window``."""

    def __init__(self, write: Callable[[str], None], window: float = WINDOW) -> None:
        self._write = write
        self._window = window
        self._quiet_until: dict[str, float] = {}  # kind: when its next line may go out
        self._held: dict[str, int] = {}  # kind: lines not written this window
        self._last_held: dict[str, str] = {}  # kind: the last of them
        self._held_some = trio.Event()
        self._running = False

    def say(self, kind: str, line: str) -> None:
        """Write ``line``, of ``kind`` (its words without the details), unless one of that
        kind went out within the window: then it is counted, for ``run`` to say."""
        if not self._running:
            self._write(line)
            return
        now = trio.current_time()
        if now >= self._quiet_until.get(kind, -math.inf):
            self._quiet_until[kind] = now + self._window
            self._write(line)
            return
        self._held[kind] = self._held.get(kind, 0) + 1
        self._last_held[kind] = line
        self._held_some.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Say each held count when its window is over, until cancelled (then at once)."""
        self._running = True
        task_status.started()
        try:
            while True:
                await self._held_some.wait()
                self._held_some = trio.Event()
                while self._held:
                    kind = min(self._held, key=lambda k: self._quiet_until[k])
                    await trio.sleep_until(self._quiet_until[kind])
                    self._say_held(kind)
        finally:
            self._running = False
            for kind in list(self._held):
                self._say_held(kind)

    def _say_held(self, kind: str) -> None:
        count = self._held.pop(kind, 0)
        last = self._last_held.pop(kind, "")
        if count:
            # This line takes the window's place: the next of its kind waits a window.
            self._quiet_until[kind] = trio.current_time() + self._window
            self._write(
                last if count == 1 else f"and {count} more within {self._window:g} s: {kind}"
            )
