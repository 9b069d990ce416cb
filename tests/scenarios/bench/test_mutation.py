"""The mutation bench's mutator (``scenarios.bench.mutation``) on a small sample, and how a
mutant is written into a copy; no processes."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

from scenarios.bench import check_mutants
from scenarios.bench.mutation import OPERATORS, Mutant, mutants

SAMPLE = '''"""A module docstring: never mutated."""

import math


def untouched(a):
    return a < 1


class Reader:
    """A class docstring."""

    def parse(self, data: bytes, limit: int = 4) -> bytes | None:
        """Take one line.

        A docstring on two lines, left alone.
        """
        assert limit > 0
        end = data.find(b"\\n")  # a comment that stays
        if end < 0 and not data:
            return None
        total = 0
        for byte in data:
            if byte == 0x20:
                continue
            if byte in (1, 2) or byte is None:
                break
            total += 1
        try:
            value = int(data[:end]) + limit - 1
        except ValueError:
            return b""
        label = f"{value}-{total}"
        return label.encode() if total != 0 else b"x"

    def ok(self, word: str) -> bool:
        if word == "OK":
            return True
        return False
'''


def all_mutants() -> list[Mutant]:
    return list(mutants(SAMPLE, "pkg/sample.py", ["Reader"]))


def function(source: str, name: str) -> ast.FunctionDef:
    return next(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name == name
    )


def test_every_kind_of_mutant_comes() -> None:
    kinds = collections.Counter(m.operator for m in all_mutants())
    assert set(kinds) == set(OPERATORS), kinds


@pytest.mark.parametrize(
    "description",
    [
        "end < 0 → end <= 0",
        "byte == 32 → byte != 32",
        "byte in (1, 2) → byte not in (1, 2)",
        "byte is None → byte is not None",
        "end < 0 and (not data) → end < 0 or not data",
        "not data → data",
        "end < 0 and (not data) → not (end < 0 and (not data))",
        "continue → break",
        "break → continue",
        "total += 1 → total -= 1",
        "int(data[:end]) + limit → int(data[:end]) - limit",
        "data.find(b'\\n') → data.find(b'')",
        "return b'' → return b'X'",
        "total = 0 → total = 1",
        "return True → return False",
        "return None → pass",
        "except ValueError → except () (catches nothing)",
        "except ValueError → except Exception",
        "word == 'OK' → word == ''",
    ],
)
def test_the_expected_mutants(description: str) -> None:
    assert description in [m.description for m in all_mutants()]


def test_each_mutant_compiles_and_changes_one_line_of_the_source() -> None:
    original = SAMPLE.splitlines()
    for mutant in all_mutants():
        compile(mutant.source, mutant.path, "exec")
        assert mutant.source != SAMPLE
        lines = mutant.source.splitlines()
        changed = [i for i, (a, b) in enumerate(zip(original, lines, strict=False)) if a != b]
        # Spliced into the text: every line before the change is as it was.
        assert changed and changed[0] == mutant.line - 1, (mutant.description, changed)


def test_ids_are_stable_and_unique() -> None:
    first, second = all_mutants(), all_mutants()
    assert [(m.id, m.source) for m in first] == [(m.id, m.source) for m in second]
    assert len({m.id for m in first}) == len(first)
    assert first[0].id.startswith("pkg.sample:Reader.parse#")
    assert len({m.source for m in first}) == len(first)  # no mutant twice


def test_docstrings_asserts_fstrings_and_other_functions_are_untouched() -> None:
    for mutant in all_mutants():
        tree = ast.parse(mutant.source)
        assert ast.get_docstring(tree) == "A module docstring: never mutated."
        parse = function(mutant.source, "parse")
        assert ast.get_docstring(parse) == ast.get_docstring(function(SAMPLE, "parse"))
        assert ast.unparse(parse.body[1]) == "assert limit > 0"
        if mutant.line == 33:  # the f-string's line: only its deletion, never its inside
            assert mutant.operator == "delete"
        assert "    return a < 1\n" in mutant.source
        assert "# a comment that stays" in mutant.source


def test_a_method_or_a_function_alone_can_be_chosen() -> None:
    chosen = list(mutants(SAMPLE, "pkg/sample.py", ["Reader.ok", "untouched"]))
    assert {m.qualname for m in chosen} == {"Reader.ok", "untouched"}
    with pytest.raises(ValueError, match=r"Reader\.nothing"):
        list(mutants(SAMPLE, "pkg/sample.py", ["Reader.nothing"]))


def test_a_sample_is_spread_evenly_and_a_mutant_goes_only_into_the_copy(tmp_path: Path) -> None:
    chosen = all_mutants()
    picked = check_mutants.sample(chosen, 5)
    assert len(picked) == 5 and picked[0] is chosen[0] and picked == check_mutants.sample(chosen, 5)
    assert check_mutants.sample(chosen, 0) == chosen

    base = tmp_path / "base"
    (base / "pkg" / "__pycache__").mkdir(parents=True)
    (base / "pkg" / "sample.py").write_text(SAMPLE)
    (base / "pkg" / "__pycache__" / "sample.cpython-311.pyc").write_bytes(b"stale")
    tree = check_mutants.write_tree(base, tmp_path / "tree", chosen[0])
    assert (tree / "pkg" / "sample.py").read_text() == chosen[0].source
    assert not (tree / "pkg" / "__pycache__" / "sample.cpython-311.pyc").exists()
    assert (base / "pkg" / "sample.py").read_text() == SAMPLE
