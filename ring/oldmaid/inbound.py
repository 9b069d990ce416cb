"""The Old Maid peer's right side: its listener, and each connection dialled in to it.

Whoever holds the turn to our right dials in (or a seat further right, when the
players between are out). ``Inbound.handle`` reads each such connection: it
answers what cannot be a turn (a bad message, a connection from an address that
is not a player's, a turn not from whom it says, 14.5) and hands every turn to
the peer (``ring.oldmaid.taking``). The left side, the links we dial and the
exchanges on them, is ``ring.oldmaid.links``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import trio

from ring.games.events import EventLog
from ring.oldmaid.messages import Offer, YourTurn, error
from ring.oldmaid.proofs import Forged, Identity
from ring.oldmaid.protocol import Closed, Farewell, Invalid, Link, RemoteProtocolError, Role
from ring.oldmaid.reporting import Reporting
from ring.oldmaid.stand_ins import StandIns
from ring.oldmaid.table_side import NETWORK_ERRORS, TableSide
from ring.oldmaid.turns import PeerError, Turns, accusation
from ring.oldmaid.witnessing import Witnessing
from ring.wire.net import listen, mark_established, reserved_port
from ring.wire.transport import Connection, plain_ip

# A turn handed to us, and who sent it where that is certain (protocol 14.5).
TakeRequest = Callable[[Connection, YourTurn | Offer, str | None], Awaitable[None]]


class InboundConfig(Protocol):
    """The settings the right side reads; ``PeerConfig`` has them all."""

    timeout: float
    idle_timeout: float
    join_timeout: float
    first_message_timeout: float
    max_connections: int
    max_per_address: int | None
    exempt_loopback: bool
    stand_ins: StandIns


class Inbound:
    """The peer's listener and the connections dialled in to it.

    ``seated`` is set once the join reply has given the players; until then an
    inbound turn waits. ``last_heard``: ``trio.current_time()`` of the last message
    heard from anyone (the peer sets it as it starts, and gives up after its idle
    timeout of silence).
    """

    def __init__(
        self,
        config: InboundConfig,
        turns: Turns,
        table: TableSide,
        log: EventLog,
        *,
        seated: trio.Event,
        identity: Identity,
        reporting: Reporting,
        witnessing: Witnessing,
    ) -> None:
        self._config = config
        self._turns = turns
        self._table = table
        self._log = log
        self._seated = seated
        self._identity = identity
        self._reporting = reporting
        self._witnessing = witnessing
        self.last_heard = 0.0

    async def listen(
        self,
        host: str,
        port: int,
        handler: Callable[[trio.SocketStream], Awaitable[None]],
        *,
        task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        config = self._config
        try:
            listen_late = config.stand_ins.listen_late
            if listen_late is not None:  # an older client's habit (13.1), for ring check
                with reserved_port(host, port) as port:  # bound, not listening: dials are refused
                    task_status.started((host, port))
                    task_status = trio.TASK_STATUS_IGNORED
                    await self._seated.wait()
                    await trio.sleep(listen_late)
            await listen(
                handler,
                host,
                port,
                max_connections=config.max_connections,
                max_per_address=config.max_per_address,
                exempt_loopback=config.exempt_loopback,
                task_status=task_status,
            )
        except OSError as exc:
            raise PeerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None

    async def handle(self, stream: trio.SocketStream, take: TakeRequest) -> None:
        """Read one connection dialled in to us; each turn a player sends goes to ``take``."""
        config = self._config
        link = self._witnessing.wrap(
            Connection(wrapped(config, stream), Link(Role.PICKER), timeout=config.timeout),
            Role.PICKER,
        )
        established = False
        proved: str | None = None  # the player this connection proved it is (14.5)
        # From connect: invalid messages do not buy a stray more time.
        first_deadline = trio.current_time() + config.first_message_timeout
        try:
            while True:
                # Until it has sent something valid, a connection may be a
                # stray or part of a flood: it gets a short wait, and
                # ring.wire.net.listen may evict it to make room at the cap.
                wait = (
                    config.idle_timeout
                    if established
                    else max(0.0, first_deadline - trio.current_time())
                )
                try:
                    event = await link.receive(timeout=wait)
                except trio.TooSlowError:
                    if not established:
                        return  # closed without a word, as the table does
                    raise
                except RemoteProtocolError as exc:
                    await link.send(Farewell(f"{exc}; closing the connection"))
                    raise
                self.last_heard = trio.current_time()
                if isinstance(event, Closed):
                    return
                if isinstance(event, Invalid):
                    await link.send(error(event.reason))
                    continue
                if not established:
                    established = True
                    mark_established()
                    # Once a connection: its source address stays what it is.
                    if not self._seated.is_set():
                        with trio.fail_after(config.join_timeout):
                            await self._seated.wait()
                    stranger = self.not_a_player(stream)
                    if stranger is not None:
                        await link.send(error(stranger))
                        self._log.write("stranger", error=stranger)
                        return
                try:
                    proved = self._identity.check(event.sender, event.proof, proved)
                except Forged as exc:
                    await self._refuse_forged(link, exc, event)
                    continue  # refused and reported: the game goes on without it
                await take(link, event, self._identity.known(event.sender, proved))
        except NETWORK_ERRORS as exc:
            # One broken neighbour connection is not the end of the game: the
            # turn holder on the other end sees its own error.
            self._log.write("inbound_error", error=str(exc) or type(exc).__name__)

    async def _refuse_forged(
        self, link: Connection, forged: Forged, turn: YourTurn | Offer
    ) -> None:
        """Refuse a turn that is not from whom it says, and report it (14.5): in a verified
        game the turn's mac goes with it, which tells the table its author. We did not
        take it, so the game goes on unless the table names the author."""
        problem = accusation(
            forged.culprit,
            "impersonation",
            forged.what if forged.culprit else f"a connection {forged.what}",
            **self._reporting.turn_evidence(turn),
        )
        await link.send_or_close(error(f"refused: {problem}"))
        await self._table.report_refused(problem)

    def not_a_player(self, stream: trio.SocketStream) -> str | None:
        """Why a turn from this connection cannot be a player's, or None if it may be.

        The protocol does not say who is speaking, but a turn can only come from
        a player, so from one of the addresses the table seated. Where a player
        gave a name rather than an address (or none we can compare), anything
        goes: a stranger then cannot be told from a player.
        """
        try:
            source = plain_ip(stream.socket.getpeername()[0])
        except OSError:
            return None
        hosts = {host for (host, _), _ in self._turns.players}
        if not all(_is_specific_ip(host) for host in hosts) or source in hosts:
            return None
        return f"{source} is not the address of any player of this game; closing the connection"


def wrapped(config: InboundConfig, stream: trio.SocketStream) -> trio.abc.HalfCloseableStream:
    """``stream`` as the peer reads and writes it: through ``wrap_stream`` where ring check
    set one (a stand-in for an older client's habit), else as it is."""
    wrap = config.stand_ins.wrap_stream
    return stream if wrap is None else wrap(stream)


def _is_specific_ip(host: str) -> bool:
    try:
        return not ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False  # a host name: we cannot compare it with a source address
