"""Which No Tipping moves leave the board standing, counted fast on bit masks.

A position is an index into ``rules.POSITIONS``; the free positions, and the
weights of a hand, are masks. For one weight the safe placements are an
interval (``safe_positions``). ``board_code`` is the board as one integer,
four bits a position: what the searches key their tables by.
"""

from __future__ import annotations

from services.notipping.rules import (
    ADD,
    LOW,
    Game,
    Move,
    left_torque,
    right_torque,
)

_BITS = 4  # bits of a position in a board code: weights are at most 10


def board_code(weights: tuple[int, ...] | list[int]) -> int:
    """The board as one integer, four bits a position: what the REMOVE cache is keyed by."""
    code = 0
    for i, weight in enumerate(weights):
        code |= weight << (_BITS * i)
    return code


def _span(low: int, high: int) -> int:
    """The positions low..high (clipped to the board) as a mask of indices."""
    low, high = max(low, LOW), min(high, -LOW)
    if low > high:
        return 0
    return ((1 << (high - LOW + 1)) - 1) ^ ((1 << (low - LOW)) - 1)


def safe_positions(weight: int, left: int, right: int, free: int) -> int:
    """The free positions (mask of indices) where ``weight`` can be added without tipping.

    The centre of mass has to stay between the supports, so for one weight the
    safe positions are an interval: ``left + w (x + 3) >= 0`` and
    ``right + w (x + 1) <= 0``.
    """
    return free & _span(-3 - left // weight, -1 + (-right) // weight)


def _removable(weight: int, position: int, left: int, right: int) -> bool:
    return left - left_torque(weight, position) >= 0 and right - right_torque(weight, position) <= 0


def _free_mask(game: Game) -> int:
    return sum(1 << i for i, weight in enumerate(game.weights) if not weight)


def _hand_mask(hand: frozenset[int]) -> int:
    return sum(1 << weight for weight in hand)


def _weights_of(hand: int) -> list[int]:
    return [w for w in range(hand.bit_length()) if hand >> w & 1]


def _mobility(hand: int, left: int, right: int, free: int) -> int:
    """How many safe placements a player holding ``hand`` (a mask of weights) has."""
    return sum(safe_positions(w, left, right, free).bit_count() for w in _weights_of(hand))


def safe_moves(game: Game) -> list[Move]:
    """The allowed moves of the player to move that do not tip the board."""
    return [move for move in game.legal_moves() if not game.tips_after(move)]


def count_safe(game: Game) -> int:
    """``len(safe_moves(game))``, counted without making the moves."""
    if game.over:
        return 0
    if game.phase == ADD:
        hand = _hand_mask(game.hands[game.to_move])
        return _mobility(hand, game.left, game.right, _free_mask(game))
    return sum(
        _removable(game.weight_at(position), position, game.left, game.right)
        for position in game.occupied()
    )
