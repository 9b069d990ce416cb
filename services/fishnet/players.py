"""FishNet's four built-in computer players, as pure strategies: no I/O, no clock.

A player knows only what a network client is told. Its inputs are the
server's messages, one method each, so the server (or a test) can drive it
line by line through ``hear``:

================  =========================  ==========================================
message           method                     meaning
================  =========================  ==========================================
``fish r``        ``fished(r)``              a card for me: the deal, a fish, a pass-fish
``oppgives n r``  ``got(n, r)``              my request hit; n cards of r are mine now
``oppmakes r``    ``opponent_booked(r)``     the opponent completed the book of r
``request r``     ``opponent_asked(r)``      the opponent takes all my r (returns how many)
``pass``          ``opponent_passed()``      the opponent passed
``youmake r``     ``booked_own(r)``          optional: my book (inferred anyway)
``yourturn``      ``choose()``               my decision: ``Decision`` (request r, or pass)
================  =========================  ==========================================

Everything else is inferred the way a client must infer it: my own books
(four of a rank), the deck size and the opponent's hand size (counted), that
the opponent fished (it asked for a rank I lacked while the deck had cards,
or passed twice running), and that its fish was the rank it asked for (it
moved again before my next ``yourturn``).

A decision that may take long (smarx's endgame search) can be made apart:
``search()`` gives it as a pure function and its arguments (``Search``), which
the server runs in a worker process, and ``choose(searched)`` then takes its
result (or ``SEARCH_FAILED`` when it did not come in time, and the player
decides by its quick rules instead). Called without it, ``choose`` runs the
search itself, so a game played in one process is the same game.

``play_game`` referees a whole game with ``FishNetGame`` and talks to both
players only in those protocol lines, as WIRE.md's server would, so neither
side can see a hidden card: the only path from the game to a player is a
string the real server would send that player.
"""

from __future__ import annotations

import enum
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.fishnet import endgame
from services.fishnet.rules import (
    BOOK_SIZE,
    DECK_SIZE,
    HAND_SIZE,
    RANK_COUNT,
    RANKS,
    BookMade,
    Dealt,
    FishNetGame,
    Passed,
    Requested,
    Result,
)

# The deck once both hands are dealt; the game cannot end during the deal.
_STOCK_AFTER_DEAL = DECK_SIZE - 2 * HAND_SIZE


@dataclass(frozen=True, slots=True)
class Decision:
    """A reply to ``yourturn``: request ``rank``, or pass when ``rank`` is None."""

    rank: int | None

    @property
    def is_pass(self) -> bool:
        return self.rank is None

    def line(self) -> str:
        """The protocol line that carries this decision."""
        return "pass" if self.rank is None else f"request {self.rank}"


PASS = Decision(None)

Seed = int | str | random.Random | None


@dataclass(frozen=True, slots=True)
class Search:
    """Work a decision needs that may take long: ``function(*args)``, pure and picklable."""

    function: Callable[..., object]
    args: tuple[object, ...]

    def run(self) -> object:
        return self.function(*self.args)


class _Searched(enum.Enum):
    NOT_RUN = "not run"  # choose() runs the search itself
    FAILED = "failed"  # it did not come in time: decide without it


NOT_SEARCHED = _Searched.NOT_RUN
SEARCH_FAILED = _Searched.FAILED


