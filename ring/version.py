"""This installation's version (``ring --version``, ``ring serve``'s first line, each game
record's ``start``): the installed distribution's, as ``pyproject.toml`` gives it."""

from __future__ import annotations

from importlib import metadata


def _installed() -> str:
    try:
        return metadata.version("cardring")
    except metadata.PackageNotFoundError:  # run from a source tree never installed
        return "unknown"


VERSION = _installed()
