"""JSON-lines event logs with monotonic timestamps.

Peers log what they do (``--events``) and the table logs every message
(``--transcript``). ``time.monotonic()`` is one system-wide clock on Linux,
so the scenario verifier can merge logs from several processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

_encoder = msgspec.json.Encoder()


class EventLog:
    """Appends one JSON object per line; a log with no path records nothing."""

    def __init__(
        self,
        path: str | Path | None,
        *,
        flush_each: bool = False,
        sink: Callable[[dict[str, Any]], object] | None = None,
        **common: Any,
    ) -> None:
        self._file: BinaryIO | None = open(path, "wb") if path else None  # noqa: SIM115
        self._flush_each = flush_each
        # Also handed every record as it is written, in this process (ring check
        # watches its own peers so); called synchronously, so it must not block.
        self._sink = sink
        self._common = common

    @property
    def enabled(self) -> bool:
        return self._file is not None or self._sink is not None

    def write(self, event: str, **fields: Any) -> None:
        self.record(event=event, **fields)

    def record(self, **fields: Any) -> None:
        """One line: the timestamp, the log's common fields, then these."""
        if self._file is None and self._sink is None:
            return
        line = {"t": time.monotonic(), **self._common, **fields}
        if self._sink is not None:
            self._sink(line)
        if self._file is not None:
            self._file.write(_encoder.encode(line) + b"\n")
            if self._flush_each:
                self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a log; a torn last line (the writer was killed) is dropped."""
    records = []
    for line in Path(path).read_bytes().splitlines():
        try:
            records.append(msgspec.json.decode(line))
        except msgspec.DecodeError:
            break
    return records
