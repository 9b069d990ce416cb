"""The FishNet server over TCP: pairing, the built-in players, many games at once.

A thin Trio layer: the rules are ``FishNetGame``, what each player is told is
``Referee``, and each connection's conversation is the sans-IO ``Link``.
Each connection has a reader task that answers bad lines itself (``error
<reason>``, and ``yourturn`` again when the turn is the client's) and
forwards good moves, quits and closes to its game's inbox. A game runs in the
task of its first client and is the only reader of its inbox, so its state
has one owner.

Pairing: ``play <team> <opponent>`` with a built-in player's name (any case)
starts a game at once; otherwise the client waits until a client sends
``play <opponent> <team>``, at most ``wait_timeout``.

Choices beyond the handout and WIRE.md (docs/protocols/fishnet.md):

- A game's seed comes from the server's seed, the two names (in lower case
  and sorted) and n, counting their earlier games on this server, so a
  server seed replays each game whatever else runs at the same time. A
  published seed gives ``<seed>:<name>:<name>:<n>``; a secret one (the
  default; ``keyed``) a keyed hash of the same (``ring.seeds``), which
  nobody can compute without the secret. Either is in the game's record.
- A player who closes, sends ``quit`` mid-game, or does not answer
  ``yourturn`` within ``move_timeout`` loses: it gets ``error move_timeout``
  and ``youlose`` (if still connected); the opponent gets ``error
  opponent_left`` or ``error opponent_timed_out`` and ``youwin``.
- A built-in player's long search (smarx's endgame) runs in a worker
  process (``ring.workers``), never on the loop that serves every game of
  every service; one that takes over ``search_timeout`` is given up, and the
  player decides by its quick rules (the transcript records
  ``search_failed``).
- After ``max_moves`` requests and passes (two players passing on an empty
  deck would never finish) both get ``error move_limit`` and the result by
  the books made so far.
- A line over 4 KiB gets ``error line_too_long`` and the connection closes.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import math
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from ring.clock import TimedOut, TurnClock, within
from ring.events import EventLog
from ring.net import (
    DEFAULT_MAX_PER_ADDRESS,
    CannotListen,
    Refusal,
    answer_once,
    mark_established,
    serving,
    wants_mdns,
)
from ring.sansio import Closed, Invalid
from ring.seeds import keyed_text, server_seed
from ring.transport import Connection
from ring.workers import WorkerError, Workers
from services.fishnet.players import (
    COMPUTER_PLAYERS,
    SEARCH_FAILED,
    Decision,
    Player,
    make_player,
)
from services.fishnet.protocol import (
    Error,
    Link,
    LocalProtocolError,
    Pass,
    Play,
    Quit,
    RemoteProtocolError,
    Request,
    Role,
    ServerMessage,
    YourTurn,
    encode,
    name_key,
    parse_line,
)
from services.fishnet.referee import ENDINGS, Referee, Tell
from services.fishnet.rules import FishNetGame, Result, RuleError

if TYPE_CHECKING:
    from ring.discovery import Advertiser

DEFAULT_PORT = 1530
# How long the shutdown notices may take, all games together.
SHUTDOWN_NOTICE_TIMEOUT = 1.0
BOT_MOVES = ("random", "first", "second")
_INBOX_SIZE = 16

GameFactory = Callable[[str, "int | None"], FishNetGame]


class ServerError(Exception):
    """The server could not run at all (port in use, transcript folder not writable)."""


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # None: a random secret, printed nowhere
    keyed: bool = False  # seed is a secret: games' seeds are keyed hashes of it (ring.seeds)
    youmake: bool = False  # the later edition's "youmake r"
    transcript_dir: str | Path | None = None  # one JSON-lines file per game
    bot_moves: str = "random"  # against a built-in player: who moves first
    idle_timeout: float = 120.0  # to send "play"
    wait_timeout: float = 600.0  # for a named opponent to come
    move_timeout: float = 120.0  # to answer "yourturn"
    send_timeout: float = 10.0
    max_moves: int = 1000
    # A built-in player's long search (smarx's endgame) runs in one of
    # search_workers processes (None: one a core but the server's) and may
    # take search_timeout seconds; past it, the player decides by its quick rules.
    search_timeout: float = 5.0
    search_workers: int | None = None
    max_connections: int = 256
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS  # None or 0: no such cap
    exempt_loopback: bool = True  # tests turn it off to meet that cap from 127.0.0.1
    # Clients of one host waiting for a named opponent at once: a client stuck
    # in a reconnect loop must not fill the server for the whole class.
    max_waiting_per_host: int = 32
    advertise: bool | None = None  # None: only when not on a loopback address
    mdns_interface: str | None = None
    mdns_name: str = "fishnet"
    # Tests deal exact games: (game seed, first player or None) -> game.
    make_game: GameFactory = field(default=FishNetGame, repr=False)

    def __post_init__(self) -> None:
        if self.bot_moves not in BOT_MOVES:
            raise ValueError(f"bot_moves is one of {', '.join(BOT_MOVES)}")
        if self.max_moves < 1:
            raise ValueError("max_moves must be at least 1")
        if self.max_waiting_per_host < 1:
            raise ValueError("max_waiting_per_host must be at least 1")


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


# -- seats ---------------------------------------------------------------------------


@dataclass(eq=False)
class _Client:
    number: int  # accept order
    peer: str
    host: str  # the remote address without the port
    conn: Connection
    link: Link
    name: str | None = None  # the team name, once "play" was accepted
    game: _Game | None = None
    seat: int = 0
    early: list[dict[str, Any]] = field(default_factory=list)  # transcript before the game


@dataclass(eq=False)
class _Bot:
    name: str
    player: Player


_Seat = _Client | _Bot


@dataclass(frozen=True)
class _Joined:
    """The waiting game's second client has arrived."""


