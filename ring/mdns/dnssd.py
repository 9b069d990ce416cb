"""DNS-SD names and records: service types, instance names, interfaces, what a browser finds.

Pure: no zeroconf, no sockets. ``ring.mdns.advertising`` and ``ring.mdns.discovery``
build on these, and re-export what the rest of the project uses.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

# A kind is a service's declared name (ring.cli.registry.Service.name); its
# DNS-SD type is "_<kind>._tcp.local.", and a DNS-SD service name is at most
# 15 characters (RFC 6763, 7.2).
_KIND = re.compile(r"[a-z][a-z0-9]{0,14}")
# The protocol version a client of each kind speaks: the TXT key ``v``.
PROTOCOL_VERSION: Final = "1"

# Passed as ``interfaces``: every interface of the host (the product on a LAN).
ALL_INTERFACES: Final[tuple[str, ...]] = ("0.0.0.0",)
DEFAULT_NAME: Final = "table"
_ID = re.compile(r"[0-9a-f]{8}")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


class DiscoveryError(Exception):
    """mDNS could not be used, or found nothing; one line for the user."""


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
