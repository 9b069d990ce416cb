"""The Old Maid peer's dealings with the table, over one ``TableClient``.

Every request waits at most the peer timeout. Besides joining and drawing,
the peer tells the table about its hand (each discard, and ``out_of_cards``
once: protocol 7.8), asks whether the game is over before it blames a
neighbour (7.10), and says why it leaves (``give_up``, 5.8, or ``accuse``,
5.9).

The table is the peer's first connection and the one every other part asks,
so the failures that any connection or wait of the peer may raise
(``NETWORK_ERRORS``), and the line each becomes, are defined here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, NoReturn

import trio

from ring.games.events import EventLog
from ring.oldmaid.messages import (
    Accuse,
    DrawTurn,
    GameOver,
    GiveUp,
    Message,
    OutOfCards,
    Reply,
    Status,
    Witnessed,
)
from ring.oldmaid.protocol import Link, RemoteProtocolError, Role
from ring.oldmaid.table_client import TableClient, TableError
from ring.oldmaid.turns import PeerError, Turns, fault, wire
from ring.wire.net import dial
from ring.wire.transport import Connection

# Failures of one connection or wait; each becomes one line for the user. Not
# LocalProtocolError: that is our own bug, and swallowing it once hid a stuck game.
NETWORK_ERRORS = (
    RemoteProtocolError,
    TableError,
    OSError,
    trio.TooSlowError,
    trio.BrokenResourceError,
    trio.ClosedResourceError,
)


def as_peer_error(exc: BaseException) -> PeerError:
    """The one line for the user that a network failure (``NETWORK_ERRORS``) becomes."""
    if isinstance(exc, PeerError):
        return exc
    if isinstance(exc, trio.TooSlowError):
        return PeerError("a neighbour or the table did not answer in time")
    if isinstance(exc, OSError):
        return PeerError(f"network error: {exc.strerror or exc}")
    if isinstance(exc, (trio.BrokenResourceError, trio.ClosedResourceError)):
        return PeerError("a connection broke in the middle of the game")
    return PeerError(str(exc))


# After a neighbour fails, how long to wait for the table to abort the game
# before blaming the neighbour ourselves (see TableSide.game_is_over).
TABLE_GRACE = 0.5
# How long the table may take to answer a give_up report before we leave anyway.
GIVE_UP_WAIT = 2.0
# After an accusation the table takes a moment (its accuse window, 0.5 s) to end
# the game; the accuser waits this long for the notice before it leaves.
ACCUSE_WAIT = 3.0


CONNECT_FLOOR = 5.0  # seconds: the shortest wait for the table to take our dial


class TableSide:
    """The peer's end of its table connection, from the dial to the game-over notice."""

    def __init__(self, turns: Turns, log: EventLog, timeout: float) -> None:
        self._turns = turns
        self._log = log
        self._timeout = timeout
        self.client: TableClient | None = None  # once dialled
        self._out_lock = trio.Lock()

    async def find(
        self, name: str | None, interface: str | None, timeout: float
    ) -> tuple[str, int]:
        """The address of a waiting table, found over mDNS.

        ``name`` is its instance name, or the part before its id; ``interface``
        None looks on every interface.
        """
        # Imported here: a peer given --server never loads zeroconf.
        from ring.mdns.discovery import DiscoveryError, find_table, interfaces_for

        try:
            found = await find_table(
                "oldmaid", interfaces=interfaces_for(interface), timeout=timeout, name=name
            )
        except DiscoveryError as exc:
            raise PeerError(str(exc)) from None
        return found.address

    async def connect(self, host: str, port: int) -> trio.SocketStream:
        """Dial the table; the stream, whose local address faces the table."""
        try:
            # A refused dial fails at once; only a slow one waits, and never less than
            # CONNECT_FLOOR: a peer told to wait 1 s for its neighbours (a test, ring
            # check) must still reach a table on a machine busy for a moment.
            stream = await dial(host, port, timeout=max(self._timeout, CONNECT_FLOOR))
        except (OSError, trio.TooSlowError) as exc:
            raise PeerError(f"cannot reach the table at {host}:{port}: {exc}") from None
        self.client = TableClient(Connection(stream, Link(Role.TABLE_CLIENT)))
        return stream

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read the table's replies and its notice until it closes (``TableClient.run``)."""
        await self._connected.run(task_status=task_status)

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.connection.aclose()

    @property
    def _connected(self) -> TableClient:
        assert self.client is not None, "the table has not been dialled"
        return self.client

    async def request(
        self, message: Message, *, timeout: float | None = None, ahead_of_reports: bool = False
    ) -> Reply:
        """One request and its reply, within ``timeout`` (the peer timeout by default);
        ``ahead_of_reports``: see ``TableClient.request``."""
        wait = self._timeout if timeout is None else timeout
        return await self._connected.request(
            message, timeout=wait, ahead_of_reports=ahead_of_reports
        )

    def on_witnessed(self, handler: Callable[[Witnessed | DrawTurn], None]) -> None:
        """Hand every ``witnessed`` and ``draw_turn`` notice to ``handler`` (14.6)."""
        self._connected.on_witnessed = handler

    async def post(self, message: Message, *, at_once: bool = False) -> None:
        """A report, not waiting for its reply: it goes with the next message to the table,
        or within a moment, or ``at_once`` (protocol 14.6; ``TableClient.post``)."""
        await self._connected.post(message, timeout=self._timeout, at_once=at_once)

    # -- the end of the game -------------------------------------------------------

    @property
    def game_over(self) -> trio.Event:
        """Set when the table's game-over notice (or abort) has come."""
        return self._connected.game_over

    @property
    def notice(self) -> GameOver | None:
        return self._connected.notice

    async def game_is_over(self) -> bool:
        """Whether the table has ended the game, asking it if we have not heard.

        The table writes its game-over notice before the reply to any later
        request on the same connection, so a status reply settles it. If it
        says the game goes on, we wait a moment more: a neighbour that died
        dropped its table connection at the same instant, and the table may
        not have seen it yet. Then the game is aborted naming the player who
        died, not us for leaving first.
        """
        if not self.game_over.is_set():
            try:
                await self.request(Status())
            except NETWORK_ERRORS:
                return False
        with trio.move_on_after(TABLE_GRACE):
            await self.game_over.wait()
        return self.game_over.is_set()

    async def write_reports(self) -> None:
        """Write the queued reports now (the table may be holding a decided game for
        them); nothing if the table is gone."""
        if self.client is not None:
            with contextlib.suppress(*NETWORK_ERRORS):
                await self.client.write_reports()

    async def wait_for_verdict(self) -> None:
        """Wait a moment (``ACCUSE_WAIT``) for the table to end a game on what we reported
        (written now, not with the next message)."""
        await self._connected.write_reports()
        with trio.move_on_after(ACCUSE_WAIT):
            await self.game_over.wait()

    async def wait_game_over(self, timeout: float) -> None:
        with trio.move_on_after(timeout):
            await self.game_over.wait()
            return
        raise PeerError(f"the table did not announce the end within {timeout:g} s")

    async def give_up(self, exc: PeerError, *, seated: bool) -> NoReturn:
        """Tell the table why we leave, naming the culprit if we know it; then raise ``exc``.

        A player who is in and leaves aborts the game; without this word the
        table could only say that we left, blaming the player who waited
        rather than the one who fell silent (docs/protocols/oldmaid.md 5.8).
        What only a cheat or a bug explains (``exc.rule``) goes as an
        ``accuse`` (5.9), and we stay until the table has ended the game on it.
        """
        client = self.client
        if client is not None and seated and not client.game_over.is_set() and not exc.reported:
            exc.reported = True
            if exc.rule is not None and await self._accuse(client, exc):
                raise exc
            report = GiveUp(nick=exc.culprit, reason=exc.clause if exc.culprit else str(exc))
            reply = await _last_word(client, report)
            self._log.write(
                "give_up",
                nick=exc.culprit,
                reason=report.reason,
                accepted=reply is not None and reply.ok,
            )
        raise exc

    async def _accuse(self, client: TableClient, exc: PeerError) -> bool:
        """Accuse ``exc.culprit`` of ``exc.rule``; whether the table took it (then the
        game has ended, or we waited ``ACCUSE_WAIT`` for it to)."""
        reply = await _last_word(client, self._accusation(exc))
        self._log.write(
            "accuse",
            accused=exc.culprit,
            rule=exc.rule,
            evidence=exc.evidence,
            accepted=reply is not None and reply.ok,
            message=None if reply is None else reply.message,
        )
        if reply is None or not reply.ok:
            return False
        with trio.move_on_after(ACCUSE_WAIT):
            await client.game_over.wait()
        return True

    def _accusation(self, exc: PeerError) -> Accuse:
        assert exc.rule is not None
        return Accuse(
            rule=exc.rule, nick=self._turns.nick, accused=exc.culprit, evidence=exc.evidence
        )

    async def report_refused(self, exc: PeerError) -> None:
        """Tell the table of a message we refused (a forged turn, 14.5) and play on.

        We did not act on it, so the game is unharmed: the table names its author
        where the evidence proves who wrote it (and ends the game), and otherwise
        notes it while the game goes on (docs/protocols/oldmaid.md 5.9). A cheater
        cannot end a game by sending us what we refuse."""
        client = self.client
        if client is None or client.game_over.is_set() or exc.rule is None:
            return
        try:
            reply = await self.request(self._accusation(exc))
        except NETWORK_ERRORS:
            return  # the table is gone: the game ends without us saying more
        self._log.write(
            "refused",
            accused=exc.culprit,
            rule=exc.rule,
            evidence=exc.evidence,
            accepted=reply.ok,
            message=reply.message,
        )

    # -- our hand ------------------------------------------------------------------

    async def go_out(self) -> None:
        """Tell the table this hand is empty, once; before answering anyone ``out``."""
        async with self._out_lock:
            if self._turns.out:
                return
            reply = await self.request(OutOfCards())
            if not reply.ok:
                raise PeerError(f"the table refused out_of_cards: {reply.message}")
            self._turns.went_out()
            self._log.write("out", cards_left=0)

    async def discard_pairs(self) -> None:
        """Discard every pair the hand holds, one request each."""
        for pair in self._turns.pairs_to_discard():
            discard = self._turns.discard(pair)
            reply = await self.request(discard)
            if not reply.ok:
                # A game decided while pairs were missing may end before our
                # last pair arrives (docs/protocols/oldmaid.md 7.9); then there is
                # nothing to refuse.
                if await self.game_is_over():
                    return
                first, second = pair
                raise PeerError(f"the table refused the pair {first}, {second}: {reply.message}")
            self._log.write("discard", cards=[wire(card) for card in pair])
            if self._turns.discarded(discard):
                self._log.write("out", cards_left=0)

    # -- who offered -----------------------------------------------------------------

    async def offerer_fault(self, sender: str | None, clause: str) -> PeerError:
        """The error naming the player whose offer we took, by its ``from``.

        Older clients do not say who they are, and then we name no one: the
        nearest player in to our right is who an honest game would send the
        offer, but a cheat elsewhere (a second turn, a player out that still
        offers, another dialling in) can send one too, and an honest player
        must never be named for it (protocol 14).
        """
        if sender in self._turns.nicks and sender != self._turns.nick:
            return fault(sender, clause)
        return PeerError(f"the offering player (it sent no from) {clause}")


async def _last_word(client: TableClient, report: Any) -> Any:
    """The table's reply to a report made before leaving, or None if it cannot answer:
    the peer leaves either way, so a broken table connection is not an error here."""
    try:
        return await client.request(report, timeout=GIVE_UP_WAIT)
    except NETWORK_ERRORS:
        return None
