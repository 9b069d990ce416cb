"""mDNS (DNS-SD) discovery: tables advertise themselves, peers find them.

The only module that imports zeroconf. Everything else imports this module
lazily, inside the functions that discover or advertise, so a peer given
``--table`` never pays for zeroconf's import or its sockets.

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
import atexit
import contextlib
import ipaddress
import math
import re
import secrets
import shlex
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import trio
from zeroconf import (
    DNSQuestionType,
    InterfaceChoice,
    IPVersion,
    ServiceBrowser,
    ServiceInfo,
    ServiceStateChange,
    Zeroconf,
)

if TYPE_CHECKING:
    from zeroconf import InterfacesType

# A kind is a service's declared name (ring.registry.Service.name); its
# DNS-SD type is "_<kind>._tcp.local.", and a DNS-SD service name is at most
# 15 characters (RFC 6763, 7.2).
_KIND = re.compile(r"[a-z][a-z0-9]{0,14}")
# The protocol version a client of each kind speaks: the TXT key ``v``.
PROTOCOL_VERSION: Final = "1"

# Passed as ``interfaces``: every interface of the host (the product on a LAN).
ALL_INTERFACES: Final[tuple[str, ...]] = ("0.0.0.0",)
DEFAULT_NAME: Final = "table"
# A burst of joins becomes one TXT update: each update costs the network
# a few packets, and a browser only needs the state once things settle.
UPDATE_DELAY: Final = 0.1
# Milliseconds to wait for a service's SRV/TXT/A records after its PTR.
RESOLVE_TIMEOUT_MS: Final = 3000
WITHDRAW_TIMEOUT: Final = 2.0
# zeroconf's blocking calls wait on its own event-loop thread; if that thread
# is wedged they never return, so Trio stops waiting after this long.
THREAD_TIMEOUT: Final = 5.0
REGISTER_TIMEOUT: Final = 10.0  # probing alone takes ~1.6 s

_ID = re.compile(r"[0-9a-f]{8}")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


class DiscoveryError(Exception):
    """mDNS could not be used, or found nothing; one line for the user."""


# -- names, interfaces, services found -----------------------------------------


def service_type(kind: str) -> str:
    if not _KIND.fullmatch(kind):
        raise ValueError(f"a service kind is 1-15 of a-z 0-9, starting with a letter: {kind!r}")
    return f"_{kind}._tcp.local."


def instance_name(name: str = DEFAULT_NAME) -> str:
    """``name-<8 hex>``: two processes on one host may not notice a name clash, so
    every instance carries its own random id."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"a service name is 1-32 of A-Z a-z 0-9 _ -, got {name!r}")
    return f"{name}-{secrets.token_hex(4)}"


def interfaces_for(mdns_interface: str | None, listen_host: str | None = None) -> tuple[str, ...]:
    """The interfaces to use: the one asked for, else the listening address, else all.

    ``0.0.0.0`` (or ``::``) as either means all interfaces.
    """
    choice = mdns_interface or listen_host
    if choice is None or choice in ("0.0.0.0", "::", ""):
        return ALL_INTERFACES
    try:
        address = ipaddress.IPv4Address(choice)
    except ValueError:
        raise DiscoveryError(f"mDNS needs an IPv4 interface address, got {choice!r}") from None
    return (str(address),)


def _checked(interfaces: Sequence[str]) -> tuple[str, ...]:
    # A bare string is a Sequence[str] too, and "127.0.0.1" would become
    # nine one-character "interfaces".
    if isinstance(interfaces, str):
        raise TypeError("interfaces must be a list of addresses, not a string")
    chosen = tuple(interfaces)
    if not chosen:
        raise ValueError("choose at least one interface (or ALL_INTERFACES)")
    return ALL_INTERFACES if "0.0.0.0" in chosen else chosen


@dataclass(frozen=True)
class Found:
    """A service seen by a browser; ``removed`` ones carry only kind and instance."""

    kind: str
    instance: str  # the instance label, e.g. table-1a2b3c4d
    addresses: tuple[str, ...] = ()
    port: int = 0
    txt: Mapping[str, str] = field(default_factory=dict)
    removed: bool = False

    @property
    def name(self) -> str:
        """The full DNS-SD name, e.g. ``table-1a2b3c4d._oldmaid._tcp.local.``."""
        return f"{self.instance}.{service_type(self.kind)}"

    @property
    def address(self) -> tuple[str, int]:
        return self.addresses[0], self.port

    @property
    def waiting(self) -> bool:
        """Whether a client of this version can join now."""
        return (
            bool(self.addresses)
            and self.txt.get("v") == PROTOCOL_VERSION
            and self.txt.get("state") == "waiting"
        )

    def matches(self, name: str | None) -> bool:
        """``name`` is the whole instance name, or the part before its id."""
        if name is None or self.instance == name:
            return True
        base, sep, tail = self.instance.rpartition("-")
        return bool(sep) and base == name and _ID.fullmatch(tail) is not None

    @property
    def line(self) -> str:
        """``KIND NAME ADDR[,ADDR...] PORT key=value ...``, shell-quoted where needed."""
        words = [self.kind, self.instance, ",".join(self.addresses) or "-", str(self.port)]
        words += [f"{key}={value}" for key, value in sorted(self.txt.items())]
        return " ".join(shlex.quote(word) for word in words)


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


