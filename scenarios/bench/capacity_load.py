"""One load of the capacity bench: many games of one service at once, timed at the clients.

``python -m scenarios.bench.capacity_load SERVICE HOST:PORT --games N --duration S``
keeps N games of SERVICE going against the server at HOST:PORT, starting a
new game in a slot whenever one ends, until S seconds have passed; then it
lets every game under way finish and prints one JSON line of figures
(``LoadFigures``). The games are the reference clients of ``ring bot`` and
``ring peer``, seeded by slot and game, at full speed, or with ``--think`` at a
class's pace: a bot thinks before each answer, a peer before each request to
the table (its moves), uniformly between 0 and twice the mean.

What is timed is the server's reply, as each client sees it:

- FishNet: from a client's answer to ``yourturn`` to the first server line after it.
- Reversi and No Tipping: from a move to the next board (``ROUND``) that shows
  it, at whichever client gets it. The server pairs connections as they
  come, so a move is matched to its board by the position it makes; when
  two games are in the same position at once (openings) the board is
  ambiguous and not counted (``ambiguous`` says how many).
- Old Maid: each request of a peer to the table (draw, discard, status,
  ``out_of_cards``) to its reply. ``join`` is not counted: its reply waits
  for the game to fill.
- echo: a raw Trio line-echo round trip (``scenarios.bench.pingpong echo``), the yardstick.

``hostile`` times nothing: from 127.0.0.2 it holds, floods and dribbles
connections into every service given as NAME=HOST:PORT,...
(``scenarios.bench.hostile_load``); its figures count the connections opened
and those the server closed.

``LoadFigures`` and the recorders the games fill are in ``scenarios.bench.load_figures``.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import trio

from ring.cli import cliargs
from ring.cli.serve import calm_garbage_collector
from ring.oldmaid.messages import Join
from ring.oldmaid.peer import Peer, PeerConfig
from ring.oldmaid.table_client import TableClient
from scenarios.bench.hostile_load import KINDS as HOSTILE_KINDS
from scenarios.bench.hostile_load import hostile
from scenarios.bench.load_figures import LoadFigures, Recorder, Relay, Reply, probe_lag
from scenarios.bench.pingpong import MESSAGE, read_line
from scenarios.bench.viewer_load import viewers
from services.fishnet import conversation as fishnet
from services.fishnet.bots import COMPUTER_PLAYERS
from services.fishnet.bots import make_player as fishnet_player
from services.fishnet.client import BotAgent as FishNetBot
from services.notipping import conversation as notipping
from services.notipping import rules as notipping_rules
from services.notipping.bots import make_player as notipping_player
from services.notipping.client import BotAgent as NoTippingBot
from services.reversi import conversation as reversi
from services.reversi.bots import make_player as reversi_player
from services.reversi.client import BotAgent as ReversiBot
from services.reversi.rules import Position

LOADS = ("fishnet", "reversi", "notipping", "oldmaid", "echo", "hostile", "viewers")
CLIENT_TIMEOUT = 60.0  # any one wait of a client on the server
FINISH_TIMEOUT = 120.0  # after the duration, for the games under way to end
RAMP = 3.0  # seconds over which the slots start
OLDMAID_PLAYERS = 4
ECHO_ROUND_TRIPS = 50  # about a FishNet game's requests


class Pace:
    """A bot's thinking before each answer: none at full speed, else uniform in [0, 2 mean]."""

    def __init__(self, mean: float, seed: str) -> None:
        self.mean = mean
        self.random = random.Random(seed)

    async def think(self) -> None:
        if self.mean > 0:
            await trio.sleep(self.random.uniform(0, 2 * self.mean))


# -- the clients, with their timing --------------------------------------------------------


class TimedFishNetBot:
    def __init__(self, bot: FishNetBot, reply: Reply, pace: Pace) -> None:
        self.bot, self.reply, self.pace = bot, reply, pace

    async def hear(self, line: str) -> str | None:
        self.reply.heard()
        answer = await self.bot.hear(line)
        if answer is not None:
            await self.pace.think()
            self.reply.sent()
        return answer


class TimedReversiBot:
    def __init__(self, bot: ReversiBot, relay: Relay, pace: Pace) -> None:
        self.bot, self.relay, self.pace = bot, relay, pace

    async def started(self, colour: int) -> None:
        await self.bot.started(colour)

    async def move(self, position: Position) -> tuple[int, int]:
        self.relay.arrived((position.black, position.white))
        x, y = await self.bot.move(position)
        await self.pace.think()
        after = position.play(x * 8 + y)
        self.relay.sent((after.black, after.white))
        return x, y


