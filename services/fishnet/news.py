"""What each FishNet player is told: the game's records as protocol messages.

The server's sans-IO core. ``News`` wraps a ``FishNetGame`` and answers
each action with the messages both seats get, in the order the server writes
them, so the Trio server only delivers them, and a test can check a whole
game without sockets. Every message a player gets follows from its own
view of the game (docs/protocols/fishnet.md "The game"):

- the deal: ``fish r`` for each card dealt to it, ``oppmakes r`` for each
  book the opponent made while being dealt (its own books it infers, or
  hears as ``youmake r`` with the later edition's option);
- a request: ``oppgives n r`` or ``fish r2`` (nothing when the deck is
  empty) to the requester, then ``request r`` to the opponent; a pass:
  ``fish r2`` to the passer if it passed last time too, then ``pass`` to
  the opponent; then the books the mover made;
- the end: ``youwin``/``youlose``/``tiegame`` by books.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from services.fishnet.protocol import (
    Fish,
    OppGives,
    OppMakes,
    Pass,
    Request,
    ServerMessage,
    TieGame,
    YouLose,
    YouMake,
    YouWin,
)
from services.fishnet.rules import BookMade, Dealt, FishNetGame, Passed, Requested, Result


@dataclass(frozen=True, slots=True)
class Tell:
    """Send ``message`` to the player in seat ``seat`` (0 or 1)."""

    seat: int
    message: ServerMessage


# What a player is told of its result.
ENDINGS = {Result.WIN: YouWin(), Result.LOSE: YouLose(), Result.TIE: TieGame()}


class News:
    """One game's messages: ``deal()`` once, ``act()`` per move, ``ending()`` at the end."""

    def __init__(self, game: FishNetGame, *, youmake: bool = False) -> None:
        self.game = game
        self.youmake = youmake

    def deal(self) -> list[Tell]:
        tells: list[Tell] = []
        for entry in self.game.deal_log:
            if isinstance(entry, Dealt):
                tells.append(Tell(entry.player, Fish(entry.rank)))
            elif isinstance(entry, BookMade):
                tells.extend(self._books(entry.player, [entry.rank]))
        return tells

    def act(self, seat: int, move: Request | Pass) -> list[Tell]:
        """Apply the player's move; ``RuleError`` (and nothing changes) if the rules refuse it."""
        record: Requested | Passed
        tells: list[Tell] = []
        if isinstance(move, Request):
            record = self.game.request(seat, move.rank)
            if record.given:
                tells.append(Tell(seat, OppGives(record.given, record.rank)))
            elif record.fished is not None:
                tells.append(Tell(seat, Fish(record.fished)))
            tells.append(Tell(1 - seat, Request(record.rank)))
        else:
            record = self.game.pass_turn(seat)
            if record.fished is not None:
                tells.append(Tell(seat, Fish(record.fished)))
            tells.append(Tell(1 - seat, Pass()))
        tells.extend(self._books(seat, record.books))
        return tells

    def ending(self) -> list[Tell]:
        """Each seat's result; only once the game is over (``game.stop()`` ends it early)."""
        return [Tell(seat, ENDINGS[self.game.result(seat)]) for seat in (0, 1)]

    def _books(self, seat: int, ranks: Iterable[int]) -> list[Tell]:
        tells = []
        for rank in ranks:
            if self.youmake:
                tells.append(Tell(seat, YouMake(rank)))
            tells.append(Tell(1 - seat, OppMakes(rank)))
        return tells
