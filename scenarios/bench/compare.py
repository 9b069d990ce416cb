"""``make bench-compare REV=<commit>``: one bench, that revision against the working tree,
alternated in the same run (issue 46).

The revision is installed in a virtual environment of its own (``build/bench-compare/``,
kept by commit, so a second comparison starts at once): its tree from ``git archive``,
installed with pip as a user would. The working tree runs on this interpreter. Each
round runs the bench once with each, the order swapped every round (so neither always
has the cooler machine), and prints both sides' figures; at the end, for every figure
both printed in every round, the median of each side and the median of the paired
differences (working tree minus revision) and ratios. Figures are read from the bench's
own lines, ``<label>  <number> <unit>`` (``median handoff   1.138 ms``, ``games/s``...):
any bench that prints its figures so is comparable, and none needs to know of this.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "bench-compare"
INSTALL_TIMEOUT = 900.0
BENCH_TIMEOUT = 3600.0
# A figure line: a label, two spaces or more, a number and its unit ("median handoff
# 1.138 ms", "p99   2.3 ms", "games/s   60.4"). Labels start with a letter.
FIGURE = re.compile(
    r"^\s*(?P<label>[A-Za-z][\w /().,'<>=:-]*?)\s{2,}(?P<value>-?\d+(?:\.\d+)?)\s?"
    r"(?P<unit>ms|s|x|%|games/s|/s|MB)?(?:\s|$)"
)


@dataclass
class Side:
    """One side of the comparison: how to run its bench, and what each round printed."""

    name: str
    python: Path
    cwd: Path
    rounds: list[dict[str, tuple[float, str]]] = field(default_factory=list)
    # --server-only: the working tree's bench module drives both sides, this side's server
    # being run by this interpreter (the bench's --server-python).
    server_python: Path | None = None


def figures(output: str) -> dict[str, tuple[float, str]]:
    """Every figure a bench printed, by label (the first of each label)."""
    found: dict[str, tuple[float, str]] = {}
    for line in output.splitlines():
        match = FIGURE.match(line)
        if match is None:
            continue
        label = " ".join(match["label"].split())
        found.setdefault(label, (float(match["value"]), match["unit"] or ""))
    return found


def summary(before: Side, after: Side) -> list[str]:
    """The paired comparison of every figure both sides printed in every round."""
    labels = [
        label
        for label in after.rounds[0]
        if all(label in r for r in before.rounds) and all(label in r for r in after.rounds)
    ]
    heads = f"{'before':>12} {'after':>12} {'after-before':>14} {'after/before':>13}"
    lines = [f"{'figure':40} {heads}"]
    for label in labels:
        old = [r[label][0] for r in before.rounds]
        new = [r[label][0] for r in after.rounds]
        unit = after.rounds[0][label][1]
        differences = [b - a for a, b in zip(old, new, strict=True)]
        ratios = [b / a for a, b in zip(old, new, strict=True) if a]
        ratio = f"{statistics.median(ratios):.3f}x" if ratios else "-"
        lines.append(
            f"{label[:40]:40} {statistics.median(old):>9.3f} {unit:2} "
            f"{statistics.median(new):>9.3f} {unit:2} {statistics.median(differences):>+11.3f} "
            f"{unit:2} {ratio:>13}"
        )
    return lines


def install(revision: str) -> Side:
    """``revision``'s tree in a venv of its own (kept under ``build/bench-compare``)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{revision}^{{commit}}"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    home = CACHE / commit[:12]
    source, venv = home / "src", home / "venv"
    python = venv / "bin" / "python"
    if not (home / "installed").exists():
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, stdout=archive)
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                tar.extractall(source, filter="data")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        print(f"installing {revision} ({commit[:12]}) into {venv} ...", flush=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"{source}[test]"],
            check=True, timeout=INSTALL_TIMEOUT,
        )  # fmt: skip
        (home / "installed").touch()
    return Side(f"{revision} ({commit[:12]})", python, source)


def run_bench(side: Side, module: str, bench: Sequence[str]) -> dict[str, tuple[float, str]]:
    if side.server_python is not None:
        argv = [sys.executable, "-m", module, *bench, "--server-python", str(side.server_python)]
        cwd = ROOT
    else:
        argv, cwd = [str(side.python), "-m", module, *bench], side.cwd
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=BENCH_TIMEOUT
    )  # fmt: skip
    if done.returncode not in (0, 1):  # 1: a target not met, the figures are good
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
        raise SystemExit(f"{side.name}: the bench failed (exit {done.returncode})")
    found = figures(done.stdout)
    if not found:
        raise SystemExit(f"{side.name}: the bench printed no figures:\n{done.stdout[-2000:]}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios.bench.compare", description=__doc__)
    parser.add_argument("revision", help="the commit to compare the working tree against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--module",
        default="scenarios.bench",
        help="the bench to run (default scenarios.bench, whose --part chooses one)",
    )
    parser.add_argument(
        "--server-only",
        action="store_true",
        help="drive both sides with the working tree's bench, the revision's only serving "
        "(the bench takes --server-python: scenarios.bench.fishnet_saturation)",
    )
    words = list(sys.argv[1:] if argv is None else argv)
    # The bench's own arguments come after "--" (e.g. -- --part ring --runs 3).
    split = words.index("--") if "--" in words else len(words)
    args = parser.parse_args(words[:split])
    default = ["--part", "ring"] if args.module == "scenarios.bench" else []
    bench = words[split + 1 :] or default
    before = install(args.revision)
    after = Side("working tree", Path(sys.executable), ROOT)
    if args.server_only:
        before.server_python = before.python
        after.server_python = after.python
    print(f"bench: python -m {args.module} {' '.join(bench)}; {args.rounds} rounds", flush=True)
    for number in range(args.rounds):
        order = (before, after) if number % 2 == 0 else (after, before)
        for side in order:
            side.rounds.append(run_bench(side, args.module, bench))
        shown = ", ".join(
            f"{label} {before.rounds[-1][label][0]:g}/{value:g} {unit}"
            for label, (value, unit) in after.rounds[-1].items()
            if label in before.rounds[-1]
        )
        print(f"round {number + 1} ({order[0].name} first), before/after: {shown}", flush=True)
    print()
    print(f"before: {before.name}; after: the working tree; medians of {args.rounds} rounds")
    for line in summary(before, after):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
