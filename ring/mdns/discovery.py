"""mDNS (DNS-SD) discovery: tables advertise themselves, peers find them.

This module browses (``browse``, ``find_table``, ``discover``, ``ring
discover``) and is where the rest of the project imports discovery from: it
re-exports the names and records of ``ring.mdns.dnssd`` and the advertising of
``ring.mdns.advertising``. Those and ``ring.mdns.zeroconf_bridge`` (the process's one Zeroconf)
are the only modules that import zeroconf. Everything else imports this module
lazily, inside the functions that discover or advertise, so a peer given
``--server`` never pays for zeroconf's import or its sockets.

Zeroconf runs its own asyncio loop in a thread. Its blocking calls go
through ``trio.to_thread.run_sync`` and its browse callbacks come back into
Trio through the run's ``TrioToken``, into a memory channel. One Zeroconf
instance serves the whole process (it owns UDP port 5353 state and the
cache); it is created on first use and closed when its last user is done.

mDNS is used only to *find* services. A killed table never sends its
goodbye, so a stale entry can linger for the record's TTL: whether a table or
a player is alive is decided by TCP, never by mDNS.

Interfaces are always chosen by the caller. ``ALL_INTERFACES`` multicasts on
every interface of the host; tests and scenarios in the root network
namespace must pass ``["127.0.0.1"]`` so nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

import trio
from zeroconf import (
    DNSQuestionType,
    IPVersion,
    ServiceBrowser,
    ServiceInfo,
    ServiceStateChange,
    Zeroconf,
)

from ring.mdns.advertising import Advertiser, start_advertising
from ring.mdns.dnssd import (
    ALL_INTERFACES,
    DiscoveryError,
    Found,
    _checked,
    _instance_of,
    instance_name,
    interfaces_for,
    oldmaid_txt,
    service_type,
)
from ring.mdns.zeroconf_bridge import _in_thread, _zeroconf

# Imported from here by the services, the peer and the tests.
__all__ = [
    "ALL_INTERFACES",
    "Advertiser",
    "DiscoveryError",
    "Found",
    "browse",
    "discover",
    "find_table",
    "instance_name",
    "interfaces_for",
    "oldmaid_txt",
    "run",
    "service_type",
    "start_advertising",
]

# Milliseconds to wait for a service's SRV/TXT/A records after its PTR.
RESOLVE_TIMEOUT_MS: Final = 3000


def _found(kind: str, info: ServiceInfo) -> Found:
    txt = {
        key.decode("utf-8", "replace"): (value or b"").decode("utf-8", "replace")
        for key, value in info.properties.items()
    }
    return Found(
        kind=kind,
        instance=_instance_of(info.name, info.type),
        addresses=tuple(info.parsed_addresses(IPVersion.V4Only)),
        port=info.port or 0,
        txt=txt,
    )


# -- browsing --------------------------------------------------------------------


@asynccontextmanager
async def browse(
    kinds: Iterable[str], *, interfaces: Sequence[str]
) -> AsyncIterator[trio.MemoryReceiveChannel[Found]]:
    """A channel of services of these kinds as they appear, change and go.

    The browser asks with QM questions (multicast replies): a QU question's
    unicast reply is held back about a second by responders on the same host.
    """
    types = {service_type(kind): kind for kind in kinds}
    chosen = _checked(interfaces)
    token = trio.lowlevel.current_trio_token()
    changes_in, changes_out = trio.open_memory_channel[tuple[str, str, bool]](math.inf)
    found_in, found_out = trio.open_memory_channel[Found](math.inf)

    def deliver(change: tuple[str, str, bool]) -> None:  # in Trio
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            changes_in.send_nowait(change)

    def on_change(
        zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:  # in the browser's thread
        change = (service_type, name, state_change is ServiceStateChange.Removed)
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(deliver, change)

    latest: dict[str, int] = {}

    async def resolve(zc: Zeroconf, type_: str, name: str, serial: int) -> None:
        info = await trio.to_thread.run_sync(
            zc.get_service_info,
            type_,
            name,
            RESOLVE_TIMEOUT_MS,
            DNSQuestionType.QM,
            abandon_on_cancel=True,
        )
        # A later change of the same name supersedes this one.
        if info is not None and latest.get(name) == serial:
            with contextlib.suppress(trio.ClosedResourceError):
                found_in.send_nowait(_found(types[type_], info))

    async def resolve_all(zc: Zeroconf, nursery: trio.Nursery) -> None:
        async for type_, name, removed in changes_out:
            serial = latest[name] = latest.get(name, 0) + 1
            if removed:
                gone = Found(types[type_], _instance_of(name, type_), removed=True)
                with contextlib.suppress(trio.ClosedResourceError):
                    found_in.send_nowait(gone)
            else:
                nursery.start_soon(resolve, zc, type_, name, serial)

    async with _zeroconf(chosen) as zc, trio.open_nursery() as nursery:
        nursery.start_soon(resolve_all, zc, nursery)
        browser = await _in_thread(
            "starting a browser",
            lambda: ServiceBrowser(
                zc, list(types), handlers=[on_change], question_type=DNSQuestionType.QM
            ),
        )
        try:
            yield found_out
        finally:
            with trio.CancelScope(shield=True), contextlib.suppress(DiscoveryError):
                await _in_thread("stopping a browser", browser.cancel)
            nursery.cancel_scope.cancel()
            changes_in.close()
            found_in.close()


async def find_table(
    kind: str = "oldmaid",
    *,
    interfaces: Sequence[str],
    timeout: float,
    name: str | None = None,
) -> Found:
    """The first waiting table of this kind (named ``name``, if given).

    Raises ``DiscoveryError`` after ``timeout`` seconds without one.
    """
    seen: dict[str, Found] = {}
    with trio.move_on_after(timeout):
        async with browse([kind], interfaces=interfaces) as found:
            async for service in found:
                if service.removed:
                    seen.pop(service.instance, None)
                elif service.matches(name):
                    if service.waiting:
                        return service
                    seen[service.instance] = service
    what = f"table named {name}" if name else "table"
    busy = ", ".join(f"{s.instance} ({s.txt.get('state', '?')})" for s in seen.values())
    also = f"; seen but not joinable: {busy}" if busy else ""
    raise DiscoveryError(f"no waiting {what} found by mDNS within {timeout:g} s{also}")


async def discover(
    kinds: Iterable[str], *, interfaces: Sequence[str], timeout: float
) -> list[Found]:
    """Every service of these kinds present after listening ``timeout`` seconds."""
    services: dict[tuple[str, str], Found] = {}
    with trio.move_on_after(timeout):
        async with browse(kinds, interfaces=interfaces) as found:
            async for service in found:
                if service.removed:
                    services.pop((service.kind, service.instance), None)
                else:
                    services[service.kind, service.instance] = service
    return sorted(services.values(), key=lambda s: (s.kind, s.instance))


# -- ring discover ----------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """``ring discover``: one line per service on stdout; exit 0 even if none.

    ``args.kind``: the kinds to look for (the command line gives every declared
    service when none is named)."""
    kinds: list[str] = args.kind
    try:
        interfaces = interfaces_for(args.mdns_interface)
        services = trio.run(_discover_all, kinds, interfaces, args.timeout)
    except DiscoveryError as exc:
        print(f"discover: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    for service in services:
        print(service.line, flush=True)
    if not services:
        print(f"discover: no services found within {args.timeout:g} s", file=sys.stderr)
    return 0


async def _discover_all(kinds: Any, interfaces: tuple[str, ...], timeout: float) -> list[Found]:
    return await discover(kinds, interfaces=interfaces, timeout=timeout)
