"""The table over real loopback sockets: bad input, framing, whole games.

Each test runs ``serve_table`` in-process on port 0 and talks to it through
``Client``, a raw TCP client that sends exactly the bytes it is given, so
the tests can send what students' clients send: garbage, bare objects,
objects split byte by byte. Nothing waits on a clock to learn that
something happened; every read has a timeout, so a failure cannot hang.
"""

from __future__ import annotations

import json
import random
import select
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import settings_for
from ring.games.events import read_events
from ring.games.record import Player, RecordHub, read_game
from ring.games.transcripts import TranscriptFile
from ring.oldmaid import proofs
from ring.oldmaid.cards import JOKER, Card, parse_card, split_pairs
from services.oldmaid import table as table_module
from services.oldmaid.referee import REPORT_QUIET, GameState
from services.oldmaid.table import TableConfig, TableOutcome, TableServer, serve_tables

TIMEOUT = 5.0
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_internal_errors(capfd: pytest.CaptureFixture[str]) -> Any:
    """The table prints a traceback, and carries on, when it has a bug: fail on it."""
    yield
    assert "internal error" not in capfd.readouterr().err


# -- helpers ---------------------------------------------------------------------


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


# -- bad input during a game --------------------------------------------------------

PAIR = [["3", "spades"], ["3", "clubs"]]
BAD_REQUESTS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "not JSON": (b"hello table\n", ("not a JSON object",)),
    "a JSON array": (b'[{"cmd": "draw"}]\n', ("not a JSON object",)),
    "a JSON string": (b'"draw"\n', ("not a JSON object",)),
    "a truncated object": (b'{"cmd": "draw"\n', ("incomplete",)),
    "invalid JSON": (b'{"cmd": draw}\n', ("JSON",)),
    "unknown cmd": (b'{"cmd": "shuffle"}\n', ("unknown cmd", "shuffle")),
    "a peer's cmd": (b'{"cmd": "your_turn"}\n', ("your_turn",)),
    "no cmd": (b'{"nick": "p9"}\n', ('"cmd"',)),
    "cmd not a string": (b'{"cmd": 7}\n', ("$.cmd",)),
    "missing cards": (b'{"cmd": "discard"}\n', ("cards",)),
    "cards mistyped": (b'{"cmd": "discard", "cards": "3S 3C"}\n', ("$.cards",)),
    "one card": (b'{"cmd": "discard", "cards": [["3", "spades"]]}\n', ("two cards",)),
    "a card mistyped": (b'{"cmd": "discard", "cards": [3, ["3", "clubs"]]}\n', ("$.cards",)),
    "flag mistyped": (
        json.dumps({"cmd": "discard", "cards": PAIR, "last_cards": "maybe"}).encode() + b"\n",
        ("last_cards",),
    ),
    "flag a number": (
        json.dumps({"cmd": "discard", "cards": PAIR, "last_card": 1}).encode() + b"\n",
        ("last_card",),
    ),
    "unknown card": (
        b'{"cmd": "discard", "cards": [["3", "spades"], ["3", "stars"]]}\n',
        ("unknown card", "stars"),
    ),
    "the joker": (
        b'{"cmd": "discard", "cards": [["joker", "maid"], ["3", "clubs"]]}\n',
        ("Old Maid",),
    ),
    "the same card twice": (
        b'{"cmd": "discard", "cards": [["3", "spades"], ["3", "SPADES"]]}\n',
        ("same card twice",),
    ),
    "not a pair": (
        b'{"cmd": "discard", "cards": [["3", "spades"], ["3", "hearts"]]}\n',
        ("not a pair",),
    ),
    "an undrawn pair": (
        json.dumps({"cmd": "discard", "cards": PAIR}).encode() + b"\n",
        ("not been drawn",),
    ),
    "join again": (b'{"cmd": "join", "nick": "again"}\n', ("already joined",)),
    "join with a bad nick": (b'{"cmd": "join", "nick": "two words"}\n', ("$.nick",)),
}


@pytest.mark.parametrize("data, words", BAD_REQUESTS.values(), ids=list(BAD_REQUESTS))
async def test_a_bad_request_from_a_player_gets_an_error_and_the_game_goes_on(
    data: bytes, words: tuple[str, ...]
) -> None:
    async with game(players=2) as g:
        player = g.seat(1)
        await player.send_bytes(data)
        assert_error(await player.reply(), *words)
        await assert_undisturbed(g, player, g.seat(0))


async def test_draw_out_of_turn_names_whose_turn_it_is() -> None:
    async with game(players=3) as g:
        assert_error(await g.seat(1).request({"cmd": "draw"}), f"it is {g.seats[0]}'s turn")
        await assert_undisturbed(g, g.seat(1))
        assert_error(await g.seat(1).request({"cmd": "draw"}), f"it is {g.seats[2]}'s turn")


async def test_a_connection_that_has_not_joined_may_only_ask_status() -> None:
    async with game(players=2) as g:
        outsider = await g.running.client()
        for request in ({"cmd": "draw"}, {"cmd": "out_of_cards"}):
            assert_error(await outsider.request(request), "join first")
        assert_error(await outsider.request({"cmd": "discard", "cards": PAIR}), "join first")
        late = await outsider.request({"cmd": "join", "nick": "late"})
        assert_error(late, "already started")
        assert (await outsider.status())["in"] == g.seats
        await assert_undisturbed(g, outsider)


