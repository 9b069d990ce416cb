"""Who plays whom, in which seat, with which seed: every game of a tournament, in order.

The whole schedule is decided from the entrants, the format, the number of
games and the seed before the first game starts, so the same command always
gives the same games, numbered the same way: a tournament that stops
resumes by playing the numbers it has no result for, and its fingerprint
(``fingerprint``) tells a resume apart from a different tournament in the
same folder.

- **Round robin**: every pair plays ``games`` games, half with each colour
  (or seat). The games come in rounds (the circle method), so that at any
  moment each entrant has played about as many games as every other, and a
  round keeps ``entrants / 2`` games going at once with no one in two.
- **Gauntlet**: the first entrant plays every other one ``games`` games,
  half with each colour.
- **Old Maid rings**: ``games`` rings of ``ring_size`` entrants; each ring
  takes those who have played the fewest rings so far (the seed breaks
  ties), and seats them in an order drawn from the seed.

Each game's seed is a keyed hash of the tournament's seed and the game's
number (``ring.games.seeds.keyed_seed``): the server and the built-in players of
that game are seeded with it, so a game replays alone.
"""

from __future__ import annotations

import enum
import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from ring.games.seeds import keyed_seed

MAX_RING = 8  # an Old Maid table seats 2 to 8 players


class Format(enum.Enum):
    ROUND_ROBIN = "round-robin"
    GAUNTLET = "gauntlet"


class ScheduleError(ValueError):
    """A tournament that cannot be scheduled; the message says why, in one line."""


@dataclass(frozen=True)
class ScheduledGame:
    """One game: its number (from 1, the order games start in), its players in seat
    order (two-player games: the first moves first), and its seed."""

    number: int
    players: tuple[str, ...]
    seed: int

    @property
    def key(self) -> str:
        """The game's name in the tournament's folder: ``DIR/games/<key>.json``."""
        return f"{self.number:05d}"


def two_player(
    names: Sequence[str], games: int, seed: int, fmt: Format = Format.ROUND_ROBIN
) -> list[ScheduledGame]:
    """Every game of a round robin or a gauntlet; ``games``: how many a pair plays."""
    _check_names(names, least=2)
    if games < 2 or games % 2:
        raise ScheduleError(
            f"--games is how many games a pair plays, half with each colour: an even "
            f"number (2, 4, ...), not {games}"
        )
    legs = range(games)
    pairings: list[tuple[str, str]] = []
    if fmt is Format.GAUNTLET:
        first, *others = names
        for leg in legs:
            pairings += [(first, o) if leg % 2 == 0 else (o, first) for o in others]
    else:
        rounds = _circle_rounds(list(names))
        for leg in legs:
            for round_ in rounds:
                pairings += [(a, b) if leg % 2 == 0 else (b, a) for a, b in round_]
    return _numbered(pairings, seed)


def rings(names: Sequence[str], ring_size: int, games: int, seed: int) -> list[ScheduledGame]:
    """``games`` Old Maid rings of ``ring_size`` entrants each, everyone in about as many."""
    _check_names(names, least=2)
    if not 2 <= ring_size <= min(MAX_RING, len(names)):
        raise ScheduleError(
            f"--ring-size must be between 2 and {min(MAX_RING, len(names))} "
            f"(an Old Maid table seats 2 to {MAX_RING}; {len(names)} entrants)"
        )
    if games < 1:
        raise ScheduleError(f"--games is how many rings to play: at least 1, not {games}")
    rng = random.Random(keyed_seed(seed, "rings"))
    played = dict.fromkeys(names, 0)
    seatings: list[tuple[str, ...]] = []
    for _ in range(games):
        ties = {name: rng.random() for name in names}
        chosen = sorted(names, key=lambda name: (played[name], ties[name]))[:ring_size]
        for name in chosen:
            played[name] += 1
        seatings.append(tuple(rng.sample(chosen, ring_size)))
    return _numbered(seatings, seed)


def fingerprint(schedule: Sequence[ScheduledGame], **settings: object) -> str:
    """A short hash of the games and of whatever else decides them (the game, its limits):
    a folder holding another tournament's results is not resumed by mistake."""
    text = json.dumps(
        [[g.number, list(g.players), str(g.seed)] for g in schedule]
        + [sorted((key, str(value)) for key, value in settings.items())]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _circle_rounds(names: list[str]) -> list[list[tuple[str, str]]]:
    """The rounds of a single round robin (the circle method): each pair once, and in
    each round no one twice; with an odd number of entrants one sits out each round.
    The first name's colour alternates from round to round."""
    players: list[str | None] = [*names, None] if len(names) % 2 else list(names)
    n = len(players)
    rounds = []
    for number in range(n - 1):
        round_ = []
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            if a is None or b is None:
                continue
            round_.append((a, b) if (number + i) % 2 == 0 else (b, a))
        rounds.append(round_)
        players = [players[0], players[-1], *players[1:-1]]  # all but the first turn
    return rounds


def _numbered(seatings: Sequence[tuple[str, ...]], seed: int) -> list[ScheduledGame]:
    return [
        ScheduledGame(number, tuple(players), keyed_seed(seed, "game", number))
        for number, players in enumerate(seatings, start=1)
    ]


def _check_names(names: Sequence[str], least: int) -> None:
    if len(names) < least:
        raise ScheduleError(f"a tournament needs at least {least} entrants, not {len(names)}")
    seen: set[str] = set()
    for name in names:
        if not name or not name.isprintable() or any(c.isspace() for c in name):
            raise ScheduleError(f"an entrant's name is a word of printable characters: {name!r}")
        if name in seen:
            raise ScheduleError(f"two entrants are named {name!r}")
        seen.add(name)