def _instance_of(name: str, type_: str) -> str:
    return name[: -len(type_) - 1] if name.endswith("." + type_) else name


def oldmaid_txt(*, players: int, joined: int, state: str) -> dict[str, str]:
    """The TXT record of an Old Maid table."""
    return {
        "v": PROTOCOL_VERSION,
        "players": str(players),
        "joined": str(joined),
        "state": state,
    }


# -- the process's one Zeroconf ------------------------------------------------

_lock = threading.Lock()
_shared: Zeroconf | None = None
_shared_interfaces: tuple[str, ...] = ()
_users = 0


def _acquire(interfaces: tuple[str, ...]) -> Zeroconf:
    global _shared, _shared_interfaces, _users
    with _lock:
        if _shared is None:
            choice: InterfacesType = (
                InterfaceChoice.All if interfaces == ALL_INTERFACES else list(interfaces)
            )
            try:
                # IPv4 only: tables and joins are IPv4, and IPv6 "all" would
                # add every link-local scope to the traffic.
                _shared = Zeroconf(
                    interfaces=choice, ip_version=IPVersion.V4Only, use_asyncio=False
                )
            except OSError as exc:
                where = "all interfaces" if interfaces == ALL_INTERFACES else ", ".join(interfaces)
                raise DiscoveryError(f"cannot use mDNS on {where}: {exc.strerror or exc}") from None
            _shared_interfaces = interfaces
        elif interfaces != _shared_interfaces:
            raise DiscoveryError(
                f"mDNS is in use on {', '.join(_shared_interfaces)} in this process;"
                f" it cannot also use {', '.join(interfaces)}"
            )
        _users += 1
        return _shared


def _release() -> None:
    global _shared, _users
    with _lock:
        _users -= 1
        if _users > 0 or _shared is None:
            return
        zc, _shared = _shared, None
    # Sends the goodbyes of anything still registered, then stops the loop;
    # outside the lock, so a slow close never blocks the next acquire.
    zc.close()


def _close_at_exit() -> None:
    global _shared, _users
    with _lock:
        zc, _shared, _users = _shared, None, 0
    if zc is not None:
        zc.close()


atexit.register(_close_at_exit)


async def _in_thread(what: str, fn: Any, *args: Any, timeout: float = THREAD_TIMEOUT) -> Any:
    """A blocking zeroconf call in a worker thread, waited for at most ``timeout``."""
    with trio.move_on_after(timeout):
        return await trio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
    raise DiscoveryError(f"mDNS did not answer: {what} took over {timeout:g} s")


@asynccontextmanager
async def _zeroconf(interfaces: tuple[str, ...]) -> AsyncIterator[Zeroconf]:
    zc = await _in_thread("starting zeroconf", _acquire, interfaces)
    try:
        yield zc
    finally:
        with trio.CancelScope(shield=True), contextlib.suppress(DiscoveryError):
            await _in_thread("closing zeroconf", _release)


def _interface_addresses(interfaces: tuple[str, ...]) -> list[str]:
    """The IPv4 addresses zeroconf answers from: what a 0.0.0.0 listener is reachable on."""
    if interfaces != ALL_INTERFACES:
        return list(interfaces)
    import ifaddr  # zeroconf's own dependency, which it uses for the same list

    addresses = sorted(
        {ip.ip for adapter in ifaddr.get_adapters() for ip in adapter.ips if ip.is_IPv4},
        key=lambda text: (ipaddress.IPv4Address(text).is_loopback, text),
    )
    outside = [a for a in addresses if not ipaddress.IPv4Address(a).is_loopback]
    return outside or addresses


# -- advertising -----------------------------------------------------------------


def start_advertising(
    nursery: trio.Nursery,
    kind: str,
    port: int,
    *,
    host: str,
    mdns_interface: str | None,
    mdns_name: str,
    txt: Mapping[str, str],
    who: str,
    on_advertise: Callable[[Advertiser], object] | None = None,
) -> Advertiser | None:
    """Advertise a server in the background; it never waits for the registration.

    ``who`` names the server in the stderr lines. None, after one line, if the
    service cannot be advertised (the server serves on without it).
    ``on_advertise`` gets the advertiser before its registration starts.
    """
    try:
        advertiser = Advertiser(
            kind,
            port,
            host=host,
            interfaces=interfaces_for(mdns_interface, host),
            txt=txt,
            instance=instance_name(mdns_name),
        )
    except (DiscoveryError, ValueError) as exc:
        print(f"{who}: not advertised over mDNS: {exc}", file=sys.stderr)
        return None
    if on_advertise is not None:
        on_advertise(advertiser)
    nursery.start_soon(_advertise_or_say_why, advertiser, who)
    return advertiser


