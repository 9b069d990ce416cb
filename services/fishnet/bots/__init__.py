"""FishNet's four built-in computer players, as pure strategies: no I/O, no clock.

Weakest first, as the handout lists them: **spot**, **bob**, **alice**
(``simple``) and **smarx** (``smarx``), each a ``Player`` (``base``: the hand,
the public counts, one method per server message). ``make_player`` makes one
by name; ``play_game`` (``offline``) plays two against each other in one process.

A decision that may take long (smarx's endgame search) can be made apart
(``Player.search``), so the server runs it in a worker process and the
player decides by its quick rules when it does not come in time.
"""

from __future__ import annotations

from services.fishnet.bots.base import PASS, SEARCH_FAILED, Decision, Player, Seed
from services.fishnet.bots.offline import Listener, Outcome, play_game
from services.fishnet.bots.simple import Alice, Bob, Spot
from services.fishnet.bots.smarx import Smarx

COMPUTER_PLAYERS: dict[str, type[Player]] = {
    cls.name: cls for cls in (Spot, Bob, Alice, Smarx)
}  # weakest first, as the handout lists them


def make_player(name: str, seed: Seed = None) -> Player:
    """A built-in player by its (case-insensitive) name: spot, bob, alice or smarx."""
    return COMPUTER_PLAYERS[name.lower()](seed)


__all__ = [
    "COMPUTER_PLAYERS",
    "PASS",
    "SEARCH_FAILED",
    "Alice",
    "Bob",
    "Decision",
    "Listener",
    "Outcome",
    "Player",
    "Seed",
    "Smarx",
    "Spot",
    "make_player",
    "play_game",
]