_Move = Request | Pass
_InboxItem = tuple[int, _Move | Quit | Closed | _Joined]


# -- one game ------------------------------------------------------------------------


class _Game:
    def __init__(
        self, server: FishNetServer, number: int, first: _Client, team: str, wanted: str
    ) -> None:
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
        self.timed_out: int | None = None  # the seat that did not answer yourturn in time
        self.capped = False  # ended by the move limit
        self.log = EventLog(server.transcript_path(number), flush_each=True)
        self._attach(first, 0)

    def _attach(self, client: _Client, seat: int) -> None:
        client.game, client.seat = self, seat
        for record in client.early:
            self.log.record(**record)
        client.early.clear()

    def add_client(self, client: _Client, team: str) -> None:
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
        finally:
            self.server.withdraw(self)  # however it ended, nobody may join it now
            self.server.games_running.discard(self)
            self.finished.set()
            self.log.close()
            with trio.CancelScope(shield=True):
                for seat in self.seats:
                    if isinstance(seat, _Client):
                        await seat.conn.aclose()

    async def shut_down(self) -> None:
        """Tell this game's clients that the server is stopping (WIRE.md's error, then close)."""
        if self.report is not None:
            return  # it has ended and said so; its task has not unwound yet
        self.log.write("end", winner=None, reason="the server shut down")
        for seat, player in enumerate(self.seats):
            if isinstance(player, _Client) and seat not in self.gone:
                # Told the end (youwin, youlose, tiegame) first, even while this
                # waited for its turn to write, it may be told nothing more: its
                # protocol refuses it. Raised from the goodbye, that refusal hung
                # issue 15's teardown (ring.net.serving).
                with contextlib.suppress(LocalProtocolError):
                    await self._tell(seat, Error("server_shutting_down"))

    async def _wait_for_opponent(self) -> bool:
        config = self.server.config
        with trio.move_on_after(config.wait_timeout):
            while True:
                _seat, item = await self.inbox.receive()
                if isinstance(item, _Joined):
                    return True
                if isinstance(item, Closed | Quit):
                    return False  # run() withdraws the game as it ends
        self.server.withdraw(self)  # before the await: nobody may join while we tell
        await self._tell(0, Error("no_opponent_came"))
        self.names.append(self.wanted)
        self._finish(None, "no opponent")
        return False

    def _start(self) -> None:
        server = self.server
        keys = sorted(name_key(name) for name in self.names)
        self.seed = server.game_seed(keys)
        first: int | None = None
        if self.bot_name is not None:
            self.seats.append(_Bot(self.bot_name, make_player(self.bot_name, f"{self.seed}:bot")))
            first = {"first": 1, "second": 0}.get(server.config.bot_moves)
        game = server.config.make_game(self.seed, first)
        self.referee = Referee(game, youmake=server.config.youmake)
        self.log.write(
            "start",
            game=self.number,
            seed=self.seed,
            names=self.names,
            bots=[isinstance(s, _Bot) for s in self.seats],
            first=game.first_player,
        )
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
        reason = "move_limit" if self.capped else "books"
        for tell in referee.ending():
            await self._tell(tell.seat, tell.message)
        self._finish(game.winner(), reason)

    async def _next_move(self, seat: int) -> list[Tell] | None:
        """The tells of the player's move; None if a player left or it ran out of time."""
        referee = self.referee
        assert referee is not None
        player = self.seats[seat]
        if isinstance(player, _Bot):
            reply = (await self._decide(seat, player)).line()
            move = parse_line(reply.encode(), Role.SERVER)
            assert isinstance(move, Request | Pass), reply
            self.log.record(seat=seat, name=player.name, dir="in", line=reply)
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
                return None
            assert sender == seat and isinstance(item, Request | Pass), (sender, item)
            try:
                return referee.act(seat, item)
            except RuleError as exc:
                if not (await self._tell(seat, Error(exc.reason))) or not (
                    await self._tell(seat, YourTurn())
                ):
                    return None

    async def _decide(self, seat: int, bot: _Bot) -> Decision:
        """The built-in player's answer to ``yourturn``; its long search, if it needs one,
        runs in a worker process, never on the loop that serves every game."""
        search = bot.player.search()
        if search is None:
            return bot.player.choose()
        server = self.server
        try:
            searched = await server.workers.run(
                search.function, *search.args, timeout=server.config.search_timeout
            )
        except (trio.TooSlowError, WorkerError) as exc:
            # A replay may differ from here on: the transcript says why.
            why = "timed out" if isinstance(exc, trio.TooSlowError) else str(exc)
            self.log.record(seat=seat, name=bot.name, search_failed=why)
            server.searches_failed += 1
            searched = SEARCH_FAILED
        return bot.player.choose(searched)

    async def _forfeit(self) -> None:
        """A player left, broke its connection, or ran out of time: it loses."""
        if self.timed_out is not None:
            loser, why, reason = self.timed_out, "opponent_timed_out", "timed out"
            await self._tell(loser, Error("move_timeout"))
            await self._tell(loser, ENDINGS[Result.LOSE])
        else:
            # A quit leaves the connection open: it gets nothing more either.
            loser = self.leaver if self.leaver is not None else min(self.gone)
            self.gone.add(loser)
            why, reason = "opponent_left", "left"
        winner = 1 - loser
        if winner not in self.gone:
            await self._tell(winner, Error(why))
            await self._tell(winner, ENDINGS[Result.WIN])
        self._finish(winner, f"{self.names[loser]} {reason}")

    def _finish(self, winner: int | None, reason: str) -> None:
        game = self.referee.game if self.referee is not None else None
        books = (len(game.books(0)), len(game.books(1))) if game is not None else (0, 0)
        names = (self.names[0], self.names[1] if len(self.names) > 1 else "-")
        self.report = GameReport(self.number, self.seed, names, books, winner, reason)
        self.log.write("end", winner=winner, books=list(books), reason=reason)
        self.server.reported(self.report)

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
        if isinstance(player, _Bot):
            line = encode(message).decode().rstrip("\n")
            self.log.record(seat=seat, name=player.name, dir="out", line=line)
            player.player.hear(line)  # never yourturn: _next_move asks a bot itself
            return True
        if seat in self.gone:
            return False
        if not await player.conn.send_or_close(message):
            self.gone.add(seat)
            return False
        return True


