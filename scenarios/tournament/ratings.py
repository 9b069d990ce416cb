"""Rankings from results: Elo by maximum likelihood with 95 % intervals; Old Maid places.

Two-player games (``elo``): the Elo model says that A scores against B with
probability ``1 / (1 + 10 ** ((R_B - R_A) / 400))``; the ratings are the
ones under which the results seen are most likely (a draw counts as half a
win for each side), found by Newton's method, and their 95 % intervals come
from the curvature of that likelihood (the inverse of its Hessian), as
BayesElo and Ordo do. Each entrant also gets one virtual draw against a
rating-0 opponent (BayesElo's prior): an entrant that won or lost every game
then has a finite rating, with a wide interval. Ratings are relative to the
field's mean, which is 0.

Old Maid rings (``ring_standings``): the rate at which an entrant held the
Old Maid at the end, with a Wilson 95 % interval, and its mean place (1:
out first), with a normal 95 % interval.

Pure arithmetic, no I/O; the field of a class (tens of entrants) is solved
in pure Python in milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ELO_PER_NATURAL = 400 / math.log(10)  # Elo points per unit of the logistic's argument
Z95 = 1.959963984540054
PRIOR_DRAWS = 1.0  # virtual draws of each entrant against a rating-0 opponent
NEWTON_STEPS = 100
TOLERANCE = 1e-10


@dataclass(frozen=True)
class Rating:
    name: str
    elo: float  # relative to the field's mean
    low: float  # its 95 % interval
    high: float
    games: int
    score: float  # points: a win 1, a draw a half


@dataclass(frozen=True)
class Record:
    """One entrant's results against one opponent (or everyone): wins, draws, losses."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return self.wins + self.draws / 2

    def add(self, score: float) -> Record:
        if score == 1:
            return Record(self.wins + 1, self.draws, self.losses)
        if score == 0:
            return Record(self.wins, self.draws, self.losses + 1)
        if score == 0.5:
            return Record(self.wins, self.draws + 1, self.losses)
        raise ValueError(f"a game's score is 1, 0.5 or 0, not {score!r}")


Result = tuple[str, str, float]  # (first, second, the first's score: 1, 0.5 or 0)


def crosstable(names: Sequence[str], results: Iterable[Result]) -> dict[tuple[str, str], Record]:
    """Each ordered pair's record, from the first's side: ``table[a, b]`` is a against b."""
    table = {(a, b): Record() for a in names for b in names if a != b}
    for first, second, score in results:
        table[first, second] = table[first, second].add(score)
        table[second, first] = table[second, first].add(1 - score)
    return table


def totals(names: Sequence[str], table: Mapping[tuple[str, str], Record]) -> dict[str, Record]:
    """Each entrant's record against the whole field."""
    out = {}
    for name in names:
        rows = [table[name, other] for other in names if other != name]
        out[name] = Record(*(sum(getattr(r, f) for r in rows) for f in ("wins", "draws", "losses")))
    return out


def elo(names: Sequence[str], results: Iterable[Result]) -> list[Rating]:
    """The ratings, best first (ties keep the order of ``names``)."""
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    games = [[0.0] * n for _ in range(n)]  # games[i][j]: games between i and j
    points = [PRIOR_DRAWS / 2] * n  # i's points, the virtual draws' included
    played = [0] * n
    for first, second, score in results:
        i, j = index[first], index[second]
        games[i][j] += 1
        games[j][i] += 1
        points[i] += score
        points[j] += 1 - score
        played[i] += 1
        played[j] += 1
    theta = [0.0] * n
    for _ in range(NEWTON_STEPS):
        gradient, information = _derivatives(theta, games, points)
        step = _solve(information, gradient)
        theta = [t + max(-2.0, min(2.0, s)) for t, s in zip(theta, step, strict=True)]
        if max((abs(s) for s in step), default=0.0) < TOLERANCE:
            break
    _, information = _derivatives(theta, games, points)
    covariance = _inverse(information)
    mean = sum(theta) / n
    ratings = []
    for i, name in enumerate(names):
        # The variance of theta_i less the field's mean: v' C v with v = e_i - 1/n.
        v = [(1.0 if k == i else 0.0) - 1 / n for k in range(n)]
        variance = sum(v[a] * covariance[a][b] * v[b] for a in range(n) for b in range(n))
        half = Z95 * ELO_PER_NATURAL * math.sqrt(max(variance, 0.0))
        rating = ELO_PER_NATURAL * (theta[i] - mean)
        score = points[i] - PRIOR_DRAWS / 2
        ratings.append(Rating(name, rating, rating - half, rating + half, played[i], score))
    return sorted(ratings, key=lambda r: -r.elo)


