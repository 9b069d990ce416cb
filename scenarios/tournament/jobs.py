"""What a machine is sent to play one game of a tournament, and what it sends back.

A job is plain data (msgspec Structs), so the same job is played alike by a
worker process of this machine's pool and by a Dask worker on a lab machine:
the entrants' commands as given (built-in players as a level, made into a
command on the machine that runs them), the game's seed and the settings.
What comes back is the game's result and its files, as bytes: the runner
writes them into the tournament's folder, the result last.
"""

from __future__ import annotations

import msgspec

from scenarios.programs import Limits
from scenarios.tournament.results import GameResult

# The most of each output a game's folder keeps (the end of it; the rest is cut).
OUTPUT_KEPT = 1024 * 1024


class Entrant(msgspec.Struct, frozen=True):
    """One entrant: a program's command (the placeholders of programs.md 1 in it), or a built-in
    player's level."""

    name: str
    command: tuple[str, ...] = ()
    level: str | None = None  # a built-in player of the game
    cwd: str | None = None  # where its command runs (default: where the runner runs)
    # Its own folder (absolute), which its box shows it read-only; None: none (a built-in
    # player, or a tournament without boxes).
    folder: str | None = None

    @property
    def shown(self) -> str:
        import shlex

        return f"built-in {self.level}" if self.level else shlex.join(self.command)


class BoxSettings(msgspec.Struct, frozen=True):
    """How a tournament boxes its programs (``scenarios.sandbox``; docs/tournament.md)."""

    uids: tuple[tuple[str, int], ...]  # each entrant's own uid, by name
    hidden: tuple[str, ...] = ()  # the results folder and every entrant's folder
    scratch_mb: int = 256  # each program's private /tmp
    processes: int = 256  # processes and threads of one entrant's uid, and of one box
    cores: float = 1.0  # the most of the machine's cores one box's processes use together

    def uid(self, name: str) -> int:
        return dict(self.uids)[name]


class Settings(msgspec.Struct, frozen=True):
    """Everything beside the entrants that decides how a game is played and judged."""

    move_time: float | None = None  # Reversi, FishNet: a move's time (None: the server's)
    time_budget: float | None = None  # No Tipping: all of a player's moves (None: the server's)
    max_weight: int | None = None  # No Tipping (None: the server's)
    connect_within: float = 10.0  # from its start until it has joined its game
    exit_within: float = 3.0  # to exit once its game is over (after that it is stopped)
    memory_mb: int | None = 2048
    cpu_seconds: int | None = None
    open_files: int | None = 1024
    output_mb: int | None = 64  # each of stdout and stderr (and any file it writes)
    depth: int | None = None  # the built-in searching players' depth (None: the game's)
    verified: bool = False  # Old Maid: seat only players that verify (protocol 14.5, 14.6)
    box: BoxSettings | None = None  # None: unsandboxed (--no-sandbox)

    def limits(self) -> Limits:
        mib = 1024 * 1024
        return Limits(
            memory_bytes=None if self.memory_mb is None else self.memory_mb * mib,
            cpu_seconds=self.cpu_seconds,
            open_files=self.open_files,
            file_bytes=None if self.output_mb is None else self.output_mb * mib,
            processes=None if self.box is None else self.box.processes,
        )

    def decisive(self) -> dict[str, object]:
        """The settings that change a game's result, for the tournament's fingerprint."""
        return {
            "move_time": self.move_time,
            "time_budget": self.time_budget,
            "max_weight": self.max_weight,
            "depth": self.depth,
            # Only when set: a tournament's fingerprint from before the option stays as it was.
            **({"verified": True} if self.verified else {}),
        }


class GameJob(msgspec.Struct, frozen=True):
    game: str  # "reversi", "notipping", "fishnet", "oldmaid"
    number: int
    seed: int
    entrants: tuple[Entrant, ...]  # in seat order
    settings: Settings
    # Begins the run token of every program this tournament starts (programs.sweep).
    tag_prefix: str = ""


class GameOutcome(msgspec.Struct):
    """A game played: its result, and its files by name (transcript, logs, outputs)."""

    result: GameResult
    files: dict[str, bytes]
    worker: str  # host:pid of the process that played it
