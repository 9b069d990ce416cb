"""The Old Maid table over TCP: a thin Trio layer around the referee.

Each connection is one task that reads a request, asks the referee and
writes the one reply, through ``ring.transport.Connection`` and the sans-IO
``Link``. Only two kinds of message are written by another task: the join
replies, which all go out when the game starts, and the ``game_over``
notices to watching players. ``Connection`` serialises writes, so these never
interleave with a reply.

Students' clients are the normal users, so bad input is normal input: every
request gets exactly one reply and the connection stays usable. Only a
message over the size limit closes a connection, after an error saying so.
The table runs one game and returns when it has ended and the players have
gone (or ``linger`` seconds passed).
"""

from __future__ import annotations

import argparse
import functools
import ipaddress
import itertools
import math
import secrets
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from ring.events import EventLog
from ring.framing import DEFAULT_MAX_MESSAGE
from ring.net import mark_established, serve, wants_mdns
from ring.oldmaid.messages import (
    Discard,
    Draw,
    GameOver,
    Join,
    LeftWithTurn,
    OutOfCards,
    Reply,
    Request,
    Status,
    error,
    ok,
)
from ring.oldmaid.protocol import Closed, Farewell, Invalid, Link, RemoteProtocolError, Role
from ring.shutdown import EXIT_TERMINATED, raise_on_sigterm, stop_code
from ring.transport import Connection, plain_ip
from services.oldmaid.referee import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Address,
    GameState,
    RefereeError,
    Standing,
    TableGame,
)

if TYPE_CHECKING:
    from ring.discovery import Advertiser

DEFAULT_PORT = 9898


class TableError(Exception):
    """The table could not run at all (port in use, transcript not writable)."""


@dataclass(frozen=True)
class TableConfig:
    players: int = 4
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # None: a random seed, reported in the transcript
    start_after: float | None = None
    transcript: str | Path | None = None
    idle_timeout: float = 120.0
    linger: float = 10.0
    # Once every player but one is out, how long to wait for pairs still
    # undiscarded before ending the game without them (WIRE.md).
    last_pair_grace: float = 2.0
    max_connections: int = 64
    send_timeout: float = 10.0
    max_message: int = DEFAULT_MAX_MESSAGE
    # mDNS: None advertises only when listening on a non-loopback address.
    advertise: bool | None = None
    mdns_interface: str | None = None  # default: the listening address (0.0.0.0: all)
    mdns_name: str = "table"  # the instance is "<mdns_name>-<8 hex>"

    def __post_init__(self) -> None:
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"an Old Maid game has {MIN_PLAYERS} to {MAX_PLAYERS} players")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TableConfig:
        return cls(
            players=args.players,
            host=args.host,
            port=args.port,
            seed=args.seed,
            start_after=args.start_after,
            transcript=args.transcript,
            idle_timeout=args.idle_timeout,
            linger=args.linger,
            last_pair_grace=getattr(args, "last_pair_grace", 2.0),
            max_connections=args.max_connections,
            advertise=getattr(args, "advertise", None),
            mdns_interface=getattr(args, "mdns_interface", None),
            mdns_name=getattr(args, "name", None) or "table",
        )


@dataclass(frozen=True)
class TableOutcome:
    """How the game ended; ``state`` is ``OVER`` or ``ABORTED``."""

    seed: int
    state: GameState
    players: tuple[str, ...]  # seat order
    loser: str | None
    out: tuple[str, ...]
    reason: str | None
    undiscarded: int = 0

    @property
    def line(self) -> str:
        """The last line ``ring table`` prints."""
        if self.state is GameState.OVER:
            line = f"game over: loser {self.loser}; out: {', '.join(self.out)}"
            if self.undiscarded:
                line += f"; {_pairs(self.undiscarded)} never discarded"
            return line
        return f"game aborted: {self.reason}"


def _pairs(count: int) -> str:
    return f"{count} pair" if count == 1 else f"{count} pairs"


def new_seed() -> int:
    return secrets.randbelow(2**32)


# -- transcript -----------------------------------------------------------------


class Transcript:
    """The ``--transcript`` file: message and referee records (docs/logs.md).

    Each record is flushed at once: a transcript is read most when a game
    went wrong, and then the table may well have been killed.
    """

    def __init__(self, path: str | Path | None) -> None:
        self._log = EventLog(path, flush_each=True)

    def message(self, conn: int, peer: str, nick: str | None, direction: str, **body: Any) -> None:
        self._log.record(conn=conn, peer=peer, nick=nick, dir=direction, **body)

    def referee(self, event: str, **fields: Any) -> None:
        self._log.write(event, **fields)

    def close(self) -> None:
        self._log.close()