def _derivatives(
    theta: list[float], games: list[list[float]], points: list[float]
) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient, and its Hessian negated (the information)."""
    n = len(theta)
    gradient = list(points)
    information = [[0.0] * n for _ in range(n)]
    for i in range(n):
        expected_prior = _logistic(theta[i])  # against the virtual opponent at 0
        gradient[i] -= PRIOR_DRAWS * expected_prior
        information[i][i] += PRIOR_DRAWS * expected_prior * (1 - expected_prior)
        for j in range(n):
            if i == j or not games[i][j]:
                continue
            p = _logistic(theta[i] - theta[j])
            gradient[i] -= games[i][j] * p
            weight = games[i][j] * p * (1 - p)
            information[i][i] += weight
            information[i][j] -= weight
    return gradient, information


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix x = vector (Gaussian elimination with partial pivoting)."""
    n = len(vector)
    rows = [[*matrix[i], vector[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        lead = rows[col][col]
        for r in range(col + 1, n):
            factor = rows[r][col] / lead
            if factor:
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (rows[r][n] - sum(rows[r][c] * x[c] for c in range(r + 1, n))) / rows[r][r]
    return x


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    n = len(matrix)
    columns = [_solve(matrix, [1.0 if r == c else 0.0 for r in range(n)]) for c in range(n)]
    return [[columns[c][r] for c in range(n)] for r in range(n)]


@dataclass(frozen=True)
class RingStanding:
    name: str
    rings: int
    losses: int  # rings it ended holding the Old Maid
    loss_rate: float
    loss_low: float  # Wilson 95 % interval
    loss_high: float
    mean_place: float  # 1: out first
    place_low: float  # normal 95 % interval (the mean itself with fewer than 2 rings)
    place_high: float


def ring_standings(names: Sequence[str], rings: Iterable[Sequence[str]]) -> list[RingStanding]:
    """Each ring's places, first out first and the loser last; the standings, best first
    (the lowest rate of losing, then the lowest mean place)."""
    finishes = []
    for order in rings:
        finishes += [(name, place, place == len(order)) for place, name in enumerate(order, 1)]
    return finish_standings(names, finishes)


def finish_standings(
    names: Sequence[str], finishes: Iterable[tuple[str, int, bool]]
) -> list[RingStanding]:
    """The standings from each entrant's finishes: (name, place, whether it lost that
    ring). A ring may have more than one loser: the one holding the Old Maid, and every
    player at fault."""
    places: dict[str, list[int]] = {name: [] for name in names}
    losses = dict.fromkeys(names, 0)
    for name, place, lost in finishes:
        places[name].append(place)
        losses[name] += lost
    standings = []
    for name in names:
        mine, lost = places[name], losses[name]
        count = len(mine)
        low, high = wilson(lost, count)
        mean = sum(mine) / count if count else math.nan
        half = 0.0
        if count >= 2:
            spread = math.sqrt(sum((p - mean) ** 2 for p in mine) / (count - 1))
            half = Z95 * spread / math.sqrt(count)
        rate = lost / count if count else math.nan
        standings.append(
            RingStanding(name, count, lost, rate, low, high, mean, mean - half, mean + half)
        )
    return sorted(standings, key=lambda s: (s.loss_rate, s.mean_place))


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """The Wilson score 95 % interval of a rate; (0, 1) with no trials."""
    if trials == 0:
        return 0.0, 1.0
    rate = successes / trials
    z2 = Z95 * Z95
    centre = (rate + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(rate * (1 - rate) / trials + z2 / (4 * trials * trials))
    half /= 1 + z2 / trials
    return max(0.0, centre - half), min(1.0, centre + half)
