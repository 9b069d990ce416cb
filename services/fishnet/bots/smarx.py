"""Smarx, the strongest built-in player: full card accounting, every certain hit
first, and an exact search of the endgame (``services.fishnet.endgame``), which the
server runs in a worker process (``Player.search``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from services.fishnet import endgame
from services.fishnet.bots.base import (
    NOT_SEARCHED,
    PASS,
    SEARCH_FAILED,
    Decision,
    Player,
    Search,
    Seed,
)
from services.fishnet.rules import BOOK_SIZE, RANK_COUNT, RANKS

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
        booked = self.booked  # once: a property that builds two sets
        unknown = [0 if r in booked else BOOK_SIZE - self.hand[r] - self.known[r] for r in RANKS]
        pool = sum(unknown[r] for r in RANKS if r not in self.lacks)
        if slots <= 0 or pool <= 0:
            return 0.0
        return 1.0 - math.comb(pool - unknown[rank], slots) / math.comb(pool, slots)

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
