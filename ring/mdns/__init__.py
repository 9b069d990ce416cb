"""mDNS on a LAN: tables advertise themselves, peers and players find them.

- ``zeroconf_bridge``: the process's one Zeroconf, bridged into Trio.
- ``dnssd``: DNS-SD names and records (service types, instance names, TXT).
- ``advertising``: a service registered, its TXT kept current, withdrawn.
- ``discovery``: what the services and the peer use: ``Advertiser``,
  ``start_advertising``, ``find_table``.
"""

from ring.mdns.discovery import (
    Advertiser,
    DiscoveryError,
    find_table,
    interfaces_for,
    oldmaid_txt,
    start_advertising,
)

__all__ = [
    "Advertiser",
    "DiscoveryError",
    "find_table",
    "interfaces_for",
    "oldmaid_txt",
    "start_advertising",
]
