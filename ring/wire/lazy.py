"""Names a package exposes, loaded when first asked for (PEP 562).

A sub-package of ``ring`` exposes what the layers above use, but importing
one of its modules must not import them all: a peer's start would load the
game records, the clients and more. ``exporter`` makes the package's
``__getattr__`` that imports a name's module the first time it is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exporter(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: each name of ``exports`` from its module."""

    def lookup(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # asked once: from now on a plain attribute
        return value

    return lookup
