"""One FishNet game on the server: its seats, the wait for an opponent, and its play on
``ring.games.match``.

The server (``services.fishnet.server``) pairs the players by name and hands
each game a ``Match``. Once both seats are filled, the game is a
``ring.games.match.Match`` (the seat-two-players, turn-on-a-clock, verdict, record
and farewell loop every two-player game shares) driven by ``FishNetRules``
(``services.fishnet.game``), over ``News``'s messages. A client's seat
is its ``Client``, a built-in player's a ``BotSeat``: both are
``ring.games.seat.Occupant``s.

What stays FishNet's own, and why:

- The wait for a named opponent. Players are paired by the names in their
  ``play`` lines, not two by two as ``ring.games.lobby`` seats them, and the first
  client's game exists (with its record) from its ``play``: a game that
  never starts still has a record (``GameTranscript``), and the server tells
  a waiting client ``error no_opponent_came`` or ``error server_shutting_down``.
- Reading. Each connection has a reader task (the server's) all the time,
  which answers bad lines itself (``error <reason>``, and ``yourturn`` again
  on its client's turn) and forwards good moves, quits and closes to the
  game's one inbox, in the order they came. A client's seat reads that inbox
  for its move (``Client.event``), so a ``quit`` or close from either client,
  read first, ends the game at once (a ``turns.Left`` event), whoever's turn
  it is; while a built-in player decides, the inbox waits. ``ring.games.seat.Seat``
  reads its own connection only for the mover, which would change that order.
- The shutdown: a game under way or waiting tells its clients ``error
  server_shutting_down``, then its record ends as it stands, with the books.

Choices beyond the handout (docs/protocols/fishnet.md "The game"):

- A player who closes, sends ``quit`` mid-game, cannot be written to (it
  stops reading for ``send_timeout``, or its connection breaks), or does not
  answer ``yourturn`` within ``move_timeout`` loses: it gets ``error
  move_timeout`` and ``youlose`` (if still connected); the opponent gets
  ``error opponent_left`` or ``error opponent_timed_out`` and ``youwin``. The
  record's ``end`` names it as the ``culprit``.
- After ``max_moves`` requests and passes (two players passing on an empty
  deck would never finish) both get ``error move_limit`` and the result by
  the books made so far.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

import trio

from ring.games import match as ring_match
from ring.games.record import Held
from ring.wire.flood import BadRun
from ring.wire.sansio import Closed
from ring.wire.transport import SEND_FAILED, Connection
from services.fishnet.bot_seat import BotSeat, Searches
from services.fishnet.bots import make_player
from services.fishnet.game import FishNetRules, GameReport, Left
from services.fishnet.news import News
from services.fishnet.protocol import (
    Error,
    Link,
    LocalProtocolError,
    Pass,
    Quit,
    Request,
    ServerMessage,
    YourTurn,
    name_key,
)
from services.fishnet.transcript import GameTranscript

if TYPE_CHECKING:
    from ring.games.record import RecordHub
    from services.fishnet.config import ServerConfig
    from services.fishnet.rules import FishNetGame

__all__ = ["Client", "GameReport", "Match", "Server"]

_INBOX_SIZE = 16


class Server(Protocol):
    """What a match needs of its server (``FishNetServer``)."""

    config: ServerConfig
    hub: RecordHub
    searches: Searches
    games_running: set[Match]
    arena: ring_match.Arena  # its started games' ring.games.match.Match (hooks for a tournament)

    def game_seed(self, keys: list[str]) -> str: ...
    def withdraw(self, match: Match) -> None: ...
    def reported(self, report: GameReport) -> None: ...


# -- seats ---------------------------------------------------------------------------


@dataclass(eq=False)
class Client:
    """A connection, and once its ``play`` was accepted, its seat in a match."""

    clocked: ClassVar[bool] = True

    number: int  # accept order
    peer: str
    host: str  # the remote address without the port
    conn: Connection
    link: Link
    name: str | None = None  # the team name, once "play" was accepted
    match: Match | None = None
    seat: int = 0
    assigned: int | None = None  # the seat a tournament gave it (ring.games.lobby.Lobby.handle)
    early: Held = field(default_factory=Held)  # its records before it is in a match
    gone: bool = False  # closed, quit, or unable to take our writes: told nothing more
    prelude: Held = field(default_factory=Held)  # for ring.games.match: its game's kept records
    # Where its records go once it is in a match: kept, then the game's record.
    log: Callable[..., None] = field(default=lambda **fields: None, repr=False)
    # The flood rule (fishnet.md "Errors", ring.wire.flood): the errors it was sent in a
    # row, the server's other lines (yourturn aside) starting the count again.
    bad_run: BadRun = field(default_factory=BadRun)

    def told(self, message: ServerMessage) -> None:
        """A line is about to be written to it (its connection's send lock held): count an
        error, or start again. Once its 100th bad line in a row has gone out, nothing more
        does (``trio.ClosedResourceError``: the sender closes it)."""
        if self.bad_run.reached:
            raise trio.ClosedResourceError("closed after 100 bad lines in a row")
        if isinstance(message, Error):
            self.bad_run.bad()
        elif not isinstance(message, YourTurn):
            self.bad_run.good()

    async def send(self, message: ServerMessage, timeout: float) -> bool:
        """Hold one line for the match's next ``flush``: a step's lines, up to the
        ``yourturn`` or the result that ends it, go out in one write (fishnet.md "Lines")."""
        if self.gone:
            return False
        try:
            self.conn.hold(message)
        except trio.ClosedResourceError:  # its reader answered its 100th bad line: closed
            return await self._close()
        if self.bad_run.reached:  # its 100th bad line in a row: written, then it is closed
            return await self.flush(timeout)
        return True

    async def flush(self, timeout: float) -> bool:
        if self.gone:
            return False
        try:
            await self.conn.flush(timeout=timeout)
        except SEND_FAILED:
            return await self._close()
        if self.bad_run.reached:
            return await self._close()
        return True

    async def _close(self) -> bool:
        await self.conn.aclose()
        self.gone = True
        return False

    async def event(self, deadline: float = math.inf) -> Request | Pass | Left:
        """Its move; or the first quit or close of either client, read before it."""
        assert self.match is not None
        sender, item = await self.match.inbox.receive()
        if isinstance(item, Closed | Quit):
            self.match.seats[sender].gone = True  # a quit leaves it open: told nothing more
            return Left(sender, quit=isinstance(item, Quit))
        assert sender == self.seat and isinstance(item, Request | Pass), (sender, item)
        return item


_Seat = Client | BotSeat


@dataclass(frozen=True)
class _Joined:
    """The waiting game's second client has arrived."""


_Move = Request | Pass
_InboxItem = tuple[int, _Move | Quit | Closed | _Joined]


# -- one game ------------------------------------------------------------------------


class Match:
    """One game, from its first client's ``play`` to its end, run in that client's task."""

    def __init__(self, server: Server, number: int, first: Client, team: str, wanted: str) -> None:
        self.server = server
        self.number = number
        self.seats: list[_Seat] = [first]
        self.names = [team]
        self.bot_name: str | None = None  # the built-in opponent, if any
        self.wanted = wanted  # the opponent named in the first client's play
        self.host = first.host  # whose waiting count this game is, while it waits
        self.to_inbox, self.inbox = trio.open_memory_channel[_InboxItem](_INBOX_SIZE)
        self.finished = trio.Event()
        self.seed = ""
        self.report: GameReport | None = None
        # Until the game starts: its records (kept), or the whole record of one that never does.
        self.transcript = GameTranscript(server.hub, number, server.config.game_options())
        self.played: ring_match.Match[FishNetGame] | None = None  # the game, once started
        self.rules: FishNetRules | None = None
        self._attach(first, 0)

    def _attach(self, client: Client, seat: int) -> None:
        client.match, client.seat = self, seat
        client.log = self.transcript.record
        self.transcript.kept.take(client.early)

    def add_client(self, client: Client, team: str) -> None:
        self.seats.append(client)
        self.names.append(team)
        self._attach(client, 1)
        first = self.seats[0]
        if isinstance(first, Client) and (first.assigned, client.assigned) == (1, 0):
            # A tournament's seats are the ports its programs dialled, not who came
            # first. Nothing read before now is a move (the wait drops it), so the
            # seats may still change hands.
            self.seats.reverse()
            self.names.reverse()
            first.seat, client.seat = 1, 0
        # Never blocks: the inbox is empty until the game starts, but for its
        # first client's quit or close (and then nobody is waiting to join).
        self.to_inbox.send_nowait((1, _Joined()))

    def add_bot(self, name: str) -> None:
        """A built-in player takes seat 1; it is made at the start, from the game's seed."""
        self.bot_name = name
        self.names.append(name)

    # -- running ---------------------------------------------------------------------

    async def run(self) -> None:
        try:
            if len(self.names) == 1 and not await self._wait_for_opponent():
                return
            await self._play()
        except Exception:
            self._cut_off("the server failed: an internal error")
            raise
        finally:
            # Cancelled, the server stopping before its goodbye reached this game
            # (once the record has ended, this records nothing).
            self._cut_off("the server shut down")
            self.server.withdraw(self)  # however it ended, nobody may join it now
            self.server.games_running.discard(self)
            self.finished.set()
            with trio.CancelScope(shield=True):
                for seat in self.seats:
                    if isinstance(seat, Client):
                        await seat.conn.aclose()
            # Its clients point back at it: without this the ended game would wait,
            # records and all, for a garbage collection, which stops every game.
            for seat in self.seats:
                if isinstance(seat, Client):
                    seat.match = None

    async def shut_down(self) -> None:
        """Tell this game's clients that the server is stopping (an error, then close).

        ``error server_shutting_down``: docs/protocols/fishnet.md "Errors"."""
        if self.report is not None:
            return  # it has ended and said so; its task has not unwound yet
        try:
            for player in self.seats:
                if isinstance(player, Client):
                    # Told the end (youwin, youlose, tiegame) first, even while this
                    # waited for its turn to write, it may be told nothing more: its
                    # protocol refuses it. Raised from the goodbye, that refusal hung
                    # issue 15's teardown (ring.wire.net.listening).
                    with contextlib.suppress(LocalProtocolError):
                        await self._tell(player, Error("server_shutting_down"))
        finally:
            # After the goodbye, so that the record holds it; even if the goodbye
            # ran out of time. A game that ended meanwhile keeps its own end.
            self._cut_off("the server shut down")

    async def _wait_for_opponent(self) -> bool:
        config = self.server.config
        with trio.move_on_after(config.wait_timeout):
            while True:
                _seat, item = await self.inbox.receive()
                if isinstance(item, _Joined):
                    return True
                if isinstance(item, Closed | Quit):
                    # run() withdraws the game as it ends
                    self._cut_off(f"{self.names[0]} left before an opponent came")
                    return False
        self.server.withdraw(self)  # before the await: nobody may join while we tell
        first = self.seats[0]
        assert isinstance(first, Client)
        await self._tell(first, Error("no_opponent_came"))
        waited = f"{config.wait_timeout:g} s"
        self.report = GameReport(
            self.number, self.seed, (self.names[0], self.wanted), (0, 0), None, "no opponent"
        )
        self._cut_off(f"no opponent: {self.wanted} did not come in {waited}")
        self.server.reported(self.report)
        return False

    async def _play(self) -> None:
        server = self.server
        config = server.config
        keys = sorted(name_key(name) for name in self.names)
        self.seed = server.game_seed(keys)
        first: int | None = None
        if self.bot_name is not None:
            player = make_player(self.bot_name, f"{self.seed}:bot")
            self.seats.append(BotSeat(self.bot_name, player, server.searches))
            first = {"first": 1, "second": 0}.get(config.bot_moves)
        game = config.make_game(self.seed, first)
        bots = [isinstance(seat, BotSeat) for seat in self.seats]
        news = News(game, youmake=config.youmake)
        rules = FishNetRules(config, news, names=self.names, seed=self.seed, bots=bots)
        # Seat 0 is the client whose play came first (the only client, against a
        # built-in player); "deal" says who moves first, and which seat is built in.
        # Everything kept before the start, both clients', is seat 0's prelude.
        self.seats[0].prelude = self.transcript.kept
        self.rules = rules
        self.played = ring_match.Match(
            rules,
            self.seats,
            game,
            number=self.number,
            seed=self.seed,
            hub=server.hub,
            begun=rules.begun(game),
        )
        server.games_running.add(self)
        self.report = await server.arena.play(self.played)
        server.reported(self.report)

    def _cut_off(self, reason: str) -> None:
        """The record ends without a result (nothing is recorded once it has ended)."""
        if self.played is None:
            self.transcript.end(reason, came=self.names[: len(self.seats)])
        else:
            assert self.rules is not None
            self.played.abandon(reason, self.rules.details(self.played.state, None))

    async def _tell(self, client: Client, message: ServerMessage) -> bool:
        timeout = self.server.config.send_timeout
        return await client.send(message, timeout) and await client.flush(timeout)
