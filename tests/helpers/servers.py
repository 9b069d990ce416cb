"""A game server running in the test for the length of a ``with`` block."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio


@asynccontextmanager
async def running(serve: Callable[..., Awaitable[Any]], config: object) -> AsyncIterator[Any]:
    """``serve(config)`` started in a nursery of its own (it reports its server through
    ``task_status``); the server while the block runs, then cancelled."""
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve, config)
        yield server
        nursery.cancel_scope.cancel()