class Player:
    """What every computer player keeps: its hand and the public counts.

    Subclasses decide (``_decide``) and may listen to the ``_on_*`` hooks,
    which the base class calls with what the messages reveal about the
    opponent's hand; the base class stores nothing of the opponent but sizes
    and books.
    """

    name = "player"

    def __init__(self, seed: Seed = None) -> None:
        self.rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        self.hand = [0] * RANK_COUNT  # own cards, indexed by rank
        self.books: list[int] = []
        self.opponent_books: list[int] = []
        self.passed_last = False  # my last action was a pass, so a pass now would fish
        self._cards_received = 0  # every ``fish``: seven dealt, then my fishes
        self._opponent_fishes = 0
        self._opponent_gained = 0  # cards the opponent took from me
        self._opponent_lost = 0  # cards it gave me or booked
        self._opponent_passed_last = False
        self._asking: int | None = None  # my request awaiting ``oppgives`` or ``fish``
        # The opponent asked for this rank, missed and fished: if it moves again
        # before my turn comes, the card it fished was this rank.
        self._opponent_fishing_for: int | None = None
        self._searched: object = NOT_SEARCHED  # during choose(): a search's result, if given

    # -- public counts ----------------------------------------------------------------

    @property
    def deck_size(self) -> int:
        """Cards left to fish (once the deal is over)."""
        my_fishes = max(0, self._cards_received - HAND_SIZE)
        return _STOCK_AFTER_DEAL - my_fishes - self._opponent_fishes

    @property
    def opponent_hand_size(self) -> int:
        return HAND_SIZE + self._opponent_fishes + self._opponent_gained - self._opponent_lost

    @property
    def ranks_held(self) -> tuple[int, ...]:
        return tuple(rank for rank in RANKS if self.hand[rank])

    @property
    def booked(self) -> frozenset[int]:
        return frozenset(self.books) | frozenset(self.opponent_books)

    # -- observations: one per server message -----------------------------------------

    def fished(self, rank: int) -> None:
        """``fish r``: a card dealt to me, fished after a miss, or fished by a second pass."""
        self._cards_received += 1
        if self._asking is not None:
            # A fish answers my request only when the opponent had none.
            self._on_opponent_lacks(self._asking)
            self._asking = None
        self._add(rank, 1)

    dealt = fished  # the deal is told with the same message

    def got(self, count: int, rank: int) -> None:
        """``oppgives n r``: my request for ``rank`` took ``count`` cards."""
        self._asking = None
        self._opponent_lost += count
        self._on_opponent_gave(rank, count)
        self._add(rank, count)

    def opponent_booked(self, rank: int) -> None:
        """``oppmakes r``."""
        self.opponent_books.append(rank)
        self._opponent_lost += BOOK_SIZE
        self._on_booked(rank)

    def opponent_asked(self, rank: int) -> int:
        """``request r``: the opponent takes every ``rank`` I hold; how many that was."""
        self._opponent_moved_again()
        self._opponent_passed_last = False
        self._on_opponent_shows(rank)
        given = self.hand[rank]
        self.hand[rank] = 0
        if given:
            self._opponent_gained += given
            self._on_opponent_took(rank, given)
        elif self.deck_size > 0:
            self._opponent_fishes += 1
            self._opponent_fishing_for = rank
            self._on_opponent_drew()
        return given

    def opponent_passed(self) -> None:
        """``pass``: a pass after a pass fishes a card I cannot see."""
        self._opponent_moved_again()
        if self._opponent_passed_last and self.deck_size > 0:
            self._opponent_fishes += 1
            self._on_opponent_drew()
        self._opponent_passed_last = True

    def booked_own(self, rank: int) -> None:
        """``youmake r`` (a server option): already known from my own hand."""
        assert rank in self.books, rank

    def search(self) -> Search | None:
        """The long work my next decision needs, to run elsewhere; None if it needs none."""
        return None

    def choose(self, searched: object = NOT_SEARCHED) -> Decision:
        """``yourturn``: request a rank I hold, or pass.

        ``searched`` is what ``search()``'s function returned when run
        elsewhere, or ``SEARCH_FAILED``; by default the player searches itself.
        """
        # My turn came: whatever the opponent fished last was not what it asked for.
        self._opponent_fishing_for = None
        self._searched = searched
        try:
            decision = self._decide()
        finally:
            self._searched = NOT_SEARCHED
        if decision.rank is not None and not self.hand[decision.rank]:
            raise AssertionError(f"{self.name} chose rank {decision.rank}, which it does not hold")
        self.passed_last = decision.is_pass
        self._asking = decision.rank
        if decision.rank is not None:
            self._on_asking(decision.rank)
        return decision

    def hear(self, line: str) -> str | None:
        """Take one server line; the reply line for ``yourturn``, else None."""
        op, *args = line.split()
        numbers = [int(arg) for arg in args] if op != "error" else []
        if op == "fish":
            self.fished(numbers[0])
        elif op == "oppgives":
            self.got(numbers[0], numbers[1])
        elif op == "oppmakes":
            self.opponent_booked(numbers[0])
        elif op == "request":
            self.opponent_asked(numbers[0])
        elif op == "pass":
            self.opponent_passed()
        elif op == "youmake":
            self.booked_own(numbers[0])
        elif op == "yourturn":
            return self.choose().line()
        # error, youwin, youlose, tiegame: nothing to track
        return None

    # -- what subclasses define -------------------------------------------------------

    def _decide(self) -> Decision:
        raise NotImplementedError

    def _on_opponent_shows(self, rank: int) -> None:
        """The opponent asked for ``rank``, so it holds at least one."""

    def _on_opponent_took(self, rank: int, count: int) -> None:
        """The opponent took ``count`` of my ``rank``."""

    def _on_opponent_gave(self, rank: int, count: int) -> None:
        """My request took all the opponent's ``rank``: it holds none now."""

    def _on_opponent_lacks(self, rank: int) -> None:
        """My request for ``rank`` missed: the opponent holds none."""

    def _on_opponent_drew(self) -> None:
        """The opponent fished a card I cannot see."""

    def _on_opponent_drew_rank(self, rank: int) -> None:
        """The card the opponent fished was ``rank`` (it moved again)."""

    def _on_booked(self, rank: int) -> None:
        """Either player completed ``rank``."""

    def _on_asking(self, rank: int) -> None:
        """I request ``rank``: the opponent now knows I hold it."""

    # -- helpers ----------------------------------------------------------------------

    def _add(self, rank: int, count: int) -> None:
        self.hand[rank] += count
        if self.hand[rank] >= BOOK_SIZE:
            self.hand[rank] = 0
            self.books.append(rank)
            self._on_booked(rank)

    def _opponent_moved_again(self) -> None:
        rank, self._opponent_fishing_for = self._opponent_fishing_for, None
        if rank is not None and rank not in self.booked:
            self._on_opponent_drew_rank(rank)

    def _most_held(self, ranks: Sequence[int]) -> int:
        top = max(self.hand[rank] for rank in ranks)
        return self.rng.choice([rank for rank in ranks if self.hand[rank] == top])


