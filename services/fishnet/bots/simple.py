"""Spot, bob and alice: a random request among the ranks they hold, narrowed by what
each remembers of the opponent's hand (nothing; the ranks it lacks; and the ranks
it holds). None of them ever passes."""

from __future__ import annotations

from services.fishnet.bots.base import Decision, Player, Seed


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
