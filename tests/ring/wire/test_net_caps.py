"""``ring.wire.net.listen``'s caps over real loopback TCP: the cap and eviction, the
per-address cap, refusals; and the caps on the command line.

``serve`` makes room at its cap by closing the oldest connection that has not yet sent
anything valid, never one that has. One address may hold only so many connections
(127.0.0.1 and ::1 excepted; the tests turn that exemption off, and dial from 127.0.0.2
for a second address). Every wait here has a bound; nothing sleeps to let something
happen.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import serve_all, settings_for
from ring.oldmaid.peer import config_from_args
from ring.wire import net
from ring.wire.net import MAX_REFUSING, Refusal, listen, mark_established
from tests.helpers.connections import BOUND, close_all, closed_by_server, connect, still_open

# -- ring.wire.net.listen: the cap and eviction -------------------------------------------


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
            lambda task_status: listen(
                _echo_until_closed, "127.0.0.1", 0, max_connections=3, task_status=task_status
            )
        )
        a, b, c = await connect(port), await connect(port), await connect(port)
        assert await _echo(a, b"a") == b"a"  # a is established now
        d = await connect(port)  # at the cap: b, the oldest silent one, goes
        assert await closed_by_server(b)
        assert await still_open(c)
        assert await _echo(d, b"d") == b"d"
        e = await connect(port)  # c goes
        assert await closed_by_server(c)
        assert await _echo(e, b"e") == b"e"
        f = await connect(port)  # all three established: the newcomer is refused
        assert await closed_by_server(f)
        for stream, byte in ((a, b"1"), (d, b"2"), (e, b"3")):
            assert await _echo(stream, byte) == byte
        await close_all([a, b, c, d, e, f])
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
        accepting = functools.partial(listen, self.handler, "127.0.0.1", 0, refuse=self.refuse)
        _, port = await nursery.start(functools.partial(accepting, **caps))
        return port

    async def connect(self, port: int, source: str | None = None) -> trio.SocketStream:
        """A connection the server has taken (opened and counted) before this returns."""
        before = self.opened
        stream = await connect(port, source)
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
        assert await closed_by_server(b)
        assert await still_open(elsewhere)
        assert await _echo(c, b"c") == b"c"
        d = await connect(port)  # a and c have spoken: never evicted, so d is refused
        assert await _told(d) == b"too many connections from your address"
        assert echoes.refusals == [Refusal.ADDRESS_FULL]
        for stream, byte in ((a, b"1"), (c, b"2"), (elsewhere, b"3")):
            assert await _echo(stream, byte) == byte
        other = await echoes.connect(port, "127.0.0.2")  # another address has room
        assert await _echo(other, b"o") == b"o"
        await close_all([a, b, c, d, elsewhere, other])
        nursery.cancel_scope.cancel()


async def test_the_global_cap_refuses_with_its_own_reason_once_every_connection_spoke() -> None:
    echoes = Echoes()
    async with trio.open_nursery() as nursery:
        port = await echoes.start(nursery, max_connections=2, max_per_address=2)
        a, b = await echoes.connect(port), await echoes.connect(port, "127.0.0.2")
        assert await _echo(a, b"a") == b"a" and await _echo(b, b"b") == b"b"
        c = await connect(port)
        assert await _told(c) == b"server full"
        assert echoes.refusals == [Refusal.SERVER_FULL]
        assert await _echo(a, b"1") == b"1" and await _echo(b, b"2") == b"2"
        await close_all([a, b, c])
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
        await close_all(streams)
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
        second = await connect(port, "127.0.0.2")  # the first spoke: it cannot make room
        assert await _told(second) == Refusal.ADDRESS_FULL.value.encode()
        assert echoes.refusals == [Refusal.ADDRESS_FULL]
        for i, stream in enumerate(local):
            assert await _echo(stream, b"%d" % i) == b"%d" % i
        await close_all([*local, first, second])
        nursery.cancel_scope.cancel()


async def test_refusals_under_way_are_capped_and_the_rest_closed_at_once() -> None:
    echoes = Echoes()
    echoes.hold = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await echoes.start(nursery, max_connections=1)
        first = await echoes.connect(port)
        assert await _echo(first, b"a") == b"a"
        waiting = [await connect(port) for _ in range(MAX_REFUSING)]
        await echoes.until(lambda: len(echoes.refusals) == MAX_REFUSING)
        late = await connect(port)
        assert await _told(late) == b""  # closed unanswered, while the others still wait
        assert len(echoes.refusals) == MAX_REFUSING
        echoes.hold.set()
        assert [await _told(stream) for stream in waiting] == [b"server full"] * MAX_REFUSING
        await close_all([first, late, *waiting])
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
            first = await connect(addresses[name][1], "127.0.0.2")
            second = await connect(addresses[name][1], "127.0.0.2")
            # One connection from this address at a time: the silent first makes room.
            assert await closed_by_server(first), name
            assert await still_open(second), name
            await close_all([first, second])
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
    from services.oldmaid.table.server import TableConfig as Config

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