# -- the server ----------------------------------------------------------------------


class FishNetServer:
    def __init__(self, config: ServerConfig, seed: int, *, keyed: bool = False) -> None:
        self.config = config
        self.seed = seed
        self.keyed = keyed  # seed is a secret key (ring.seeds)
        self.games_running: set[_Game] = set()
        self.reports: list[GameReport] = []
        self.on_report: Callable[[GameReport], object] | None = None
        self.address: tuple[str, int] = ("", 0)  # set once listening
        self.workers = Workers(config.search_workers)  # the built-in players' searches
        self.searches_failed = 0
        self._numbers = itertools.count(1)
        self._game_numbers = itertools.count(1)
        self._pair_counts: collections.Counter[tuple[str, ...]] = collections.Counter()
        # Waiting games by (team, opponent) name keys, oldest first.
        self._waiting: dict[tuple[str, str], collections.deque[_Game]] = {}

    # -- bookkeeping ---------------------------------------------------------------

    def game_seed(self, keys: list[str]) -> str:
        pair = tuple(keys)
        n = self._pair_counts[pair]
        self._pair_counts[pair] += 1
        if self.keyed:
            return keyed_text(self.seed, "fishnet", keys[0], keys[1], n)
        return f"{self.seed}:{keys[0]}:{keys[1]}:{n}"

    def transcript_path(self, number: int) -> Path | None:
        folder = self.config.transcript_dir
        return None if folder is None else Path(folder) / f"game-{number:06d}.jsonl"

    def withdraw(self, game: _Game) -> None:
        for queue in self._waiting.values():
            if game in queue:
                queue.remove(game)

    async def shut_down(self) -> None:
        """The server is stopping: every client in a game, or waiting for one, is told."""
        waiting = [game for queue in self._waiting.values() for game in queue]
        for game in [*self.games_running, *waiting]:
            await game.shut_down()

    def reported(self, report: GameReport) -> None:
        self.reports.append(report)
        if self.on_report is not None:
            self.on_report(report)

    # -- connections ---------------------------------------------------------------

    async def handle(self, stream: trio.SocketStream) -> None:
        link = Link(Role.SERVER)
        conn = Connection(stream, link, timeout=self.config.send_timeout)
        host, port = conn.remote_address or ("?", None)
        peer = host if port is None else f"{host}:{port}"
        client = _Client(next(self._numbers), peer, host, conn, link)
        if self.config.transcript_dir is not None:  # spares the encoding when nobody reads it
            conn.observer = functools.partial(self._observe, client)
        try:
            await self._converse(client)
        except Exception:
            # A bug in one game must not take the others down with it.
            print(f"fishnet: internal error on connection {client.number}:", file=sys.stderr)
            traceback.print_exc()

    async def _converse(self, client: _Client) -> None:
        play = await self._await_play(client)
        if play is None:
            return
        client.name = play.team
        bot = COMPUTER_PLAYERS.get(name_key(play.opponent))
        joined = None if bot is not None else self._match(play)
        if (
            bot is None
            and joined is None
            and self._waiting_from(client.host) >= self.config.max_waiting_per_host
        ):
            await self._send(client, Error("too_many_waiting"))
            return
        mark_established()  # never evicted at the connection cap from now on
        if joined is not None:
            joined.add_client(client, play.team)
            game = joined
        else:
            game = _Game(self, next(self._game_numbers), client, play.team, play.opponent)
            if bot is not None:
                game.add_bot(bot.name)
            else:
                key = (name_key(play.team), name_key(play.opponent))
                self._waiting.setdefault(key, collections.deque()).append(game)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._read, client, game)
            if joined is None:
                await game.run()
            else:
                await game.finished.wait()
            nursery.cancel_scope.cancel()

    def _waiting_from(self, host: str) -> int:
        return sum(game.host == host for queue in self._waiting.values() for game in queue)

    def _match(self, play: Play) -> _Game | None:
        key = (name_key(play.opponent), name_key(play.team))
        queue = self._waiting.get(key)
        if not queue:
            return None
        game = queue.popleft()
        if not queue:
            del self._waiting[key]
        return game

    async def _await_play(self, client: _Client) -> Play | None:
        # One deadline from connect: a bad line every minute must not keep a
        # connection that never plays open for ever.
        deadline = trio.current_time() + self.config.idle_timeout
        while True:
            try:
                left = deadline - trio.current_time()
                if left <= 0:
                    # Lines already read in one go (a flood) do not outlast the
                    # deadline: without this, thousands of buffered lines were
                    # each answered, past it, before the next read timed out.
                    raise trio.TooSlowError
                event = await client.conn.receive(timeout=left)
            except trio.TooSlowError:
                await self._send(client, Error("idle_timeout"))
                return None
            except RemoteProtocolError as exc:
                await self._send(client, Error(exc.reason))
                return None
            if isinstance(event, Play):
                return event
            if isinstance(event, Closed | Quit):
                return None
            reason = event.reason if isinstance(event, Invalid) else "play_first"
            if not await self._send(client, Error(reason)):
                return None

    async def _read(self, client: _Client, game: _Game) -> None:
        """Answer bad lines at once; forward moves, the first quit and the close to the game."""
        quit_sent = False
        while True:
            try:
                event = await client.conn.receive(timeout=math.inf)
            except RemoteProtocolError as exc:
                await self._send(client, Error(exc.reason))
                event = Closed()
            if isinstance(event, Invalid):
                # WIRE.md: on the client's own turn, it is asked again.
                if await self._send(client, Error(event.reason)) and client.link.client_has_turn:
                    await self._send(client, YourTurn())
                continue
            if isinstance(event, Quit):
                if quit_sent:
                    continue
                quit_sent = True
            try:
                await game.to_inbox.send((client.seat, event))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if isinstance(event, Closed):
                return

    async def _send(self, client: _Client, message: ServerMessage) -> bool:
        return await client.conn.send_or_close(message)

    def _observe(self, client: _Client, direction: str, message: Any) -> None:
        if isinstance(message, Closed):
            record: dict[str, Any] = {"dir": "in", "closed": True}
        elif isinstance(message, Invalid):
            record = {"dir": "in", "invalid": message.reason}
        else:
            record = {"dir": direction, "line": encode(message).decode().rstrip("\n")}
        record = {"conn": client.number, "peer": client.peer, "name": client.name, **record}
        game = client.game
        if game is None:
            client.early.append({"t": time.monotonic(), **record})
        else:
            game.log.record(seat=client.seat, **record)

    # -- mDNS ----------------------------------------------------------------------

    def advertise(
        self,
        nursery: trio.Nursery,
        host: str,
        port: int,
        on_advertise: Callable[[Advertiser], object] | None,
    ) -> None:
        config = self.config
        if not wants_mdns(config.advertise, host):
            return
        from ring.discovery import start_advertising

        start_advertising(
            nursery,
            "fishnet",
            port,
            host=host,
            mdns_interface=config.mdns_interface,
            mdns_name=config.mdns_name,
            txt={"v": "1", "bots": ",".join(COMPUTER_PLAYERS)},
            who="fishnet",
            on_advertise=on_advertise,
        )


