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

from ring.wire.client import ClientError, Conversation
from ring.wire.flood import BadRun
from ring.wire.framing import DEFAULT_MAX_MESSAGE
from ring.wire.net import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_PER_ADDRESS,
    Refusal,
    answer_once,
    dial,
    listen,
    mark_established,
    wants_mdns,
)
from ring.wire.sansio import NEED_DATA, Closed, Invalid, NeedData
from ring.wire.transport import SEND_FAILED, Connection, plain_ip

__all__ = [
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_MAX_PER_ADDRESS",
    "NEED_DATA",
    "SEND_FAILED",
    "BadRun",
    "ClientError",
    "Closed",
    "Connection",
    "Conversation",
    "Invalid",
    "NeedData",
    "Refusal",
    "answer_once",
    "dial",
    "listen",
    "mark_established",
    "plain_ip",
    "wants_mdns",
]
