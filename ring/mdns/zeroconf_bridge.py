"""The process's one Zeroconf, bridged into Trio: what advertising and browsing share.

Zeroconf runs its own asyncio loop in a thread. Its blocking calls go
through ``trio.to_thread.run_sync``, and Trio stops waiting for one after
``THREAD_TIMEOUT``. One Zeroconf instance serves the whole process (it owns
UDP port 5353 state and the cache); it is created on first use and closed
when its last user is done, or at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import trio
from zeroconf import InterfaceChoice, IPVersion, Zeroconf

from ring.mdns.dnssd import ALL_INTERFACES, DiscoveryError

if TYPE_CHECKING:
    from zeroconf import InterfacesType

# zeroconf's blocking calls wait on its own event-loop thread; if that thread
# is wedged they never return, so Trio stops waiting after this long.
THREAD_TIMEOUT: Final = 5.0

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
