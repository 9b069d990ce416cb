"""A game client's end of a connection: its bytes out, the server's events in, every wait bounded.

The table clients (Reversi, No Tipping) play through a ``Conversation``: it
reads through ``ring.wire.transport.Connection`` and turns every way the game can
fail to go on (silence, a broken protocol, a stream that takes no more) into
``ClientError``, one line for the user. ``while_thinking`` races the agent's
choice against the server's next event, so a verdict that comes while a
person is still typing reaches them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import trio

from ring.wire.sansio import SansIO
from ring.wire.transport import SEND_FAILED, Connection, write

Move = TypeVar("Move")


class ClientError(Exception):
    """The game could not be played to its end: one line for the user."""


class Conversation(Generic[Move]):
    def __init__(
        self,
        stream: trio.abc.Stream,
        protocol: SansIO,
        timeout: float,
        remote_error: type[Exception],
    ) -> None:
        self.stream = stream
        self.timeout = timeout
        self.protocol = protocol
        self._connection = Connection(stream, protocol, timeout=timeout)
        self._remote_error = remote_error

    async def send(self, data: bytes) -> None:
        """Write bytes the protocol has made (a join, a move) in one write."""
        try:
            await write(self.stream, data, self.timeout)
        except SEND_FAILED:
            raise ClientError("the server does not take our messages any more") from None

    async def next_event(self) -> Any:
        try:
            return await self._connection.receive()
        except trio.TooSlowError:
            raise ClientError(f"the server said nothing for {self.timeout:g} s") from None
        except self._remote_error as exc:
            raise ClientError(f"the server broke the protocol: {exc}") from None

    async def while_thinking(
        self, thinking: Callable[[], Awaitable[Move]]
    ) -> tuple[Any | None, Move | None]:
        """The agent's move, or (the server's event, None) if the server speaks first."""
        move: list[Move] = []
        event: list[Any] = []
        failed: list[ClientError] = []
        async with trio.open_nursery() as nursery:

            async def think() -> None:
                try:
                    move.append(await thinking())
                except ClientError as exc:  # a person quit
                    failed.append(exc)
                nursery.cancel_scope.cancel()

            async def listen() -> None:
                try:
                    event.append(await self.next_event())
                except ClientError as exc:
                    failed.append(exc)
                nursery.cancel_scope.cancel()

            nursery.start_soon(think)
            nursery.start_soon(listen)
        # While we think, the server only speaks to end the game: that wins a tie.
        if event:
            return event[0], None
        # Raised here rather than in the tasks: the nursery would wrap it in an ExceptionGroup.
        if failed:
            raise failed[0]
        return None, move[0]
