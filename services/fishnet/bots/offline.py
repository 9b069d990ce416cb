"""A whole FishNet game between two players in one process, with no server.

``play_game`` referees it with ``FishNetGame`` and talks to both players only
in protocol lines, as the server of docs/protocols/fishnet.md would, so
neither side can see a hidden card: the only path from the game to a player
is a string the real server would send that player. The benches and tests play the built-in
players against each other with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.fishnet.bots.base import Player
from services.fishnet.rules import BookMade, Dealt, FishNetGame, Passed, Requested, Result


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game between two players ended."""

    winner: int | None  # None for a tie
    books: tuple[int, int]  # books made by player 0 and player 1
    actions: int  # requests and passes

    def result(self, player: int) -> Result:
        if self.winner is None:
            return Result.TIE
        return Result.WIN if self.winner == player else Result.LOSE


Listener = Callable[[int, str], None]


def play_game(
    players: Sequence[Player],
    game: FishNetGame | int | str,
    *,
    youmake: bool = False,
    max_actions: int = 10_000,
    listener: Listener | None = None,
) -> Outcome:
    """Referee a whole game between ``players[0]`` and ``players[1]``.

    ``game`` is a freshly dealt game or its seed. Each player hears exactly the
    lines the server of docs/protocols/fishnet.md would send it (``youmake``
    as with ``--youmake``), and ``listener(player, line)``, if given, hears
    them too. A player's
    illegal reply raises ``RuleError``. Two players that passed forever with
    an empty deck would never finish, so more than ``max_actions`` requests
    and passes raise ``RuntimeError`` (none of the built-in players does that).
    """
    if not isinstance(game, FishNetGame):
        game = FishNetGame(game)

    def tell(player: int, line: str) -> str | None:
        if listener is not None:
            listener(player, line)
        return players[player].hear(line)

    def tell_books(player: int, books: Sequence[int]) -> None:
        for rank in books:
            if youmake:
                tell(player, f"youmake {rank}")
            tell(1 - player, f"oppmakes {rank}")

    for entry in game.deal_log:
        if isinstance(entry, Dealt):
            tell(entry.player, f"fish {entry.rank}")
        elif isinstance(entry, BookMade):
            tell_books(entry.player, [entry.rank])

    actions = 0
    while not game.over:
        if actions >= max_actions:
            raise RuntimeError(f"no end after {max_actions} actions")
        actions += 1
        player = game.turn
        assert player is not None
        reply = tell(player, "yourturn") or ""
        op, *args = reply.split()
        record: Requested | Passed
        if op == "request":
            record = game.request(player, int(args[0]))
            if record.given:
                tell(player, f"oppgives {record.given} {record.rank}")
            elif record.fished is not None:
                tell(player, f"fish {record.fished}")
            tell(1 - player, f"request {record.rank}")
        else:
            record = game.pass_turn(player)
            if record.fished is not None:
                tell(player, f"fish {record.fished}")
            tell(1 - player, "pass")
        tell_books(player, record.books)

    ending = {Result.WIN: "youwin", Result.LOSE: "youlose", Result.TIE: "tiegame"}
    for player in (0, 1):
        tell(player, ending[game.result(player)])
    books = (len(game.books(0)), len(game.books(1)))
    return Outcome(game.winner(), books, actions)
