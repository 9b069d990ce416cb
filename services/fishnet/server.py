"""The FishNet server over TCP: listening, pairing, each connection's reader, many
games at once.

A thin Trio layer: each game is a ``Match`` (``services.fishnet.server_game``: the
seats, the wait, its play on ``ring.games.match``), its built-in player a
``BotSeat`` (``services.fishnet.bot_seat``), its rules ``FishNetGame``, and
each connection's conversation the sans-IO ``Link``. Each connection has a
reader task here that answers bad lines itself (``error <reason>``, and
``yourturn`` again when the turn is the client's) and forwards good moves,
quits and closes to its match's inbox. Listening, mDNS, transcripts and the
stop are ``ring.games.lobby.serve``'s, as for every two-player server; the
seating is not ``ring.games.lobby``'s, which pairs connections two by two in the
order they come: FishNet pairs them by the names in their ``play``.

Pairing: ``play <team> <opponent>`` with a built-in player's name (any case)
starts a game at once; otherwise the client waits until a client sends
``play <opponent> <team>``, at most ``wait_timeout``.

Choices beyond the handout (docs/protocols/fishnet.md "Seeds and replay", "Transcripts"):

- A game's seed comes from the server's seed, the two names (in lower case
  and sorted) and n, counting their earlier games on this server, so a
  server seed replays each game whatever else runs at the same time. A
  published seed gives ``<seed>:<name>:<name>:<n>``; a secret one (the
  default; ``keyed``) a keyed hash of the same (``ring.games.seeds``), which
  nobody can compute without the secret. Either is in the game's record.
- Every game's records (``ring.games.record``: ``start``, every line in and out,
  ``end``) go to the hub in ``config.hub``, or to the server's own; with
  ``transcript_dir``, the server writes them, a file a game.
- A line over 4 KiB gets ``error line_too_long`` and the connection closes.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from ring.games.lobby import ServerError, serve
from ring.games.match import REPORTS_KEPT, Arena
from ring.games.record import RecordHub
from ring.games.seeds import keyed_text, server_seed
from ring.wire.net import Refusal, answer_once, mark_established
from ring.wire.sansio import Closed, Invalid
from ring.wire.transport import Connection
from services.fishnet.bot_seat import Searches
from services.fishnet.bots import COMPUTER_PLAYERS
from services.fishnet.config import ServerConfig
from services.fishnet.protocol import (
    Error,
    Link,
    Play,
    Quit,
    RemoteProtocolError,
    Role,
    ServerMessage,
    YourTurn,
    encode,
    name_key,
)
from services.fishnet.server_game import Client, GameReport, Match
from services.fishnet.transcript import SERVICE

if TYPE_CHECKING:
    from ring.mdns.discovery import Advertiser

# ServerConfig lives in services.fishnet.config; ring serve's declaration (and a
# test that wraps it) take it from here, beside serve_fishnet.
__all__ = ["FishNetServer", "ServerConfig", "ServerError", "serve_fishnet"]


# -- the server ----------------------------------------------------------------------


class FishNetServer:
    """A ``ring.games.lobby.Served`` server: ``ring.games.lobby.serve`` runs it."""

    service = SERVICE

    def __init__(self, config: ServerConfig, seed: int, *, keyed: bool = False) -> None:
        self.config = config
        self.hub = config.hub or RecordHub()  # every game's records (ring.games.record)
        # Lines in and out are recorded only where someone may read them: a hub of
        # ring serve's (a page may subscribe at any time), or transcript files.
        self.recording = config.hub is not None or config.transcript_dir is not None
        self.seed = seed
        self.keyed = keyed  # seed is a secret key (ring.games.seeds)
        self.games_running: set[Match] = set()
        self.arena = Arena()  # the games once started, as ring.games.match plays them
        self.reports: list[GameReport] = []
        self.on_report: Callable[[GameReport], object] | None = None
        self.address: tuple[str, int] = ("", 0)  # set once listening
        # The built-in players' long searches.
        self.searches = Searches(config.search_workers, config.search_timeout)
        self._numbers = itertools.count(1)
        self._game_numbers = itertools.count(1)
        self._pair_counts: collections.Counter[tuple[str, ...]] = collections.Counter()
        # Waiting games by (team, opponent) name keys, oldest first.
        self._waiting: dict[tuple[str, str], collections.deque[Match]] = {}

    # -- bookkeeping ---------------------------------------------------------------

    def game_seed(self, keys: list[str]) -> str:
        pair = tuple(keys)
        n = self._pair_counts[pair]
        self._pair_counts[pair] += 1
        if self.keyed:
            return keyed_text(self.seed, "fishnet", keys[0], keys[1], n)
        return f"{self.seed}:{keys[0]}:{keys[1]}:{n}"

    def withdraw(self, game: Match) -> None:
        for queue in self._waiting.values():
            if game in queue:
                queue.remove(game)

    async def shut_down(self) -> None:
        """The server is stopping: every client in a game, or waiting for one, is told."""
        waiting = [game for queue in self._waiting.values() for game in queue]
        for game in [*self.games_running, *waiting]:
            await game.shut_down()

    @property
    def transcripts(self) -> str | Path | None:
        return self.config.transcript_dir

    def txt(self) -> dict[str, str]:
        """The mDNS TXT record: the built-in players too."""
        return {"v": "1", "bots": ",".join(COMPUTER_PLAYERS)}

    async def refuse(self, stream: trio.SocketStream, why: Refusal) -> None:
        """A newcomer the server cannot take: ``error server_full`` or
        ``error too_many_connections_from_your_address`` (then ``ring.wire.net`` closes it)."""
        await answer_once(stream, encode(Error(why.value.replace(" ", "_"))))

    async def aclose(self) -> None:
        """Every game has ended: the built-in players' worker processes go."""
        await self.searches.aclose()

    def reported(self, report: GameReport) -> None:
        self.reports.append(report)
        del self.reports[:-REPORTS_KEPT]
        if self.on_report is not None:
            self.on_report(report)

    # -- connections ---------------------------------------------------------------

    async def handle(self, stream: trio.SocketStream, seat: int | None = None) -> None:
        """One connection to its end; ``seat``: a tournament's (``pair_in_order``)."""
        link = Link(Role.SERVER)
        conn = Connection(stream, link, timeout=self.config.send_timeout)
        host, port = conn.remote_address or ("?", None)
        peer = host if port is None else f"{host}:{port}"
        client = Client(next(self._numbers), peer, host, conn, link, assigned=seat)
        # Every line in and out passes here, in the order written: it counts the errors
        # (the flood rule, fishnet.md "Errors", whichever task writes them), and records
        # when asked.
        conn.observer = functools.partial(self._observe, client)
        try:
            await self._converse(client)
        except Exception:
            # A bug in one game must not take the others down with it.
            print(f"fishnet: internal error on connection {client.number}:", file=sys.stderr)
            traceback.print_exc()
        finally:
            conn.observer = None  # it holds the client, which holds the connection

    async def _converse(self, client: Client) -> None:
        play = await self._await_play(client)
        if play is None:
            return
        client.name = play.team
        # A tournament's server pairs its two programs whatever names they give.
        in_order = self.config.pair_in_order
        bot = None if in_order else COMPUTER_PLAYERS.get(name_key(play.opponent))
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
            game = Match(self, next(self._game_numbers), client, play.team, play.opponent)
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

    def waiting_seats(self) -> set[int]:
        """The tournament seats of the clients waiting for an opponent."""
        return {
            seat
            for queue in self._waiting.values()
            for game in queue
            if (seat := game.seats[0].assigned) is not None  # type: ignore[union-attr]
        }

    def _match(self, play: Play) -> Match | None:
        key = (name_key(play.opponent), name_key(play.team))
        if self.config.pair_in_order:
            key = next(iter(self._waiting), key)
        queue = self._waiting.get(key)
        if not queue:
            return None
        game = queue.popleft()
        if not queue:
            del self._waiting[key]
        return game

    async def _await_play(self, client: Client) -> Play | None:
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
            if not await self._send(client, Error(reason)) or client.bad_run.reached:
                # (fishnet.md "Errors": its 100th bad line in a row, answered, closes it)
                return None

    async def _read(self, client: Client, game: Match) -> None:
        """Answer bad lines at once; forward moves, the first quit and the close to the game."""
        quit_sent = False
        while True:
            try:
                event = await client.conn.receive(timeout=math.inf)
            except RemoteProtocolError as exc:
                await self._send(client, Error(exc.reason))
                event = Closed()
            if isinstance(event, Invalid):
                # fishnet.md "Errors": on the client's own turn, it is asked again; its
                # 100th bad line in a row, answered, closes it (as if it had left).
                if not await self._send(client, Error(event.reason)):
                    event = Closed()
                elif client.bad_run.reached:
                    await client.conn.aclose()
                    event = Closed()
                else:
                    if client.link.client_has_turn:
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

    async def _send(self, client: Client, message: ServerMessage) -> bool:
        return await client.conn.send_or_close(message)

    def _observe(self, client: Client, direction: str, message: Any) -> None:
        if direction == "out":
            client.told(message)  # raises once its 100th bad line in a row has gone out
        if not (self.recording and self.hub.listened):  # spares the encoding when nobody reads it
            return
        if isinstance(message, Closed):
            record: dict[str, Any] = {"dir": "in", "closed": True}
        elif isinstance(message, Invalid):
            record = {"dir": "in", "invalid": message.reason}
        else:
            record = {"dir": direction, "line": encode(message).decode().rstrip("\n")}
        record = {"conn": client.number, "peer": client.peer, "name": client.name, **record}
        if client.match is None:
            client.early.add(record)
        else:  # kept until its game starts, then the game's record (ring.games.match)
            client.log(seat=client.seat, **record)


# -- entry point ---------------------------------------------------------------------


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
    server = FishNetServer(config, seed, keyed=keyed)
    await serve(server, task_status=task_status, on_advertise=on_advertise)
