"""The Old Maid table for the tests: served in-process, and raw clients talking to it.

``table`` runs ``serve_tables`` on port 0 and ``Client`` is a raw TCP client that sends
exactly the bytes it is given, so the tests can send what students' clients send:
garbage, bare objects, objects split byte by byte. Nothing waits on a clock to learn that
something happened; every read has a timeout, so a failure cannot hang.
``table_in_memory`` serves memory streams instead of sockets, for Trio's mock clock.

Used by the table's tests (``tests/services/oldmaid/test_table_*.py``) and by the flood
rule's (``tests/ring/wire/test_flood.py``).
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
import trio.testing

from ring.games.record import RecordHub
from ring.games.transcripts import TranscriptFile
from ring.oldmaid.cards import Card, parse_card, split_pairs
from services.oldmaid.table.server import TableConfig, TableOutcome, TableServer, serve_tables

TIMEOUT = 5.0


class Client:
    """One raw connection to the table; replies are read one line at a time."""

    timeout = TIMEOUT  # the bound on each read (longer on the mock clock)

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.notices: list[dict[str, Any]] = []  # game_over messages read on the way
        self._buffer = bytearray()

    @classmethod
    async def connect(cls, port: int) -> Client:
        with trio.fail_after(TIMEOUT):
            return cls(await trio.open_tcp_stream("127.0.0.1", port))

    @property
    def local_port(self) -> int:
        return self.stream.socket.getsockname()[1]

    async def send_bytes(self, data: bytes) -> None:
        with trio.fail_after(TIMEOUT):
            await self.stream.send_all(data)

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def _line(self) -> bytes | None:
        """The next line, or None once the table has closed the connection."""
        with trio.fail_after(self.timeout):
            while b"\n" not in self._buffer:
                try:
                    data = await self.stream.receive_some(65536)
                except trio.BrokenResourceError:
                    data = b""
                if not data:
                    return None
                self._buffer += data
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        return line

    async def message(self) -> dict[str, Any]:
        line = await self._line()
        assert line is not None, "the table closed the connection"
        return json.loads(line)

    async def reply(self) -> dict[str, Any]:
        while True:
            message = await self.message()
            if "result" in message:
                return message
            assert message.get("cmd") == "game_over", message
            self.notices.append(message)

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.send(message)
        return await self.reply()

    async def status(self) -> dict[str, Any]:
        reply = await self.request({"cmd": "status"})
        assert reply["result"] == "ok", reply
        return reply

    async def notice(self) -> dict[str, Any]:
        if self.notices:
            return self.notices.pop(0)
        message = await self.message()
        assert message.get("cmd") == "game_over", message
        return message

    async def closed_by_table(self) -> bool:
        """Read to the end; True if the table closed the connection in time."""
        with trio.move_on_after(self.timeout):
            while await self._line() is not None:
                pass
            return True
        return False

    async def aclose(self) -> None:
        await self.stream.aclose()


@dataclass
class Running:
    config: TableConfig
    port: int = 0
    outcomes: list[TableOutcome] = field(default_factory=list)
    done: trio.Event = field(default_factory=trio.Event)
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    async def serve(self, task_status: trio.TaskStatus[tuple[str, int]]) -> None:
        with self.scope:
            self.outcomes = await serve_tables(self.config, task_status=task_status)
        self.done.set()

    async def client(self) -> Client:
        return await Client.connect(self.port)

    def stop(self) -> None:
        """Stop the table as ``ring serve`` does on SIGTERM: cancel it."""
        self.scope.cancel()

    async def finished_all(self) -> list[TableOutcome]:
        with trio.fail_after(TIMEOUT):
            await self.done.wait()
        return self.outcomes

    async def finished(self) -> TableOutcome:
        [outcome] = await self.finished_all()
        return outcome


@asynccontextmanager
async def table(**settings: Any) -> AsyncIterator[Running]:
    config = TableConfig(**{"players": 2, "port": 0, "seed": 7, "linger": 2.0, **settings})
    running = Running(config)
    async with trio.open_nursery() as nursery:
        _, running.port = await nursery.start(running.serve)
        yield running
        nursery.cancel_scope.cancel()


@dataclass
class Game:
    running: Running
    seats: list[str]  # nicks in seat order
    clients: dict[str, Client]
    players: list[Any]  # the join reply's list

    def seat(self, i: int) -> Client:
        return self.clients[self.seats[i]]


async def join_all(
    running: Running, count: int, watch: Callable[[int], bool] = lambda i: True
) -> Game:
    clients = {}
    for i in range(count):
        client = await running.client()
        await client.send({"cmd": "join", "nick": f"p{i}", "watch": watch(i)})
        clients[f"p{i}"] = client
    replies = [await client.reply() for client in clients.values()]
    for reply in replies:
        assert reply == replies[0]
        assert reply["result"] == "ok"
    players = replies[0]["players"]
    return Game(running, [nick for _, nick in players], clients, players)


@asynccontextmanager
async def game(players: int = 2, **settings: Any) -> AsyncIterator[Game]:
    async with table(players=players, **settings) as running:
        yield await join_all(running, players)


def wire(card: Card) -> list[str]:
    return [card.value, card.suit]


async def deal_all(game: Game) -> dict[str, list[Card]]:
    """Draw the whole deck in turn; what each player got."""
    got: dict[str, list[Card]] = {nick: [] for nick in game.seats}
    for i in range(53):
        nick = game.seats[i % len(game.seats)]
        reply = await game.clients[nick].request({"cmd": "draw"})
        assert reply["result"] == ("last_card" if i == 52 else "ok"), reply
        got[nick].append(parse_card(*reply["card"]))
    return got


def a_pair(cards: list[Card]) -> tuple[Card, Card]:
    return split_pairs(cards)[1][0]


async def empty_hand(g: Game, seat: int, pairs: list[tuple[Card, Card]], keep: int = 0) -> None:
    """After the deal, discard pairs (taken from ``pairs``) as ``seat`` until the table can
    believe its hand empty, but for ``keep`` pairs: once cards may have passed between
    players the table cannot tell whose a pair is, but a claim of an empty hand from a
    player that discarded too little of what it was dealt is a lie (protocol 14)."""
    dealt = len(range(seat, 53, len(g.seats)))
    for _ in range((dealt + 1) // 2 - keep):
        request = {"cmd": "discard", "cards": [wire(c) for c in pairs.pop()]}
        assert await g.seat(seat).request(request) == {"result": "ok", "message": "ok"}


def assert_error(reply: dict[str, Any], *words: str) -> None:
    assert reply["result"] == "error", reply
    for word in words:
        assert word in reply["message"], (word, reply)


async def until_in(client: Client, nicks: list[str]) -> None:
    """Ask status until it lists ``nicks``: a close reaches the table in its own time."""
    with trio.fail_after(TIMEOUT):
        while (await client.status())["in"] != nicks:
            await trio.sleep(0.01)


async def assert_undisturbed(game: Game, *clients: Client) -> None:
    """The connections still answer, and the game goes on: seat 0 then 1 can draw."""
    for client in clients:
        assert (await client.status())["state"] == "playing"
    first = await game.seat(0).request({"cmd": "draw"})
    second = await game.seat(1).request({"cmd": "draw"})
    assert first["result"] == second["result"] == "ok"


# -- whole games, played as the peers would ------------------------------------


@dataclass
class Driver:
    """Plays a game as the peers would, simulating the picks the table cannot see."""

    game: Game
    rng: random.Random
    hands: dict[str, list[Card]] = field(default_factory=dict)
    went_out: list[str] = field(default_factory=list)
    discards: int = 0

    def flag(self, value: bool) -> dict[str, Any]:
        # Every spelling real clients use: either key, a string or a boolean.
        key = self.rng.choice(["last_cards", "last_card"])
        return {key: self.rng.choice([value, "true" if value else "false"])}

    def receive(self, nick: str, card: Card) -> None:
        hand = self.hands[nick]
        hand.insert(self.rng.randint(0, len(hand)), card)

    async def discard_pairs(self, nick: str, *, offer_phase: bool) -> None:
        self.hands[nick], pairs = split_pairs(self.hands[nick])
        for i, pair in enumerate(pairs):
            empties = offer_phase and not self.hands[nick] and i == len(pairs) - 1
            request = {"cmd": "discard", "cards": [wire(c) for c in pair], **self.flag(empties)}
            reply = await self.game.clients[nick].request(request)
            assert reply == {"result": "ok", "message": "ok"}
            self.discards += 1
            if empties:
                self.went_out.append(nick)

    async def go_out(self, nick: str) -> None:
        if nick not in self.went_out:
            reply = await self.game.clients[nick].request({"cmd": "out_of_cards"})
            assert reply == {"result": "ok"}
            self.went_out.append(nick)

    async def play(self) -> str:
        """The loser, as the players see it."""
        seats = self.game.seats
        self.hands = {nick: [] for nick in seats}
        for i in range(53):
            nick = seats[i % len(seats)]
            reply = await self.game.clients[nick].request({"cmd": "draw"})
            assert reply["result"] == ("last_card" if i == 52 else "ok"), reply
            self.receive(nick, parse_card(*reply["card"]))
            await self.discard_pairs(nick, offer_phase=i == 52)
        holder = seats[52 % len(seats)]
        for _ in range(10_000):
            if not self.hands[holder]:
                await self.go_out(holder)
            picker = await self.next_in(holder)
            if picker is None:
                return holder
            if self.hands[holder]:
                hand = self.hands[holder]
                self.receive(picker, hand.pop(self.rng.randrange(len(hand))))
                if not hand:
                    await self.go_out(holder)
                await self.discard_pairs(picker, offer_phase=True)
            holder = picker
        raise AssertionError("the game does not end")

    async def next_in(self, holder: str) -> str | None:
        seats = self.game.seats
        start = seats.index(holder)
        for step in range(1, len(seats)):
            nick = seats[(start + step) % len(seats)]
            if self.hands[nick]:
                return nick
            await self.go_out(nick)
        return None


# -- a table for a class: game after game -----------------------------------------


async def join_game(running: Running, nicks: list[str]) -> Game:
    """Join ``nicks`` (a whole game's worth) to the game forming now."""
    clients = {}
    for nick in nicks:
        client = await running.client()
        await client.send({"cmd": "join", "nick": nick, "watch": True})
        clients[nick] = client
    replies = [await client.reply() for client in clients.values()]
    assert all(reply == replies[0] and reply["result"] == "ok" for reply in replies), replies
    players = replies[0]["players"]
    return Game(running, [nick for _, nick in players], clients, players)


async def play_out(g: Game, seed: int) -> str:
    driver = Driver(g, random.Random(seed))
    return await driver.play()


# -- a table on memory streams, for trio's mock clock ----------------------------------

HOUR = 3600.0


@dataclass
class MemoryTable:
    server: TableServer
    nursery: trio.Nursery
    ports: dict[str, int] = field(default_factory=dict)

    async def client(self, *, lockstep: bool = False) -> Client:
        pair = trio.testing.lockstep_stream_pair if lockstep else trio.testing.memory_stream_pair
        ours, theirs = pair()
        self.nursery.start_soon(self._handle, theirs)
        client = Client(ours)
        client.timeout = HOUR
        return client

    async def _handle(self, stream: trio.abc.Stream) -> None:
        try:
            await self.server.handle(stream)
        finally:
            await stream.aclose()  # as ring.wire.net.listen does after the handler

    def join_request(self, nick: str) -> dict[str, Any]:
        # A memory stream has no address: each nick announces one of its own.
        port = self.ports.setdefault(nick, 4000 + len(self.ports))
        return {"cmd": "join", "nick": nick, "host": "10.0.0.1", "port": port, "watch": True}

    async def join(self, nick: str, *, lockstep: bool = False) -> Client:
        client = await self.client(lockstep=lockstep)
        await client.send(self.join_request(nick))
        return client

    async def seat(self, count: int) -> tuple[list[str], dict[str, Client]]:
        """``count`` players, p0, p1, ..., joined and seated: the seat order, the clients."""
        clients = {f"p{i}": await self.join(f"p{i}") for i in range(count)}
        replies = [await client.reply() for client in clients.values()]
        assert all(reply["result"] == "ok" for reply in replies), replies
        return [nick for _, nick in replies[0]["players"]], clients


@asynccontextmanager
async def table_in_memory(
    transcript: Path | None = None, **settings: Any
) -> AsyncIterator[MemoryTable]:
    config = TableConfig(**{"players": 2, "seed": 7, "linger": 2.0, **settings})
    hub = RecordHub()
    writer = TranscriptFile(transcript, "oldmaid") if transcript is not None else None
    if writer is not None:
        hub.subscribe(writer)
    server = TableServer(config, config.seed or 0, hub)
    try:
        async with trio.open_nursery() as nursery:
            server.nursery, server.address = nursery, ("127.0.0.1", 0)
            server.open_game()
            yield MemoryTable(server, nursery)
            nursery.cancel_scope.cancel()
    finally:
        server.stopped()
        if writer is not None:
            writer.close()


def aborted(reason: str) -> dict[str, Any]:
    return {"cmd": "game_over", "aborted": True, "reason": reason}
