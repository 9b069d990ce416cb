"""mDNS on a LAN: tables advertise themselves, peers and players find them.

- ``zeroconf_bridge``: the process's one Zeroconf, bridged into Trio.
- ``dnssd``: DNS-SD names and records (service types, instance names, TXT).
- ``advertising``: a service registered, its TXT kept current, withdrawn.
- ``discovery``: what the services and the peer use: ``Advertiser``,
  ``start_advertising``, ``find_table``.
"""

from ring.wire.lazy import exporter

# What the layers above use, and the module each comes from (loaded when first asked for).
_BY_MODULE = {
    "ring.mdns.discovery": (
        "Advertiser", "DiscoveryError", "find_table", "interfaces_for", "oldmaid_txt",
        "start_advertising",
    ),
}
_EXPORTS = {name: module for module, names in _BY_MODULE.items() for name in names}
__all__ = sorted(_EXPORTS)

__getattr__ = exporter(__name__, _EXPORTS, globals())
