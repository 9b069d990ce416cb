"""mDNS on a LAN: tables advertise themselves, peers and players find them.

- ``zeroconf_bridge``: the process's one Zeroconf, bridged into Trio.
- ``dnssd``: DNS-SD names and records (service types, instance names, TXT).
- ``advertising``: a service registered, its TXT kept current, withdrawn.
- ``discovery``: what the services and the peer use: ``Advertiser``,
  ``start_advertising``, ``find_table``.
"""

# What the layers above use, and the module each comes from.
_EXPORTS = {
    "Advertiser": "ring.mdns.discovery",
    "DiscoveryError": "ring.mdns.discovery",
    "find_table": "ring.mdns.discovery",
    "interfaces_for": "ring.mdns.discovery",
    "oldmaid_txt": "ring.mdns.discovery",
    "start_advertising": "ring.mdns.discovery",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    # Loaded when first asked for (PEP 562), so that importing one module of this
    # package does not import them all: a peer's start stays as quick as before.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
