"""The lobby of a two-player server: connections in, two seats filled, a match played.

Both course servers with two players a game (Reversi, No Tipping) run the
same way, and this module is that way once; each game subclasses ``Lobby``
with what differs: how a connection introduces itself (a name, a join
request) and takes a seat, and the ``ring.games.match.Match`` two seated players
play.

Seating. A connection's seat is taken (``take``) in the game forming, before
anything that yields, so no one else can take it meanwhile; once the game's
introduction grants it, the seat counts. When both seats of the game forming
are granted, the player whose seat completed it plays the game in its own
task (``Arena.play``), and a new game starts forming, so many games run at
once. The other player's task keeps its connection open until the game is
over. While it waits for an opponent (at most ``wait_timeout``), its
connection is read for a close: bytes it sends early are kept for its game
(moves are read then), up to ``Seat.max_unread``; past that, or once it has
closed, it loses its seat, and its task logs why (in the game's words) and
closes it. Games are numbered 1, 2, 3... per server.

The server tail. ``serve`` listens (``ring.wire.net.listening``, with its caps and
the game's ``refuse``), advertises the server over mDNS off loopback, writes
each game's transcript when ``transcripts`` is set (a
``ring.games.transcripts.TranscriptFiles`` subscribed to the server's record hub), and
on a stop lets the server end its games (a lobby ends their records as they
stand, "the server shut down") before their connections close, then closes
what the server holds (``aclose``). It serves any ``Served`` server, not
only a lobby: FishNet, which pairs players by the names they give, has its
own handling of connections and the same tail.
"""

from __future__ import annotations

import abc
import functools
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import trio

from ring.games.match import Arena, Match, Seat
from ring.games.record import RecordHub
from ring.games.transcripts import recording_to, transcript_files
from ring.wire.burst_log import BurstLog
from ring.wire.net import (
    CannotListen,
    ListenerConfig,
    Refusal,
    ServerError,
    listening_as,
    mark_established,
    wants_mdns,
)

if TYPE_CHECKING:
    from ring.mdns.discovery import Advertiser

# How long the shutdown may take to close every game, all together.
SHUTDOWN_TIMEOUT = 1.0


class ServedConfig(ListenerConfig, Protocol):
    """What ``serve`` reads of a server's config, beside its listener's."""

    @property
    def advertise(self) -> bool | None: ...
    @property
    def mdns_interface(self) -> str | None: ...
    @property
    def mdns_name(self) -> str: ...


class LobbyConfig(ServedConfig, Protocol):
    """What a lobby reads of its server's config, beside what ``serve`` does."""

    @property
    def transcripts(self) -> str | Path | None: ...
    @property
    def hub(self) -> RecordHub | None: ...
    @property
    def wait_timeout(self) -> float: ...
    @property
    def on_end(self) -> Callable[[Any], object] | None: ...


class Served(Protocol):
    """What ``serve`` needs of a server: a ``Lobby``, or a game's own (FishNet's)."""

    service: ClassVar[str]  # in records, logs and mDNS
    config: ServedConfig
    hub: RecordHub
    address: tuple[str, int]  # set once listening

    @property
    def transcripts(self) -> str | Path | None:
        """Where each game's transcript goes (a folder); None: nowhere."""

    async def handle(self, stream: trio.SocketStream) -> None: ...
    async def refuse(self, stream: trio.SocketStream, why: Refusal) -> None: ...
    async def shut_down(self) -> None: ...
    async def aclose(self) -> None:
        """Every game has ended: close what the server holds."""

    def txt(self) -> dict[str, str]: ...