# -- one connection -------------------------------------------------------------


@dataclass(eq=False)
class _Client:
    number: int  # 1, 2, ... in accept order: the transcript's "conn"
    peer: str  # "ip:port" for the transcript
    source: Address | None
    conn: Connection
    nick: str | None = None  # set when a join is accepted
    watch: bool = False
    answered: bool = False  # the join reply is written (or being written)
    closed: bool = False


class _Table:
    def __init__(self, config: TableConfig, seed: int, transcript: Transcript) -> None:
        self.config = config
        self.seed = seed
        self.referee = TableGame(config.players, seed)
        self.transcript = transcript
        self.ended = trio.Event()  # the game ended and the watchers were told
        self.players_gone = trio.Event()  # every seated player's connection closed
        self.nursery: trio.Nursery | None = None
        self._numbers = itertools.count(1)
        self._clients: dict[str, _Client] = {}  # joined, then seated, players by nick
        self._seated = trio.Event()  # every join reply has been written
        self._timer: trio.CancelScope | None = None
        self._end_announced = False
        self._grace_armed = False
        self.advertiser: Advertiser | None = None  # set while advertised over mDNS

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
        client = _Client(number, peer, source, conn)
        conn.observer = functools.partial(self._observe, client)
        try:
            await self._converse(client)
        except Exception:
            # A bug here must not take the other players' game down with it.
            print(f"table: internal error on connection {number}:", file=sys.stderr)
            traceback.print_exc()
        finally:
            client.closed = True
            self._release(client)
        await self._announce_end()

    async def _converse(self, client: _Client) -> None:
        while True:
            # Players wait on the game, not the other way round, so only
            # connections that have not joined are closed for idleness.
            idle = self.config.idle_timeout if client.nick is None else math.inf
            try:
                event = await client.conn.receive(timeout=idle)
            except trio.TooSlowError:
                # Closed without a message: there is no request to answer, and
                # an unasked-for reply would look like a broken table.
                return
            except RemoteProtocolError as exc:
                self._observe(client, "in", Invalid(str(exc)))
                await self._send(client, Farewell(f"{exc}; closing the connection"))
                return
            if isinstance(event, Closed):
                return
            if isinstance(event, Invalid):
                reply: Reply | None = error(event.reason)
            else:
                # A well-formed request: this connection is never evicted
                # to make room at the connection cap (ring.net.serve).
                mark_established()
                reply = await self._answer(client, event)
            if reply is not None and not await self._send(client, reply):
                return
            await self._announce_end()

    async def _send(self, client: _Client, message: Any) -> bool:
        """Write one message; a client that cannot take it is closed."""
        return await client.conn.send_or_close(message)

    def _observe(self, client: _Client, direction: str, message: Any) -> None:
        if isinstance(message, Closed):
            return
        if isinstance(message, Invalid):
            body = {"invalid": message.reason}
        else:
            if isinstance(message, Farewell):
                message = error(message.reason)
            body = {"msg": msgspec.to_builtins(message)}
        self.transcript.message(client.number, client.peer, client.nick, direction, **body)

    def _release(self, client: _Client) -> None:
        """A connection closed: free its seat, or abort the game it was playing."""
        if client.nick is None or self._clients.get(client.nick) is not client:
            return
        if self.referee.state is GameState.WAITING:
            self.referee.leave(client.nick)
            del self._clients[client.nick]
            self._advertise_state()
            if len(self.referee.joined) < 2:
                self._disarm_timer()
            return
        if _shutting_down():
            self.referee.abort("the table shut down")
        self.referee.leave(client.nick)  # aborts a game under way
        self._record_decisions()
        if all(other.closed for other in self._clients.values()):
            self.players_gone.set()

    # -- requests -----------------------------------------------------------

    async def _answer(self, client: _Client, request: Request) -> Reply | None:
        """The reply to one request; None for a join, answered when the game starts."""
        if client.nick is not None and not client.answered:
            return error("wait for the reply to join: it comes when the game starts")
        if isinstance(request, Status):
            return _status_reply(self.referee.status())
        if isinstance(request, Join):
            return await self._join(client, request)
        if client.nick is None:
            if self.referee.state is GameState.WAITING:
                return error("join first: the game has not started and you have not joined")
            return error("join first: this connection is not a player in this game")
        try:
            reply = self._play(client.nick, request)
        except RefereeError as exc:
            reply = error(str(exc))
        self._record_decisions()
        return reply

    def _play(self, nick: str, request: Request) -> Reply:
        if isinstance(request, Draw):
            card, last = self.referee.draw(nick)
            return Reply(result="last_card" if last else "ok", card=card)
        if isinstance(request, Discard):
            first, second = request.cards
            self.referee.discard(nick, first, second, declares_out=request.declares_out)
            return ok(message="ok")
        if isinstance(request, OutOfCards):
            self.referee.out_of_cards(nick)
            return ok()
        if isinstance(request, LeftWithTurn):
            self.referee.left_with_turn(nick, request.nick)
            return ok()
        # The Link lets only table requests through; anything else is a bug there.
        raise AssertionError(f"unexpected request {request!r}")

    async def _join(self, client: _Client, request: Join) -> Reply | None:
        if client.nick is not None:
            return error(f"this connection has already joined as {client.nick}")
        address = self._join_address(client, request)
        if isinstance(address, str):
            return error(address)
        try:
            self.referee.join(request.nick, address)
        except RefereeError as exc:
            return error(str(exc))
        client.nick = request.nick
        client.watch = request.watch
        self._clients[request.nick] = client
        self._advertise_state()
        if self.referee.is_full:
            await self._start_game()
        elif len(self.referee.joined) >= 2:
            self._arm_timer()
        return None

    def _join_address(self, client: _Client, request: Join) -> Address | str:
        """Where the others will dial this player, or why the join gives none."""
        if request.host is not None:
            host = plain_ip(request.host.strip())
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                return (
                    f"`host` must be a dotted IPv4 address such as 10.0.0.5, got {request.host!r}"
                )
        elif client.source is not None:
            host = client.source[0]
        else:
            return "cannot tell this connection's address: send `host` and `port`"
        if request.port is not None:
            port = request.port
        elif client.source is not None:
            port = client.source[1]
        else:
            return "cannot tell this connection's port: send `port`"
        if port == 0:
            return "`port` must be between 1 and 65535"
        return host, port

    # -- the start and the end ----------------------------------------------

    def _arm_timer(self) -> None:
        if self.config.start_after is None or self._timer is not None:
            return
        assert self.nursery is not None
        self._timer = trio.CancelScope()
        self.nursery.start_soon(self._start_later, self._timer)

    def _disarm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _start_later(self, scope: trio.CancelScope) -> None:
        assert self.config.start_after is not None
        with scope:
            await trio.sleep(self.config.start_after)
        if scope.cancelled_caught or self._timer is not scope:
            return
        self._timer = None
        if self.referee.state is GameState.WAITING and len(self.referee.joined) >= 2:
            await self._start_game()
            await self._announce_end()

    async def _start_game(self) -> None:
        self._disarm_timer()
        seats = self.referee.start()
        self._record_decisions()
        reply = ok(players=[(seat.address, seat.nick) for seat in seats])
        for seat in seats:
            client = self._clients[seat.nick]
            if client.closed:
                continue  # its connection task has already aborted the game
            # Answered from now: a player's first draw may be read before the
            # write below returns. Its reply cannot overtake the join reply,
            # because the write takes the connection's send lock without
            # yielding. A player whose join reply cannot be written is closed,
            # and its connection task then aborts the game.
            client.answered = True
            await self._send(client, reply)
        self._seated.set()

    async def _announce_end(self) -> None:
        """Tell the watchers, once, that the game has ended."""
        state = self.referee.state
        if self._end_announced or state not in (GameState.OVER, GameState.ABORTED):
            return
        self._end_announced = True
        if self.referee.seats:
            # A notice must not overtake a join reply still being written.
            await self._seated.wait()
        standing = self.referee.status()
        if state is GameState.OVER:
            notice = GameOver(
                loser=standing.loser, out=list(standing.out), undiscarded=standing.undiscarded
            )
        else:
            notice = GameOver(aborted=True, reason=standing.reason)
        for client in list(self._clients.values()):
            if client.watch and client.answered and not client.closed:
                await self._send(client, notice)
        self.ended.set()

    def _record_decisions(self) -> None:
        for event in self.referee.take_events():
            self.transcript.referee(event.EVENT, **msgspec.to_builtins(event))
        self._advertise_state()  # the start and the end come through here
        if self.referee.decided and not self._grace_armed:
            self._grace_armed = True
            assert self.nursery is not None
            self.nursery.start_soon(self._end_after_grace)

    async def _end_after_grace(self) -> None:
        """End a decided game whose last pairs do not come (``TableGame.decided``)."""
        await trio.sleep(self.config.last_pair_grace)
        if self.referee.decided:
            self.referee.end_without_pairs()
            self._record_decisions()
            await self._announce_end()

    # -- mDNS ---------------------------------------------------------------

    def advertise(
        self, host: str, port: int, on_advertise: Callable[[Advertiser], object] | None
    ) -> None:
        """Start advertising in the background if configured: joins never wait for it."""
        config = self.config
        if not wants_mdns(config.advertise, host):
            return
        from ring.discovery import start_advertising

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
        from ring.discovery import oldmaid_txt

        return oldmaid_txt(
            players=self.config.players,
            joined=len(self.referee.joined),
            state=self.referee.state.value,
        )

    def _advertise_state(self) -> None:
        if self.advertiser is not None:
            self.advertiser.update(self._mdns_txt())

    def outcome(self) -> TableOutcome:
        standing = self.referee.status()
        return TableOutcome(
            seed=self.seed,
            state=standing.state,
            players=tuple(seat.nick for seat in self.referee.seats),
            loser=standing.loser,
            out=standing.out,
            reason=standing.reason,
            undiscarded=standing.undiscarded,
        )


