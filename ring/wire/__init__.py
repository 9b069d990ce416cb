"""The transport under every game: bytes on a TCP connection, to and from a sans-IO protocol.

- ``sansio``: what a protocol object is to the layer under it (bytes in,
  events out; ``NEED_DATA``, ``Closed``, ``Invalid``).
- ``framing``: a byte stream split into JSON objects (Old Maid, FishNet).
- ``transport``: ``Connection``, one connection and one protocol object,
  every wait bounded.
- ``net``: listening (``listen``: caps per address, eviction, refusal) and
  dialling (``dial``).
- ``flood``: the rule every server applies to a run of bad messages.
- ``burst_log``: log lines that come in bursts, at most one a second.
- ``client``: a game client's side of a conversation (``Conversation``).

The layers above import these names from here.
"""

# What the layers above use, and the module each comes from.
_EXPORTS = {
    "BadRun": "ring.wire.flood",
    "ClientError": "ring.wire.client",
    "Closed": "ring.wire.sansio",
    "Connection": "ring.wire.transport",
    "Conversation": "ring.wire.client",
    "DEFAULT_MAX_CONNECTIONS": "ring.wire.net",
    "DEFAULT_MAX_MESSAGE": "ring.wire.framing",
    "DEFAULT_MAX_PER_ADDRESS": "ring.wire.net",
    "Invalid": "ring.wire.sansio",
    "NEED_DATA": "ring.wire.sansio",
    "NeedData": "ring.wire.sansio",
    "Refusal": "ring.wire.net",
    "SEND_FAILED": "ring.wire.transport",
    "answer_once": "ring.wire.net",
    "dial": "ring.wire.net",
    "listen": "ring.wire.net",
    "mark_established": "ring.wire.net",
    "plain_ip": "ring.wire.transport",
    "wants_mdns": "ring.wire.net",
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
