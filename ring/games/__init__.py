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

# What the layers above use, and the module each comes from.
_EXPORTS = {
    "EventLog": "ring.games.events",
    "GameKey": "ring.games.record",
    "Held": "ring.games.record",
    "Player": "ring.games.record",
    "RecordHub": "ring.games.record",
    "keyed_seed": "ring.games.seeds",
    "new_secret": "ring.games.seeds",
    "server_seed": "ring.games.seeds",
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
