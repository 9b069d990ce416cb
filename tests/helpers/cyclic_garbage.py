"""What a block of code leaves for Python's cycle collector, named by its cycles.

A game whose objects hold each other in a cycle (a client its match, the match
its clients) is not freed when it ends: it waits for a collection, and a
collection stops every other game on the server while it walks them
(docs/services.md, "Garbage collection"). ``left_in_cycles`` runs a block with
the collector off, then collects once, keeping what it found, and reports
our objects among it (``ring`` and ``services`` types): with no cycles, that is
nothing. Trio's own tests check their nurseries and cancel scopes the same way.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import types
from collections.abc import Iterator

OURS = ("ring.", "services.")


def ours(thing: object) -> bool:
    return type(thing).__module__.startswith(OURS)


@contextlib.contextmanager
def left_in_cycles() -> Iterator[list[str]]:
    """Yields a list that, after the block, holds one line for each kind of our objects
    left in cycles, and the first cycle through it ("Match .seats -> list [0] -> ...")."""
    found: list[str] = []
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield found
    finally:
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            garbage = list(gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            if enabled:
                gc.enable()
        found.extend(_describe(garbage))
        del garbage
        gc.collect()


def _describe(garbage: list[object]) -> list[str]:
    counts = collections.Counter(_name(thing) for thing in garbage if ours(thing))
    lines = []
    inside = {id(thing) for thing in garbage}
    for name, count in sorted(counts.items()):
        first = next(thing for thing in garbage if ours(thing) and _name(thing) == name)
        cycle = _cycle_through(first, inside)
        path = " -> ".join(f"{_name(a)} {_edge(a, b)}" for a, b in cycle)
        lines.append(f"{count} x {name}: {path or '(reachable only from a cycle)'}")
    return lines


def _cycle_through(start: object, inside: set[int]) -> list[tuple[object, object]]:
    """The shortest way from ``start`` back to itself through the garbage, as edges."""
    came_from: dict[int, object] = {}
    queue = collections.deque([start])
    while queue:
        here = queue.popleft()
        for there in gc.get_referents(here):
            if there is start:
                edges = [(here, start)]
                while here is not start:
                    before = came_from[id(here)]
                    edges.append((before, here))
                    here = before
                return edges[::-1]
            if id(there) in inside and id(there) not in came_from:
                came_from[id(there)] = here
                queue.append(there)
    return []


def _name(thing: object) -> str:
    if isinstance(thing, types.FunctionType | types.CoroutineType):
        return f"{type(thing).__name__} {thing.__qualname__}"
    if isinstance(thing, types.MethodType):
        return f"method {thing.__func__.__qualname__}"
    kind = type(thing)
    return kind.__qualname__ if ours(thing) else kind.__name__


def _edge(source: object, target: object) -> str:
    """How ``source`` refers to ``target``: an attribute, key, index or closure cell."""
    if isinstance(source, dict):
        return next((f"[{key!r}]" for key, value in source.items() if value is target), "->")
    if isinstance(source, list | tuple):
        return next((f"[{i}]" for i, value in enumerate(source) if value is target), "->")
    attributes = dict(vars(source)) if hasattr(source, "__dict__") else {}
    for kind in type(source).__mro__:
        slots = getattr(kind, "__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            attributes.setdefault(slot, getattr(source, slot, None))
    if isinstance(source, types.MethodType):
        attributes["__self__"] = source.__self__
    return next((f".{key}" for key, value in attributes.items() if value is target), "->")