async def test_draw_after_the_deck_is_empty_and_a_pair_discarded_twice() -> None:
    async with game(players=2) as g:
        got = await deal_all(g)
        player = g.seat(0)
        assert_error(await player.request({"cmd": "draw"}), "deck is empty")
        first, second = a_pair(got[g.seats[1]])
        # Anyone may discard any drawn pair: the table cannot see who holds what.
        discard = {"cmd": "discard", "cards": [wire(first), wire(second)]}
        assert await player.request(discard) == {"result": "ok", "message": "ok"}
        again = await player.request({**discard, "cards": [wire(second), wire(first)]})
        assert_error(again, "already discarded", g.seats[0])
        assert (await g.seat(1).status())["state"] == "playing"
        assert_error(await g.seat(1).request({"cmd": "draw"}), "deck is empty")
        # A second player claiming the same cards: one of the two lies, and the
        # table cannot tell which, so it names both and blames neither.
        twice = await g.seat(1).request({**discard, "cards": [wire(second), wire(first)]})
        assert_error(twice, "a card claimed twice", g.seats[0], g.seats[1], "blames neither")
        status = await g.seat(1).status()
        assert (status["state"], status["reason"]) == ("aborted", twice["message"])


# -- joining ----------------------------------------------------------------------


async def test_bad_joins_before_the_start() -> None:
    async with table(players=2) as running:
        first = await running.client()
        await first.send({"cmd": "join", "nick": "ann", "host": "10.1.1.1", "port": 4000})
        other = await running.client()
        assert (await other.status())["in"] == ["ann"]
        assert_error(await other.request({"cmd": "draw"}), "not started")
        assert_error(await other.request({"cmd": "join", "nick": "ann"}), "taken")
        same_address = {"cmd": "join", "nick": "bob", "host": "10.1.1.1", "port": 4000}
        assert_error(await other.request(same_address), "10.1.1.1:4000", "ann")
        assert_error(await other.request({"cmd": "join", "nick": ""}), "$.nick")
        assert_error(await other.request({"cmd": "join", "nick": "x" * 33}), "$.nick")
        assert_error(await other.request({"cmd": "join", "nick": "b", "host": "nohost"}), "host")
        assert_error(await other.request({"cmd": "join", "nick": "b", "port": 0}), "port")
        assert_error(await other.request({"cmd": "join", "nick": "b", "port": 65536}), "port")
        assert_error(await other.request({"cmd": "join", "nick": "b", "watch": "y"}), "watch")
        assert (await other.status())["in"] == ["ann"]
        # The connection is still good for a join that works.
        await other.send({"cmd": "join", "nick": "bob"})
        ann, bob = await first.reply(), await other.reply()
        assert ann == bob and ann["result"] == "ok"
        addresses = {nick: address for address, nick in ann["players"]}
        assert addresses == {"ann": ["10.1.1.1", 4000], "bob": ["127.0.0.1", other.local_port]}


async def test_requests_while_a_join_waits_are_refused_and_the_reply_still_comes() -> None:
    async with table(players=2) as running:
        ann = await running.client()
        # Pipelined: the join and two more requests in one write.
        await ann.send_bytes(b'{"cmd":"join","nick":"ann"}\n{"cmd":"status"}{"cmd":"draw"}\n')
        for _ in range(2):
            assert_error(await ann.reply(), "wait for the reply to join")
        bob = await running.client()
        await bob.send({"cmd": "join", "nick": "bob", "port": 5000})
        reply = await ann.reply()
        assert reply["result"] == "ok"
        assert [nick for _, nick in reply["players"]] in (["ann", "bob"], ["bob", "ann"])
        assert ["127.0.0.1", ann.local_port] in [address for address, _ in reply["players"]]
        assert (await ann.status())["state"] == "playing"


