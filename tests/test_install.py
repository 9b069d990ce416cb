"""The install a student or an instructor makes (issue 45): the wheel, built from this
tree, installed into a fresh virtual environment outside the clone, on the default Python
and on the newest one the machine has (pyenv), then used from another folder: ``ring
--version``, ``ring serve --web`` (the page and a static file), ``ring check`` against a
bot, and a ``ring tournament`` of two bots.

Real processes and a real install (the dependencies come from the package index, or
pip's cache), so nothing of the clone is on the path: what a wheel lacks fails here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.ring_serve_process import ring_serve

ROOT = Path(__file__).resolve().parents[1]
INSTALL_TIMEOUT = 600.0
RUN_TIMEOUT = 120.0
PYENV_VERSIONS = Path.home() / ".pyenv" / "versions"


def newest_python() -> Path | None:
    """The newest CPython 3 under pyenv, if it is newer than the one running the tests."""
    found = []
    for folder in PYENV_VERSIONS.glob("3.*"):
        match = re.fullmatch(r"3\.(\d+)\.(\d+)", folder.name)
        python = folder / "bin" / "python3"
        if match and python.exists():
            found.append(((3, int(match[1]), int(match[2])), python))
    if not found:
        return None
    version, python = max(found)
    return python if version[:2] > sys.version_info[:2] else None


PYTHONS = [pytest.param(Path(sys.executable), id="default")]
if (newest := newest_python()) is not None:
    PYTHONS.append(pytest.param(newest, id=newest.parent.parent.name))


# What the wheel is built from (pyproject.toml's packages, its readme): copied, so that the
# build writes nothing into the clone and two test workers never build in one folder.
SOURCES = ("pyproject.toml", "README.md", "ring", "services", "scenarios")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        else:
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        timeout=INSTALL_TIMEOUT, capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    [found] = out.glob("cardring-*.whl")
    return found


def run(argv: list[str], cwd: Path, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("python", PYTHONS)
def test_the_wheel_installed_elsewhere_serves_checks_and_runs_a_contest(
    python: Path, wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True, timeout=RUN_TIMEOUT)
    pip = run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
              tmp_path, INSTALL_TIMEOUT)  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-2000:]
    ring = str(venv / "bin" / "ring")
    elsewhere = tmp_path / "elsewhere"  # not the clone: nothing of it on the path
    elsewhere.mkdir()

    version = run([ring, "--version"], elsewhere)
    assert version.returncode == 0 and version.stdout.startswith("ring (cardring "), version

    page, static = serve_and_fetch(ring, elsewhere)
    assert b"<html" in page.lower() and len(static) > 100

    check = run([ring, "check", "reversi", "--", ring, "bot", "reversi", "--server", "{address}",
                 "--name", "{name}", "--level", "greedy"], elsewhere)  # fmt: skip
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    assert re.search(r"\d+ PASS, 0 WARN, 0 FAIL", check.stdout), check.stdout[-2000:]

    contest = run([ring, "tournament", "reversi", "--builtin", "random", "--builtin", "greedy",
                   "--games", "2", "--out", str(elsewhere / "contest")], elsewhere)  # fmt: skip
    assert contest.returncode == 0, contest.stdout[-2000:] + contest.stderr[-2000:]
    assert (elsewhere / "contest" / "standings.json").exists(), contest.stdout[-2000:]


def serve_and_fetch(ring: str, cwd: Path) -> tuple[bytes, bytes]:
    """``ring serve --web`` from ``cwd``: the page, and its stylesheet, over HTTP."""
    with ring_serve("--web", "0", "--fishnet", "0", services=2, program=[ring], cwd=cwd) as served:
        address = served["web"]
        with urllib.request.urlopen(f"http://{address}/", timeout=RUN_TIMEOUT) as reply:
            page = reply.read()
        stylesheet = f"http://{address}/static/page.css"
        with urllib.request.urlopen(stylesheet, timeout=RUN_TIMEOUT) as reply:
            static = reply.read()
        return page, static
