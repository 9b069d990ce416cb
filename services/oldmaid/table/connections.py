"""The Old Maid table's connections and games: one task per connection, around the referee.

Each connection is one task that reads a request, asks the referee and
writes the one reply, through ``ring.wire.transport.Connection`` and the sans-IO
``Link``. Only two kinds of message are written by another task: the join
replies, which all go out when the game starts, and the ``game_over``
notices to watching players. ``Connection`` serialises writes, so these never
interleave with a reply.

Students' clients are the normal users, so bad input is normal input: every
request gets exactly one reply and the connection stays usable. Only a
message over the size limit closes a connection, after an error saying so.
A table serves game after game, several at once: joins fill the game that
is forming, and when it starts the next one forms (``services.oldmaid.
table_game`` is one game).
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import math
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from ring.games.record import RecordHub
from ring.oldmaid.messages import (
    Join,
    Reply,
    Request,
    Status,
    error,
)
from ring.oldmaid.protocol import Closed, Farewell, Invalid, Link, RemoteProtocolError, Role
from ring.wire.net import mark_established, wants_mdns
from ring.wire.transport import Connection, plain_ip
from services.oldmaid.referee.rules import (
    Address,
    GameState,
    RefereeError,
)
from services.oldmaid.table.config import TableConfig
from services.oldmaid.table.game import Client, Game, Transcript, shutting_down
from services.oldmaid.table.outcome import GameOutcome, game_seed

# The error to an older client's join at a table run with --verified.
VERIFIED_ONLY = (
    'this table plays verified games only: join with "verify":true and "witness":true, and '
    "prove who you are, report every exchange and make your moves of an exchange the table "
    "witnesses, as docs/protocols/oldmaid.md 14.5 and 14.6 say"
)

if TYPE_CHECKING:
    from ring.mdns.discovery import Advertiser


class TableServer:
    """The connections of one table, and its games: the one forming and those under way."""

    def __init__(self, config: TableConfig, seed: int, hub: RecordHub) -> None:
        self.config = config
        self.seed = seed
        self.hub = hub  # every game's records (ring.games.record); the transcript writer subscribes
        self.address: tuple[str, int] | None = None
        self.nursery: trio.Nursery | None = None
        # The games forming, under way, or ended with players still there; each leaves
        # once its players have gone, so that a table that runs all day holds only these.
        self.games: list[Game] = []
        self._forming: Game | None = None
        self.opened = 0  # games so far
        # Those that ended and left, when the table plays a set number (``serve_tables``).
        self.outcomes: list[GameOutcome] = []
        self.all_ended = trio.Event()  # as many games as config.games have ended
        self.advertiser: Advertiser | None = None  # set while advertised over mDNS
        self._numbers = itertools.count(1)
        self._finished = 0  # games ended whose players have gone (or lingered too long)
        self._refused: set[str] = set()  # nicks refused for joining without verify

    @property
    def forming(self) -> Game:
        """The game new joins go to (the last game, once the table has started them all)."""
        assert self._forming is not None, "the table opens its first game as it starts listening"
        return self._forming

    def open_game(self) -> Game:
        assert self.nursery is not None and self.address is not None
        config = self.config
        self.opened += 1
        number = self.opened
        seed = game_seed(self.seed, number, keyed=self.config.keyed)
        game = Game(
            number,
            seed,
            config.players,
            Transcript(self.hub, number, seed=seed, options=config.game_options()),
            nursery=self.nursery,
            start_after=config.start_after,
            last_pair_grace=config.last_pair_grace,
            on_change=self._game_changed,
            turn_timeout=config.turn_timeout,
            accuse_window=config.accuse_window,
            deck=config.deck,
            verified_only=config.verified,
        )
        host, port = self.address
        game.transcript.referee(
            "listening", host=host, port=port, players=config.players, seed=seed, game=number
        )
        self.games.append(game)
        self._forming = game
        self.nursery.start_soon(self._finish, game)
        return game

    def _game_changed(self) -> None:
        forming = self.forming
        if forming.started.is_set() and self._may_open_another():
            self.open_game()
        self._advertise_state()

    def _may_open_another(self) -> bool:
        return self.config.games is None or self.opened < self.config.games

    async def _finish(self, game: Game) -> None:
        await game.ended.wait()
        if self.config.on_end is not None:
            self.config.on_end(game.outcome())
        await game.close_when_gone(self.config.linger)
        game.record_end()
        if self.config.games is not None:
            self.outcomes.append(game.outcome())
        self.games.remove(game)
        game.let_go()
        self._finished += 1
        if self.config.games is not None and self._finished >= self.config.games:
            self.all_ended.set()

    # -- connections --------------------------------------------------------

    async def handle(self, stream: trio.SocketStream) -> None:
        number = next(self._numbers)
        conn = Connection(
            stream,
            Link(Role.TABLE_SERVER, self.config.max_message),
            timeout=self.config.send_timeout,
        )
        source = conn.remote_address
        peer = f"{source[0]}:{source[1]}" if source else "?"
        client = Client(number, peer, source, conn, trio.CancelScope())
        conn.observer = functools.partial(self._observe, client)
        try:
            await self._serve(client)
        finally:
            # However it ended (an evicted connection is cancelled): the client and its
            # game, and the connection and its client, no longer point at one another,
            # so that they are freed at once, without a garbage collection (which stops
            # every game), once the table lets the game go.
            conn.observer = None
            client.game = None

    async def _serve(self, client: Client) -> None:
        try:
            with client.scope:
                await self._converse(client)
        except Exception:
            # A bug here must not take the other players' games down with it.
            print(f"table: internal error on connection {client.number}:", file=sys.stderr)
            traceback.print_exc()
        finally:
            client.closed = True
            if client.game is not None:
                client.game.release(client, shutting_down=shutting_down())
        if client.game is not None:
            await client.game.announce_end()

    async def _converse(self, client: Client) -> None:
        # From connect, not from the last message: a connection that sends
        # only bad requests, or only status, must not hold its slot for ever.
        idle_deadline = trio.current_time() + self.config.idle_timeout
        while True:
            try:
                patience = self._patience(client, idle_deadline)
                if patience <= 0:
                    # Requests already read in one go (a flood) do not outlast
                    # the deadline, as they did when each was answered first.
                    raise trio.TooSlowError
                event = await client.conn.receive(timeout=patience)
            except trio.TooSlowError:
                if client.game is None:
                    # Closed without a message: there is no request to answer, and
                    # an unasked-for reply would look like a broken table.
                    return
                if client.game.referee.state is GameState.WAITING:
                    if not await self._withdraw_join(client):
                        return
                    idle_deadline = trio.current_time() + self.config.idle_timeout
                continue  # else the game started meanwhile: its join reply is on its way
            except RemoteProtocolError as exc:
                self._observe(client, "in", Invalid(str(exc)))
                await client.conn.send_or_close(Farewell(f"{exc}; closing the connection"))
                return
            if isinstance(event, Closed):
                return
            if isinstance(event, Invalid):
                reply: Reply | None = error(event.reason)
            else:
                reply = await self._answer(client, event)
            flooded = False
            if reply is not None and reply.result == "error":
                flooded = client.bad_run.bad()
            else:
                client.bad_run.good()
            if reply is not None:
                client.replied_at = trio.current_time()
                if not await client.conn.send_or_close(reply):
                    return
            if flooded:  # oldmaid.md 3: the 100th bad message in a row is answered, then closed
                return
            if client.game is not None:
                await client.game.announce_end()

    def _patience(self, client: Client, idle_deadline: float) -> float:
        """How long to wait for this connection's next request."""
        game, wait = client.game, self.config.wait_timeout
        if game is None:
            return max(0.0, idle_deadline - trio.current_time())
        if wait is None or game.referee.state is not GameState.WAITING:
            # Players wait on the game, not the other way round: a game under
            # way that stops moving is ended by its own timer (turn_timeout).
            return math.inf
        return max(0.0, client.joined_at + wait - trio.current_time())

    async def _withdraw_join(self, client: Client) -> bool:
        """The join waited ``wait_timeout`` for its game: answer it with an error and
        free the seat (the protocol allows one reply per request, and an error
        reply to a join is one). False if the connection is closed."""
        game = client.game
        assert game is not None and client.nick is not None
        joined = len(game.referee.joined)
        game.release(client, shutting_down=False)
        client.game, client.nick, client.watch = None, None, False
        message = (
            f"no game started within {self.config.wait_timeout:g} s of this join "
            f"({joined} of {self.config.players} players joined); join again to keep waiting"
        )
        return await client.conn.send_or_close(error(message))

    def _observe(self, client: Client, direction: str, message: Any) -> None:
        if isinstance(message, Closed):
            return
        if isinstance(message, Invalid):
            body = {"invalid": message.reason}
        else:
            if isinstance(message, Farewell):
                message = error(message.reason)
            body = {"msg": msgspec.to_builtins(message)}
        game = client.game or self.forming
        game.transcript.message(client.number, client.peer, client.nick, direction, **body)

    # -- requests -----------------------------------------------------------

    async def _answer(self, client: Client, request: Request) -> Reply | None:
        """The reply to one request; None for a join, answered when its game starts."""
        if client.nick is not None and not client.answered:
            return error("wait for the reply to join: it comes when the game starts")
        if isinstance(request, Status):
            return (client.game or self.forming).status()
        if isinstance(request, Join):
            return await self._join(client, request)
        game = client.game
        if game is None or client.nick is None:
            if self.forming.referee.state is GameState.WAITING:
                return error("join first: the game has not started and you have not joined")
            return error("join first: this connection is not a player in this game")
        try:
            reply = game.play(client.nick, request)
        except RefereeError as exc:
            reply = error(str(exc))
        game.record_decisions()
        return reply

    async def _join(self, client: Client, request: Join) -> Reply | None:
        if client.nick is not None:
            return error(f"this connection has already joined as {client.nick}")
        if self.config.admit is not None:
            refused = self.config.admit(client.conn.stream, request.nick)  # type: ignore[arg-type]
            if refused is not None:
                return error(refused)
        witness_missing = self.config.require_witness and not request.witness
        if self.config.verified and (not request.verify or witness_missing):
            if self.config.on_unverified is not None:
                self.config.on_unverified(request.nick)
            self._refused.add(request.nick)
            await self._start_if_all_came()
            return error(VERIFIED_ONLY)
        address = self._join_address(client, request)
        if isinstance(address, str):
            return error(address)
        game = self.forming
        try:
            full = game.join(
                client,
                request.nick,
                address,
                request.watch,
                stream=request.stream,
                verify=request.verify,
                witness=request.witness,
            )
        except RefereeError as exc:
            return error(str(exc))
        # A player from now on: never evicted to make room at the connection
        # cap (ring.wire.net.listen), not even while the game it fills starts below.
        # A status or a refused join does not count: pollers stay evictable.
        mark_established()
        if self.config.on_join is not None:
            self.config.on_join(request.nick)
        if full:
            await game.start()
        else:
            await self._start_if_all_came()
        return None

    async def _start_if_all_came(self) -> None:
        """Start the forming game once every expected nick has joined it or been refused
        for not verifying (``TableConfig.expected``): waiting out ``start_after`` would
        only wait for programs that cannot join."""
        expected, game = self.config.expected, self.forming
        if not expected or game.referee.state is not GameState.WAITING:
            return
        joined = set(game.referee.joined)
        if len(joined) >= 2 and expected <= joined | self._refused:
            await game.start()

    def _join_address(self, client: Client, request: Join) -> Address | str:
        """Where the others will dial this player, or why the join gives none."""
        source = client.source
        if source is not None and self.config.real_source is not None:
            source = self.config.real_source(source) or source  # through ring check's relay
        if request.host is not None:
            host = plain_ip(request.host.strip())
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                return (
                    f"`host` must be a dotted IPv4 address such as 10.0.0.5, got {request.host!r}"
                )
        elif source is not None:
            host = source[0]
        else:
            return "cannot tell this connection's address: send `host` and `port`"
        if request.port is not None:
            port = request.port
        elif source is not None:
            port = source[1]
        else:
            return "cannot tell this connection's port: send `port`"
        if port == 0:
            return "`port` must be between 1 and 65535"
        return host, port

    async def shut_down(self) -> None:
        """Abort every game still forming or under way, and tell their watchers."""
        for game in self.games:
            await game.shut_down()

    def stopped(self) -> None:
        """The table has stopped: close every game's records that are still open, and let
        each game go (``Game.let_go``)."""
        for game in self.games:
            game.record_end()
            game.let_go()

    # -- mDNS ---------------------------------------------------------------

    def advertise(
        self, host: str, port: int, on_advertise: Callable[[Advertiser], object] | None
    ) -> None:
        """Start advertising in the background if configured: joins never wait for it."""
        config = self.config
        if not wants_mdns(config.advertise, host):
            return
        from ring.mdns.discovery import start_advertising

        assert self.nursery is not None
        self.advertiser = start_advertising(
            self.nursery,
            "oldmaid",
            port,
            host=host,
            mdns_interface=config.mdns_interface,
            mdns_name=config.mdns_name,
            txt=self._mdns_txt(),
            who="table",
            on_advertise=on_advertise,
        )

    def _mdns_txt(self) -> dict[str, str]:
        from ring.mdns.discovery import oldmaid_txt

        forming = self.forming.referee
        return oldmaid_txt(
            players=self.config.players, joined=len(forming.joined), state=forming.state.value
        )

    def _advertise_state(self) -> None:
        if self.advertiser is not None:
            self.advertiser.update(self._mdns_txt())