class Spot(Player):
    """Spot asks for a rank chosen at random among those it holds.

    It remembers nothing and never passes: every request is a fair draw from
    its own ranks, so it gives away as much as it learns, which is nothing.
    """

    name = "spot"

    def _decide(self) -> Decision:
        return Decision(self.rng.choice(self.ranks_held))


class Bob(Player):
    """Bob asks for a random rank he holds, never one the opponent is known to lack.

    He keeps one list: the ranks the opponent has said it lacks (his request
    missed, or took every card of the rank), each until the opponent asks for
    that rank itself (it fished one since) or a book of it is made. He picks at
    random among the ranks he holds that are not on the list; when every rank
    he holds is on it, at random among them all. He never passes. That one
    memory is what lifts him above spot: spot keeps asking for ranks the
    opponent has just said it lacks.
    """

    name = "bob"

    def __init__(self, seed: Seed = None) -> None:
        super().__init__(seed)
        self.lacked: set[int] = set()  # ranks the opponent lacked when last seen

    def _decide(self) -> Decision:
        return Decision(self.rng.choice(self._fresh()))

    def _fresh(self) -> list[int]:
        """The ranks I hold that the opponent has not said it lacks, else every rank I hold."""
        fresh = [rank for rank in self.ranks_held if rank not in self.lacked]
        return fresh or list(self.ranks_held)

    def _on_opponent_lacks(self, rank: int) -> None:
        self.lacked.add(rank)

    def _on_opponent_gave(self, rank: int, count: int) -> None:
        self.lacked.add(rank)

    def _on_opponent_shows(self, rank: int) -> None:
        self.lacked.discard(rank)

    def _on_booked(self, rank: int) -> None:
        self.lacked.discard(rank)


