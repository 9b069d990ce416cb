"""A small AST mutator: one-change copies of chosen functions' source, for ``ring check``'s
mutation bench (``scenarios.bench.check_mutants``).

Given a module's source and the functions or methods to mutate (qualified names:
``play_one_game``, ``ClientConnection`` for every method of a class,
``ClientConnection._server_event`` for one), ``mutants`` yields every compilable
mutant of that code, one change each, in source order, each with a stable id
(``module:qualname#NN``, NN the change's ordinal in that function), its line in
the original file, and one line saying what changed (``x < y → x <= y``).

Why our own, rather than mutmut or cosmic-ray: both mutate the working tree in
place (or put a trampoline in it) and then run a test command. Here the test is
``ring check``, and the checker process imports the very modules under mutation
(the server side of ``services/reversi/protocol.py``, ``ring.wire.transport``, the
Old Maid table and our own peers): a mutant in the shared tree would change the
judge along with the judged. A mutant must live only in the process of the
program under test, so each is written whole into a copy of the packages
(``Mutant.source``) that only that process imports; the checker keeps the real
tree. The change is spliced into the original text, not re-rendered from the
tree, so the mutant keeps every comment and line but the one changed.

The operators, chosen for protocol code (parsing, framing, turn logic):

- ``compare``: ``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``in``/``not in``, ``is``/``is not``
- ``boolean``: ``and``/``or``; ``not x`` → ``x``
- ``negate``: an ``if``'s or a ``while``'s condition negated
- ``arith``: ``+``/``-`` (and ``+=``/``-=``), where neither side is a string
- ``number``: an integer constant ``0`` → ``1``, ``1`` → ``0`` or ``2``, ``n`` → ``n±1``
- ``return``: ``return True``/``return False`` swapped; any other value → ``return None``
- ``delete``: a statement replaced by ``pass`` (not a docstring, ``def``, ``class``)
- ``loop``: ``break``/``continue``
- ``string``: a short str/bytes constant (a protocol token, ≤ 8 characters) → empty,
  an empty one → ``"X"``
- ``except``: a handler that catches nothing (``except ()``: removal) or ``Exception``
  (widening)

Left alone: docstrings, decorators, annotations, ``assert`` statements (they change
nothing in code that works) and f-strings (their inner positions are not reliable).
Mutants that do not compile, that leave the source as it was, or that repeat an
earlier mutant's source are dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

OPERATORS = (
    "compare", "boolean", "negate", "arith", "number", "return", "delete", "loop", "string",
    "except",
)  # fmt: skip
SHORT_STRING = 8  # characters: longer constants are messages for people, not tokens
_SWAP: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Mutant:
    """One change to one module: ``source`` is the whole mutated module."""

    id: str  # module:qualname#NN, stable while that function's code is
    path: str  # the file, as given
    line: int  # in the original file
    qualname: str  # the selected function (nested functions count as part of it)
    operator: str  # one of OPERATORS
    description: str  # one line: old → new
    source: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class _Change:
    node: ast.AST  # the span replaced: the node's own text
    text: str  # what replaces it
    operator: str
    description: str


def _short(node: ast.AST | str, width: int = 48) -> str:
    text = node if isinstance(node, str) else ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _swapped(node: ast.AST, **fields: object) -> ast.AST:
    """A copy of ``node`` with ``fields`` replaced (its children shared: unparse only)."""
    copy = type(node)(**{name: getattr(node, name) for name in node._fields})
    for name, value in fields.items():
        setattr(copy, name, value)
    return copy


def _is_docstring(body: Sequence[ast.stmt], index: int) -> bool:
    first = body[index]
    return (
        index == 0
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)
    )


def _negated_elsewhere(test: ast.expr) -> bool:
    """Whether another operator already negates ``test``: ``not x`` → ``x``, or one swap
    of a single comparison (``x is None`` → ``x is not None``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and type(test.ops[0]) in (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
    )


class _Collector:
    """Walks one function in source order and lists every change it allows."""

    def __init__(self) -> None:
        self.changes: list[_Change] = []
        self.kept: set[int] = set()  # statements not to delete
        self.current: ast.stmt | None = None  # the statement being walked

    def add(self, node: ast.AST, text: str, operator: str, old: str, new: str) -> None:
        self.changes.append(_Change(node, text, operator, f"{_short(old)} → {_short(new)}"))

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        last = node.body[-1]
        if isinstance(last, ast.Return):  # deleting it is its "return None"
            self.kept.add(id(last))
        self.body(node.body)  # not its decorators, arguments or annotations

    def body(self, statements: Sequence[ast.stmt]) -> None:
        for index, statement in enumerate(statements):
            if _is_docstring(statements, index):
                continue
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assert | ast.Global | ast.Nonlocal | ast.ClassDef):
            return
        self.current = node
        if isinstance(node, _FUNCTIONS):
            self.function(node)  # a nested function is part of the one selected
            return
        if (
            not isinstance(node, ast.Pass)
            and id(node) not in self.kept
            and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        ):
            lines = ast.unparse(node).splitlines()
            self.add(node, "pass", "delete", lines[0] + (" …" if len(lines) > 1 else ""), "pass")
        if isinstance(node, ast.Break | ast.Continue):
            other = "continue" if isinstance(node, ast.Break) else "break"
            self.add(node, other, "loop", ast.unparse(node), other)
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                flipped = f"return {not value.value}"
                self.add(node, flipped, "return", ast.unparse(node), flipped)
            elif not (isinstance(value, ast.Constant) and value.value is None):
                self.add(node, "return None", "return", ast.unparse(node), "return None")
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, ast.Add | ast.Sub)
            and not _is_text(node.value)
        ):
            op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            new = ast.unparse(_swapped(node, op=op))
            self.add(node, new, "arith", ast.unparse(node), new)
        if isinstance(node, ast.If | ast.While) and not _negated_elsewhere(node.test):
            test = ast.unparse(node.test)
            self.add(node.test, f"(not ({test}))", "negate", test, f"not ({test})")
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "decorator_list"):
                continue
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.body(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.ExceptHandler):
                        self.handler(item)
                    elif isinstance(item, ast.AST):
                        self.expression(item)
            elif isinstance(value, ast.AST):
                self.expression(value)

    def handler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            caught = ast.unparse(node.type)
            self.add(node.type, "()", "except", f"except {caught}", "except () (catches nothing)")
            if caught not in ("Exception", "BaseException"):
                self.add(node.type, "Exception", "except", f"except {caught}", "except Exception")
            self.expression(node.type)
        self.body(node.body)

    def expression(self, node: ast.AST, parent: ast.AST | None = None) -> None:
        if isinstance(node, ast.JoinedStr):
            return
        if isinstance(node, ast.stmt):
            self.statement(node)
            return
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                other = _SWAP.get(type(op))
                if other is not None:
                    ops = [*node.ops[:index], other(), *node.ops[index + 1 :]]
                    new = ast.unparse(_swapped(node, ops=ops))
                    self.add(node, f"({new})", "compare", ast.unparse(node), new)
        elif isinstance(node, ast.BoolOp):
            op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            new = ast.unparse(_swapped(node, op=op))
            self.add(node, f"({new})", "boolean", ast.unparse(node), new)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = ast.unparse(node.operand)
            self.add(node, f"({operand})", "boolean", ast.unparse(node), operand)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            if not (_is_text(node.left) or _is_text(node.right)):
                op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
                new = ast.unparse(_swapped(node, op=op))
                self.add(node, f"({new})", "arith", ast.unparse(node), new)
        elif isinstance(node, ast.Constant):
            self.constant(node, parent or node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.expr_context):
                self.expression(child, node)

    def constant(self, node: ast.Constant, parent: ast.AST) -> None:
        value = node.value
        if isinstance(value, int) and not isinstance(value, bool):
            news: tuple[object, ...] = {0: (1,), 1: (0, 2)}.get(value, (value + 1, value - 1))
            operator = "number"
        elif isinstance(value, str | bytes) and len(value) <= SHORT_STRING:
            news = (value[:0] if value else type(value)(b"X" if isinstance(value, bytes) else "X"),)
            operator = "string"
        else:
            return
        # Described in its context (``x[0] → x[1]``, ``total = 0 → total = 1``): a bare
        # ``0 → 1`` says too little.
        context: ast.AST = node
        if isinstance(parent, ast.expr) and parent is not node:
            context = parent
        elif self.current is not None and not hasattr(self.current, "body"):
            context = self.current
        old = ast.unparse(context)
        for new in news:
            node.value = new
            try:
                self.add(node, repr(new), operator, old, ast.unparse(context))
            finally:
                node.value = value


