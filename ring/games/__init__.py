"""What every game shares above the transport: the two-player match, its lobby, the records.

- ``match``: one two-player match (a game's ``Rules``, ``Terms``, turns on a
  ``clock``, the ``Verdict``, the record); ``seat``: who sits in a seat.
- ``lobby``: a two-player server (connections in, seats filled, matches).
- ``record``: one game record for every service, and the in-process
  ``RecordHub``; ``transcripts`` writes them to files, ``spectators`` fans
  them out to viewers; ``events``: the peers' JSON-lines event logs.
- ``seeds``: where a game's seed comes from; ``workers``: CPU-heavy work in
  worker processes, under a deadline.
"""

from ring.wire.lazy import exporter

# What the layers above use, and the module each comes from (loaded when first asked for).
_BY_MODULE = {
    "ring.games.events": ("EventLog",),
    "ring.games.record": ("GameKey", "Held", "Player", "RecordHub"),
    "ring.games.seeds": ("keyed_seed", "new_secret", "server_seed"),
}
_EXPORTS = {name: module for module, names in _BY_MODULE.items() for name in names}
__all__ = sorted(_EXPORTS)

__getattr__ = exporter(__name__, _EXPORTS, globals())
