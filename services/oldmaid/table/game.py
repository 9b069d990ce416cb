"""One Old Maid game at a table: its players, its referee, its transcript and its end.

The table server (``services.oldmaid.table.server``) owns the connections and keeps
one game forming while others play; each ``TableGame`` here is one of those
games, from its first join to the moment its players have gone. Writes to a
player's connection go through ``ring.wire.transport.Connection``, which
serialises them, so a join reply or a game-over notice written from here
never interleaves with a reply written by the connection's own task.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import trio

from ring.games.record import Player
from ring.oldmaid import proofs
from ring.oldmaid.cards import Card
from ring.oldmaid.messages import (
    Accuse,
    CheckOffer,
    Discard,
    Draw,
    DrawTurn,
    Gave,
    GiveUp,
    LeftWithTurn,
    Move,
    OutOfCards,
    Received,
    Reply,
    Witness,
    Witnessed,
    error,
    ok,
)
from ring.wire.flood import BadRun
from ring.wire.transport import Connection
from services.oldmaid.referee.events import ClaimedTwice
from services.oldmaid.referee.rules import (
    Address,
    Dealt,
    Discarded,
    GameState,
    RefereeError,
    Started,
    TableGame,
    WentOut,
)
from services.oldmaid.table.outcome import GameOutcome, outcome_of, record_end
from services.oldmaid.table.records import Transcript
from services.oldmaid.table.replies import end_notice, join_reply, status_reply
from services.oldmaid.table.turn_clock import TurnClock
from services.oldmaid.verified.game import REPORT_TIMEOUT, VerifiedGame
from services.oldmaid.verified.play import VerifiedPlay

# How long the shutdown notices may take, all games together.
SHUTDOWN_NOTICE_TIMEOUT = 1.0
# Between a reply and a notice right behind it on one connection, for a client that reads
# one message a recv (protocol 13.2): as long as ring peer's pause between an ok and a pick.
ONE_RECV_PAUSE = 0.05


@dataclass(eq=False)
class Client:
    """One connection to the table, and the game it joined."""

    number: int  # 1, 2, ... in accept order: the transcript's "conn"
    peer: str  # "ip:port" for the transcript
    source: Address | None
    conn: Connection
    scope: trio.CancelScope  # cancelled to close the connection from the table's side
    game: Game | None = None  # set when a join is accepted
    nick: str | None = None
    watch: bool = False
    # It reads a stream (its join's stream or verify: protocol 5.1, 14.6): a notice may
    # follow a reply to it at once, with no pause for a reader of one message a recv.
    stream: bool = False
    # When its last reply was sent (before the write: a notice may queue behind it).
    replied_at: float = -math.inf
    answered: bool = False  # the join reply is written (or being written)
    closed: bool = False
    joined_at: float = 0.0  # when its join was accepted: the wait for the start counts from here
    # The flood rule (docs/protocols/oldmaid.md 3, ring.wire.flood).
    bad_run: BadRun = field(default_factory=BadRun)


class Game:
    """One game: joins, the start, the referee's decisions, the end, the players leaving."""

    def __init__(
        self,
        number: int,
        seed: int,
        players: int,
        transcript: Transcript,
        *,
        nursery: trio.Nursery,
        start_after: float | None,
        last_pair_grace: float,
        on_change: Callable[[], None],
        turn_timeout: float = math.inf,
        accuse_window: float = 0.5,
        deck: tuple[Card, ...] | None = None,
        verified_only: bool = False,
    ) -> None:
        self.number = number
        self.seed = seed
        self.referee = TableGame(players, seed, deck=deck)
        self.transcript = transcript
        self.clients: dict[str, Client] = {}  # joined, then seated, players by nick
        self.ended = trio.Event()  # the game ended and the watchers were told
        self.players_gone = trio.Event()  # every seated player's connection closed
        self.started = trio.Event()  # the game started (it is no longer forming)
        self._nursery = nursery
        self._start_after = start_after
        self._last_pair_grace = last_pair_grace
        self.clock = TurnClock(turn_timeout)  # a game that stops moving
        self._on_change = on_change  # the forming game changed: mDNS, the next game
        self._seated = trio.Event()  # every join reply has been written
        self._timer: trio.CancelScope | None = None
        # An accusation that names the accused waits this long for a counter-accusation.
        self._accuse_window = accuse_window
        self.verified_only = verified_only  # --verified: only players that verify join
        self._key = proofs.game_key(seed)  # every player's secret in this game (protocol 14.5)
        self._end_announced = False
        self._grace_armed = False
        # Once a game of verified players only starts: its ledger (protocol 14.6).
        self.verified: VerifiedGame | None = None
        self.witnesses: set[str] = set()  # joined with verify and witness (protocol 14.6)

    # -- joining and leaving ---------------------------------------------------

    def join(
        self,
        client: Client,
        nick: str,
        address: Address,
        watch: bool,
        *,
        stream: bool = False,
        verify: bool = False,
        witness: bool = False,
    ) -> bool:
        """Seat a player (``RefereeError`` if the rules refuse); True if it filled the game,
        which the caller then starts. ``stream``: it reads a stream (protocol 5.1);
        ``verify``: it proves who it is (14.5), and so reads a stream too (14.6);
        ``witness``: and takes part in exchanges the table witnesses (14.6)."""
        self.referee.join(nick, address)
        if verify:
            self.referee.verified.add(nick)
            if witness:
                self.witnesses.add(nick)
        client.game, client.nick, client.watch = self, nick, watch
        client.stream = stream or verify
        client.joined_at = trio.current_time()
        self.clients[nick] = client
        self._tell_forming()
        self._on_change()
        if self.referee.is_full:
            return True
        if len(self.referee.joined) >= 2:
            self._arm_timer()
        return False

    def release(self, client: Client, *, shutting_down: bool) -> None:
        """A player's connection closed: free its seat, or let the referee judge."""
        nick = client.nick
        if nick is None or self.clients.get(nick) is not client:
            return
        if self.referee.state is GameState.WAITING:
            self.referee.leave(nick)
            del self.clients[nick]
            self._tell_forming()
            self._on_change()
            if len(self.referee.joined) < 2:
                self._disarm_timer()
            return
        if shutting_down:
            self.referee.abort("the table shut down")
        # An accuser whose accusation is held leaves as it said it would: the game ends on
        # the accusation, weighed once the reports are in (or on the reports' timeout).
        if self.verified is None or self.verified.held_from != nick:
            self.referee.leave(nick)  # aborts a game under way if the player is still in
        self.record_decisions()
        if all(other.closed for other in self.clients.values()):
            self.players_gone.set()

    # -- playing ---------------------------------------------------------------

    def _tell_forming(self) -> None:
        self.transcript.forming(self.referee.joined, self.referee.players_needed)

    def play(self, nick: str, request: Any) -> Reply:
        """The reply to one of a player's game requests; ``RefereeError`` if refused."""
        if isinstance(request, Draw):
            card, last = self.referee.draw(nick)
            return Reply(result="last_card" if last else "ok", card=card)
        if isinstance(request, Discard):
            first, second = request.cards
            try:
                self.referee.discard(nick, first, second, declares_out=request.declares_out)
            except ClaimedTwice as exc:
                if self.verified is not None:  # the ledger tells who lies (14.6)
                    self.verified.claimed(exc.nick, exc.cards)
                raise
            return ok(message="ok")
        if isinstance(request, OutOfCards):
            self.referee.out_of_cards(nick)
            return ok()
        if isinstance(request, Received | Gave | CheckOffer | Witness | Move):
            if self.verified is None:
                raise RefereeError(
                    "this game does not report its exchanges: only a game whose every player "
                    "joined with verify does, and only one whose every player joined with "
                    "witness too checks offers and witnesses exchanges (protocol 14.6)"
                )
            reply, moved = self.verified.take(nick, request)
            if moved:  # an exchange went on, or went through the table: the turn moves
                self.clock.moved()
            return reply
        if isinstance(request, LeftWithTurn):
            quiet = trio.current_time() - self.clock.last_move_at
            self.referee.left_with_turn(nick, request.nick, quiet=quiet)
            return ok()
        if isinstance(request, GiveUp):
            self.referee.give_up(nick, request.nick, request.reason)
            return ok()
        if isinstance(request, Accuse):
            if request.nick is not None and request.nick != nick:
                return error(f"this connection is {nick}, not {request.nick}")
            if self.verified is not None and self.verified.proves(nick, request):
                if self.referee.state is GameState.PLAYING:  # held for the reports (14.6)
                    self._nursery.start_soon(self.verified.weigh_held_later)
                    return ok(message="the table weighs it once every report is in")
                return ok(message=self.referee.reason or "the game is over")
            message = self.referee.accuse(nick, request.accused, request.rule, request.evidence)
            if self.referee.pending is not None:
                self._nursery.start_soon(self._settle_later, self.referee.pending)
            return ok(message=message)
        # The Link lets only table requests through; anything else is a bug there.
        raise AssertionError(f"unexpected request {request!r}")

    def status(self) -> Reply:
        reported = self.verified is not None or self.verified_only
        return status_reply(self.referee.status(), self.referee.verified, reported=reported)

    def record_decisions(self) -> None:
        """Write the referee's decisions to the transcript and act on the ones that need it."""
        events = self.referee.take_events()
        if self.verified is not None:
            for event in events:
                self.verified.saw(event)
            events += self.referee.take_events()  # an abort on a lie the ledger found
        for event in events:
            fields = msgspec.to_builtins(event)
            if isinstance(event, Started) and fields.get("verified") is None:
                del fields["verified"]  # older clients only: the record as before
            self.transcript.referee(event.EVENT, **fields)
        if any(isinstance(e, Dealt | Discarded | WentOut) for e in events):
            self.clock.moved()
        if self.referee.decided and not self._grace_armed:
            self._grace_armed = True
            self._nursery.start_soon(self._end_after_grace)

    async def _end_after_grace(self) -> None:
        """End a decided game whose last pairs do not come (``TableGame.decided``)."""
        await trio.sleep(self._last_pair_grace)
        if self.referee.decided:
            self.referee.end_without_pairs()
            self.record_decisions()
            await self.announce_end()

    async def _settle_later(self, accusation: object) -> None:
        """Act on an accusation once no counter-accusation came within the window."""
        await trio.sleep(self._accuse_window)
        if self.referee.pending is accusation:
            self.referee.settle()
            self.record_decisions()
            await self.announce_end()

    # -- a game that stops moving ------------------------------------------------

    async def _abort_when_stuck(self) -> None:
        """Run the turn clock (``TurnClock``); record and announce the abort it makes."""
        if await self.clock.run(self.referee, self.verified, self.ended):
            self.record_decisions()
            await self.announce_end()

    # -- the start -------------------------------------------------------------

    def _arm_timer(self) -> None:
        if self._start_after is None or self._timer is not None:
            return
        self._timer = trio.CancelScope()
        self._nursery.start_soon(self._start_later, self._timer)

    def _disarm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _start_later(self, scope: trio.CancelScope) -> None:
        assert self._start_after is not None
        with scope:
            await trio.sleep(self._start_after)
        if scope.cancelled_caught or self._timer is not scope:
            return
        self._timer = None
        if self.referee.state is GameState.WAITING and len(self.referee.joined) >= 2:
            await self.start()
            await self.announce_end()

    async def start(self) -> None:
        self._disarm_timer()
        seats = self.referee.start()
        # The envelope's start, then the records kept while the game formed, then ``started``.
        self.transcript.start(Player(seat.nick, seat=i) for i, seat in enumerate(seats))
        self.record_decisions()
        self.started.set()
        self._on_change()
        players = [(seat.address, seat.nick) for seat in seats]
        verified = [seat.nick for seat in seats if seat.nick in self.referee.verified]
        witnessed = len(verified) == len(seats) and self.witnesses >= set(verified)
        if witnessed:
            self.clock.witnessed()
        if self.clock.timeout < math.inf:
            self._nursery.start_soon(self._abort_when_stuck)
        if len(verified) == len(seats):  # protocol 14.6: every exchange is reported
            self.verified = VerifiedGame(
                VerifiedPlay(verified, self._key),
                self.referee,
                report_timeout=min(self.clock.timeout, REPORT_TIMEOUT),
                ended=self.ended,
                on_decided=self._decided,
                **({"witness": self._notify, "nursery": self._nursery} if witnessed else {}),
            )
            self._nursery.start_soon(self.verified.watch)
        # All at once, so that a player who does not read delays no other
        # (each send is started in seat order: the transcript keeps that order).
        async with trio.open_nursery() as nursery:
            for seat in seats:
                client = self.clients[seat.nick]
                if client.closed:
                    continue  # its connection task has already aborted the game
                reply = join_reply(
                    players,
                    seat.nick,
                    verified,
                    self._key,
                    reported=self.verified is not None,
                    witnessed=self.verified is not None and self.verified.desk is not None,
                )
                await nursery.start(self._answer_join, client, reply)
        self._seated.set()
        if self.verified is not None:
            self._nursery.start_soon(self.verified.hand_on_draws)

    def _notify(self, nick: str, notice: Witnessed | DrawTurn) -> None:
        """A witnessed game's notice for one of its players (protocol 14.6)."""
        client = self.clients.get(nick)
        if client is not None and client.answered and not client.closed:
            self._nursery.start_soon(client.conn.send_or_close, notice)

    @staticmethod
    async def _answer_join(
        client: Client, reply: Reply, *, task_status: trio.TaskStatus[None]
    ) -> None:
        # Answered from now: a player's first draw may be read before the
        # write below returns. Its reply cannot overtake the join reply,
        # because the write takes the connection's send lock without
        # yielding. A player whose join reply cannot be written is closed,
        # and its connection task then aborts the game.
        client.answered = True
        await client.conn.send_or_close(reply, task_status=task_status)

    # -- the end ---------------------------------------------------------------

    async def announce_end(self) -> None:
        """Tell the watchers, once, that the game has ended: a watcher that does not read a
        stream and was just answered a moment later (protocol 13.2)."""
        state = self.referee.state
        if self._end_announced or state not in (GameState.OVER, GameState.ABORTED):
            return
        verified = self.verified
        if state is GameState.OVER and verified and verified.hold_the_end(self._nursery):
            return  # announced once the last reports are in (VerifiedGame._end_when_reported)
        self._end_announced = True
        if self.referee.seats:
            # A notice must not overtake a join reply still being written.
            await self._seated.wait()
        notice = end_notice(self.referee.status())
        # All at once, as the join replies: a watcher that does not read is
        # closed after the write timeout without delaying anyone's notice.
        async with trio.open_nursery() as nursery:
            for client in list(self.clients.values()):
                if not (client.watch and client.answered and not client.closed):
                    continue
                pause = client.replied_at + ONE_RECV_PAUSE - trio.current_time()
                if pause > 0 and not client.stream:
                    nursery.start_soon(_send_after, pause, client.conn, notice)
                else:
                    await nursery.start(client.conn.send_or_close, notice)
        self.ended.set()
        self._on_change()

    async def _decided(self) -> None:
        self.record_decisions()
        await self.announce_end()

    async def shut_down(self) -> None:
        """The table is stopping: abort this game if it is under way, and say so."""
        if self.referee.abort("the table shut down"):
            self.record_decisions()
            if not self._seated.is_set():
                self._seated.set()  # no join reply will be written now
            await self.announce_end()

    def record_end(self) -> None:
        """Close the game's records with ``end`` (``outcome.record_end``)."""
        record_end(self.transcript, self.referee)

    def let_go(self) -> None:
        """The table is done with this game (its players gone, or the table stopped): what
        points back at it lets go (the table's and its ledger's callbacks; its clients did
        as their connections ended), so that it is freed at once, without a garbage
        collection, which stops every game on the server."""
        self._on_change = _unchanged
        if self.verified is not None:
            self.verified.let_go()

    async def close_when_gone(self, linger: float) -> None:
        """After the end: wait for the players to leave, at most ``linger``, then close them."""
        await self.ended.wait()
        with trio.move_on_after(linger):
            await self.players_gone.wait()
        for client in self.clients.values():
            client.scope.cancel()

    def outcome(self) -> GameOutcome:
        return outcome_of(self.number, self.seed, self.referee)


def _unchanged() -> None:
    """What a game let go of tells the table: nothing (``Game.let_go``)."""


def shutting_down() -> bool:
    """Whether this task is being cancelled: the connection did not close by itself."""
    return trio.current_effective_deadline() == -math.inf


async def _send_after(pause: float, conn: Connection, message: object) -> None:
    await trio.sleep(pause)
    await conn.send_or_close(message)
