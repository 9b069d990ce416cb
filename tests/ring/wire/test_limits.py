"""Limits over real loopback TCP: connection caps, eviction, refusal, idle and size limits.

A flood of idle connections, to the table or to one peer, must not stop a
game: ``ring.wire.net.serve`` makes room at its cap by closing the oldest
connection that has not yet sent anything valid, never one that has. One
address may hold only so many connections (127.0.0.1 and ::1 excepted; the
tests turn that exemption off, and dial from 127.0.0.2 for a second address). Every
wait here has a bound; nothing sleeps to let something happen.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import resource
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import files_needed, raise_file_limit, serve_all, settings_for
from ring.oldmaid.peer import Outcome, Peer, PeerConfig, PeerError, config_from_args
from ring.wire import net
from ring.wire.net import MAX_REFUSING, Refusal, mark_established, serve
from services.oldmaid.referee import GameState
from services.oldmaid.table import TableConfig, TableOutcome, serve_table

BOUND = 5.0  # longest any single wait may take
FLOOD = 200
TABLE_CAP = 64  # the flood arithmetic below counts on it
PLAYERS, SEED = 4, 21


# -- helpers ---------------------------------------------------------------------


async def _connect(port: int, source: str | None = None) -> trio.SocketStream:
    """A connection to 127.0.0.1:port, from ``source`` (another loopback address) if given."""
    with trio.fail_after(BOUND):
        return await trio.open_tcp_stream("127.0.0.1", port, local_address=source)


async def _flood(port: int, count: int = FLOOD) -> list[trio.SocketStream]:
    return [await _connect(port) for _ in range(count)]


async def _closed_by_server(stream: trio.SocketStream) -> bool:
    """Read to the end: True if the other side closed within the bound."""
    with trio.move_on_after(BOUND):
        while True:
            try:
                data = await stream.receive_some(65536)
            except trio.BrokenResourceError:
                return True
            if not data:
                return True
    return False


async def _still_open(stream: trio.SocketStream) -> bool:
    """True if nothing, not even an EOF, arrives at once (the server kept it)."""
    with trio.move_on_after(0.05):
        await stream.receive_some(1)
        return False
    return True


async def _all_still_open(streams: list[trio.SocketStream]) -> bool:
    """``_still_open`` for each, all at once (so 0.05 s in all)."""
    kept: list[bool] = []

    async def check(stream: trio.SocketStream) -> None:
        kept.append(await _still_open(stream))

    async with trio.open_nursery() as nursery:
        for stream in streams:
            nursery.start_soon(check, stream)
    return all(kept) and len(kept) == len(streams)


async def _close_all(streams: list[trio.SocketStream]) -> None:
    for stream in streams:
        with trio.move_on_after(1) as scope:
            scope.shield = True
            await stream.aclose()


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


# -- ring.wire.net.serve: the cap and eviction -------------------------------------------


async def _echo_until_closed(stream: trio.SocketStream) -> None:
    """A handler whose connection proves itself with its first byte, then echoes."""
    while data := await stream.receive_some(1024):
        mark_established()
        await stream.send_all(data)


async def _echo(stream: trio.SocketStream, data: bytes) -> bytes:
    with trio.fail_after(BOUND):
        await stream.send_all(data)
        return await stream.receive_some(1024)


async def test_serve_evicts_the_oldest_connection_that_has_not_proved_itself() -> None:
    async with trio.open_nursery() as nursery:
        _, port = await nursery.start(
            lambda task_status: serve(
                _echo_until_closed, "127.0.0.1", 0, max_connections=3, task_status=task_status
            )
        )
        a, b, c = await _connect(port), await _connect(port), await _connect(port)
        assert await _echo(a, b"a") == b"a"  # a is established now
        d = await _connect(port)  # at the cap: b, the oldest silent one, goes
        assert await _closed_by_server(b)
        assert await _still_open(c)
        assert await _echo(d, b"d") == b"d"
        e = await _connect(port)  # c goes
        assert await _closed_by_server(c)
        assert await _echo(e, b"e") == b"e"
        f = await _connect(port)  # all three established: the newcomer is refused
        assert await _closed_by_server(f)
        for stream, byte in ((a, b"1"), (d, b"2"), (e, b"3")):
            assert await _echo(stream, byte) == byte
        await _close_all([a, b, c, d, e, f])
        nursery.cancel_scope.cancel()


class Echoes:
    """Echo handlers that count the connections ``serve`` has handed over, and a refusal
    hook that says which cap refused: so a test waits for the server, never on a clock."""

    def __init__(self) -> None:
        self.opened = 0
        self.refusals: list[Refusal] = []
        self.hold: trio.Event | None = None  # while set, refusals wait for it
        self._changed = trio.Event()

    def _change(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def handler(self, stream: trio.SocketStream) -> None:
        self.opened += 1
        self._change()
        await _echo_until_closed(stream)

    async def refuse(self, stream: trio.SocketStream, why: Refusal) -> None:
        self.refusals.append(why)
        self._change()
        if self.hold is not None:
            await self.hold.wait()
        await stream.send_all(why.value.encode())

    async def until(self, condition: Callable[[], bool]) -> None:
        with trio.fail_after(BOUND):
            while not condition():
                await self._changed.wait()

    async def start(self, nursery: trio.Nursery, **caps: Any) -> int:
        listen = functools.partial(serve, self.handler, "127.0.0.1", 0, refuse=self.refuse)
        _, port = await nursery.start(functools.partial(listen, **caps))
        return port

    async def connect(self, port: int, source: str | None = None) -> trio.SocketStream:
        """A connection the server has taken (opened and counted) before this returns."""
        before = self.opened
        stream = await _connect(port, source)
        await self.until(lambda: self.opened > before)
        return stream


async def _told(stream: trio.SocketStream) -> bytes:
    """Everything the server sends until it closes (within the bound)."""
    received = b""
    with trio.fail_after(BOUND):
        while data := await stream.receive_some(1024):
            received += data
    return received


async def test_the_per_address_cap_evicts_that_addresss_oldest_silent_connection() -> None:
    echoes = Echoes()
    async with trio.open_nursery() as nursery:
        port = await echoes.start(
            nursery, max_connections=10, max_per_address=2, exempt_loopback=False
        )
        elsewhere = await echoes.connect(port, "127.0.0.2")  # the oldest silent one of all
        a, b = await echoes.connect(port), await echoes.connect(port)
        assert await _echo(a, b"a") == b"a"  # a is established now
        c = await echoes.connect(port)  # 127.0.0.1 is at 2: its own silent b goes
        assert await _closed_by_server(b)
        assert await _still_open(elsewhere)
        assert await _echo(c, b"c") == b"c"
        d = await _connect(port)  # a and c have spoken: never evicted, so d is refused
        assert await _told(d) == b"too many connections from your address"
        assert echoes.refusals == [Refusal.ADDRESS_FULL]
        for stream, byte in ((a, b"1"), (c, b"2"), (elsewhere, b"3")):
            assert await _echo(stream, byte) == byte
        other = await echoes.connect(port, "127.0.0.2")  # another address has room
        assert await _echo(other, b"o") == b"o"
        await _close_all([a, b, c, d, elsewhere, other])
        nursery.cancel_scope.cancel()


async def test_the_global_cap_refuses_with_its_own_reason_once_every_connection_spoke() -> None:
    echoes = Echoes()
    async with trio.open_nursery() as nursery:
        port = await echoes.start(nursery, max_connections=2, max_per_address=2)
        a, b = await echoes.connect(port), await echoes.connect(port, "127.0.0.2")
        assert await _echo(a, b"a") == b"a" and await _echo(b, b"b") == b"b"
        c = await _connect(port)
        assert await _told(c) == b"server full"
        assert echoes.refusals == [Refusal.SERVER_FULL]
        assert await _echo(a, b"1") == b"1" and await _echo(b, b"2") == b"2"
        await _close_all([a, b, c])
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    "caps",
    [
        {"max_per_address": 1},  # 127.0.0.1 is exempt by default
        {"max_per_address": 0, "exempt_loopback": False},
        {"max_per_address": None, "exempt_loopback": False},
    ],
)
async def test_no_per_address_cap_for_loopback_or_when_off(caps: dict[str, Any]) -> None:
    echoes = Echoes()
    async with trio.open_nursery() as nursery:
        port = await echoes.start(nursery, max_connections=10, **caps)
        streams = [await echoes.connect(port) for _ in range(4)]
        for i, stream in enumerate(streams):
            assert await _echo(stream, b"%d" % i) == b"%d" % i
        assert echoes.refusals == []
        await _close_all(streams)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "0:0::1"])
def test_the_machines_own_addresses_are_exempt(address: str) -> None:
    assert net._is_local(address)


@pytest.mark.parametrize("address", ["127.0.0.2", "127.0.1.1", "192.168.1.20", "not an address"])
def test_every_other_address_is_capped_loopback_or_not(address: str) -> None:
    assert not net._is_local(address)


async def test_one_other_loopback_address_meets_the_cap_by_default() -> None:
    # The capacity bench's hostile clients come from 127.0.0.2: as from a machine of its own.
    echoes = Echoes()
    async with trio.open_nursery() as nursery:
        port = await echoes.start(nursery, max_connections=10, max_per_address=1)
        local = [await echoes.connect(port) for _ in range(2)]  # 127.0.0.1: not capped
        first = await echoes.connect(port, "127.0.0.2")
        assert await _echo(first, b"x") == b"x"
        second = await _connect(port, "127.0.0.2")  # the first spoke: it cannot make room
        assert await _told(second) == Refusal.ADDRESS_FULL.value.encode()
        assert echoes.refusals == [Refusal.ADDRESS_FULL]
        for i, stream in enumerate(local):
            assert await _echo(stream, b"%d" % i) == b"%d" % i
        await _close_all([*local, first, second])
        nursery.cancel_scope.cancel()


async def test_refusals_under_way_are_capped_and_the_rest_closed_at_once() -> None:
    echoes = Echoes()
    echoes.hold = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await echoes.start(nursery, max_connections=1)
        first = await echoes.connect(port)
        assert await _echo(first, b"a") == b"a"
        waiting = [await _connect(port) for _ in range(MAX_REFUSING)]
        await echoes.until(lambda: len(echoes.refusals) == MAX_REFUSING)
        late = await _connect(port)
        assert await _told(late) == b""  # closed unanswered, while the others still wait
        assert len(echoes.refusals) == MAX_REFUSING
        echoes.hold.set()
        assert [await _told(stream) for stream in waiting] == [b"server full"] * MAX_REFUSING
        await _close_all([first, late, *waiting])
        nursery.cancel_scope.cancel()


async def test_ring_serve_gives_its_per_address_cap_to_every_service() -> None:
    # From 127.0.0.2, which counts as a machine of its own (127.0.0.1 would be exempt).
    # The game services: the live page (a companion) is hypercorn's listener, capped by
    # its viewers (docs/web.md), not ring.wire.net's.
    services = [service for service in declared_services() if not service.companion]
    names = [service.name for service in services]
    argv = ["serve", "--max-per-address", "1", *[f"--{name}=0" for name in names]]
    args = build_parser().parse_args(argv)
    chosen = [(service, settings_for(args, service, seed=1)) for service in services]
    async with trio.open_nursery() as nursery:
        addresses = await nursery.start(serve_all, chosen)
        for name in names:
            first = await _connect(addresses[name][1], "127.0.0.2")
            second = await _connect(addresses[name][1], "127.0.0.2")
            # One connection from this address at a time: the silent first makes room.
            assert await _closed_by_server(first), name
            assert await _still_open(second), name
            await _close_all([first, second])
        nursery.cancel_scope.cancel()


# -- the command line ---------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["table", "--max-connections", "0"],
        ["table", "--max-connections", "-3"],
        ["table", "--max-per-address", "-1"],
        ["peer", "--name", "ann", "--max-connections", "0"],
        ["peer", "--name", "ann", "--max-connections", "-1"],
        ["peer", "--name", "ann", "--max-per-address", "many"],
        ["serve", "--max-connections", "0"],
        ["serve", "--max-per-address", "-1"],
    ],
)
def test_caps_that_make_no_sense_are_refused_on_the_command_line(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2


def test_the_caps_default_for_a_class_and_zero_turns_the_address_cap_off() -> None:
    from services.oldmaid.table import TableConfig as Config

    parser = build_parser()
    table = Config.from_args(parser.parse_args(["table"]))
    assert (table.max_connections, table.max_per_address) == (256, 16)
    peer = config_from_args(parser.parse_args(["peer", "--name", "ann"]))
    assert (peer.max_connections, peer.max_per_address) == (64, 16)
    serve_args = parser.parse_args(["serve"])
    assert (serve_args.max_connections, serve_args.max_per_address) == (None, 16)
    assert parser.parse_args(["serve", "--max-per-address", "0"]).max_per_address == 0
    off = config_from_args(parser.parse_args(["peer", "--name", "a", "--max-per-address", "0"]))
    assert off.max_per_address == 0


# -- ring serve and the open-file limit ---------------------------------------------


class FakeLimits:
    def __init__(self, soft: int, hard: int) -> None:
        self.now = (soft, hard)

    def getrlimit(self, which: int) -> tuple[int, int]:
        assert which == resource.RLIMIT_NOFILE
        return self.now

    def setrlimit(self, which: int, limits: tuple[int, int]) -> None:
        assert which == resource.RLIMIT_NOFILE
        assert limits[1] == resource.RLIM_INFINITY or limits[0] <= limits[1]
        self.now = limits


@pytest.mark.parametrize(
    "soft, hard, after, says",
    [
        (1024, 4096, (2272, 4096), False),  # raised to what the caps need
        (1024, resource.RLIM_INFINITY, (2272, resource.RLIM_INFINITY), False),
        (1024, 2000, (2000, 2000), True),  # as far as the hard limit goes, and said
        (4096, 4096, (4096, 4096), False),  # enough already: left alone
    ],
)
def test_ring_serve_raises_the_open_file_limit_its_caps_need(
    soft: int, hard: int, after: tuple[int, int], says: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    need = files_needed(argparse.Namespace(max_connections=None), 4)
    assert need == 4 * (2 * 256 + MAX_REFUSING + 8) + 64 == 2272
    limits = FakeLimits(soft, hard)
    monkeypatch.setattr(resource, "getrlimit", limits.getrlimit)
    monkeypatch.setattr(resource, "setrlimit", limits.setrlimit)
    line = raise_file_limit(need)
    assert limits.now == after
    assert (line is not None) == says
    if line is not None:
        assert "2000" in line and "2272" in line and "\n" not in line


def _soft_file_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-file limit in /proc")


@pytest.mark.skipif(
    not Path("/proc/self/limits").exists(),
    reason="reads the server process's open-file limit from /proc/<pid>/limits (Linux only)",
)
@pytest.mark.parametrize("hard_too", [False, True])
def test_ring_serve_raises_its_own_open_file_limit_at_start(tmp_path: Path, hard_too: bool) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = files_needed(argparse.Namespace(max_connections=None), 1)
    if not hard_too and hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip(f"raising to {need} open files needs a hard limit that high; here it is {hard}")

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256 if hard_too else hard))

    server = subprocess.Popen(
        [sys.executable, "-m", "ring", "serve", "--fishnet", "0", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=low_limit,
    )  # fmt: skip
    try:
        assert server.stdout is not None and server.stderr is not None
        assert server.stdout.readline().startswith(b"fishnet listening on ")
        assert _soft_file_limit(server.pid) == (256 if hard_too else need)
        server.send_signal(signal.SIGTERM)
        assert server.wait(BOUND) == 143
        errors = server.stderr.read().decode()
        said = [line for line in errors.splitlines() if "open-file limit" in line]
        assert len(said) == (1 if hard_too else 0), errors
    finally:
        server.kill()
        server.wait(BOUND)


# -- floods against a whole game ----------------------------------------------------


async def test_a_flood_of_idle_connections_to_the_table_does_not_stop_the_game() -> None:
    baseline = await play()
    _assert_finished(*baseline)
    flood: list[trio.SocketStream] = []
    evicted: list[bool] = []

    async def flood_first(table_port: int, _ports: object) -> None:
        flood.extend(await _flood(table_port))
        # The table's cap is 64: the 136 oldest were closed to make room.
        evicted.extend([await _closed_by_server(s) for s in flood[: FLOOD - 64]])

    async def flood_mid_game(table_port: int, _ports: object) -> None:
        more = await _flood(table_port)
        flood.extend(more)
        # The players have joined, so only flood connections make room.
        assert all([await _closed_by_server(s) for s in more[: FLOOD - 64 + PLAYERS]])
        assert await _all_still_open(more[FLOOD - 64 + PLAYERS :])

    try:
        table, results = await play(before_players=flood_first, paused=flood_mid_game)
        _assert_finished(table, results)
        assert _places(table) == _places(baseline[0])  # the same game, undisturbed
        assert all(evicted) and len(evicted) == FLOOD - 64
        # By the end every flood connection is closed (evicted, or when the table ended).
        assert all([await _closed_by_server(s) for s in flood])
    finally:
        await _close_all(flood)


async def test_a_flood_of_idle_connections_to_one_peer_mid_game() -> None:
    baseline = await play()
    _assert_finished(*baseline)
    flood: list[trio.SocketStream] = []

    async def flood_a_peer(_table_port: int, ports: dict[str, int]) -> None:
        flood.extend(await _flood(ports["p2"]))
        # p2's cap is 64; its neighbour's connection has spoken (the draw
        # phase is over), so the oldest silent ones made room.
        assert all([await _closed_by_server(s) for s in flood[: FLOOD - 64 + 1]])
        assert await _all_still_open(flood[FLOOD - 64 + 1 :])

    try:
        table, results = await play(paused=flood_a_peer)
        _assert_finished(table, results)
        assert _places(table) == _places(baseline[0])
        assert len(flood) == FLOOD
        assert all([await _closed_by_server(s) for s in flood])
    finally:
        await _close_all(flood)


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
        stream = await _connect(port)
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
        stream = await _connect(port)
        assert await _closed_by_server(stream)
        assert 0.2 <= trio.current_time() - start < BOUND
        await stream.aclose()

    await _lone_peer(silent, first_message_timeout=0.2)


async def test_invalid_messages_do_not_buy_a_stray_more_time_at_a_peer(
    autojump_clock: trio.abc.Clock,
) -> None:
    # On the mock clock, through a memory stream: the peer's inbound handler
    # as ring.wire.net.serve runs it, closing the stream after it.
    peer = Peer(PeerConfig(nick="ann", table=None, first_message_timeout=10))
    ours, theirs = trio.testing.memory_stream_pair()

    async def handle() -> None:
        try:
            await peer._serve_right(theirs)
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
        stream = await _connect(port)
        assert await _closed_by_server(stream)
        assert 0.2 <= trio.current_time() - start < BOUND
        await stream.aclose()
        nursery.cancel_scope.cancel()
