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

from ring.games.events import EventLog
from ring.games.record import GameKey, Held, Player, RecordHub
from ring.games.seeds import keyed_seed, new_secret, server_seed

__all__ = ["EventLog", "GameKey", "Held", "Player", "RecordHub", "keyed_seed", "new_secret",
           "server_seed"]  # fmt: skip
