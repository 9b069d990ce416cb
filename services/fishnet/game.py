"""One FishNet game as ``ring.games.match`` plays it: what a move does, what each seat is told,
every ending in FishNet's words.

``FishNetRules`` is made for one game, once its players, seed and built-in
seats are known. ``News`` turns the deal and each move into what both
seats are told: the deal is the match's opening, a move's news its
``Moved.tells`` (a mover that hit goes again: the game says whose turn it
is). A request the rules refuse gets ``error <reason>`` and ``yourturn``
again (``Again``), the clock running on, as often as it comes. A player that
cannot be told the deal or a move's news loses at once
(``Terms.untold_leaves``). Before each turn, ``max_moves`` requests and
passes end the game: both get ``error move_limit`` and the result by books.

A seat reports a player's ``quit`` or close, its own or its opponent's, as a
``Left`` event: the server reads both connections all the time, and a
leaver loses whoever's turn it is (``services.fishnet.server_game``). So the only
``Fault`` the match itself brings is ``TIMED_OUT`` (no answer to
``yourturn`` in ``move_timeout``) and ``LEFT`` (a write failed); a built-in
player is never on the clock and never refused.

Endings: the record's ``end`` reason (docs/protocols/fishnet.md) is the
verdict's ``reason``; the server's line (``GameReport``) takes its ``short``
one ("books", "move_limit", "<name> left", "<name> timed out").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ring.games.match import Again, Fault, Moved, Terms, Verdict
from ring.games.record import Player
from services.fishnet.news import ENDINGS, News, Tell
from services.fishnet.protocol import Error, Pass, Request, YourTurn
from services.fishnet.rules import FishNetGame, Result, RuleError
from services.fishnet.transcript import SERVICE

if TYPE_CHECKING:
    from services.fishnet.config import ServerConfig


@dataclass(frozen=True)
class GameReport:
    """How one game ended, as the server logs it."""

    number: int
    seed: str
    names: tuple[str, str]
    books: tuple[int, int]
    winner: int | None  # seat; None for a tie (or a game that never started)
    reason: str  # "books", "move_limit", "<name> left", "<name> timed out", "no opponent"

    @property
    def line(self) -> str:
        a, b = self.names
        if self.reason == "no opponent":
            return f"game {self.number}: {a} waited for {b}, who did not come"
        score = f"{a} {self.books[0]} - {self.books[1]} {b}"
        verdict = "tie" if self.winner is None else f"{self.names[self.winner]} wins"
        suffix = "" if self.reason == "books" else f" ({self.reason})"
        return f"game {self.number}: {score}: {verdict}{suffix}"


@dataclass(frozen=True)
class Left:
    """The player in ``seat`` left mid-game: it sent ``quit``, or its connection closed."""

    seat: int
    quit: bool


@dataclass(frozen=True)
class Ending(Verdict):
    """A verdict with FishNet's short reason, for ``GameReport``."""

    short: str = ""
    left: bool = False  # the culprit left: it is told nothing more


_BOOKS, _LIMIT = "books", "move_limit"


def _tells(tells: Sequence[Tell]) -> list[tuple[int, Any]]:
    return [(tell.seat, tell.message) for tell in tells]


