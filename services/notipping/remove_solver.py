"""The No Tipping REMOVE phase, solved exactly.

Only the board matters once every weight is placed: anyone may remove any
block, and who is to move follows from how many blocks are left. So the
REMOVE phase is solved by a win/lose search (``RemoveSolver``) over which of
the blocks on the board at its start are still there, a bitmask, with both
support torques updated by each block's precomputed part. Results are
remembered by the board itself (``board_code``: four bits a position), which
is the same state whatever game or search reached it, so one cache serves
every solve of a game and every leaf of the ADD search.

A deadline is ``time.perf_counter()`` seconds: the search looks at the clock
every few milliseconds and raises ``SearchTimeout`` once it has passed;
whatever it had proven stays cached.
"""

from __future__ import annotations

import time

from services.notipping.rules import (
    ADD,
    LOW,
    POSITIONS,
    Game,
    Remove,
    left_torque,
    right_torque,
)
from services.notipping.safety import _BITS, _removable, board_code

_CHECK = 2047  # the REMOVE search looks at the clock when the node count has these low bits clear


class SearchTimeout(Exception):
    """The deadline passed during a search."""


class RemoveSolver:
    """Exact win/lose search of the REMOVE phase, remembering every board it has solved.

    ``cache`` maps a ``board_code`` to whether the player to move there wins;
    it is emptied before a solve once it holds more than ``max_entries``.
    ``deadline`` (None: none) applies to every solve until changed.
    """

    def __init__(self, max_entries: int = 1_000_000) -> None:
        self.cache: dict[int, bool] = {}
        self.max_entries = max_entries
        self.deadline: float | None = None
        self.nodes = 0

    def wins(self, weights: tuple[int, ...] | list[int], left: int, right: int) -> bool:
        """Whether the player to move wins the REMOVE phase from this standing board."""
        cache = self.cache
        code = board_code(weights)
        known = cache.get(code)
        if known is not None:
            return known
        if len(cache) > self.max_entries:
            cache.clear()
        # Per block: its bit in the mask, what removing it takes off both torques and
        # off the board code. Removal is safe while left >= its part and right <= its part.
        blocks = [
            (
                1 << k,
                left_torque(weights[i], POSITIONS[i]),
                right_torque(weights[i], POSITIONS[i]),
                weights[i] << (_BITS * i),
            )
            for k, i in enumerate(i for i, weight in enumerate(weights) if weight)
        ]
        deadline = self.deadline
        nodes = self.nodes

        def search(mask: int, code: int, left: int, right: int) -> bool:
            nonlocal nodes
            nodes += 1
            if deadline is not None and not nodes & _CHECK and time.perf_counter() > deadline:
                raise SearchTimeout
            for bit, block_left, block_right, block_code in blocks:
                if mask & bit and left >= block_left and right <= block_right:
                    after = code - block_code
                    known = cache.get(after)
                    if known is None:
                        known = search(mask ^ bit, after, left - block_left, right - block_right)
                    if not known:
                        cache[code] = True
                        return True
            cache[code] = False
            return False

        try:
            return search((1 << len(blocks)) - 1, code, left, right)
        finally:
            self.nodes = nodes

    def solve(self, game: Game) -> bool:
        """Whether ``game.to_move`` wins ``game`` (in its REMOVE phase) with perfect play."""
        if game.phase == ADD or game.over:
            raise ValueError("solve takes a REMOVE-phase game that is not over")
        return self.wins(game.weights, game.left, game.right)

    def outcomes(self, game: Game) -> dict[Remove, bool]:
        """Every safe removal, and whether the player making it then wins."""
        found = {}
        weights = list(game.weights)
        for position in game.occupied():
            weight = game.weight_at(position)
            if not _removable(weight, position, game.left, game.right):
                continue
            i = position - LOW
            weights[i] = 0
            after_left = game.left - left_torque(weight, position)
            after_right = game.right - right_torque(weight, position)
            found[Remove(position)] = not self.wins(weights, after_left, after_right)
            weights[i] = weight
        return found


def solve_remove(game: Game, solver: RemoveSolver | None = None) -> bool:
    """Whether the player to move wins this REMOVE-phase game with perfect play."""
    return (solver or RemoveSolver()).solve(game)