async def _advertise_or_say_why(advertiser: Advertiser, who: str) -> None:
    where = ", ".join(advertiser.interfaces)
    print(f"{who}: advertising {advertiser.name} on {where}", file=sys.stderr, flush=True)
    try:
        await advertiser.run()
    except DiscoveryError as exc:
        # The game goes on: players can still be given the address.
        print(f"{who}: not advertised over mDNS: {exc}", file=sys.stderr, flush=True)


class Advertiser:
    """One service, advertised while ``run`` runs and withdrawn when it ends.

    Start ``run`` in a nursery and carry on serving: probing the name takes
    over a second, and nothing should wait for it. ``registered`` is set once
    the registration has completed, ``withdrawn`` once the service is gone
    again (or never made it).
    """

    def __init__(
        self,
        kind: str,
        port: int,
        *,
        host: str,
        interfaces: Sequence[str],
        txt: Mapping[str, str],
        instance: str | None = None,
        update_delay: float = UPDATE_DELAY,
    ) -> None:
        self.kind = kind
        self.service_type = service_type(kind)
        self.port = port
        self.host = host  # the listening address; 0.0.0.0: the interfaces' addresses
        self.interfaces = _checked(interfaces)
        self.instance = instance or instance_name()
        self.update_delay = update_delay
        self.registered = trio.Event()
        self.withdrawn = trio.Event()
        self._txt = dict(txt)
        self._published: dict[str, str] | None = None
        self._changed = trio.Event()

    @property
    def name(self) -> str:
        return f"{self.instance}.{self.service_type}"

    @property
    def txt(self) -> dict[str, str]:
        return dict(self._txt)

    def update(self, txt: Mapping[str, str]) -> None:
        """Set TXT keys; published after ``update_delay``, together with later changes."""
        merged = {**self._txt, **{key: str(value) for key, value in txt.items()}}
        if merged != self._txt:
            self._txt = merged
            self._changed.set()

    def _info(self, txt: Mapping[str, str]) -> ServiceInfo:
        if self.host in ("0.0.0.0", "::", ""):
            addresses = _interface_addresses(self.interfaces)
        else:
            addresses = [self.host]
        return ServiceInfo(
            self.service_type,
            self.name,
            port=self.port,
            properties=dict(txt),
            server=f"{self.instance}.local.",
            addresses=[socket.inet_aton(address) for address in addresses],
        )

    def _register(self, zc: Zeroconf, info: ServiceInfo) -> ServiceInfo:
        zc.register_service(info, allow_name_change=True)
        return info

    async def run(self) -> None:
        """Register, keep the TXT record current, and withdraw when cancelled.

        Raises ``DiscoveryError`` if mDNS cannot be used; the service itself
        should go on without it.
        """
        info: ServiceInfo | None = None
        try:
            async with _zeroconf(self.interfaces) as zc:
                try:
                    txt = dict(self._txt)
                    # If this is abandoned (cancelled, or past the timeout),
                    # closing the shared Zeroconf still sends the goodbyes of
                    # whatever it managed to register.
                    info = await _in_thread(
                        "registration",
                        self._register,
                        zc,
                        self._info(txt),
                        timeout=REGISTER_TIMEOUT,
                    )
                    self._published = txt
                    # allow_name_change may have renamed a clashing instance.
                    self.instance = _instance_of(info.name, self.service_type)
                    self.registered.set()
                    await self._publish_changes(zc)
                except Exception as exc:
                    raise DiscoveryError(f"cannot advertise {self.name}: {exc}") from exc
                finally:
                    if info is not None:
                        with trio.move_on_after(WITHDRAW_TIMEOUT, shield=True):
                            await trio.to_thread.run_sync(
                                zc.unregister_service, info, abandon_on_cancel=True
                            )
        finally:
            self.withdrawn.set()

    async def _publish_changes(self, zc: Zeroconf) -> None:
        while True:
            await self._changed.wait()
            await trio.sleep(self.update_delay)
            self._changed = trio.Event()
            txt = dict(self._txt)
            if txt != self._published:
                # update_service waits for its announcements (~0.5 s): changes
                # made meanwhile are coalesced into the next round.
                await _in_thread("a TXT update", zc.update_service, self._info(txt))
                self._published = txt


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
