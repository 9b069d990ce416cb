"""A service's games written to JSON Lines files: a subscriber of its ``RecordHub``.

``TranscriptFiles`` writes one file a game in a folder (``game-NNNNNN.jsonl``),
``TranscriptFile`` every game of a service one after another in one file (as
the Old Maid table's ``--transcript`` does), each game whole even where games
overlap. ``recording_to`` subscribes a writer for a block and closes it after;
a file still open then is a game cut off without its ``end`` (docs/logs.md).
Every record is flushed as it is written, so a killed server loses no
finished line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import msgspec

from ring.games.record import GameKey, RecordHub

_encoder = msgspec.json.Encoder()


class _JsonLines:
    """A JSON-lines file flushed after every record: a killed server loses no finished line."""

    def __init__(self, path: Path) -> None:
        self._file: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed by close()

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(_encoder.encode(record) + b"\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class TranscriptFiles:
    """A subscriber writing each game of one service to ``folder/game-NNNNNN.jsonl``."""

    def __init__(self, folder: str | Path, service: str) -> None:
        self.folder = Path(folder)
        self.service = service
        self._open: dict[int, _JsonLines] = {}

    def path(self, game: int) -> Path:
        return self.folder / f"game-{game:06d}.jsonl"

    def __call__(self, key: GameKey, record: dict[str, Any]) -> None:
        if key.service != self.service:
            return
        event = record.get("event")
        if event == "start":
            self._open[key.game] = _JsonLines(self.path(key.game))
        file = self._open.get(key.game)
        if file is None:
            return
        file.write(record)
        if event == "end":
            self._open.pop(key.game).close()

    def close(self) -> None:
        """Close the files of games that never ended (the server is stopping)."""
        for file in self._open.values():
            file.close()
        self._open.clear()


class TranscriptFile:
    """A subscriber writing every game of one service, one after another, to one file.

    Games may overlap (a table's next game starts while the last one's players
    linger): the file must still read back game by game, so the records of
    the oldest unfinished game are written as they come, and those of any
    later game are held until every game before it has ended.
    """

    def __init__(self, path: str | Path, service: str) -> None:
        self.service = service
        self._file = _JsonLines(Path(path))
        self._writing: int | None = None  # the game whose records go straight to the file
        self._held: dict[int, list[dict[str, Any]]] = {}  # later games, in start order

    def __call__(self, key: GameKey, record: dict[str, Any]) -> None:
        if key.service != self.service:
            return
        if record.get("event") == "start" and self._writing is None:
            self._writing = key.game
        if key.game != self._writing:
            self._held.setdefault(key.game, []).append(record)
            return
        self._file.write(record)
        if record.get("event") == "end":
            self._writing = None
            self._write_held()

    def _write_held(self) -> None:
        """Write held games that have ended; the first still open becomes the one written."""
        while self._held:
            game = next(iter(self._held))
            records = self._held.pop(game)
            for record in records:
                self._file.write(record)
            if records[-1].get("event") != "end":
                self._writing = game
                return

    def close(self) -> None:
        for records in self._held.values():  # games cut off by the shutdown
            for record in records:
                self._file.write(record)
        self._held.clear()
        self._file.close()


class Writer(Protocol):
    def __call__(self, key: GameKey, record: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


@contextmanager
def recording_to(hub: RecordHub, writer: Writer | None) -> Iterator[None]:
    """Subscribe ``writer`` (if any) for the body, then unsubscribe and close it: a
    file still open then is a game cut off without its end, closed as it is."""
    if writer is None:
        yield
        return
    unsubscribe = hub.subscribe(writer)
    try:
        yield
    finally:
        unsubscribe()
        writer.close()


def transcript_files(folder: str | Path | None, service: str) -> TranscriptFiles | None:
    """The writer of a file a game in ``folder`` (created if need be), or None without one.
    ``OSError`` if the folder cannot be made."""
    if folder is None:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return TranscriptFiles(folder, service)