class Alice(Bob):
    """Alice has bob's list, remembers what the opponent holds, and asks for her largest holding.

    Beside bob's list of ranks the opponent lacks, she remembers each rank the
    opponent is known to hold (it asked for the rank) until it hands those
    cards over or a book of the rank is made. On
    her turn she asks for a remembered rank she holds, which cannot miss; with
    none, for the rank she holds most of among those not on bob's list (ties at
    random), aiming at the hit that completes a book; when every rank she holds
    is on the list, the one she holds most of. She never passes.
    """

    name = "alice"

    def __init__(self, seed: Seed = None) -> None:
        super().__init__(seed)
        self.memory: set[int] = set()  # ranks the opponent is known to hold

    def _decide(self) -> Decision:
        remembered = [rank for rank in self.ranks_held if rank in self.memory]
        return Decision(self._most_held(remembered or self._fresh()))

    def _on_opponent_shows(self, rank: int) -> None:
        super()._on_opponent_shows(rank)
        self.memory.add(rank)

    def _on_opponent_gave(self, rank: int, count: int) -> None:
        super()._on_opponent_gave(rank, count)
        self.memory.discard(rank)

    def _on_opponent_lacks(self, rank: int) -> None:
        super()._on_opponent_lacks(rank)
        self.memory.discard(rank)

    def _on_booked(self, rank: int) -> None:
        super()._on_booked(rank)
        self.memory.discard(rank)


# Smarx searches the rest of the game exactly once the deck is this small, and
# only while both hands together hold at most _ENDGAME_CARDS: with more (a
# hoarding opponent such as bob) one search could take seconds, and a ladder
# of 2,000 smarx-bob games measured the same strength with the cap (66.8 %
# wins) as without it (67.1 %), in a quarter of the time.
_ENDGAME_DECK = 2
_ENDGAME_CARDS = 22