# -- entry points --------------------------------------------------------------------


async def _refuse(stream: trio.SocketStream, why: Refusal) -> None:
    """A newcomer the server cannot take: ``error server_full`` or
    ``error too_many_connections_from_your_address`` (then ``ring.net`` closes it)."""
    await answer_once(stream, encode(Error(why.value.replace(" ", "_"))))


async def serve_fishnet(
    config: ServerConfig,
    *,
    task_status: trio.TaskStatus[FishNetServer] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> None:
    """Serve until cancelled; ``await nursery.start(serve_fishnet, config)`` gives the server.

    The server's ``address`` is the bound (host, port). Raises ``ServerError``
    before listening if it cannot run.
    """
    seed, keyed = server_seed(config.seed, config.keyed)
    if config.transcript_dir is not None:
        try:
            Path(config.transcript_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(
                f"cannot write transcripts in {config.transcript_dir}: {exc}"
            ) from None
    server = FishNetServer(config, seed, keyed=keyed)
    async with trio.open_nursery() as nursery:
        listening = serving(
            server.handle,
            config.host,
            config.port,
            max_connections=config.max_connections,
            on_stop=server.shut_down,
            stop_timeout=SHUTDOWN_NOTICE_TIMEOUT,
            max_per_address=config.max_per_address,
            exempt_loopback=config.exempt_loopback,
            refuse=_refuse,
        )
        try:
            async with listening as (host, port):
                server.address = (host, port)
                server.advertise(nursery, host, port, on_advertise)
                task_status.started(server)
                await trio.sleep_forever()
        except CannotListen as exc:
            raise ServerError(str(exc)) from None
        finally:
            await server.workers.aclose()
