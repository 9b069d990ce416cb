"""A tournament's results, read back by the tests of ``scenarios.tournament``."""

from __future__ import annotations

from pathlib import Path

from scenarios.tournament import results


def decided(folder: Path) -> dict[int, object]:
    """Every result in ``folder`` without its timings."""
    return {n: results.decided(r) for n, r in results.load(folder / "games").items()}
