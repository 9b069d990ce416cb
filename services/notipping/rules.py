"""No Tipping as the server referees it: pure state, integers only, no I/O, no clock.

The lever (docs/protocols/notipping.md 4): positions -10..10, a 3 kg board
centred at 0 resting on supports at -3 and -1, and a 3 kg block at -4 from
the start. Each player holds weights 1..max_weight. The board tips when the net torque about either
support would turn it off that support:

    about -3 (the left support):  sum of w * (x + 3) < 0   tips to the left
    about -1 (the right support): sum of w * (x + 1) > 0   tips to the right

with the board (3 kg at 0) and every block counted. A torque of exactly 0
balances; it does not tip. Both sums are kept as integers and updated by
each move (``left``, ``right``); ``torques`` recomputes them from the board.

The game: player 0 moves first and turns alternate. While either player
still holds weights each move adds one (ADD); then each move removes any
block on the board, the initial block and the opponent's included (REMOVE).
A move that tips the board loses. The board alone tips to the right
(3 * (0 + 1) > 0), so the last removal always tips: every game ends, after
at most 4 * max_weight + 1 moves.

A move that is not allowed (a weight the player does not hold, a taken or
off-board position, an empty position in REMOVE, a move of the wrong phase)
raises ``InvalidMove``; the server turns that into ``INVALID;`` and a loss.
"""

from __future__ import annotations

from dataclasses import dataclass

LOW, HIGH = -10, 10
POSITIONS = tuple(range(LOW, HIGH + 1))  # the 21 marks, in the order of a state message
LEFT_SUPPORT, RIGHT_SUPPORT = -3, -1
BOARD_WEIGHT = 3  # at 0
INITIAL_BLOCK = (-4, 3)  # (position, weight), on the board from the start
DEFAULT_MAX_WEIGHT = 7
MAX_WEIGHT_LIMIT = 10
TABLE = -1  # the owner of the initial block: neither player

ADD, REMOVE = "ADD", "REMOVE"


class InvalidMove(ValueError):
    """A move the player to move may not make; the message says why, for the log."""


@dataclass(frozen=True)
class Add:
    weight: int
    position: int


@dataclass(frozen=True)
class Remove:
    position: int


Move = Add | Remove


def index(position: int) -> int:
    """Where ``position`` is in a state's 21 numbers."""
    return position - LOW


def left_torque(weight: int, position: int) -> int:
    """A weight's torque about the left support (-3); negative turns the board off it."""
    return weight * (position - LEFT_SUPPORT)


def right_torque(weight: int, position: int) -> int:
    """A weight's torque about the right support (-1); positive turns the board off it."""
    return weight * (position - RIGHT_SUPPORT)


def tips(left: int, right: int) -> bool:
    """Whether a board with these support torques falls; exactly 0 balances."""
    return left < 0 or right > 0


def torques(weights: tuple[int, ...]) -> tuple[int, int]:
    """Both support torques of a state (21 weights by position), the board included."""
    left = left_torque(BOARD_WEIGHT, 0)
    right = right_torque(BOARD_WEIGHT, 0)
    for position, weight in zip(POSITIONS, weights, strict=True):
        left += left_torque(weight, position)
        right += right_torque(weight, position)
    return left, right


def _initial_weights() -> tuple[int, ...]:
    weights = [0] * len(POSITIONS)
    position, weight = INITIAL_BLOCK
    weights[index(position)] = weight
    return tuple(weights)