class FishNetRules:
    """FishNet's side of one ``ring.games.match.Match``; the state is the game's ``FishNetGame``."""

    service = SERVICE

    def __init__(
        self,
        config: ServerConfig,
        news: News,
        *,
        names: Sequence[str],
        seed: str,
        bots: Sequence[bool],
    ) -> None:
        self.config = config
        self.news = news
        self.names = tuple(names)
        self.seed = seed
        self.bots = tuple(bots)  # which seats are built-in players
        self.terms = Terms(
            move_time=config.move_timeout,
            send_timeout=config.send_timeout,
            attempts=math.inf,
            untold_leaves=True,
        )

    def begun(self, game: FishNetGame) -> dict[str, Any]:
        """The ``deal`` record: who moves first, and which seats are built in."""
        return {"event": "deal", "first": game.first_player, "bots": list(self.bots)}

    def books(self, game: FishNetGame) -> tuple[int, int]:
        return len(game.books(0)), len(game.books(1))

    def options(self, game: FishNetGame) -> dict[str, Any]:
        return self.config.game_options()

    def who(self, seat: int, name: str) -> Player:
        return Player(name, seat=seat)

    def tags(self, seat: int, name: str) -> dict[str, Any]:
        return {}  # each seat tags its own lines (a connection's carry its number and peer)

    def opening(self, game: FishNetGame, number: int) -> list[tuple[int, Any]]:
        return _tells(self.news.deal())

    def verdict(self, game: FishNetGame) -> Verdict | None:
        if game.over:
            return Ending(game.winner(), "by books", short=_BOOKS)
        limit = self.config.max_moves
        if game.moves < limit:
            return None
        mine, theirs = self.books(game)
        winner = None if mine == theirs else (0 if mine > theirs else 1)
        reason = f"the move limit ({limit} requests and passes): by books"
        return Ending(winner, reason, short=_LIMIT)

    def to_move(self, game: FishNetGame) -> int:
        seat = game.turn
        assert seat is not None
        return seat

    def prompt(self, game: FishNetGame, seat: int) -> YourTurn:
        return YourTurn()

    def judge(
        self, game: FishNetGame, seat: int, event: Any
    ) -> Moved[FishNetGame] | Again | Verdict:
        if isinstance(event, Left):
            name = self.names[event.seat]
            how = " quit" if event.quit else "'s connection closed"
            return self._lost(event.seat, f"{name}{how}", left=True)
        assert isinstance(event, Request | Pass), event
        try:
            tells = self.news.act(seat, event)
        except RuleError as exc:
            if self.bots[seat]:
                raise  # a built-in player's refused move is a bug
            return Again([(seat, Error(exc.reason))])
        return Moved(game, None, _tells(tells))

    def forfeit(self, seat: int, fault: Fault) -> Verdict:
        name = self.names[seat]
        if fault is Fault.TIMED_OUT:
            timeout = self.config.move_timeout
            return self._lost(seat, f"{name} timed out: no answer to yourturn in {timeout:g} s")
        # Fault.LEFT: a write to it failed (REFUSED and FLOODED never come)
        why = "could not be told: it stopped reading, or its connection closed"
        return self._lost(seat, f"{name} {why}", left=True)

    def _lost(self, seat: int, reason: str, *, left: bool = False) -> Ending:
        short = f"{self.names[seat]} {'left' if left else 'timed out'}"
        return Ending(1 - seat, reason, seat, short=short, left=left)

    def farewell(self, verdict: Verdict) -> list[tuple[int, Any]]:
        assert isinstance(verdict, Ending)
        if verdict.culprit is None:  # by books, at the end or at the move limit
            told = [(0, Error(_LIMIT)), (1, Error(_LIMIT))] if verdict.short == _LIMIT else []
            self.news.game.stop()  # at the move limit; already over by books
            return [*told, *_tells(self.news.ending())]
        loser, winner = verdict.culprit, 1 - verdict.culprit
        if verdict.left:
            return [(winner, Error("opponent_left")), (winner, ENDINGS[Result.WIN])]
        return [
            (loser, Error("move_timeout")),
            (loser, ENDINGS[Result.LOSE]),
            (winner, Error("opponent_timed_out")),
            (winner, ENDINGS[Result.WIN]),
        ]

    def details(self, game: FishNetGame, verdict: Verdict | None) -> dict[str, Any]:
        return {"books": list(self.books(game))}

    def report(
        self, number: int, names: tuple[str, str], game: FishNetGame, verdict: Verdict
    ) -> GameReport:
        assert isinstance(verdict, Ending)
        return GameReport(number, self.seed, names, self.books(game), verdict.winner, verdict.short)
