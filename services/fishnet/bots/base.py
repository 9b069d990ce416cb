"""What every built-in FishNet player shares: its hand, the public counts, and what
each server message reveals about the opponent's hand.

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

``Player`` keeps only the hand, the books and the counts; each strategy
(``simple``: spot, bob, alice; ``smarx``) keeps its own memory of the
opponent's hand through the ``_on_*`` hooks, and decides in ``_decide``.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.fishnet.rules import BOOK_SIZE, DECK_SIZE, HAND_SIZE, RANK_COUNT, RANKS

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