class Smarx(Player):
    """Smarx keeps full card accounting, takes every certain hit, and solves the endgame.

    It counts the cards of each rank the opponent must hold (it asked for the
    rank, took Smarx's cards of it, or was seen to fish it), the ranks it
    certainly lacks (Smarx just missed on them or took them all, and the
    opponent has not fished since), and the ranks it lacked when last seen
    (until it asks for them). Every other card not in Smarx's hand and not
    booked is unknown and lies in the opponent's hand or the deck. Smarx first
    asks for ranks the opponent must hold, the one nearest a book first.
    While the deck has more than two cards it then asks for the rank it holds
    most of among those the opponent has not been seen to lack (a hit there
    completes or nearly completes a book). With two cards or fewer left (and
    at most 22 cards in the two hands, which keeps each search short) it
    weighs every way the unknown cards can lie between the deck and the
    opponent's hand (hypergeometric weights) and, for each, searches the rest
    of the game exactly (every request, every pass, every order of the deck,
    both sides playing their best), and picks the request, or the pass, with
    the highest expected result (a win 1, a tie 1/2). So it passes only where
    the search finds a pass worth more than every request (rare in play), and
    it avoids ending the game while behind.
    """

    name = "smarx"

    def __init__(self, seed: Seed = None) -> None:
        super().__init__(seed)
        self.known = [0] * RANK_COUNT  # cards of each rank the opponent must hold
        self.lacks: set[int] = set()  # ranks the opponent certainly holds none of
        self.lacked: set[int] = set()  # ranks it lacked when last seen (it may have fished one)

    # -- accounting -------------------------------------------------------------------

    def _on_opponent_shows(self, rank: int) -> None:
        self.known[rank] = max(self.known[rank], 1)
        self.lacks.discard(rank)
        self.lacked.discard(rank)

    def _on_opponent_took(self, rank: int, count: int) -> None:
        self.known[rank] += count

    def _on_opponent_gave(self, rank: int, count: int) -> None:
        self.known[rank] = 0
        self.lacks.add(rank)
        self.lacked.add(rank)

    def _on_opponent_lacks(self, rank: int) -> None:
        self.known[rank] = 0
        self.lacks.add(rank)
        self.lacked.add(rank)

    def _on_opponent_drew(self) -> None:
        self.lacks.clear()  # the unseen card may be any rank

    def _on_opponent_drew_rank(self, rank: int) -> None:
        self.known[rank] += 1

    def _on_booked(self, rank: int) -> None:
        self.known[rank] = 0
        self.lacks.discard(rank)
        self.lacked.discard(rank)

    def unknown(self, rank: int) -> int:
        """Cards of ``rank`` whose place (the opponent's hand or the deck) is unknown."""
        if rank in self.booked:
            return 0
        return BOOK_SIZE - self.hand[rank] - self.known[rank]

    def hit_chance(self, rank: int) -> float:
        """The probability that the opponent holds at least one card of ``rank``."""
        if self.known[rank]:
            return 1.0
        if rank in self.lacks:
            return 0.0
        # The opponent's unknown cards are drawn from the unknown cards of the
        # ranks it may hold; those of ranks it lacks are all in the deck.
        slots = self.opponent_hand_size - sum(self.known)
        pool = sum(self.unknown(r) for r in RANKS if r not in self.lacks)
        if slots <= 0 or pool <= 0:
            return 0.0
        return 1.0 - math.comb(pool - self.unknown(rank), slots) / math.comb(pool, slots)

    # -- the decision -----------------------------------------------------------------

    def _in_endgame(self) -> bool:
        return (
            self.deck_size <= _ENDGAME_DECK
            and sum(self.hand) + self.opponent_hand_size <= _ENDGAME_CARDS
        )

    def search(self) -> Search | None:
        if not self._in_endgame():
            return None
        unknown = tuple(self.unknown(rank) for rank in RANKS)
        lacks = frozenset(rank for rank in self.lacks if unknown[rank])
        lead = len(self.books) - len(self.opponent_books)
        return Search(
            endgame.endgame_values,
            (tuple(self.hand), tuple(self.known), unknown, lacks, self.deck_size,
             self.opponent_hand_size, lead, self.passed_last, self._opponent_passed_last),
        )  # fmt: skip

    def _decide(self) -> Decision:
        if self._in_endgame():
            decision = self._endgame()
            if decision is not None:
                return decision
        held = self.ranks_held
        certain = [rank for rank in held if self.known[rank]]
        if certain:
            return Decision(self._best(certain, lambda r: self.hand[r] + self.known[r]))
        fresh = [rank for rank in held if rank not in self.lacked]
        return Decision(self._best(fresh or held, self._score))

    def _score(self, rank: int) -> float:
        if rank in self.lacks:
            return self.hand[rank] - BOOK_SIZE  # below any rank that might hit
        # Hand counts are whole numbers and a chance is below 1, so the chance only breaks ties.
        return self.hand[rank] + self.hit_chance(rank) / 2

    def _endgame(self) -> Decision | None:
        """The best request or pass by exact search over every consistent deal; None if none
        is (or the search, run elsewhere, did not come in time)."""
        searched = self._searched
        if searched is NOT_SEARCHED:
            search = self.search()
            assert search is not None
            searched = search.run()
        if searched is SEARCH_FAILED or searched is None:
            return None
        assert isinstance(searched, dict)
        top = max(searched.values())
        best = [action for action, value in searched.items() if value >= top * (1 - 1e-9)]
        requests = [rank for rank in best if rank is not None]
        if requests:
            return Decision(self._best(requests, self._score))
        return PASS

    def _best(self, ranks: Sequence[int], score: Callable[[int], float]) -> int:
        scores = {rank: score(rank) for rank in ranks}
        top = max(scores.values())
        return self.rng.choice([rank for rank, value in scores.items() if value >= top - 1e-9])


COMPUTER_PLAYERS: dict[str, type[Player]] = {
    cls.name: cls for cls in (Spot, Bob, Alice, Smarx)
}  # weakest first, as the handout lists them


def make_player(name: str, seed: Seed = None) -> Player:
    """A built-in player by its (case-insensitive) name: spot, bob, alice or smarx."""
    return COMPUTER_PLAYERS[name.lower()](seed)


# -- a whole game -----------------------------------------------------------------------


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
    lines WIRE.md's server would send it (``youmake`` as with ``--youmake``),
    and ``listener(player, line)``, if given, hears them too. A player's
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