class TimedNoTippingBot:
    def __init__(
        self, bot: NoTippingBot, relay: Relay, pace: Pace, seat_taken: Callable[[], None]
    ) -> None:
        self.bot, self.relay, self.pace, self.seat_taken = bot, relay, pace, seat_taken

    async def begin(self, game_number: int, max_weight: int, player: int) -> None:
        self.seat_taken()
        await self.bot.begin(game_number, max_weight, player)

    async def move(self, view: notipping.View) -> notipping_rules.Move:
        self.relay.arrived(_lever(view.game))
        move = await self.bot.move(view)
        await self.pace.think()
        self.relay.sent(_lever(view.game.play(move)))
        return move


def _lever(game: notipping_rules.Game) -> Hashable:
    return game.weights, game.moves_made


def time_table_requests(recorder: Recorder, pace: Pace) -> None:
    """Time every peer's requests to the table in this process (the peer has no hook for
    it); at a class's pace each peer thinks before each request, as a bot before its answer
    (a draw, a discard, going out: its moves), the think not timed."""
    untimed = TableClient.request

    @functools.wraps(untimed)
    async def request(self: TableClient, message: Any, *, timeout: float, **options: Any) -> Any:
        if isinstance(message, Join):
            return await untimed(self, message, timeout=timeout, **options)
        await pace.think()
        start = time.perf_counter()
        reply = await untimed(self, message, timeout=timeout, **options)
        recorder.samples.append(time.perf_counter() - start)
        return reply

    TableClient.request = request  # type: ignore[method-assign]


# -- the games -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GameId:
    """Game ``number`` of slot ``slot`` in a run of ``seed``: its players' seeds and names."""

    seed: int
    slot: int
    number: int
    think: float = 0.0  # mean seconds a bot thinks before each answer

    def pace(self, player: object) -> Pace:
        return Pace(self.think, self.seed_of(f"pace{player}"))

    def seed_of(self, player: object) -> str:
        return f"{self.seed}:{self.slot}:{self.number}:{player}"

    @property
    def name(self) -> str:  # Reversi allows 10 characters
        return f"c{self.slot}g{self.number}"


PlayOne = Callable[[tuple[str, int], GameId, Recorder], Awaitable[None]]
SERVER_PLAYERS = tuple(COMPUTER_PLAYERS)  # the server's player, in turn: the class plays them all


async def fishnet_game(address: tuple[str, int], game: GameId, rec: Recorder) -> None:
    opponent = SERVER_PLAYERS[(game.slot + game.number) % len(SERVER_PLAYERS)]
    agent = TimedFishNetBot(
        FishNetBot(fishnet_player("alice", game.seed_of(0))), Reply(rec), game.pace(0)
    )
    await rec.game(
        fishnet.play_one_game(address, game.name, opponent, agent, timeout=CLIENT_TIMEOUT)
    )


async def reversi_game(address: tuple[str, int], game: GameId, rec: Recorder) -> None:
    """Two connections, each one player: the server pairs them as they come, maybe not together."""
    async with trio.open_nursery() as nursery:
        for seat in (0, 1):
            bot = ReversiBot(reversi_player("random", game.seed_of(seat)), None)
            agent = TimedReversiBot(bot, rec.relay, game.pace(seat))
            play = reversi.play_one_game(address, game.name, agent, timeout=CLIENT_TIMEOUT)
            nursery.start_soon(functools.partial(rec.game, play, counted=seat == 0))


async def notipping_game(address: tuple[str, int], game: GameId, rec: Recorder) -> None:
    async def seat(number: int) -> None:
        lock = rec.seat_locks[number]
        await lock.acquire()
        held = True

        def begun() -> None:
            nonlocal held
            if held:
                held = False
                lock.release()

        bot = NoTippingBot(notipping_player("random", game.seed_of(number)))
        agent = TimedNoTippingBot(bot, rec.relay, game.pace(number), begun)
        play = notipping.play_one_game(address, game.name, number, agent, timeout=CLIENT_TIMEOUT)
        try:
            await rec.game(play, counted=number == 0)
        finally:
            begun()

    async with trio.open_nursery() as nursery:
        for number in (0, 1):
            nursery.start_soon(seat, number)


