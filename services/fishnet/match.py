"""One FishNet game on the server: its two seats, the wait for an opponent, the play
loop, forfeits and the end.

The server (``services.fishnet.server``) pairs the players and hands each game
a ``Match``. The rules are ``FishNetGame``, what each seat is told is
``Referee``, a built-in player's seat is a ``BotSeat``, and the game's records
(every line in and out, then how it ended) go through a ``GameTranscript``.
Each client's connection has a reader task (the server's) that answers bad
lines itself and forwards good moves, quits and closes to its match's inbox.
A match runs in the task of its first client and is the only reader of its
inbox, so its state has one owner.

Choices beyond the handout and WIRE.md (docs/protocols/fishnet.md):

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import trio

from ring.clock import TimedOut, TurnClock, within
from ring.record import Held
from ring.sansio import Closed
from ring.transport import Connection
from services.fishnet.bot_seat import BotSeat, Searches
from services.fishnet.players import make_player
from services.fishnet.protocol import (
    Error,
    Link,
    LocalProtocolError,
    Pass,
    Quit,
    Request,
    Role,
    ServerMessage,
    YourTurn,
    encode,
    name_key,
    parse_line,
)
from services.fishnet.referee import ENDINGS, Referee, Tell
from services.fishnet.rules import Result, RuleError
from services.fishnet.transcript import GameTranscript

if TYPE_CHECKING:
    from ring.record import RecordHub
    from services.fishnet.config import ServerConfig

_INBOX_SIZE = 16
# How a player left, after its name in the record's end.
_QUIT = " quit"
_CLOSED = "'s connection closed"  # by the client, or by the server (a line over 4 KiB)
_UNTOLD = " could not be told: it stopped reading, or its connection closed"


@dataclass(frozen=True)
class GameReport:
    """How one game ended, as the server logs it."""

    number: int
    seed: str
    names: tuple[str, str]
    books: tuple[int, int]
    winner: int | None  # seat; None for a tie (or a game that never started)
    reason: str  # "books", "move_limit", "<name> left", "<name> timed out", "no opponent"

    @property
    def line(self) -> str:
        a, b = self.names
        if self.reason == "no opponent":
            return f"game {self.number}: {a} waited for {b}, who did not come"
        score = f"{a} {self.books[0]} - {self.books[1]} {b}"
        verdict = "tie" if self.winner is None else f"{self.names[self.winner]} wins"
        suffix = "" if self.reason == "books" else f" ({self.reason})"
        return f"game {self.number}: {score}: {verdict}{suffix}"


class Server(Protocol):
    """What a match needs of its server (``FishNetServer``)."""

    config: ServerConfig
    hub: RecordHub
    searches: Searches
    games_running: set[Match]

    def game_seed(self, keys: list[str]) -> str: ...
    def withdraw(self, match: Match) -> None: ...
    def reported(self, report: GameReport) -> None: ...


# -- seats ---------------------------------------------------------------------------


@dataclass(eq=False)
class Client:
    """A connection, and once its ``play`` was accepted, its seat in a match."""

    number: int  # accept order
    peer: str
    host: str  # the remote address without the port
    conn: Connection
    link: Link
    name: str | None = None  # the team name, once "play" was accepted
    match: Match | None = None
    seat: int = 0
    early: Held = field(default_factory=Held)  # its records before it is in a match


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
        self.referee: Referee | None = None
        self.gone: set[int] = set()  # seats whose connection is closed
        self.report: GameReport | None = None
        self.leaver: int | None = None  # the seat that closed or quit mid-game
        self.leaving = ""  # how, for the record: _QUIT or _CLOSED
        self.timed_out: int | None = None  # the seat that did not answer yourturn in time
        self.capped = False  # ended by the move limit
        self.transcript = GameTranscript(server.hub, number, server.config.game_options())
        self._attach(first, 0)

    def _attach(self, client: Client, seat: int) -> None:
        client.match, client.seat = self, seat
        self.transcript.kept.take(client.early)

    def add_client(self, client: Client, team: str) -> None:
        self.seats.append(client)
        self.names.append(team)
        self._attach(client, 1)
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

    async def shut_down(self) -> None:
        """Tell this game's clients that the server is stopping (WIRE.md's error, then close)."""
        if self.report is not None:
            return  # it has ended and said so; its task has not unwound yet
        try:
            for seat, player in enumerate(self.seats):
                if isinstance(player, Client) and seat not in self.gone:
                    # Told the end (youwin, youlose, tiegame) first, even while this
                    # waited for its turn to write, it may be told nothing more: its
                    # protocol refuses it. Raised from the goodbye, that refusal hung
                    # issue 15's teardown (ring.net.serving).
                    with contextlib.suppress(LocalProtocolError):
                        await self._tell(seat, Error("server_shutting_down"))
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
        await self._tell(0, Error("no_opponent_came"))
        self.names.append(self.wanted)
        waited = f"{config.wait_timeout:g} s"
        self._finish(None, "no opponent", f"no opponent: {self.wanted} did not come in {waited}")
        return False

    def _start(self) -> None:
        server = self.server
        keys = sorted(name_key(name) for name in self.names)
        self.seed = server.game_seed(keys)
        first: int | None = None
        if self.bot_name is not None:
            player = make_player(self.bot_name, f"{self.seed}:bot")
            self.seats.append(BotSeat(self.bot_name, player))
            first = {"first": 1, "second": 0}.get(server.config.bot_moves)
        game = server.config.make_game(self.seed, first)
        self.referee = Referee(game, youmake=server.config.youmake)
        # Seat 0 is the client whose play came first (the only client, against a
        # built-in player); "deal" says who moves first, and which seat is built in.
        self.transcript.start(self.names, seed=self.seed)
        bots = [isinstance(seat, BotSeat) for seat in self.seats]
        self.transcript.record(event="deal", first=game.first_player, bots=bots)
        server.games_running.add(self)

    async def _play(self) -> None:
        self._start()
        referee = self.referee
        assert referee is not None
        game, config = referee.game, self.server.config
        if not await self._tell_all(referee.deal()):
            return await self._forfeit()
        while not game.over:
            if game.moves >= config.max_moves:
                await self._tell_both(Error("move_limit"))
                game.stop()
                self.capped = True
                break
            seat = game.turn
            assert seat is not None
            tells = await self._next_move(seat)
            if tells is None or not await self._tell_all(tells):
                return await self._forfeit()
        for tell in referee.ending():
            await self._tell(tell.seat, tell.message)
        if self.capped:
            limit = f"the move limit ({config.max_moves} requests and passes)"
            self._finish(game.winner(), "move_limit", f"{limit}: by books")
        else:
            self._finish(game.winner(), "books", "by books")

    async def _next_move(self, seat: int) -> list[Tell] | None:
        """The tells of the player's move; None if a player left or it ran out of time."""
        referee = self.referee
        assert referee is not None
        player = self.seats[seat]
        if isinstance(player, BotSeat):
            # A replay may differ from a search given up: the transcript says why.
            decision = await player.decide(
                self.server.searches,
                lambda why: self.transcript.record(seat=seat, name=player.name, search_failed=why),
            )
            reply = decision.line()
            move = parse_line(reply.encode(), Role.SERVER)
            assert isinstance(move, Request | Pass), reply
            self.transcript.record(seat=seat, name=player.name, dir="in", line=reply)
            return referee.act(seat, move)  # a built-in player's RuleError is a bug
        if not await self._tell(seat, YourTurn()):
            return None
        # From the end of writing yourturn; the server's own long stretches of
        # work are not charged (ring.clock).
        clock = TurnClock(self.server.config.move_timeout)
        while True:
            got = await within(clock, self.inbox.receive)
            if isinstance(got, TimedOut):
                self.timed_out = seat
                return None
            sender, item = got
            if isinstance(item, Closed | Quit):
                self.leaver = sender
                self.leaving = _QUIT if isinstance(item, Quit) else _CLOSED
                return None
            assert sender == seat and isinstance(item, Request | Pass), (sender, item)
            try:
                return referee.act(seat, item)
            except RuleError as exc:
                if not (await self._tell(seat, Error(exc.reason))) or not (
                    await self._tell(seat, YourTurn())
                ):
                    return None

    async def _forfeit(self) -> None:
        """A player left, broke its connection, or ran out of time: it loses."""
        if self.timed_out is not None:
            loser, why, reason = self.timed_out, "opponent_timed_out", "timed out"
            timeout = self.server.config.move_timeout
            how = f" timed out: no answer to yourturn in {timeout:g} s"
            await self._tell(loser, Error("move_timeout"))
            await self._tell(loser, ENDINGS[Result.LOSE])
        else:
            # A quit leaves the connection open: it gets nothing more either.
            if self.leaver is not None:
                loser, how = self.leaver, self.leaving
            else:  # a write to it failed (_tell)
                loser, how = min(self.gone), _UNTOLD
            self.gone.add(loser)
            why, reason = "opponent_left", "left"
        winner = 1 - loser
        if winner not in self.gone:
            await self._tell(winner, Error(why))
            await self._tell(winner, ENDINGS[Result.WIN])
        name = self.names[loser]
        self._finish(winner, f"{name} {reason}", f"{name}{how}", culprit=loser)

    def _finish(
        self, winner: int | None, reason: str, words: str, *, culprit: int | None = None
    ) -> None:
        """The game is over: ``reason`` for the server's line (``GameReport``), ``words``
        for the record's ``end``; ``winner`` None is a tie once the game started."""
        books = self._books()
        names = (self.names[0], self.names[1] if len(self.names) > 1 else "-")
        self.report = GameReport(self.number, self.seed, names, books or (0, 0), winner, reason)
        if books is None:  # it never started: no result
            self._end_record(words)
        else:
            draw = winner is None
            self._end_record(words, winner=winner, draw=draw, culprit=culprit, books=books)
        self.server.reported(self.report)

    def _cut_off(self, reason: str) -> None:
        """The record ends without a result (nothing is recorded once it has ended)."""
        self._end_record(reason, books=self._books())

    def _end_record(self, reason: str, **result: Any) -> None:
        self.transcript.end(reason, came=self.names[: len(self.seats)], **result)

    def _books(self) -> tuple[int, int] | None:
        """Each seat's books so far; None before the game started."""
        if self.referee is None:
            return None
        game = self.referee.game
        return len(game.books(0)), len(game.books(1))

    # -- telling -------------------------------------------------------------------

    async def _tell_all(self, tells: list[Tell]) -> bool:
        """Deliver in order; False as soon as a client cannot be told."""
        for tell in tells:
            if not await self._tell(tell.seat, tell.message):
                return False
        return True

    async def _tell_both(self, message: ServerMessage) -> None:
        for seat in (0, 1):
            await self._tell(seat, message)

    async def _tell(self, seat: int, message: ServerMessage) -> bool:
        player = self.seats[seat]
        if isinstance(player, BotSeat):
            line = encode(message).decode().rstrip("\n")
            self.transcript.record(seat=seat, name=player.name, dir="out", line=line)
            player.hear(line)
            return True
        if seat in self.gone:
            return False
        if not await player.conn.send_or_close(message):
            self.gone.add(seat)
            return False
        return True
