"""A tournament's finished games in its folder, and the tables made of them.

Each finished game is one file, ``DIR/games/<key>.json`` (``GameResult``),
written whole or not at all (a temporary file renamed over the name: a kill
or a reboot mid-write leaves the old state, never half a result), so a
resumed tournament counts every game once. ``standings`` turns the results
into the ranking, the crosstable and each entrant's figures, and
``markdown``/``csv_rows`` write them out.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from scenarios.tournament.ratings import (
    Rating,
    Record,
    RingStanding,
    crosstable,
    elo,
    finish_standings,
    totals,
)


class GameResult(msgspec.Struct, forbid_unknown_fields=False):
    """One finished game, as its file keeps it."""

    number: int
    players: list[str]  # seat order
    seed: str  # the game's seed, as text (it is 128 bits)
    reason: str  # one line: how the game ended
    scores: list[float] | None = None  # two-player games: each seat's points (1, 0.5, 0)
    places: list[str] | None = None  # Old Maid: first out first, the loser last
    # The players that lost the game by a fault of their own, and which: "crashed
    # (exit status 1)", "did not connect within 10 s", "timed out", ...
    faults: dict[str, str] = {}
    move_times: dict[str, list[float]] = {}  # seconds each move took, by player
    seconds: float = 0.0  # the game's wall time, its server's start to its result
    # From the first program's start to the last one's end: their start-up, the game,
    # their exit (what the players and the server spent; the rest is the runner's).
    played: float = 0.0


# The fields a replay of the same game may change: its timings.
TIMINGS = ("move_times", "seconds", "played")


def decided(result: GameResult) -> dict[str, object]:
    """What a game decided: its result without its timings (equal for every replay of a
    game between built-in players)."""
    return {k: v for k, v in msgspec.to_builtins(result).items() if k not in TIMINGS}


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(GameResult)


def save(folder: Path, key: str, result: GameResult) -> Path:
    """Write ``result`` as ``folder/<key>.json``, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.json"
    partial = folder / f".{key}.json.{os.getpid()}.partial"
    with open(partial, "wb") as file:
        file.write(_encoder.encode(result) + b"\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, path)
    return path


def load(folder: Path) -> dict[int, GameResult]:
    """Every finished game in ``folder``, by number; partial files are left out."""
    results: dict[int, GameResult] = {}
    if not folder.is_dir():
        return results
    for path in sorted(folder.glob("[0-9]*.json")):
        result = _decoder.decode(path.read_bytes())
        results[result.number] = result
    return results


@dataclass
class EntrantFigures:
    """One entrant's figures beyond its record: faults by kind, and its move times."""

    faults: dict[str, int] = field(default_factory=dict)
    move_times: list[float] = field(default_factory=list)

    @property
    def slowest(self) -> float | None:
        return max(self.move_times) if self.move_times else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.move_times) if self.move_times else None


@dataclass(frozen=True)
class Standings:
    names: tuple[str, ...]
    ratings: list[Rating]  # best first
    table: dict[tuple[str, str], Record]
    records: dict[str, Record]
    figures: dict[str, EntrantFigures]
    games: int


def standings(names: Sequence[str], results: Iterable[GameResult]) -> Standings:
    """The ranking of a two-player tournament, its crosstable and each entrant's figures."""
    finished = list(results)
    pairs = []
    figures = {name: EntrantFigures() for name in names}
    for result in finished:
        if result.scores is None or len(result.players) != 2:
            raise ValueError(f"game {result.number} is not a finished two-player game")
        first, second = result.players
        pairs.append((first, second, result.scores[0]))
        for name, why in result.faults.items():
            kind = _kind(why)
            figures[name].faults[kind] = figures[name].faults.get(kind, 0) + 1
        for name, times in result.move_times.items():
            figures[name].move_times.extend(times)
    table = crosstable(names, pairs)
    return Standings(
        tuple(names), elo(names, pairs), table, totals(names, table), figures, len(finished)
    )


@dataclass(frozen=True)
class RingTable:
    """The standings of an Old Maid tournament."""

    names: tuple[str, ...]
    standings: list[RingStanding]  # best first
    faults: dict[str, dict[str, int]]
    games: int


def ring_table(names: Sequence[str], results: Iterable[GameResult]) -> RingTable:
    """Old Maid: each entrant's rate of losing and mean place (ring_game says how a ring
    with players at fault, or one aborted, counts)."""
    finished = list(results)
    finishes: list[tuple[str, int, bool]] = []
    faults: dict[str, dict[str, int]] = {name: {} for name in names}
    for result in finished:
        size = len(result.players)
        if result.places is not None:
            holder = old_maid_holder(result)
            finishes += [
                (name, place, name == holder or name in result.faults)
                for place, name in enumerate(result.places, start=1)
            ]
        else:  # aborted: it counts only against those it names
            finishes += [(name, size, True) for name in result.faults]
        for name, why in result.faults.items():
            kind = _kind(why)
            faults[name][kind] = faults[name].get(kind, 0) + 1
    return RingTable(tuple(names), finish_standings(names, finishes), faults, len(finished))


