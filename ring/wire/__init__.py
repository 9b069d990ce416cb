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

from ring.wire.lazy import exporter

# What the layers above use, and the module each comes from (loaded when first asked for).
_BY_MODULE = {
    "ring.wire.client": ("ClientError", "Conversation"),
    "ring.wire.flood": ("BadRun",),
    "ring.wire.framing": ("DEFAULT_MAX_MESSAGE",),
    "ring.wire.net": (
        "DEFAULT_MAX_CONNECTIONS", "DEFAULT_MAX_PER_ADDRESS", "Refusal", "answer_once", "dial",
        "listen", "mark_established", "wants_mdns",
    ),
    "ring.wire.sansio": ("Closed", "Invalid", "NEED_DATA", "NeedData"),
    "ring.wire.transport": ("Connection", "SEND_FAILED", "plain_ip", "take_lock"),
}
_EXPORTS = {name: module for module, names in _BY_MODULE.items() for name in names}
__all__ = sorted(_EXPORTS)

__getattr__ = exporter(__name__, _EXPORTS, globals())