class Lobby(abc.ABC):
    """Seats connections two by two and plays each pair's match."""

    service: ClassVar[str]  # in records, logs and mDNS
    # What the log says of a seated player that stops waiting for its game
    # ({seat}, {limit} and {wait} filled in); None: nothing.
    LEFT_WAITING: ClassVar[str | None] = "left before its game began"
    FLOODED_WAITING: ClassVar[str] = "sent over {limit} bytes before its game; closing"
    NO_OPPONENT: ClassVar[str] = "no opponent within {wait:g} s"

    def __init__(self, config: LobbyConfig) -> None:
        self.config = config
        self.hub = config.hub or RecordHub()
        self.address: tuple[str, int] = ("", 0)
        self.arena = Arena(config.on_end)
        self._seats: dict[int, Seat] = {}  # the game forming
        self._numbers = itertools.count(1)
        # Lines about connections that never took a seat come in crowds (ring.wire.burst_log).
        # Not self.log: a bound method would make the server and its BurstLog a cycle.
        self.unseated = BurstLog(functools.partial(say, self.service))

    @property
    def games_running(self) -> set[Match[Any]]:
        return self.arena.running

    @property
    def reports(self) -> list[Any]:
        return self.arena.reports

    @property
    def forming(self) -> dict[int, str]:
        """The seats taken in the game forming, with their players' names."""
        return {seat: player.name for seat, player in sorted(self._seats.items())}

    # -- what each game says -------------------------------------------------------

    @abc.abstractmethod
    def seat(self, stream: trio.abc.Stream, peer: str) -> Seat:
        """A new connection, with the game's protocol."""

    @abc.abstractmethod
    async def introduce(self, player: Seat) -> bool:
        """Read the connection until it holds a seat (``take``, then ``granted``): whether
        it does. Refusals are logged."""

    @abc.abstractmethod
    def match(self, number: int, players: tuple[Seat, Seat]) -> Match[Any]:
        """Game ``number`` of these two, in the order of their seats."""

    @property
    def transcripts(self) -> str | Path | None:
        return self.config.transcripts

    async def aclose(self) -> None:
        """A lobby holds nothing beyond its games."""
        return None

    async def refuse(self, stream: trio.SocketStream, why: Refusal) -> None:
        """A newcomer the server cannot take (``ring.wire.net`` closes it then): logged."""
        kind = f"refused, closing: {why.value}"
        self.unseated.say(kind, f"{peer_of(stream)}: {kind}")

    def txt(self) -> dict[str, str]:
        """The mDNS TXT record."""
        return {"v": "1"}

    # -- seats -------------------------------------------------------------------

    def take(self, player: Seat, seat: int) -> bool:
        """Seat ``player`` in the game forming, if that seat is free."""
        if seat in self._seats:
            return False
        self._seats[seat] = player
        player.seat = seat
        return True

    def free(self, player: Seat) -> None:
        if self._seats.get(player.seat) is player:
            del self._seats[player.seat]

    def log(self, line: str) -> None:
        say(self.service, line)

    # -- a connection, from its first byte to the end of its game -------------------

    async def handle(self, stream: trio.abc.Stream, seat: int | None = None) -> None:
        """One connection to the end of its game; ``seat``: the seat it is to take (a
        tournament's, which knows who dialled which of its ports), else the game decides."""
        player = self.seat(stream, peer_of(stream))
        player.assigned = seat
        try:
            if not await self.introduce(player):
                return
            mark_established()
            opponent = self._seats.get(1 - player.seat)
            if opponent is None or not opponent.granted:
                # The opponent's task, or a later one, begins the game.
                await self._wait_for_opponent(player)
                return
            # Both seats are granted: this task plays the game, and a new one forms.
            del self._seats[0], self._seats[1]
            opponent.begun.set()
            opponent.waiting_scope.cancel()
            await opponent.stopped_waiting.wait()  # one reader of its stream at a time
            players = (player, opponent) if player.seat == 0 else (opponent, player)
            try:
                await self.arena.play(self.match(next(self._numbers), players))
            finally:
                opponent.game_over.set()
        finally:
            self.free(player)
            player.stopped_waiting.set()
            with trio.move_on_after(1) as scope:
                scope.shield = True
                await stream.aclose()

    async def _wait_for_opponent(self, player: Seat) -> None:
        """Keep a seated player until its game begins; free its seat if it goes first.

        Once the game has begun, the opponent's task plays it; this one keeps
        the connection open until it is over (the game's own deadlines bound it).
        """
        why: str | None = self.NO_OPPONENT
        with trio.move_on_after(self.config.wait_timeout), player.waiting_scope:
            while True:
                data = await player.read()
                # Kept for the game (moves sent early are read then), but no one
                # may fill the server's memory.
                if player.too_much_unread(data):
                    why = self.FLOODED_WAITING
                    break
                player.protocol.receive_data(data)
                if not data:
                    why = self.LEFT_WAITING
                    break
        # Going either way: a game that began meanwhile finds it gone.
        player.gone = not player.waiting_scope.cancelled_caught
        if not player.begun.is_set():
            self.free(player)  # before any checkpoint: no game can take it now
            if why is not None:
                wait, limit = self.config.wait_timeout, player.max_unread
                self.log(f"{player.who}: {why.format(seat=player.seat, limit=limit, wait=wait)}")
            return
        player.stopped_waiting.set()
        await player.game_over.wait()

    async def shut_down(self) -> None:
        """The handouts have no message for a server that stops: games end as they stand."""
        self.arena.stop()


def say(service: str, line: str) -> None:
    """One line of a service's log, on stderr."""
    print(f"{service}: {line}", file=sys.stderr, flush=True)


def advertise(
    server: Served, nursery: trio.Nursery, on_advertise: Callable[[Advertiser], object] | None
) -> None:
    """Advertise ``server`` over mDNS, unless it listens on loopback (or its config says)."""
    config = server.config
    host, port = server.address
    if not wants_mdns(config.advertise, host):
        return
    from ring.mdns.discovery import start_advertising

    start_advertising(
        nursery,
        server.service,
        port,
        host=host,
        mdns_interface=config.mdns_interface,
        mdns_name=config.mdns_name,
        txt=server.txt(),
        who=server.service,
        on_advertise=on_advertise,
    )


def peer_of(stream: trio.abc.Stream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]  # type: ignore[attr-defined]
    except (AttributeError, OSError):  # not a socket (tests), or already reset
        return "?"
    return f"{host}:{port}"


async def serve(
    server: Served,
    *,
    task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> None:
    """Serve until cancelled; ``task_status.started(server)`` once it listens.

    Raises ``ServerError`` before listening if it cannot run.
    """
    try:
        transcripts = transcript_files(server.transcripts, server.service)
    except OSError as exc:
        raise ServerError(f"cannot write transcripts in {server.transcripts}: {exc}") from None
    with recording_to(server.hub, transcripts):
        async with trio.open_nursery() as nursery:
            listening = listening_as(
                server.config,
                server.handle,
                on_stop=server.shut_down,
                stop_timeout=SHUTDOWN_TIMEOUT,
                refuse=server.refuse,
            )
            try:
                async with listening as address:
                    server.address = address
                    advertise(server, nursery, on_advertise)
                    if isinstance(server, Lobby):
                        await nursery.start(server.unseated.run)
                    task_status.started(server)
                    await trio.sleep_forever()
            except CannotListen as exc:
                raise ServerError(str(exc)) from None
            finally:
                # every game has ended (serving waits for them); a transcript still
                # open is closed as it is when recording_to ends
                await server.aclose()
