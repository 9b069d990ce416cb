"""A tournament with cheaters in it, each in its box: no attack changes anything of anyone else.

The cheaters (``attackers/``, written by another hand from the user docs
alone) each attack, then play as our random bot does: one kills every
process it can find, one reads and writes another entrant's folder and the
results, one connects to every seat and port it can find, one forks until
it cannot, one fills its disk, one spins on every core. The same tournament
is played again with each cheater replaced by the bot it ends up running:
every game without the killer or the fork bomb (whose attacks may end or
starve their own bot, in their own box) has the same result in both;
their opponents are never at fault; nothing outside the boxes is touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.sandbox_support import box_available

pytestmark = pytest.mark.scenario

ATTACKERS = Path(__file__).parent / "attackers"
# Each cheater's entrant name (a Reversi name is at most 10 letters) and its script.
CHEATERS = {"killer": "killer", "snoop": "snoop", "seatthief": "seat_thief",
            "forkbomb": "fork_bomb", "diskfill": "disk_filler", "spinner": "spinner"}  # fmt: skip
# Attacks that can hit the attacker's own bot, in its own box: the killer's kill(-1) when
# its game lasts past a second, the fork bomb's children holding every process its uid
# may have (its bot then cannot start a thread).
SELF_HARMING = {"killer", "forkbomb"}
BOT = "-m ring bot reversi --server {address} --name {name} --level random --seed 1"


def folder_digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def entrants(tmp: Path, out: Path, *, attacking: bool) -> list[str]:
    python = sys.executable
    honest = tmp / "honest"
    # A gauntlet: the honest student plays each other entrant, two games each.
    players = ["--player", f"honest@{honest}={python} client.py {{host}} {{port}} {{name}}"]
    players += ["--builtin", "positional"]
    for name, script in CHEATERS.items():
        folder = tmp / name
        if not attacking:
            command = f"{python} {BOT}"
        elif name == "snoop":
            targets = f"--victim {honest} --results {out}"
            command = f"{python} snoop.py {{host}} {{port}} {{name}} {targets}"
        else:
            command = f"{python} {script}.py {{host}} {{port}} {{name}}"
        players += ["--player", f"{name}@{folder}={command}"]
    return players


def tournament(tmp: Path, out: Path, *, attacking: bool) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ring", "tournament", "reversi", "--format", "gauntlet",
               "--games", "2", "--move-time", "3", "--concurrency", "2", "--exit-within", "2",
               "--out", str(out), *entrants(tmp, out, attacking=attacking)]  # fmt: skip
    return subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=600)


def games(out: Path) -> dict[int, dict]:
    found = {}
    for path in sorted((out / "games").glob("*.json")):
        result = json.loads(path.read_text())
        found[result["number"]] = result
    return found


def test_no_cheater_changes_another_entrants_result_or_files(tmp_path: Path) -> None:
    if not box_available():
        pytest.fail("no box on this machine (needs root and bubblewrap: .ci/run installs it)")
    shutil.copytree(ATTACKERS / "honest_student", tmp_path / "honest")
    for name, script in CHEATERS.items():
        (tmp_path / name).mkdir()
        shutil.copy(ATTACKERS / f"{script}.py", tmp_path / name)
    honest_before = folder_digest(tmp_path / "honest")
    # A process of the machine that looks like another run's program, and a service of
    # the machine on loopback: a killer and a port scanner would find both unboxed.
    decoy = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        env=dict(os.environ, CARDRING_RUN="t0000000000decoy", CARDRING_PORT="1"),
    )
    service = socket.create_server(("127.0.0.1", 0))
    service.setblocking(False)
    try:
        attacked = tournament(tmp_path, tmp_path / "attacked", attacking=True)
        assert attacked.returncode == 0, attacked.stderr
        assert decoy.poll() is None, "a process outside every box was killed"
        with pytest.raises(BlockingIOError):
            service.accept()  # nothing of the machine's loopback was reached
    finally:
        decoy.kill()
        decoy.wait()
        service.close()
    clean = tournament(tmp_path, tmp_path / "clean", attacking=False)
    assert clean.returncode == 0, clean.stderr
    assert attacked.stderr.startswith("sandbox: bubblewrap"), attacked.stderr

    played, expected = games(tmp_path / "attacked"), games(tmp_path / "clean")
    assert sorted(played) == sorted(expected)
    for number, result in played.items():
        harmed = SELF_HARMING.intersection(result["players"])
        if harmed:
            # Its attack may end or starve its own bot: never its opponent's fault.
            other = next(p for p in result["players"] if p not in harmed)
            assert other not in result["faults"], result["reason"]
            continue
        assert (result["reason"], result["scores"]) == (
            expected[number]["reason"],
            expected[number]["scores"],
        ), number

    # Nothing of anyone else's was read into the evidence, written or planted.
    assert folder_digest(tmp_path / "honest") == honest_before
    out = tmp_path / "attacked"
    assert not list(out.rglob("planted*")), "a file was planted in the results"
    standings = json.loads((out / "standings.json").read_text())
    assert "hacked" not in json.dumps(standings)
    for folder in (out / "games").iterdir():
        if folder.is_dir():
            for evidence in folder.glob("*.stdout"):
                assert "secret strategy notes" not in evidence.read_text(errors="replace")

    # Each attack was made, and met the box.
    said = {name: attack_lines(out, name) for name in CHEATERS}
    assert any("saw 2 processes" in line for line in said["killer"]), said["killer"]
    assert any(line.startswith("ATTACK kill(-1)") for line in said["killer"])
    assert any("Resource temporarily unavailable" in line for line in said["forkbomb"])
    assert any("open: []" in line for line in said["seatthief"]), said["seatthief"]
    assert any("No space left" in line or "File too large" in line
               for line in said["diskfill"]), said["diskfill"]  # fmt: skip
    assert any("Read-only file system" in line for line in said["diskfill"])
    assert any("Read-only file system" in line or "No such file" in line
               for line in said["snoop"]), said["snoop"]  # fmt: skip

    # Every program had a uid of its own, the same in each of its games.
    uids: dict[str, set[int]] = {}
    for boxes in out.glob("games/*/boxes.json"):
        for name, shown in json.loads(boxes.read_text()).items():
            uids.setdefault(name, set()).add(shown["box"]["uid"])
    assert all(len(seen) == 1 for seen in uids.values()), uids
    owners = [next(iter(seen)) for seen in uids.values()]
    assert len(set(owners)) == len(owners) and os.getuid() not in owners


def attack_lines(out: Path, name: str) -> list[str]:
    lines = []
    for path in sorted(out.glob(f"games/*/{name}.stdout")):
        lines += [line for line in path.read_text().splitlines() if line.startswith("ATTACK")]
    return lines


def test_a_tournament_without_a_box_refuses_unless_told(tmp_path: Path) -> None:
    """Where no box can be made (here: no bubblewrap on PATH), one line says why and how
    to go on; --no-sandbox plays, and every standings file says it ran unsandboxed."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("setpriv",):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), bare / tool)
    env = dict(os.environ, PATH=f"{bare}:/nonexistent")
    command = [sys.executable, "-m", "ring", "tournament", "reversi", "--builtin", "random",
               "--builtin", "greedy", "--games", "2", "--move-time", "2"]  # fmt: skip
    refused = subprocess.run(
        [*command, "--out", str(tmp_path / "a")], env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert refused.returncode == 2
    assert refused.stderr.startswith("ring tournament: cannot box the programs: no bwrap")
    assert "--no-sandbox" in refused.stderr
    played = subprocess.run(
        [*command, "--out", str(tmp_path / "b"), "--no-sandbox"], env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert played.returncode == 0, played.stderr
    out = tmp_path / "b"
    assert (out / "standings.md").read_text().startswith("**unsandboxed")
    assert (out / "standings.csv").read_text().startswith('"# unsandboxed')
    assert json.loads((out / "standings.json").read_text())["sandbox"].startswith("unsandboxed")


def test_an_old_maid_program_cannot_join_as_another(tmp_path: Path) -> None:
    """A ring's programs share one network (they dial each other), so a cheater can dial
    the table as another entrant: the table takes a nick only from its entrant's uid.
    (Unboxed, the same cheater takes the victim's seat, and the victim is blamed.)"""
    if not box_available():
        pytest.fail("no box on this machine (needs root and bubblewrap: .ci/run installs it)")
    (tmp_path / "thief").mkdir()
    shutil.copy(ATTACKERS / "nick_thief.py", tmp_path / "thief")
    thief = f"thief@thief={sys.executable} nick_thief.py {{table}} {{nick}} --victim peer"
    out = tmp_path / "out"
    command = [sys.executable, "-m", "ring", "tournament", "oldmaid", "--ring-size", "4",
               "--games", "1", "--builtin", "peer", "--builtin", "peer", "--builtin", "peer",
               "--player", thief, "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (ring,) = games(out).values()
    assert ring["places"] is not None and not ring["faults"], ring["reason"]
    said = attack_lines(out, "thief")
    assert len(said) == 3 and all("is thief's program, not peer's" in line for line in said)
