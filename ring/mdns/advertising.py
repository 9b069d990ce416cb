"""mDNS advertising: a service registered, its TXT record kept current, withdrawn at the end.

``start_advertising`` is what a server calls; it never waits for the
registration, and a service that cannot be advertised serves on without it.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import trio
from zeroconf import ServiceInfo, Zeroconf

from ring.mdns.dnssd import (
    ALL_INTERFACES,
    DiscoveryError,
    _checked,
    _instance_of,
    instance_name,
    interfaces_for,
    service_type,
)
from ring.mdns.zeroconf_bridge import _in_thread, _zeroconf

# A burst of joins becomes one TXT update: each update costs the network
# a few packets, and a browser only needs the state once things settle.
UPDATE_DELAY: Final = 0.1
WITHDRAW_TIMEOUT: Final = 2.0
REGISTER_TIMEOUT: Final = 10.0  # probing alone takes ~1.6 s


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
