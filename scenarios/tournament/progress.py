"""The tournament's progress as it goes: games done of all, the time left, the leader.

On a terminal it is one line rewritten in place, with a line of its own for
each game lost by a fault (the line a dispute starts from); elsewhere (a
log, CI) one line per game.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from scenarios.tournament.results import GameResult, old_maid_holder


class Progress:
    def __init__(self, total: int, done: list[GameResult], *, stream: TextIO | None = None) -> None:
        self.total = total
        self.done_before = len(done)
        self.done = len(done)
        self.points: dict[str, float] = {}  # two-player games: points
        self.lost: dict[str, int] = {}  # Old Maid rings: rings lost
        self.played: dict[str, int] = {}
        for result in done:
            self._count(result)
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.started = time.monotonic()

    def _count(self, result: GameResult) -> None:
        for seat, name in enumerate(result.players):
            self.played[name] = self.played.get(name, 0) + 1
            if result.scores is not None:
                self.points[name] = self.points.get(name, 0.0) + result.scores[seat]
            else:
                lost = name in result.faults or name == old_maid_holder(result)
                self.lost[name] = self.lost.get(name, 0) + lost

    def leader(self) -> str:
        """The best so far: the most points a game, or (rings) the fewest rings lost."""
        if self.points:
            name = max(sorted(self.points), key=lambda n: self.points[n] / self.played[n])
            return f"{name} {self.points[name]:g}/{self.played[name]}"
        if self.lost:
            name = min(sorted(self.lost), key=lambda n: self.lost[n] / self.played[n])
            return f"{name} lost {self.lost[name]}/{self.played[name]}"
        return "-"

    def eta(self) -> str:
        finished = self.done - self.done_before
        if not finished:
            return "?"
        seconds = (time.monotonic() - self.started) / finished * (self.total - self.done)
        return _duration(seconds)

    def line(self) -> str:
        share = 100 * self.done // max(self.total, 1)
        bar = "#" * (share // 5) + "." * (20 - share // 5)
        return (
            f"[{bar}] {self.done}/{self.total} games, {share} %, ETA {self.eta()}, "
            f"leader {self.leader()}"
        )

    def game(self, result: GameResult, worker: str = "") -> None:
        """One more game finished."""
        self.done += 1
        self._count(result)
        players = " - ".join(result.players)
        said = f"game {result.number} ({players}): {result.reason}"
        if self.live:
            if result.faults:
                self.stream.write("\r\x1b[K" + said + "\n")
            self.stream.write("\r\x1b[K" + self.line())
        else:
            self.stream.write(f"{said} | {self.line()}\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own (a game that could not be played)."""
        self.stream.write(("\r\x1b[K" if self.live else "") + text + "\n")
        if self.live:
            self.stream.write(self.line())
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"
