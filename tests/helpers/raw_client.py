"""A raw connection to a line-protocol server, read through the game's own sans-IO client end.

The Reversi and No Tipping tests each make one (``tests.helpers.reversi.Client``,
``tests.helpers.notipping.Client``) with their game's ``ClientConnection``.
"""

from __future__ import annotations

from typing import Any

import trio

from ring.wire.sansio import NEED_DATA

TIMEOUT = 10.0


class RawClient:
    """One raw connection: bytes sent as given, the server's messages as events."""

    def __init__(self, stream: trio.abc.Stream, protocol: Any) -> None:
        self.stream = stream
        self.protocol = protocol
        self.timeout = TIMEOUT  # the mock-clock tests wait longer than a move's time

    async def send(self, data: bytes) -> None:
        with trio.fail_after(TIMEOUT):
            await self.stream.send_all(data)

    async def message(self) -> Any:
        with trio.fail_after(self.timeout):
            while (event := self.protocol.next_event()) is NEED_DATA:
                try:
                    data = await self.stream.receive_some(4096)
                except trio.BrokenResourceError:
                    data = b""
                self.protocol.receive_data(data)
            return event