def _targets(tree: ast.Module, select: Sequence[str]) -> list[tuple[str, ast.AST]]:
    """The selected functions (a class: each of its methods), outermost first, in source order."""
    found: list[tuple[str, ast.AST]] = []
    matched: set[str] = set()

    def visit(body: Sequence[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                continue
            qualname = prefix + node.name
            hits = [s for s in select if qualname == s or qualname.startswith(s + ".")]
            matched.update(hits)
            if hits and isinstance(node, _FUNCTIONS):
                found.append((qualname, node))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, qualname + ".")

    visit(tree.body, "")
    missing = [s for s in select if s not in matched]
    if missing:
        raise ValueError(f"no such function or class: {', '.join(missing)}")
    return found


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    for index, byte in enumerate(data):
        if byte == 0x0A:
            starts.append(index + 1)
    return starts


def mutants(
    source: str, path: str, select: Sequence[str], module: str | None = None
) -> Iterator[Mutant]:
    """Every compilable mutant of the ``select``-ed functions of ``source``, in source order."""
    module = module or Path(path).with_suffix("").as_posix().replace("/", ".")
    tree = ast.parse(source)
    data = source.encode()  # AST columns count UTF-8 bytes
    starts = _line_starts(data)
    seen = {source}
    for qualname, function in _targets(tree, select):
        collector = _Collector()
        collector.function(function)  # type: ignore[arg-type]
        for ordinal, change in enumerate(collector.changes, start=1):
            node = change.node
            begin = starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
            end = starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
            mutated = (data[:begin] + change.text.encode() + data[end:]).decode()
            if mutated in seen:
                continue
            seen.add(mutated)
            try:
                compile(mutated, path, "exec", dont_inherit=True)
            except SyntaxError:
                continue
            yield Mutant(
                id=f"{module}:{qualname}#{ordinal:02d}",
                path=path,
                line=node.lineno,  # type: ignore[attr-defined]
                qualname=qualname,
                operator=change.operator,
                description=change.description,
                source=mutated,
            )


def mutate_file(root: Path, path: str, select: Sequence[str]) -> list[Mutant]:
    """``mutants`` of ``root / path`` (``path`` relative, as the ids and reports show it)."""
    return list(mutants((root / path).read_text(), path, select))