def _shutting_down() -> bool:
    """Whether this task is being cancelled: the connection did not close by itself."""
    return trio.current_effective_deadline() == -math.inf


def _status_reply(standing: Standing) -> Reply:
    reply = ok(in_=list(standing.in_), out=list(standing.out), state=standing.state.value)
    if standing.state is GameState.OVER:
        reply.game_over = True
        reply.loser = standing.loser
        reply.undiscarded = standing.undiscarded
    elif standing.state is GameState.ABORTED:
        reply.aborted = True
        reply.reason = standing.reason
    return reply


# -- entry points ---------------------------------------------------------------


async def serve_table(
    config: TableConfig,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> TableOutcome:
    """Run one game: listen, seat, referee, tell the watchers, linger, return.

    ``await nursery.start(serve_table, config)`` gives the bound (host, port).
    If the table advertises itself over mDNS, ``on_advertise`` gets the
    ``ring.discovery.Advertiser`` before its registration starts.
    Raises ``TableError`` before listening if the table cannot run.
    """
    seed = config.seed if config.seed is not None else new_seed()
    try:
        transcript = Transcript(config.transcript)
    except OSError as exc:
        raise TableError(f"cannot write the transcript {config.transcript}: {exc}") from None
    table = _Table(config, seed, transcript)
    failure: OSError | None = None
    try:
        async with trio.open_nursery() as nursery:
            table.nursery = nursery
            listen = functools.partial(
                serve,
                table.handle,
                config.host,
                config.port,
                max_connections=config.max_connections,
            )
            try:
                host, port = await nursery.start(listen)
            except OSError as exc:
                failure = exc
            else:
                transcript.referee(
                    "listening", host=host, port=port, players=config.players, seed=seed
                )
                table.advertise(host, port, on_advertise)
                task_status.started((host, port))
                await table.ended.wait()
                with trio.move_on_after(config.linger):
                    await table.players_gone.wait()
            nursery.cancel_scope.cancel()
    finally:
        transcript.close()
    if failure is not None:
        reason = failure.strerror or str(failure)
        raise TableError(f"cannot listen on {config.host}:{config.port}: {reason}")
    return table.outcome()


async def _serve_and_announce(config: TableConfig) -> TableOutcome:
    outcome: list[TableOutcome] = []
    failure: TableError | None = None

    async def play(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
        outcome.append(await serve_table(config, task_status=task_status))
        nursery.cancel_scope.cancel()  # the SIGTERM watcher

    async with trio.open_nursery() as nursery:
        nursery.start_soon(raise_on_sigterm)
        try:
            host, port = await nursery.start(play)
        except TableError as exc:
            failure = exc
            nursery.cancel_scope.cancel()
        else:
            # A scenario runner reads this first line to learn the port.
            print(f"table listening on {host}:{port}", flush=True)
            print(f"table seed {config.seed} (replay with --seed {config.seed})", file=sys.stderr)
    if failure is not None:
        raise failure
    return outcome[0]


def run(args: argparse.Namespace) -> int:
    """``ring table``: 0 after a game over, 1 after an abort, 2 if it could not run."""
    config = TableConfig.from_args(args)
    if config.seed is None:
        config = replace(config, seed=new_seed())
    try:
        outcome = trio.run(_serve_and_announce, config)
    except TableError as exc:
        print(f"table: {exc}", file=sys.stderr)
        return 2
    except BaseException as exc:
        code = stop_code(exc)
        if code is None:
            raise
        how = "terminated" if code == EXIT_TERMINATED else "interrupted"
        print(f"game aborted: the table was {how}", flush=True)
        return code
    print(outcome.line, flush=True)
    return 0 if outcome.state is GameState.OVER else 1