@dataclass(frozen=True)
class Game:
    """A position of the game: the board, who owns each block, the hands, whose turn.

    ``weights[i]`` is the block at ``POSITIONS[i]`` (0: none) and
    ``owners[i]`` its owner (0, 1, ``TABLE``; ``None`` where there is no
    block). ``hands[p]`` are the weights player p has not placed yet.
    ``loser`` is set once a move has tipped the board.
    """

    max_weight: int
    weights: tuple[int, ...]
    owners: tuple[int | None, ...]
    hands: tuple[frozenset[int], frozenset[int]]
    to_move: int = 0
    moves_made: int = 0
    left: int = 0
    right: int = 0
    loser: int | None = None

    @classmethod
    def start(cls, max_weight: int = DEFAULT_MAX_WEIGHT) -> Game:
        if not 1 <= max_weight <= MAX_WEIGHT_LIMIT:
            raise ValueError(f"max weight is 1..{MAX_WEIGHT_LIMIT}, not {max_weight}")
        weights = _initial_weights()
        owners: list[int | None] = [None] * len(POSITIONS)
        owners[index(INITIAL_BLOCK[0])] = TABLE
        hand = frozenset(range(1, max_weight + 1))
        left, right = torques(weights)
        return cls(max_weight, weights, tuple(owners), (hand, hand), 0, 0, left, right)

    # -- where the game is ----------------------------------------------------

    @property
    def phase(self) -> str:
        return ADD if self.hands[0] or self.hands[1] else REMOVE

    @property
    def over(self) -> bool:
        return self.loser is not None

    @property
    def winner(self) -> int | None:
        return None if self.loser is None else 1 - self.loser

    @property
    def round(self) -> int:
        """The 1-based round of the move to make: a round is one move by each player."""
        return self.moves_made // 2 + 1

    def occupied(self) -> list[int]:
        return [p for p, w in zip(POSITIONS, self.weights, strict=True) if w]

    def free(self) -> list[int]:
        return [p for p, w in zip(POSITIONS, self.weights, strict=True) if not w]

    def weight_at(self, position: int) -> int:
        return self.weights[index(position)] if LOW <= position <= HIGH else 0

    def owner_at(self, position: int) -> int | None:
        return self.owners[index(position)] if LOW <= position <= HIGH else None

    # -- moves ------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """Every allowed move of the player to move, tipping ones included (they lose)."""
        if self.over:
            return []
        if self.phase == REMOVE:
            return [Remove(p) for p in self.occupied()]
        free = self.free()
        return [Add(w, p) for w in sorted(self.hands[self.to_move]) for p in free]

    def tips_after(self, move: Move) -> bool:
        """Whether ``move`` (assumed allowed) would tip the board."""
        if isinstance(move, Add):
            return tips(
                self.left + left_torque(move.weight, move.position),
                self.right + right_torque(move.weight, move.position),
            )
        weight = self.weight_at(move.position)
        return tips(
            self.left - left_torque(weight, move.position),
            self.right - right_torque(weight, move.position),
        )

    def check(self, move: Move) -> None:
        """Raise ``InvalidMove`` (saying why) unless the player to move may make ``move``."""
        if self.over:
            raise InvalidMove("the game is over")
        if isinstance(move, Add):
            if self.phase != ADD:
                raise InvalidMove("ADD in the remove phase: every weight has been placed")
            if not LOW <= move.position <= HIGH:
                raise InvalidMove(f"position {move.position} is off the board ({LOW}..{HIGH})")
            if move.weight not in self.hands[self.to_move]:
                if 1 <= move.weight <= self.max_weight:
                    raise InvalidMove(f"weight {move.weight} has already been placed")
                raise InvalidMove(f"there is no weight {move.weight} (1..{self.max_weight})")
            if self.weights[index(move.position)]:
                raise InvalidMove(f"position {move.position} is taken")
        else:
            if self.phase != REMOVE:
                raise InvalidMove("REMOVE in the add phase: weights are still to be placed")
            if not LOW <= move.position <= HIGH:
                raise InvalidMove(f"position {move.position} is off the board ({LOW}..{HIGH})")
            if not self.weights[index(move.position)]:
                raise InvalidMove(f"there is no block at position {move.position}")

    def play(self, move: Move) -> Game:
        """The game after ``move`` by the player to move; ``loser`` is set if it tipped."""
        self.check(move)
        player = self.to_move
        i = index(move.position)
        weights = list(self.weights)
        owners = list(self.owners)
        hands = list(self.hands)
        if isinstance(move, Add):
            weights[i] = move.weight
            owners[i] = player
            hands[player] = hands[player] - {move.weight}
            left = self.left + left_torque(move.weight, move.position)
            right = self.right + right_torque(move.weight, move.position)
        else:
            weight = weights[i]
            weights[i] = 0
            owners[i] = None
            left = self.left - left_torque(weight, move.position)
            right = self.right - right_torque(weight, move.position)
        return Game(
            self.max_weight,
            tuple(weights),
            tuple(owners),
            (hands[0], hands[1]),
            1 - player,
            self.moves_made + 1,
            left,
            right,
            player if tips(left, right) else None,
        )

    def forfeit(self, player: int) -> Game:
        """The game ended by ``player`` losing without a tipping move (invalid, timed out, gone)."""
        return Game(
            self.max_weight,
            self.weights,
            self.owners,
            self.hands,
            self.to_move,
            self.moves_made,
            self.left,
            self.right,
            player,
        )