def join_then_draw_if_first(port: int, nick: str) -> tuple[socket.socket, str | None]:
    """A blocking client in its own thread: it answers as fast as another process would."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with sock.makefile("rb") as lines:
        sock.sendall(json.dumps({"cmd": "join", "nick": nick}).encode() + b"\n")
        players = json.loads(lines.readline())["players"]
        if players[0][1] != nick:
            return sock, None
        sock.sendall(b'{"cmd": "draw"}\n')
        return sock, json.loads(lines.readline())["result"]


async def eight_threaded_players(port: int) -> list[str | None]:
    results: list[tuple[socket.socket, str | None]] = []

    async def player(nick: str) -> None:
        results.append(await trio.to_thread.run_sync(join_then_draw_if_first, port, nick))

    async with trio.open_nursery() as nursery:
        for i in range(8):
            nursery.start_soon(player, f"p{i}")
    for sock, _ in results:
        sock.close()
    return [draw for _, draw in results]


async def test_player1_may_draw_the_moment_its_join_reply_arrives() -> None:
    # The join replies go out one by one; player1's first draw can arrive
    # while the table is still writing the others'. Ten games make a lost
    # race near certain if the table got this wrong.
    for seed in range(10):
        async with table(players=8, seed=seed) as running:
            draws = await eight_threaded_players(running.port)
        assert [draw for draw in draws if draw is not None] == ["ok"]


async def test_closing_before_the_start_frees_the_seat() -> None:
    async with table(players=2) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        watcher = await running.client()
        assert (await watcher.status())["in"] == ["ann"]
        await ann.aclose()
        await until_in(watcher, [])
        g = await join_all(running, 2)  # the nick is free again, and the game starts
        assert sorted(g.seats) == ["p0", "p1"]


async def test_start_after_starts_with_fewer_players() -> None:
    async with table(players=4, start_after=0.2) as running:
        g = await join_all(running, 2)
        assert sorted(g.seats) == ["p0", "p1"]
        status = await g.seat(0).status()
        assert (status["state"], status["in"]) == ("playing", g.seats)
        late = await running.client()
        assert_error(await late.request({"cmd": "join", "nick": "p2"}), "already started")


async def test_start_after_needs_two_players_and_forgets_one_who_left() -> None:
    async with table(players=4, start_after=0.25) as running:
        ann, bob, cy = await running.client(), await running.client(), await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        await trio.sleep(0.3)  # past start_after: one player alone must not start
        assert (await cy.status())["in"] == ["ann"]
        await bob.send({"cmd": "join", "nick": "bob"})
        await until_in(cy, ["ann", "bob"])
        await bob.aclose()
        await until_in(cy, ["ann"])
        await cy.send({"cmd": "join", "nick": "cy"})
        reply = await ann.reply()
        assert sorted(nick for _, nick in reply["players"]) == ["ann", "cy"]


# -- framing ---------------------------------------------------------------------


async def test_bare_objects_back_to_back_and_split_byte_by_byte() -> None:
    async with table() as running:
        client = await running.client()
        await client.send_bytes(b'{"cmd":"status"}{"cmd":"status"}')
        assert (await client.reply())["result"] == "ok"
        assert (await client.reply())["result"] == "ok"
        for byte in b'{"cmd": "draw"}':
            await client.send_bytes(bytes([byte]))
            await trio.sleep(0)
        assert_error(await client.reply(), "not started")
        await client.send_bytes(b'{"cmd":')
        await trio.sleep(0)
        await client.send_bytes(b'"status"}')
        assert (await client.reply())["state"] == "waiting"


async def test_crlf_and_blank_lines() -> None:
    async with table() as running:
        client = await running.client()
        await client.send_bytes(b'\r\n\r\n{"cmd":"status"}\r\n\r\n\n  \n{"cmd":"draw"}\r\n')
        assert (await client.reply())["result"] == "ok"
        # Exactly one reply per request: the blank lines got none.
        assert_error(await client.reply(), "not started")
        assert (await client.status())["result"] == "ok"


async def test_an_oversized_message_gets_an_error_then_the_connection_closes() -> None:
    async with game(players=2, max_message=1024) as g:
        outsider = await g.running.client()
        await outsider.send_bytes(b'{"cmd": "status", "pad": "' + b"x" * 2000 + b'"}\n')
        assert_error(await outsider.reply(), "1024-byte limit")
        assert await outsider.closed_by_table()
        garbage = await g.running.client()
        await garbage.send_bytes(b"y" * 3000)  # not JSON, and no newline in sight
        assert_error(await garbage.reply(), "not a JSON object")
        assert_error(await garbage.reply(), "limit")
        assert await garbage.closed_by_table()
        await assert_undisturbed(g, g.seat(0), g.seat(1))


async def test_a_reply_sent_to_the_table_gets_a_last_error() -> None:
    async with game(players=2) as g:
        outsider = await g.running.client()
        await outsider.send({"result": "ok"})
        assert_error(await outsider.reply(), "no request")
        # Closed, so that two broken ends cannot bounce errors for ever.
        assert await outsider.closed_by_table()
        await assert_undisturbed(g, g.seat(0))


# -- going out, status, the end -------------------------------------------------------


async def test_either_flag_spelling_counts_out_and_status_lists_the_winner_first() -> None:
    async with game(players=3) as g:
        got = await deal_all(g)
        drawn = [card for cards in got.values() for card in cards]
        _, pairs = split_pairs(drawn)

        async def discard(seat: int, pair: tuple[Card, Card], **flag: Any) -> None:
            request = {"cmd": "discard", "cards": [wire(c) for c in pair], **flag}
            reply = await g.seat(seat).request(request)
            assert reply == {"result": "ok", "message": "ok"}

        await empty_hand(g, 2, pairs, keep=1)
        await empty_hand(g, 0, pairs, keep=1)
        while len(pairs) > 4:
            await discard(1, pairs.pop())
        await discard(1, pairs[0], last_cards="false")
        await discard(2, pairs[1], last_card=True)
        await discard(1, pairs[2], last_cards=False)
        await discard(0, pairs[3], last_cards="TRUE")
        status = await g.seat(1).status()
        assert status == {
            "result": "ok",
            "in": [g.seats[1]],
            "out": [g.seats[2], g.seats[0]],
            "state": "over",
            "game_over": True,
            "loser": g.seats[1],
            "undiscarded": 0,
        }
        # Repeated out_of_cards is fine and changes nothing.
        assert await g.seat(2).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert (await g.seat(0).status())["out"] == [g.seats[2], g.seats[0]]


async def test_the_last_player_in_claiming_an_empty_hand_ends_the_game() -> None:
    async with game(players=3) as g:
        got = await deal_all(g)
        _, pairs = split_pairs([card for cards in got.values() for card in cards])
        await empty_hand(g, 2, pairs)
        await empty_hand(g, 0, pairs)
        while len(pairs) > 1:
            request = {"cmd": "discard", "cards": [wire(c) for c in pairs.pop()]}
            await g.seat(1).request(request)
        for seat in (2, 0):
            assert await g.seat(seat).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        # The last player in holds the Old Maid: it or a player out lies.
        reply = await g.seat(1).request({"cmd": "out_of_cards"})
        assert_error(reply, "the Old Maid vanished", "the last player in", g.seats[1])
        notice = await g.seat(0).notice()
        assert notice == {"cmd": "game_over", "aborted": True, "reason": reply["message"]}


async def test_out_of_cards_during_the_draw_is_ok_and_changes_nothing() -> None:
    async with game(players=2) as g:
        assert await g.seat(1).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert (await g.seat(1).status())["out"] == []


async def test_a_dropped_player_aborts_the_game() -> None:
    async with table(players=3, linger=TIMEOUT) as running:
        g = await join_all(running, 3, watch=lambda i: i != 1)
        await g.seat(0).request({"cmd": "draw"})
        leaver = g.seats[2]
        await g.clients[leaver].aclose()
        for nick in g.seats[:2]:
            client = g.clients[nick]
            if nick != "p1":
                expected = f"{leaver} left the table"
                notice = await client.notice()
                assert notice == {"cmd": "game_over", "aborted": True, "reason": expected}
            status = await client.status()
            assert status["state"] == "aborted"
            assert status["aborted"] is True
            assert status["reason"] == f"{leaver} left the table"
            assert_error(await client.request({"cmd": "draw"}), "aborted", leaver)
        assert g.clients["p1"].notices == []  # not watching: no notice
        for nick in g.seats[:2]:
            await g.clients[nick].aclose()
        outcome = await running.finished()
        assert (outcome.state, outcome.reason) == (GameState.ABORTED, f"{leaver} left the table")
        assert outcome.line == f"game aborted: {leaver} left the table"


async def test_a_player_who_is_out_may_leave_and_the_game_goes_on(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=3, transcript=transcript) as running:
        g = await join_all(running, 3)
        got = await deal_all(g)
        await empty_hand(g, 0, split_pairs([c for cards in got.values() for c in cards])[1])
        assert await g.seat(0).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        await g.seat(0).aclose()
        await until_in(g.seat(1), g.seats[1:])
        status = await g.seat(1).status()
        assert (status["state"], status["out"]) == ("playing", [g.seats[0]])
        assert g.seat(1).notices == []
        # A player who is still in leaving is the end, as before.
        await g.seat(2).aclose()
        notice = await g.seat(1).notice()
        assert notice == {
            "cmd": "game_over",
            "aborted": True,
            "reason": f"{g.seats[2]} left the table",
        }
    left = [r for r in read_events(transcript) if r.get("event") == "left"]
    assert [r["nick"] for r in left] == [g.seats[0]]


async def test_a_game_decided_without_its_last_pair_ends_after_the_grace(
    tmp_path: Path,
) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=2, transcript=transcript, last_pair_grace=0.2) as running:
        g = await join_all(running, 2)
        got = await deal_all(g)
        drawn = [card for cards in got.values() for card in cards]
        _, pairs = split_pairs(drawn)
        await empty_hand(g, 1, pairs)
        for pair in pairs[1:]:  # the last pair goes out in a hand, undiscarded
            reply = await g.seat(0).request({"cmd": "discard", "cards": [wire(c) for c in pair]})
            assert reply["result"] == "ok", reply
        pairs[-1] = pairs[0]
        assert await g.seat(1).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert (await g.seat(0).status())["state"] == "playing"  # the pair may still come
        notice = await g.seat(0).notice()
        assert notice == {
            "cmd": "game_over",
            "loser": g.seats[0],
            "out": [g.seats[1]],
            "undiscarded": 1,
        }
        status = await g.seat(0).status()
        assert (status["game_over"], status["undiscarded"]) == (True, 1)
        last = {"cmd": "discard", "cards": [wire(c) for c in pairs[-1]]}
        assert_error(await g.seat(0).request(last), "game is over")
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()
    assert (
        outcome.line == f"game over: loser {g.seats[0]}; out: {g.seats[1]}; 1 pair never discarded"
    )
    over = [r for r in read_events(transcript) if r.get("event") == "over"]
    assert [(r["loser"], r["undiscarded"]) for r in over] == [(g.seats[0], 1)]
    end = read_game(transcript).end
    assert end is not None and (end.winners, end.losers) == ([g.seats[1]], [g.seats[0]])
    assert end.reason == f"{g.seats[0]} was left holding the Old Maid (1 pair never discarded)"
    assert end.details == {"undiscarded": 1}


async def test_the_last_pair_within_the_grace_ends_the_game_as_usual() -> None:
    async with table(players=2, last_pair_grace=TIMEOUT * 2) as running:
        g = await join_all(running, 2)
        got = await deal_all(g)
        _, pairs = split_pairs([card for cards in got.values() for card in cards])
        await empty_hand(g, 1, pairs)
        for pair in pairs[1:]:
            await g.seat(0).request({"cmd": "discard", "cards": [wire(c) for c in pair]})
        pairs[-1] = pairs[0]
        await g.seat(1).request({"cmd": "out_of_cards"})
        last = {"cmd": "discard", "cards": [wire(c) for c in pairs[-1]]}
        assert await g.seat(0).request(last) == {"result": "ok", "message": "ok"}
        notice = await g.seat(0).notice()
        assert notice == {"cmd": "game_over", "loser": g.seats[0], "out": [g.seats[1]]}


async def test_left_with_turn_is_checked_then_aborts_naming_the_player() -> None:
    async with table(players=3, linger=TIMEOUT) as running:
        g = await join_all(running, 3)
        reporter, leaver = g.seat(0), g.seats[1]
        report = {"cmd": "left_with_turn", "nick": leaver}
        assert_error(await reporter.request(report), "still in the game")
        got = await deal_all(g)
        await empty_hand(g, 1, split_pairs([c for cards in got.values() for c in cards])[1])
        assert await g.seat(1).request({"cmd": "out_of_cards"}) == {"result": "ok"}
        assert_error(await reporter.request(report), "still connected")
        assert_error(await reporter.request({"cmd": "left_with_turn", "nick": "ghost"}), "ghost")
        assert_error(await reporter.request({"cmd": "left_with_turn"}), "nick")
        stranger = await running.client()
        assert_error(await stranger.request(report), "join first")
        await g.seat(1).aclose()
        await until_in(reporter, [g.seats[0], g.seats[2]])
        # Only the player that handed it the turn can know; and a stalled game stands still.
        assert_error(await g.seat(2).request(report), "cannot have handed")
        await trio.sleep(REPORT_QUIET)
        assert await reporter.request(report) == {"result": "ok"}
        expected = (
            f"{leaver} went out holding the turn and left without passing it (a player who "
            "goes out holding the turn must pass it on with an offer of num_cards 0); "
            f"reported by {g.seats[0]}"
        )
        for nick in (g.seats[0], g.seats[2]):
            notice = await g.clients[nick].notice()
            assert notice == {"cmd": "game_over", "aborted": True, "reason": expected}
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()
    assert outcome.line == f"game aborted: {expected}"


async def test_an_accusation_names_the_accused_after_its_window(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=3, transcript=transcript, accuse_window=0.1) as running:
        g = await join_all(running, 3)
        accuser, accused = g.seats[0], g.seats[1]
        wrong = {"cmd": "accuse", "accused": g.seats[2], "rule": "second_pick"}
        assert_error(await g.seat(0).request(wrong), "not the player", g.seats[1])
        assert_error(await g.seat(0).request({**wrong, "nick": g.seats[2]}), "this connection")
        accuse = {
            "cmd": "accuse",
            "nick": accuser,
            "accused": accused,
            "rule": "second_pick",
            "evidence": {"what": "picked card 2 after its card", "card_num": 2},
        }
        reply = await g.seat(0).request(accuse)
        assert reply["result"] == "ok" and f"naming {accused}" in reply["message"]
        reason = (
            f"{accused} picked twice from one offer of {accuser}'s (one pick per accepted "
            f"offer, protocol 6.3); reported by {accuser} (picked card 2 after its card)"
        )
        assert await g.seat(2).notice() == aborted(reason)
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()
    assert (outcome.culprit, outcome.rule) == (accused, "second_pick")
    game = read_game(transcript)
    records = [r for r in game.records if r.get("event") in ("accused", "aborted")]
    assert [r["event"] for r in records] == ["accused", "accused", "aborted"]
    assert (records[0]["verdict"], records[1]["verdict"]) == ("refused", "pending")
    assert (records[2]["culprit"], records[2]["rule"]) == (accused, "second_pick")
    assert game.end is not None and game.end.details == {"rule": "second_pick"}


async def test_the_table_closes_lingering_players() -> None:
    async with table(players=2, linger=0.1) as running:
        g = await join_all(running, 2)
        await g.seat(0).aclose()
        assert await g.seat(1).closed_by_table()
        assert (await running.finished()).state is GameState.ABORTED


async def test_idle_connections_are_closed_but_waiting_players_are_not() -> None:
    async with table(players=2, idle_timeout=0.2) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        idle = await running.client()
        assert await idle.closed_by_table()
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")


async def test_the_connection_cap() -> None:
    async with table(max_connections=2) as running:
        g = await join_all(running, 2)  # players: never evicted
        third = await running.client()
        assert await third.closed_by_table()
        assert (await g.seat(0).status())["result"] == "ok"


async def test_a_status_poller_stays_evictable_a_player_does_not() -> None:
    async with table(players=3, max_connections=2) as running:
        poller = await running.client()
        assert (await poller.status())["in"] == []
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        newcomer = await running.client()  # at the cap: the poller makes room
        assert await poller.closed_by_table()
        assert (await newcomer.status())["in"] == ["ann"]


@pytest.mark.parametrize(
    "caps, message",
    [
        (
            {"max_connections": 1},
            "the table is full (at most 1 connections at once); try again later",
        ),
        (
            {"max_per_address": 1, "exempt_loopback": False},
            "too many connections from your address (at most 1); close one and try again",
        ),
    ],
)
async def test_a_newcomer_refused_at_a_cap_gets_an_error_reply_to_its_first_request(
    caps: dict[str, Any], message: str
) -> None:
    async with table(**caps) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        # Answered, so the join was read: a player is never evicted.
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        newcomer = await running.client()
        await newcomer.send({"cmd": "join", "nick": "bob"})
        assert await newcomer.reply() == {"result": "error", "message": message}
        assert await newcomer.closed_by_table()
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        await ann.aclose()


async def test_a_newcomer_refused_at_the_cap_that_asks_nothing_is_closed_without_a_word() -> None:
    async with table(max_connections=1) as running:
        ann = await running.client()
        await ann.send({"cmd": "join", "nick": "ann"})
        assert_error(await ann.request({"cmd": "status"}), "wait for the reply to join")
        silent = await running.client()
        start = trio.current_time()
        assert await silent.closed_by_table()  # within REFUSAL_READ_TIMEOUT, 1 s
        assert not silent._buffer and trio.current_time() - start < TIMEOUT
        await ann.aclose()


# -- whole games ----------------------------------------------------------------


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


@pytest.mark.parametrize("players, seed", [(2, 11), (3, 12), (5, 13), (8, 14)])
async def test_a_whole_game(players: int, seed: int, tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(players=players, seed=seed, transcript=transcript) as running:
        g = await join_all(running, players, watch=lambda i: i % 2 == 0)
        driver = Driver(g, random.Random(seed))
        loser = await driver.play()

        assert driver.hands[loser] == [JOKER]
        assert driver.discards == 26
        for i in range(players):
            client = g.clients[f"p{i}"]
            if i % 2 == 0:
                notice = await client.notice()
                assert notice == {"cmd": "game_over", "loser": loser, "out": driver.went_out}
            status = await client.status()
            assert status == {
                "result": "ok",
                "in": [loser],
                "out": driver.went_out,
                "state": "over",
                "game_over": True,
                "loser": loser,
                "undiscarded": 0,
            }
            assert client.notices == []  # one notice to each watcher, none to the others
            assert_error(await client.request({"cmd": "draw"}), "game is over")
        for client in g.clients.values():
            await client.aclose()
        outcome = await running.finished()

    assert (outcome.state, outcome.loser) == (GameState.OVER, loser)
    assert list(outcome.out) == driver.went_out
    assert outcome.line == f"game over: loser {loser}; out: {', '.join(driver.went_out)}"
    check_transcript(transcript, g, loser, driver.went_out)


def check_transcript(path: Path, g: Game, loser: str, went_out: list[str]) -> None:
    game = read_game(path)  # one game: start, its own records, end (ring.games.record)
    start, records, end = game.start, game.records, game.end
    config = g.running.config
    assert (start.service, start.game, start.seed) == ("oldmaid", 1, config.seed)
    assert start.players == [Player(nick, seat=seat) for seat, nick in enumerate(g.seats)]
    assert start.options == config.game_options()
    assert end is not None and end.reason == f"{loser} was left holding the Old Maid"
    assert (end.winners, end.losers, end.draw, end.culprit) == (went_out, [loser], False, None)
    assert end.details == {"undiscarded": 0}
    referee = [r for r in records if "event" in r]
    messages = [r for r in records if "dir" in r]
    assert len(referee) + len(messages) == len(records)
    # What the game recorded while it formed follows start, with its own earlier t.
    forming = records[: records.index(referee[1])]
    kinds = [r.get("event") or r["msg"]["cmd"] for r in forming]
    assert kinds == ["listening", *["join"] * len(g.seats)]
    assert all(r["t"] <= start.t <= referee[1]["t"] for r in forming)
    assert end.t >= records[-1]["t"]
    assert referee[0]["event"] == "listening"
    assert referee[0]["port"] == g.running.port and referee[0]["seed"] == g.running.config.seed
    assert referee[1] == {
        "t": referee[1]["t"],
        "event": "started",
        "players": g.seats,
        "addresses": [address for address, _ in g.players],
    }
    kinds = [r["event"] for r in referee]
    assert kinds.count("dealt") == 53 and kinds.count("discarded") == 26
    assert [(r["nick"], r["place"]) for r in referee if r["event"] == "out"] == [
        (nick, place) for place, nick in enumerate(went_out, 1)
    ]
    assert referee[-1] == {
        "t": referee[-1]["t"],
        "event": "over",
        "loser": loser,
        "out": went_out,
        "undiscarded": 0,
    }
    times = [r["t"] for r in records]
    assert times == sorted(times)
    for record in messages:
        assert set(record) == {"t", "conn", "peer", "nick", "dir", "msg"}
        assert record["dir"] in ("in", "out")
    joins = [r for r in messages if r["dir"] == "in" and r["msg"]["cmd"] == "join"]
    assert all(r["nick"] is None for r in joins)  # null until the join succeeds
    assert sorted(r["conn"] for r in joins) == list(range(1, len(g.seats) + 1))
    draws = [r for r in messages if r["msg"].get("cmd") == "draw"]
    # 53 cards, and one refused draw from each player after the end.
    assert len(draws) == 53 + len(g.seats) and all(r["nick"] for r in draws)


async def test_the_transcript_records_invalid_input(tmp_path: Path) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table(transcript=transcript) as running:
        client = await running.client()
        port = client.local_port
        await client.send_bytes(b"garbage\n")
        await client.reply()
        await client.aclose()
    game = read_game(transcript)  # the table stopped while it formed: no one joined
    records = game.records
    assert records[0]["event"] == "listening"
    assert records[1]["conn"] == 1 and records[1]["nick"] is None
    assert records[1]["invalid"] == "not a JSON object"
    assert records[1]["peer"] == f"127.0.0.1:{port}"
    assert records[2]["msg"] == {"result": "error", "message": "not a JSON object"}
    assert game.players == [] and game.end is not None
    assert (game.end.reason, game.end.winners, game.end.losers) == ("the table shut down", [], [])


# -- the command line ---------------------------------------------------------------


def ring(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ring", "table", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ring_table_prints_its_port_then_how_the_game_ended() -> None:
    process = ring("--port", "0", "--players", "2", "--seed", "3", "--linger", "5")
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
        assert ready, "ring table printed nothing"
        first = process.stdout.readline()
        assert first.startswith("table listening on 127.0.0.1:")
        port = int(first.rsplit(":", 1)[1])
        players = []
        for nick in ("ann", "bob"):
            sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            sock.sendall(json.dumps({"cmd": "join", "nick": nick}).encode() + b"\n")
            players.append(sock)
        for sock in players:
            assert b'"players"' in sock.recv(4096)
        for sock in players:
            sock.close()
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()
        process.wait()
    last = out.splitlines()
    assert last in (["game aborted: ann left the table"], ["game aborted: bob left the table"])
    assert process.returncode == 1
    assert "Traceback" not in err and "--seed 3" in err


def test_ring_table_on_a_port_in_use_says_so_in_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        process = ring("--port", str(busy.getsockname()[1]))
        out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and "cannot listen" in err


async def test_ring_serve_and_ring_table_take_the_wait_and_turn_timeouts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[TableConfig] = []

    async def record(config: TableConfig, **_: Any) -> None:
        seen.append(config)

    monkeypatch.setattr(table_module, "serve_tables", record)
    parser = build_parser()
    timeouts = ["--wait-timeout", "40", "--turn-timeout", "30"]
    [oldmaid] = [service for service in declared_services() if service.name == "oldmaid"]
    settings = settings_for(parser.parse_args(["serve", "--oldmaid", "0", *timeouts]), oldmaid, 1)
    await oldmaid.serve(settings, task_status=trio.TASK_STATUS_IGNORED)
    seen.append(TableConfig.from_args(parser.parse_args(["table", *timeouts])))
    seen.append(TableConfig.from_args(parser.parse_args(["table"])))
    assert [(c.wait_timeout, c.turn_timeout) for c in seen] == [(40, 30), (40, 30), (600, 300)]


# -- a table for a class: game after game, several at once -----------------------


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


async def test_three_games_at_once_each_with_its_own_seed_status_and_transcript(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "games"
    async with table(players=2, games=3, transcripts=folder, seed=40) as running:
        games = [await join_game(running, [f"g{n}a", f"g{n}b"]) for n in range(3)]
        # All three under way at once: each player's status is its own game's.
        for n, g in enumerate(games):
            status = await g.seat(0).status()
            assert (status["state"], sorted(status["in"])) == ("playing", [f"g{n}a", f"g{n}b"])
        losers = []
        for n, g in enumerate(reversed(games)):  # the last to start ends first
            losers.append(await play_out(g, seed=n))
        for g in games:
            for client in g.clients.values():
                await client.aclose()
        outcomes = await running.finished_all()
    assert [o.number for o in outcomes] == [1, 2, 3]
    assert all(o.state is GameState.OVER for o in outcomes)
    assert sorted(o.loser for o in outcomes) == sorted(losers)
    seeds = [o.seed for o in outcomes]
    assert seeds[0] == 40 and len(set(seeds)) == 3  # the first game keeps the table's seed
    for number, outcome in enumerate(outcomes, 1):
        game = read_game(folder / f"game-{number:06d}.jsonl")
        assert (game.start.game, game.start.seed, game.players) == (
            number,
            outcome.seed,
            list(outcome.players),
        )
        assert game.end is not None and game.end.losers == [outcome.loser]
        records = game.records
        assert records[0]["event"] == "listening"
        assert (records[0]["game"], records[0]["seed"]) == (number, outcome.seed)
        started = next(r for r in records if r.get("event") == "started")
        assert started["players"] == list(outcome.players)
        overs = [r for r in records if r.get("event") == "over"]
        assert [r["loser"] for r in overs] == [outcome.loser]
        # Only this game's players appear in its message records.
        nicks = {r["nick"] for r in records if "dir" in r and r["nick"] is not None}
        assert nicks == set(outcome.players)


async def test_a_game_forms_while_another_plays() -> None:
    async with table(players=2, games=None, seed=41) as running:
        first = await join_game(running, ["ann", "bob"])
        assert (await first.seat(0).request({"cmd": "draw"}))["result"] == "ok"
        # A newcomer's status is the forming game's, not the one under way.
        newcomer = await running.client()
        assert await newcomer.status() == {"result": "ok", "in": [], "out": [], "state": "waiting"}
        await newcomer.send({"cmd": "join", "nick": "ann", "watch": True})  # a nick free there
        other = await running.client()
        status = await other.status()
        assert (status["state"], status["in"]) == ("waiting", ["ann"])
        await other.send({"cmd": "join", "nick": "cy", "watch": True})
        second_replies = [await newcomer.reply(), await other.reply()]
        assert second_replies[0] == second_replies[1]
        assert sorted(nick for _, nick in second_replies[0]["players"]) == ["ann", "cy"]
        # The first game goes on undisturbed.
        assert (await first.seat(1).request({"cmd": "draw"}))["result"] == "ok"
        assert (await first.seat(0).status())["in"] == first.seats


async def test_a_table_of_one_game_refuses_joins_once_it_started() -> None:
    async with table(players=2, games=1) as running:
        g = await join_game(running, ["ann", "bob"])
        late = await running.client()
        assert_error(await late.request({"cmd": "join", "nick": "cy"}), "already started")
        assert (await late.status())["in"] == g.seats  # the one game


async def test_stopping_a_table_tells_every_game_under_way() -> None:
    async with table(players=2, games=None, linger=TIMEOUT) as running:
        games = [await join_game(running, [f"g{n}a", f"g{n}b"]) for n in range(2)]
        running.stop()
        for g in games:
            for client in g.clients.values():
                notice = await client.notice()
                assert notice == {
                    "cmd": "game_over",
                    "aborted": True,
                    "reason": "the table shut down",
                }


# -- timers, on trio's mock clock ---------------------------------------------------
#
# These tables read memory streams instead of sockets, so that autojump_clock
# runs minutes of table time at once: the idle, wait and turn timeouts, and the
# write timeout of a client that does not read (a lockstep stream: a write to it
# waits until the test reads).

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
            await stream.aclose()  # as ring.wire.net.serve does after the handler

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


@pytest.mark.parametrize("data", [b'{"cmd": "status"}\n', b"hello table\n"], ids=["status", "junk"])
async def test_requests_do_not_keep_open_a_connection_that_never_joins(
    data: bytes, autojump_clock: trio.abc.Clock
) -> None:
    async with table_in_memory(idle_timeout=120) as t:
        start = trio.current_time()
        poller = await t.client()
        for at in (0, 50, 100):  # each answered, none buys more time
            await trio.sleep(start + at - trio.current_time())
            await poller.send_bytes(data)
            assert "result" in await poller.reply()
        assert await poller.closed_by_table()
        assert trio.current_time() - start == pytest.approx(120, abs=0.01)


async def test_a_join_that_waits_too_long_gets_an_error_reply_and_frees_its_seat(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=3, wait_timeout=600) as t:
        start = trio.current_time()
        ann = await t.join("ann")
        await trio.sleep(300)
        bob = await t.join("bob")
        assert await ann.reply() == {
            "result": "error",
            "message": "no game started within 600 s of this join (2 of 3 players joined); "
            "join again to keep waiting",
        }
        assert trio.current_time() - start == pytest.approx(600, abs=0.01)
        assert (await ann.status())["in"] == ["bob"]
        await ann.send(t.join_request("ann"))  # the same connection joins again
        cy = await t.join("cy")
        replies = [await client.reply() for client in (ann, bob, cy)]
        assert replies[0] == replies[1] == replies[2] and replies[0]["result"] == "ok"
        assert sorted(nick for _, nick in replies[0]["players"]) == ["ann", "bob", "cy"]


async def test_a_first_draw_that_never_comes_aborts_the_game_naming_player1(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=3, turn_timeout=300) as t:
        seats, clients = await t.seat(3)
        start = trio.current_time()
        for _ in range(2):  # a status is not a move: it does not put the end off
            await trio.sleep(100)
            assert (await clients[seats[1]].status())["state"] == "playing"
        reason = (
            f"{seats[0]} did not draw for 300 s while it was its turn to draw "
            "(player1 draws first, as soon as its join reply comes)"
        )
        for nick in seats:
            assert await clients[nick].notice() == aborted(reason)
        assert trio.current_time() - start == pytest.approx(300, abs=0.01)
        assert (await clients[seats[0]].status())["reason"] == reason
        assert await clients[seats[0]].closed_by_table()  # after --linger, as any end


async def test_each_move_puts_the_turn_timeout_off_and_both_suspects_are_named(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=3, turn_timeout=300) as t:
        seats, clients = await t.seat(3)
        first, second, third = (clients[nick] for nick in seats)
        assert (await first.request({"cmd": "draw"}))["result"] == "ok"
        await trio.sleep(250)
        assert (await second.request({"cmd": "draw"}))["result"] == "ok"
        start = trio.current_time()
        await trio.sleep(200)
        assert_error(await first.request({"cmd": "draw"}), "turn")  # refused: not a move
        notice = await third.notice()
        assert trio.current_time() - start == pytest.approx(300, abs=0.01)
        # The table sees draws, not the your_turn between players: either of
        # the two may have stalled, so it blames neither.
        assert notice == aborted(
            f"no draw for 300 s: it was {seats[2]}'s turn to draw, so either {seats[1]} never "
            f"passed it the turn (your_turn) or {seats[2]} never drew; the table cannot tell "
            "which, since your_turn goes from peer to peer"
        )


async def test_a_stuck_offer_phase_is_aborted_without_blaming_anyone(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table_in_memory(players=2, turn_timeout=300) as t:
        seats, clients = await t.seat(2)
        for i in range(53):
            await clients[seats[i % 2]].request({"cmd": "draw"})
        start = trio.current_time()
        notice = await clients[seats[0]].notice()
        assert trio.current_time() - start == pytest.approx(300, abs=0.01)
        assert notice == aborted(
            "nothing moved for 300 s in the offer phase (no discard, no player out); the last "
            f"the table saw: {seats[0]} drew the last card (so it held the first turn of the "
            "offers); the turn passes from peer to peer there, unseen by the table, so it "
            f"cannot tell who holds it now (still in: {', '.join(seats)})"
        )


async def test_turn_timeout_zero_waits_without_limit(autojump_clock: trio.abc.Clock) -> None:
    async with table_in_memory(players=2, turn_timeout=0) as t:
        seats, clients = await t.seat(2)
        await trio.sleep(10 * HOUR)
        assert (await clients[seats[0]].request({"cmd": "draw"}))["result"] == "ok"


async def test_players_who_do_not_read_delay_no_other_join_reply(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    transcript = tmp_path / "table.jsonl"
    async with table_in_memory(transcript, players=8) as t:
        for i in range(7):
            await t.join(f"p{i}", lockstep=True)  # never read
        start = trio.current_time()
        reader = await t.join("p7")
        reply = await reader.reply()
        seats = [nick for _, nick in reply["players"]]
        assert seats.index("p7") > 0  # another player's reply is due before its own
        assert trio.current_time() - start < 1  # not 10 s for each player who does not read
        notice = await reader.notice()  # they are closed after the write timeout
        assert notice["aborted"] and notice["reason"].endswith("left the table")
        assert trio.current_time() - start == pytest.approx(10, abs=0.01)
    sent = [r for r in read_events(transcript) if r.get("dir") == "out"]
    # Each write is started in seat order, so the transcript lists them so.
    assert [r["nick"] for r in sent if "players" in r["msg"]] == seats


@pytest.mark.parametrize("owed_a_reply", [False, True], ids=["idle", "owed-a-reply"])
async def test_a_watcher_that_does_not_read_delays_no_other_notice(
    owed_a_reply: bool, autojump_clock: trio.abc.Clock
) -> None:
    async with table_in_memory(players=3) as t:
        ann = await t.join("ann", lockstep=True)  # first in line for every notice
        bob, cy = await t.join("bob"), await t.join("cy")
        for client in (ann, bob, cy):
            assert (await client.reply())["result"] == "ok"
        if owed_a_reply:  # its notice then waits behind that reply's write
            await ann.send({"cmd": "status"})
        start = trio.current_time()
        await cy.aclose()  # the game is aborted; ann reads no more
        assert await bob.notice() == aborted("cy left the table")
        assert trio.current_time() - start < 1


async def test_a_verified_join_gets_a_secret_and_the_proofs_an_older_one_sees_nothing() -> None:
    async with table(players=3) as running:
        clients = {}
        for nick, verify in (("ann", True), ("bob", True), ("old", False)):
            client = await running.client()
            await client.send({"cmd": "join", "nick": nick, **({"verify": True} if verify else {})})
            clients[nick] = client
        replies = {nick: await client.reply() for nick, client in clients.items()}
        assert set(replies["old"]) == {"result", "players"}  # exactly as WIRE.md
        ann, bob = replies["ann"], replies["bob"]
        assert ann["players"] == replies["old"]["players"] == bob["players"]
        assert set(ann["proofs"]) == {"bob"} and set(bob["proofs"]) == {"ann"}
        assert ann["secret"] != bob["secret"]
        # Each proves itself with its own secret; the other expects exactly that.
        assert proofs.proof(ann["secret"], "bob") == bob["proofs"]["ann"]
        assert proofs.proof(bob["secret"], "ann") == ann["proofs"]["bob"]
        assert (await clients["old"].status())["verified"] == ["ann", "bob"]


async def test_a_table_lets_a_game_go_once_its_players_have_gone(
    autojump_clock: trio.abc.Clock,
) -> None:
    """A class's table runs all day: it holds the games forming and under way, not every
    game it ever played (each of which, records and all, it held until it stopped)."""
    async with table_in_memory(players=2, games=None) as t:
        _, clients = await t.seat(2)
        [first, forming] = t.server.games
        for client in clients.values():
            await client.aclose()  # the game is aborted: a player left
        await trio.sleep(HOUR)
        assert first.ended.is_set()
        assert t.server.games == [forming] and t.server.forming is forming