def old_maid_holder(result: GameResult) -> str | None:
    """The ring's loser by the cards: the last of its places not at fault (those at
    fault come after it, and have lost too)."""
    for name in reversed(result.places or []):
        if name not in result.faults:
            return name
    return None


def ring_markdown(table: RingTable) -> str:
    lines = [
        f"{table.games} rings",
        "",
        "| # | entrant | rings | lost | loss rate | 95 % interval | mean place | 95 % interval "
        "| faults |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rank, s in enumerate(table.standings, start=1):
        lines.append(
            f"| {rank} | {s.name} | {s.rings} | {s.losses} | {s.loss_rate:.0%} | "
            f"{s.loss_low:.0%} .. {s.loss_high:.0%} | {s.mean_place:.2f} | "
            f"{s.place_low:.2f} .. {s.place_high:.2f} | {_faults(table.faults[s.name])} |"
        )
    return "\n".join(lines) + "\n"


def ring_csv_rows(table: RingTable) -> list[list[str]]:
    rows = [["rank", "entrant", "rings", "lost", "loss_rate", "loss_low", "loss_high",
             "mean_place", "place_low", "place_high", "faults"]]  # fmt: skip
    for rank, s in enumerate(table.standings, start=1):
        rows.append(
            [str(rank), s.name, str(s.rings), str(s.losses), f"{s.loss_rate:.4f}",
             f"{s.loss_low:.4f}", f"{s.loss_high:.4f}", f"{s.mean_place:.3f}",
             f"{s.place_low:.3f}", f"{s.place_high:.3f}", str(sum(table.faults[s.name].values()))]
        )  # fmt: skip
    return rows


def ring_json(table: RingTable) -> Mapping[str, object]:
    return {
        "rings": table.games,
        "ranking": [
            dataclasses.asdict(s) | {"faults": table.faults[s.name]} for s in table.standings
        ],
    }


def _kind(why: str) -> str:
    """A fault's kind: its words before any detail ("crashed", "did not connect ...")."""
    return why.split(" (")[0].split(":")[0]


def _faults(kinds: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "-"


def markdown(result: Standings) -> str:
    """The ranking and the crosstable, as Markdown tables."""
    lines = [
        f"{result.games} games",
        "",
        "| # | entrant | Elo | 95 % interval | games | score | W-D-L | faults | median move "
        "| slowest move |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rank, rating in enumerate(result.ratings, start=1):
        record, figures = result.records[rating.name], result.figures[rating.name]
        faults = _faults(figures.faults)
        lines.append(
            f"| {rank} | {rating.name} | {rating.elo:+.0f} | {rating.low:+.0f} .. "
            f"{rating.high:+.0f} | {record.games} | {record.score:g} | {record.wins}-"
            f"{record.draws}-{record.losses} | {faults} | {_ms(figures.median)} | "
            f"{_ms(figures.slowest)} |"
        )
    order = [rating.name for rating in result.ratings]
    lines += ["", "| | " + " | ".join(order) + " |", "|---" * (len(order) + 1) + "|"]
    for a in order:
        cells = [_cell(result.table[a, b]) if a != b else "" for b in order]
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def csv_rows(result: Standings) -> list[list[str]]:
    """The ranking as CSV rows, a header first."""
    rows = [["rank", "entrant", "elo", "low", "high", "games", "score", "wins", "draws",
             "losses", "faults", "median_move_s", "slowest_move_s"]]  # fmt: skip
    for rank, rating in enumerate(result.ratings, start=1):
        record, figures = result.records[rating.name], result.figures[rating.name]
        rows.append(
            [str(rank), rating.name, f"{rating.elo:.1f}", f"{rating.low:.1f}",
             f"{rating.high:.1f}", str(record.games), f"{record.score:g}", str(record.wins),
             str(record.draws), str(record.losses), str(sum(figures.faults.values())),
             _seconds(figures.median), _seconds(figures.slowest)]
        )  # fmt: skip
    return rows


def as_json(result: Standings) -> Mapping[str, object]:
    """Everything of the standings, for ``DIR/standings.json``."""
    return {
        "games": result.games,
        "ranking": [
            {
                "entrant": r.name,
                "elo": round(r.elo, 1),
                "interval": [round(r.low, 1), round(r.high, 1)],
                "games": r.games,
                "score": r.score,
                "record": dataclasses.asdict(result.records[r.name]),
                "faults": result.figures[r.name].faults,
                "median_move": result.figures[r.name].median,
                "slowest_move": result.figures[r.name].slowest,
            }
            for r in result.ratings
        ],
        "crosstable": {
            a: {b: dataclasses.asdict(result.table[a, b]) for b in result.names if b != a}
            for a in result.names
        },
    }


def _cell(record: Record) -> str:
    """A crosstable cell: points of games, or "-" for a pair that did not meet (a gauntlet)."""
    return f"{record.score:g}/{record.games}" if record.games else "-"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


def _seconds(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds:.4f}"
