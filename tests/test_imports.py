"""No import cycles among the project's modules (``ring``, ``services``, ``scenarios``).

Every ``import`` and ``from ... import`` in a module counts as a dependency,
at module level or inside a function alike: an import deferred into a
function still ties the two modules together, it only hides the cycle until
that function runs. ``from package import name`` depends on the module
``package.name`` when there is one, else on ``package``.

Each package is checked on its own graph, and the whole project across
packages. And ``ring``, the bottom layer, imports neither ``services`` nor
``scenarios`` at all: the command line finds them through their declarations
(``ring.cli.registry``); ``services`` does not import ``scenarios``; and the
scenarios that run and verify games do not import the benches and stress
drivers of ``scenarios.bench``, which are built on them.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ring", "services", "scenarios")

Graph = Mapping[str, frozenset[str]]


def project_modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Every module of the project by dotted name: its file, and whether it is a package."""
    modules: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join(parts)] = (path, is_package)
    return modules


def _project_module(name: str, modules: Mapping[str, object]) -> str | None:
    """The project module ``name`` is, or is inside (a class, a function); None if not ours."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imported_modules(
    name: str, path: Path, is_package: bool, modules: Mapping[str, object]
) -> set[str]:
    """The project modules that module ``name`` imports anywhere in its file."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            # ``from a import b``: the module a.b if there is one, else a itself.
            targets = [
                f"{source}.{alias.name}" if alias.name != "*" else source for alias in node.names
            ]
        else:
            continue
        for target in targets:
            module = _project_module(target, modules)
            if module is not None and module != name:
                found.add(module)
    return found


def import_graph(root: Path = ROOT) -> dict[str, frozenset[str]]:
    """Module name -> the project modules it imports."""
    modules = project_modules(root)
    return {
        name: frozenset(imported_modules(name, path, is_package, modules))
        for name, (path, is_package) in modules.items()
    }


def subgraph(graph: Graph, keep: Iterable[str]) -> dict[str, frozenset[str]]:
    kept = set(keep)
    return {name: graph[name] & kept for name in kept}


def find_cycles(graph: Graph) -> list[list[str]]:
    """Import cycles as paths ``[a, b, ..., a]``, enough of them to name every module
    that is in any cycle; empty if the graph has none."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iteratively
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    cycles = []
    for component in components:
        uncovered = set(component)
        while uncovered:  # enough cycles to name every module of the knot
            cycle = _cycle_through(min(uncovered), graph, component)
            uncovered -= set(cycle)
            cycles.append(cycle)
    return cycles


def _cycle_through(start: str, graph: Graph, component: set[str]) -> list[str]:
    """A shortest import path from ``start`` back to itself inside ``component``."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node] & component):
            if successor == start:
                path = [node]  # back from node to start, then turned around
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if successor not in came_from:
                came_from[successor] = node
                queue.append(successor)
    raise AssertionError(f"{start} is in a cycle but no path leads back to it")


def _describe(cycles: list[list[str]]) -> str:
    return "import cycles:\n" + "\n".join("  " + " -> ".join(cycle) for cycle in cycles)


GRAPH = import_graph()


def test_the_graph_sees_module_level_and_function_level_imports() -> None:
    # Guards the other tests against passing because nothing was parsed.
    assert "ring.cli" in GRAPH["ring.__main__"]  # module level
    assert "scenarios.oldmaid.faults" in GRAPH["scenarios.runner"]  # inside run()
    assert "ring.wire.net" in GRAPH["services.fishnet.conversation"]  # across packages


def test_cycles_are_found_and_named() -> None:
    graph = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a", "d"}),
        "d": frozenset(),
    }
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles(subgraph(graph, ["a", "b", "d"])) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_a_package(package: str) -> None:
    inside = [name for name in GRAPH if name == package or name.startswith(f"{package}.")]
    cycles = find_cycles(subgraph(GRAPH, inside))
    assert not cycles, _describe(cycles)


def test_no_import_cycle_across_packages() -> None:
    cycles = find_cycles(GRAPH)
    assert not cycles, _describe(cycles)


def test_ring_imports_neither_services_nor_scenarios() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module.split(".")[0] == "ring"
        for target in targets
        if target.split(".")[0] in ("services", "scenarios")
    )
    assert upward == [], "ring must import only downwards:\n" + "\n".join(upward)


def test_services_import_no_scenarios() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module.split(".")[0] == "services"
        for target in targets
        if target.split(".")[0] == "scenarios"
    )
    assert upward == [], "services must not import scenarios:\n" + "\n".join(upward)


def test_the_scenarios_import_no_bench() -> None:
    # The scenarios run and verify games; the benches and stress drivers of
    # scenarios.bench are built on them, never the other way round.
    bench = "scenarios.bench"
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module.split(".")[0] == "scenarios" and not module.startswith(bench)
        for target in targets
        if target == bench or target.startswith(f"{bench}.")
    )
    assert upward == [], "scenarios must not import scenarios.bench:\n" + "\n".join(upward)


# The layers inside ``ring``, bottom first: each may import only its own and those below
# (``ring.version``, what this installation is, below them all).
RING_LAYERS = ("ring.version", "ring.wire", "ring.mdns", "ring.games", "ring.oldmaid", "ring.cli")


def _ring_layer(module: str) -> int | None:
    for number, layer in enumerate(RING_LAYERS):
        if module == layer or module.startswith(f"{layer}."):
            return number
    return None


def test_ring_is_in_layers_and_each_imports_only_downwards() -> None:
    top = sorted(
        name
        for name in GRAPH
        if name.startswith("ring.") and _ring_layer(name) is None and name != "ring.__main__"
    )
    assert top == [], "every module of ring belongs to a layer: " + ", ".join(top)
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if (layer := _ring_layer(module)) is not None
        for target in targets
        if (below := _ring_layer(target)) is not None and below > layer
    )
    assert upward == [], "ring's layers import only downwards:\n" + "\n".join(upward)
