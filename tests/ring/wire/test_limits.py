"""Limits over real loopback TCP in whole games: floods of idle connections, and the size
and idle limits of a peer's listening port.

A flood of idle connections, to the table or to one peer, must not stop a game:
``ring.wire.net.listen`` makes room at its cap by closing the oldest connection that has
not yet sent anything valid, never one that has. (Its caps alone: ``test_net_caps.py``;
the open-file limit they need: ``tests/ring/cli/test_serve_files.py``.) Every wait here
has a bound; nothing sleeps to let something happen.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing

from ring.oldmaid.peer import Outcome, Peer, PeerConfig, PeerError
from services.oldmaid.referee.rules import GameState
from services.oldmaid.table.server import TableConfig, TableOutcome, serve_table
from tests.helpers.connections import BOUND, all_still_open, close_all, closed_by_server, connect

FLOOD = 200
TABLE_CAP = 64  # the flood arithmetic below counts on it
PLAYERS, SEED = 4, 21


# -- helpers ---------------------------------------------------------------------


async def _flood(port: int, count: int = FLOOD) -> list[trio.SocketStream]:
    return [await connect(port) for _ in range(count)]


class Pause:
    """Holds the whole ring still at the first offer turn, mid-game, until released."""

    def __init__(self) -> None:
        self.reached = trio.Event()
        self.released = trio.Event()


class PausingPeer(Peer):
    """A peer that, holding the first offer turn of the game, waits for the test."""

    def __init__(self, config: PeerConfig, pause: Pause | None) -> None:
        super().__init__(config)
        self.pause = pause

    async def _offer_turn(self) -> None:
        if self.pause is not None and not self.pause.reached.is_set():
            self.pause.reached.set()
            with trio.fail_after(BOUND):
                await self.pause.released.wait()
        await super()._offer_turn()


Hook = Callable[[int, dict[str, int]], Awaitable[None]]


async def play(
    *, before_players: Hook | None = None, paused: Hook | None = None
) -> tuple[TableOutcome, dict[str, Outcome | PeerError]]:
    """One game on loopback: a table and PLAYERS peers, all in this process.

    ``before_players(table_port, {})`` runs before any peer starts;
    ``paused(table_port, peer_ports)`` runs mid-game, while the ring stands
    still at the first offer turn (every player has joined and drawn).
    """
    pause = Pause() if paused is not None else None
    config = TableConfig(
        players=PLAYERS, port=0, seed=SEED, linger=BOUND, max_connections=TABLE_CAP
    )
    outcome: list[TableOutcome] = []
    results: dict[str, Outcome | PeerError] = {}
    peers: dict[str, Peer] = {}
    ports: dict[str, int] = {}

    async def run_table(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
        outcome.append(await serve_table(config, task_status=task_status))

    async def run_peer(peer: Peer, task_status: trio.TaskStatus[int]) -> None:
        try:
            results[peer.nick] = await peer.play(task_status=task_status)
        except PeerError as exc:
            results[peer.nick] = exc

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            _, table_port = await nursery.start(run_table)
            if before_players is not None:
                await before_players(table_port, ports)
            for index in range(1, PLAYERS + 1):
                nick = f"p{index}"
                peer = PausingPeer(
                    PeerConfig(nick=nick, table=("127.0.0.1", table_port), seed=SEED * 10 + index),
                    pause,
                )
                peers[nick] = peer
                ports[nick] = await nursery.start(run_peer, peer)
            if paused is not None and pause is not None:
                with trio.fail_after(BOUND):
                    await pause.reached.wait()
                await paused(table_port, ports)
                pause.released.set()
    for peer in peers.values():
        peer.log.close()
    return outcome[0], results


def _places(table: TableOutcome) -> tuple[str | None, tuple[str, ...]]:
    return table.loser, table.out


def _assert_finished(table: TableOutcome, results: dict[str, Outcome | PeerError]) -> None:
    assert table.state is GameState.OVER, table
    assert all(isinstance(r, Outcome) for r in results.values()), results
    losers = [nick for nick, r in results.items() if isinstance(r, Outcome) and r.place is None]
    assert losers == [table.loser]


# -- floods against a whole game ----------------------------------------------------


async def test_a_flood_of_idle_connections_to_the_table_does_not_stop_the_game() -> None:
    baseline = await play()
    _assert_finished(*baseline)
    flood: list[trio.SocketStream] = []
    evicted: list[bool] = []

    async def flood_first(table_port: int, _ports: object) -> None:
        flood.extend(await _flood(table_port))
        # The table's cap is 64: the 136 oldest were closed to make room.
        evicted.extend([await closed_by_server(s) for s in flood[: FLOOD - 64]])

    async def flood_mid_game(table_port: int, _ports: object) -> None:
        more = await _flood(table_port)
        flood.extend(more)
        # The players have joined, so only flood connections make room.
        assert all([await closed_by_server(s) for s in more[: FLOOD - 64 + PLAYERS]])
        assert await all_still_open(more[FLOOD - 64 + PLAYERS :])

    try:
        table, results = await play(before_players=flood_first, paused=flood_mid_game)
        _assert_finished(table, results)
        assert _places(table) == _places(baseline[0])  # the same game, undisturbed
        assert all(evicted) and len(evicted) == FLOOD - 64
        # By the end every flood connection is closed (evicted, or when the table ended).
        assert all([await closed_by_server(s) for s in flood])
    finally:
        await close_all(flood)


async def test_a_flood_of_idle_connections_to_one_peer_mid_game() -> None:
    baseline = await play()
    _assert_finished(*baseline)
    flood: list[trio.SocketStream] = []

    async def flood_a_peer(_table_port: int, ports: dict[str, int]) -> None:
        flood.extend(await _flood(ports["p2"]))
        # p2's cap is 64; its neighbour's connection has spoken (the draw
        # phase is over), so the oldest silent ones made room.
        assert all([await closed_by_server(s) for s in flood[: FLOOD - 64 + 1]])
        assert await all_still_open(flood[FLOOD - 64 + 1 :])

    try:
        table, results = await play(paused=flood_a_peer)
        _assert_finished(table, results)
        assert _places(table) == _places(baseline[0])
        assert len(flood) == FLOOD
        assert all([await closed_by_server(s) for s in flood])
    finally:
        await close_all(flood)


# -- one peer alone: size and idle limits on its listening port ---------------------


async def _lone_peer(test: Callable[[int], Awaitable[None]], **config: float) -> None:
    """A peer that has joined a table still waiting for players; ``test(its port)``."""
    table_config = TableConfig(players=2, port=0, seed=1, linger=0.1)
    async with trio.open_nursery() as nursery:
        _, table_port = await nursery.start(serve_table, table_config)
        peer = Peer(PeerConfig(nick="ann", table=("127.0.0.1", table_port), **config))

        async def run_peer(task_status: trio.TaskStatus[int]) -> None:
            with contextlib.suppress(PeerError):
                await peer.play(task_status=task_status)

        port = await nursery.start(run_peer)
        await test(port)
        nursery.cancel_scope.cancel()
    peer.log.close()


async def test_an_oversized_message_to_a_peer_gets_an_error_then_the_connection_closes() -> None:
    async def oversized(port: int) -> None:
        stream = await connect(port)
        with trio.fail_after(BOUND):
            await stream.send_all(b'{"cmd": "offer", "pad": "' + b"x" * 70_000)
            received = b""
            while data := await stream.receive_some(65536):
                received += data
        reply = json.loads(received.split(b"\n")[0])
        assert reply["result"] == "error" and "65536-byte limit" in reply["message"]
        await stream.aclose()

    await _lone_peer(oversized)


async def test_a_silent_connection_to_a_peer_is_closed_after_the_first_message_timeout() -> None:
    async def silent(port: int) -> None:
        start = trio.current_time()  # before the server's clock starts
        stream = await connect(port)
        assert await closed_by_server(stream)
        assert 0.2 <= trio.current_time() - start < BOUND
        await stream.aclose()

    await _lone_peer(silent, first_message_timeout=0.2)


async def test_invalid_messages_do_not_buy_a_stray_more_time_at_a_peer(
    autojump_clock: trio.abc.Clock,
) -> None:
    # On the mock clock, through a memory stream: the peer's inbound handler
    # as ring.wire.net.listen runs it, closing the stream after it.
    peer = Peer(PeerConfig(nick="ann", table=None, first_message_timeout=10))
    ours, theirs = trio.testing.memory_stream_pair()

    async def handle() -> None:
        try:
            await peer.taking.serve_right(theirs)
        finally:
            await theirs.aclose()

    async with trio.open_nursery() as nursery:
        start = trio.current_time()
        nursery.start_soon(handle)
        received = b""
        for at in (0, 4, 8):  # each gets an error, none buys more time
            await trio.sleep(start + at - trio.current_time())
            await ours.send_all(b"not json\n")
            with trio.fail_after(1):
                received += await ours.receive_some(65536)
        with trio.fail_after(60):
            assert await ours.receive_some(65536) == b""  # closed
        assert trio.current_time() - start == pytest.approx(10, abs=0.01)
    assert [json.loads(line)["result"] for line in received.splitlines()] == ["error"] * 3
    peer.log.close()


async def test_an_idle_connection_to_the_table_is_closed_after_the_idle_timeout() -> None:
    config = TableConfig(players=2, port=0, seed=1, idle_timeout=0.2, linger=0.1)
    async with trio.open_nursery() as nursery:
        _, port = await nursery.start(serve_table, config)
        start = trio.current_time()  # before the server's clock starts
        stream = await connect(port)
        assert await closed_by_server(stream)
        assert 0.2 <= trio.current_time() - start < BOUND
        await stream.aclose()
        nursery.cancel_scope.cancel()
