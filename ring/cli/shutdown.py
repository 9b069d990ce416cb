"""How a long-running ``ring`` command stops: Ctrl-C, SIGTERM, and the exit codes.

Tables and servers stop the same way for both signals, so that their mDNS
services are withdrawn and their transcripts closed either way; the exit
code still tells which signal it was (130 and 143, as a shell reports them).
"""

from __future__ import annotations

import signal

import trio

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


class Terminated(Exception):
    """SIGTERM arrived: unwind as for Ctrl-C."""


async def raise_on_stop_signals() -> None:
    """Run in a nursery: SIGTERM raises ``Terminated`` and SIGINT ``KeyboardInterrupt`` here.

    Raised in this task, either one cancels the nursery's other tasks at
    their next checkpoint, so every service unwinds the same way and can tell
    its games. (Left to trio, a Ctrl-C may surface inside whatever task is
    running, in the middle of writing a game's messages.)
    """
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated


def raised(exc: BaseException, kind: type[BaseException]) -> bool:
    """``exc`` is ``kind``, possibly wrapped in exception groups by the nurseries it crossed."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(kind)[1] is None
    return isinstance(exc, kind)


def stop_code(exc: BaseException) -> int | None:
    """The exit code for a stop by signal, or None if ``exc`` is something else."""
    if raised(exc, Terminated):
        return EXIT_TERMINATED
    if raised(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return None