async def oldmaid_game(address: tuple[str, int], game: GameId, rec: Recorder) -> None:
    """Four peers; the table seats peers as they join, so they may meet other slots' peers."""
    peers = [
        Peer(PeerConfig(
            nick=f"{game.name}p{i}", table=address, seed=(game.seed * 7919 + game.slot) * 1000
            + game.number * 8 + i, timeout=CLIENT_TIMEOUT,
        ))
        for i in range(OLDMAID_PLAYERS)
    ]  # fmt: skip

    async def one(peer: Peer, counted: bool) -> None:
        try:
            await rec.game(peer.play(), counted=counted)
        finally:
            peer.log.close()

    async with trio.open_nursery() as nursery:
        for i, peer in enumerate(peers):
            nursery.start_soon(one, peer, i == 0)


async def echo_game(address: tuple[str, int], game: GameId, rec: Recorder) -> None:
    """The yardstick's "game": ECHO_ROUND_TRIPS line round trips on one connection."""

    async def exchange() -> None:
        with trio.fail_after(CLIENT_TIMEOUT):
            stream = await trio.open_tcp_stream(*address)
        buffer = bytearray()
        async with stream:
            for _ in range(ECHO_ROUND_TRIPS):
                start = time.perf_counter()
                with trio.fail_after(CLIENT_TIMEOUT):
                    await stream.send_all(MESSAGE)
                    if await read_line(stream, buffer) != MESSAGE:
                        raise fishnet.ClientError("the echo server sent back something else")
                rec.samples.append(time.perf_counter() - start)

    await rec.game(exchange())


GAMES: dict[str, PlayOne] = {
    "fishnet": fishnet_game,
    "reversi": reversi_game,
    "notipping": notipping_game,
    "oldmaid": oldmaid_game,
    "echo": echo_game,
}


async def run_load(
    load: str, address: tuple[str, int], slots: int, duration: float, seed: int, think: float
) -> LoadFigures:
    """``slots`` games at once, each slot starting its next game until ``duration`` is over
    (and its first game whenever it starts: a slot that a loaded machine starts late still
    plays one)."""
    rec = Recorder()
    if load == "oldmaid":
        time_table_requests(rec, Pace(think, f"{seed}-oldmaid"))
    play = GAMES[load]
    start = time.perf_counter()
    stop_starting = trio.current_time() + duration

    async def slot(number: int) -> None:
        # Slots start evenly over RAMP seconds, as a class arrives, not in one instant.
        await trio.sleep(min(RAMP, duration / 2) * number / slots)
        game = 0
        while game == 0 or trio.current_time() < stop_starting:
            await play(address, GameId(seed, number, game, think), rec)
            game += 1

    with trio.fail_after(duration + FINISH_TIMEOUT):
        async with trio.open_nursery() as probing:
            probing.start_soon(probe_lag, rec)
            async with trio.open_nursery() as nursery:
                for number in range(slots):
                    nursery.start_soon(slot, number)
            probing.cancel_scope.cancel()
    return rec.figures(load, slots, time.perf_counter() - start)


def _named_address(text: str) -> tuple[str, tuple[str, int]]:
    name, _, address = text.partition("=")
    return name, cliargs.address(address)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scenarios.bench.capacity_load", description=__doc__
    )
    parser.add_argument("load", choices=LOADS)
    parser.add_argument("address", metavar="HOST:PORT")
    parser.add_argument("--games", type=int, required=True, help="games at once")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of new games")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--think", type=float, default=0.0, help="mean seconds a bot thinks (default 0)"
    )
    parser.add_argument(
        "--kinds", default=",".join(HOSTILE_KINDS), help="hostile: which (hold,flood,dribble,crowd)"
    )
    args = parser.parse_args(argv)
    # As the server does: the load's own collection pauses would be timed as the server's.
    calm_garbage_collector()
    if args.load == "hostile":
        targets = dict(_named_address(item) for item in args.address.split(","))
        figures = trio.run(hostile, targets, args.duration, tuple(args.kinds.split(",")))
    elif args.load == "viewers":
        figures = trio.run(viewers, cliargs.address(args.address), args.games, args.duration)
    else:
        figures = trio.run(
            run_load,
            args.load,
            cliargs.address(args.address),
            args.games,
            args.duration,
            args.seed,
            args.think,
        )
    figures.cpu = time.process_time()
    print(json.dumps(asdict(figures)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
