"""The No Tipping server over TCP: a thin Trio layer around the rules and the sans-IO protocol.

``rules.Game`` decides every move; this module only seats players and forms
games, and ``match`` plays each one (its messages, clocks and transcript).
The course decides where the handout is silent (docs/protocols/notipping.md 12);
the choices below are this server's where both are.

Seating. Joins fill the seats of the game being formed. ``JOINREQUEST:h:p;``
gets ``GRANTED;`` when seat p of that game is free, else ``DENIED;`` (seat
taken, p not 0 or 1, a malformed handle or request). After ``DENIED;`` the
connection stays open and may ask again, for the other seat say, up to
``MAX_JOIN_REQUESTS`` requests; the last one denied closes it. Any other
message before a seat is granted (a move, garbage, a message over the size
limit) gets ``DENIED;`` and the close. A connection silent for
``idle_timeout`` while it has no seat (since it connected, or since its last
``DENIED;``) is closed. The same handle may hold both seats (a bot against
itself). Once both seats are granted, both players get
``BEGIN:<game>:<maxweight>;`` (games numbered 1, 2, 3... per server) and a
new game starts forming, so many games run at once. A granted player waits
at most ``wait_timeout`` for an opponent; a granted seat whose connection
drops, times out or sends over ``MAX_MESSAGE`` bytes before its game is
freed for someone else.

The game runs in the task of the player whose seat completed it (a
``ring.games.match.Match`` of ``match.NoTippingRules``, seated by ``ring.games.lobby``);
the other player's task keeps its connection open until the game is over.

Transcripts go in ``transcripts/game-NNNNNN.jsonl``, one per game, in the
envelope of ``ring.games.record``. Stopping the server closes the games as they
stand (the handout has no message for it); their records end with the
reason and no result. Off loopback (or with ``advertise``) the server is
advertised over mDNS as ``_notipping._tcp.local.``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ring.games.clock import TIMED_OUT
from ring.games.lobby import Lobby, ServerError, peer_of, serve
from ring.games.match import Match, Seat
from ring.games.record import RecordHub
from ring.wire.net import DEFAULT_MAX_PER_ADDRESS, Refusal, answer_once
from services.notipping import DEFAULT_PORT
from services.notipping import protocol as wire
from services.notipping.game import GameReport, NoTippingRules, describe, shown
from services.notipping.protocol import MAX_MESSAGE
from services.notipping.rules import DEFAULT_MAX_WEIGHT, MAX_WEIGHT_LIMIT, Game

if TYPE_CHECKING:
    from ring.mdns.discovery import Advertiser

__all__ = [
    "DEFAULT_PORT",
    "MAX_JOIN_REQUESTS",
    "GameReport",
    "NoTippingConfig",
    "NoTippingServer",
    "ServerError",
    "serve_notipping",
]

MAX_JOIN_REQUESTS = 10  # per connection, granted or denied
UNJOINED = "closed before joining"  # a log line's words (docs/protocols/notipping.md)


@dataclass(frozen=True)
class NoTippingConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    seed: int | None = None  # written into the records; nothing is random
    max_weight: int = DEFAULT_MAX_WEIGHT  # each player holds weights 1..max_weight
    time_budget: float = 120.0  # seconds each player has for all its moves; 0: no budget
    transcripts: str | Path | None = None  # one JSON-lines file per game
    hub: RecordHub | None = field(default=None, compare=False)  # None: the server's own
    idle_timeout: float = 120.0  # to ask for a seat
    wait_timeout: float = 600.0  # for an opponent to come (and for one move, budget off)
    max_connections: int = 256
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS  # None or 0: no such cap
    exempt_loopback: bool = True  # tests turn it off to meet that cap from 127.0.0.1
    send_timeout: float = 10.0
    advertise: bool | None = None  # None: only when not on a loopback address
    mdns_interface: str | None = None
    mdns_name: str = "notipping"
    on_end: Callable[[GameReport], object] | None = field(default=None, compare=False)
    # Tests start games from a chosen position (near a tip, in the remove phase).
    start_game: Game | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.max_weight <= MAX_WEIGHT_LIMIT:
            raise ValueError(f"max_weight is 1..{MAX_WEIGHT_LIMIT}, not {self.max_weight}")
        if self.time_budget < 0:
            raise ValueError("time_budget cannot be negative")


class NoTippingServer(Lobby):
    service = "notipping"
    LEFT_WAITING = "left before its game began; seat {seat} is free again"
    FLOODED_WAITING = "sent over {limit} bytes before its game"

    def __init__(self, config: NoTippingConfig) -> None:
        super().__init__(config)
        self.config: NoTippingConfig = config
        self.rules = NoTippingRules(
            time_budget=config.time_budget,
            wait_timeout=config.wait_timeout,
            send_timeout=config.send_timeout,
        )

    def seat(self, stream: trio.abc.Stream, peer: str) -> Seat:
        protocol = wire.ServerConnection()
        return Seat(stream, protocol, peer, max_unread=MAX_MESSAGE, shown=shown)

    def match(self, number: int, players: tuple[Seat, Seat]) -> Match[Game]:
        config = self.config
        game = config.start_game or Game.start(config.max_weight)
        return Match(self.rules, players, game, number=number, seed=config.seed, hub=self.hub)

    async def introduce(self, player: Seat) -> bool:
        """Whether the player was granted a seat; refusals are logged."""
        config = self.config
        for _ in range(MAX_JOIN_REQUESTS):
            event = await player.event(trio.current_time() + config.idle_timeout)
            if event is TIMED_OUT:
                kind = f"no JOINREQUEST within {config.idle_timeout:g} s; closing"
                self.unseated.say(kind, f"{player.peer}: {kind}")
                return False
            if isinstance(event, wire.Closed):
                self.unseated.say(UNJOINED, f"{player.peer}: {UNJOINED}")
                return False
            if isinstance(event, wire.JoinRequest):
                if player.assigned is not None and event.player != player.assigned:
                    # a tournament's player asks for the seat it was told ({seat})
                    reason = f"seat {event.player} is not its seat: it was told {player.assigned}"
                # Taken before the write, so that no one else is granted it meanwhile.
                elif self.take(player, event.player):
                    player.name = event.handle
                    player.granted = await player.send(wire.Granted(), config.send_timeout)
                    return player.granted
                else:
                    reason = f"seat {event.player} is taken"
            elif isinstance(event, wire.BadJoin):
                reason = event.reason
            else:
                self.log(f"{player.peer}: denied, closing: {describe(event)} before joining")
                await player.send(wire.Denied(), config.send_timeout)
                return False
            self.log(f"{player.peer}: JOINREQUEST denied: {reason}")
            if not await player.send(wire.Denied(), config.send_timeout):
                return False
        self.log(f"{player.peer}: {MAX_JOIN_REQUESTS} join requests; closing")
        return False

    async def refuse(self, stream: trio.SocketStream, why: Refusal) -> None:
        """A newcomer the server cannot take gets the protocol's one refusal, ``DENIED;``
        (then ``ring.wire.net`` closes it)."""
        kind = f"denied, closing: {why.value}"
        self.unseated.say(kind, f"{peer_of(stream)}: {kind}")
        await answer_once(stream, wire.encode(wire.Denied()))

    def txt(self) -> dict[str, str]:
        return {"v": "1", "max_weight": str(self.config.max_weight)}


async def serve_notipping(
    config: NoTippingConfig,
    *,
    task_status: trio.TaskStatus[NoTippingServer] = trio.TASK_STATUS_IGNORED,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> None:
    """Serve until cancelled; ``await nursery.start(serve_notipping, config)`` gives the server.

    Raises ``ServerError`` before listening if it cannot run.
    """
    await serve(NoTippingServer(config), task_status=task_status, on_advertise=on_advertise)
