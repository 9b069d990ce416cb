"""The verifying client written from docs/protocols/oldmaid.md alone (``doc_client/``, by
another hand: its README says how) against our table and our peers, as real processes.

It proves the spec is enough: its self-test recomputes the worked example of 14.6 from
its own code, and it plays whole verified games with ``ring peer``s at a table run with
``--verified``, and older games without ``verify``, to a normal end: no abort, no one
named, every process exiting 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scenarios import processes

pytestmark = pytest.mark.scenario

CLIENT = Path(__file__).parent / "doc_client" / "verified_peer.py"
TIMEOUT = 40.0  # a ring of three takes a second or two; every wait below is bounded


def test_its_self_test_recomputes_the_worked_example() -> None:
    done = subprocess.run(
        [sys.executable, str(CLIENT), "--selftest"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def play(
    seed: int,
    *,
    verified: bool,
    clients: int,
    players: int,
    witness_after: float | None = None,
    transcript: Path | None = None,
    extra: tuple[str, ...] = (),
) -> tuple[str, list[str]]:
    """One game; the table's last line and one line per player (exit status, last line).
    ``witness_after``: the doc clients ask the table to witness an exchange that soon;
    ``extra``: more options for the doc clients."""
    table_command = [*processes.ring_command(), "table", "--players", str(players), "--port",
                     "0", "--seed", str(seed), "--linger", "2"]  # fmt: skip
    if verified:
        table_command.append("--verified")
    if transcript is not None:
        table_command += ["--transcript", str(transcript)]
    table = subprocess.Popen(
        table_command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    players_run: list[tuple[str, subprocess.Popen[str]]] = []
    try:
        assert table.stdout is not None
        first = table.stdout.readline()
        assert first.startswith("table listening on "), first
        address = first.split()[3]
        for seat in range(players):
            nick = f"doc{seat}" if seat < clients else f"ours{seat}"
            if seat < clients:
                command = [sys.executable, str(CLIENT), "--nick", nick, "--table", address,
                           "--host", "127.0.0.1", "--seed", str(seed * 10 + seat), "--quiet"]
                if not verified:
                    command.append("--no-verify")
                if witness_after is not None:
                    command += ["--witness-after", str(witness_after)]
                command += extra
            else:
                command = [*processes.ring_command(), "peer", "--name", nick, "--server",
                           address, "--host", "127.0.0.1", "--port", "0", "--seed",
                           str(seed * 10 + seat)]  # fmt: skip
            run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True)  # fmt: skip
            players_run.append((nick, run))
        lines = []
        for nick, run in players_run:
            output, _ = run.communicate(timeout=TIMEOUT)
            last = [line for line in output.splitlines() if line.strip()][-1:] or [""]
            lines.append(f"{nick} exit {run.returncode}: {last[0]}")
        output, _ = table.communicate(timeout=TIMEOUT)
        return [line for line in (first + output).splitlines() if line.strip()][-1], lines
    finally:
        for _, run in players_run:
            run.kill()
        table.kill()


@pytest.mark.parametrize(
    ("seed", "verified", "clients", "players"),
    [(1, True, 1, 3), (2, True, 2, 3), (3, False, 1, 3), (4, True, 2, 5)],
)
def test_it_plays_whole_games_with_our_peers_to_a_normal_end(
    seed: int, verified: bool, clients: int, players: int
) -> None:
    ending, lines = play(seed, verified=verified, clients=clients, players=players)
    assert ending.startswith("game over"), (ending, lines)
    if verified:
        assert "[verified game: every exchange reported]" in ending, ending
    assert all(" exit 0: " in line for line in lines), lines


def test_it_makes_its_moves_of_exchanges_the_table_witnesses(tmp_path: Path) -> None:
    """Two doc clients asking the table about every exchange they wait in at all (14.6, the
    table as witness) and a ``ring peer``: a normal end, every exchange through the table
    as the transcript shows."""
    transcript = tmp_path / "t.jsonl"
    ending, lines = play(
        5, verified=True, clients=2, players=3, witness_after=0.0, transcript=transcript
    )
    assert ending.startswith("game over"), (ending, lines)
    assert all(" exit 0: " in line for line in lines), lines
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    asked = [r for r in records if (r.get("msg") or {}).get("cmd") == "witness"]
    moves = [r for r in records if (r.get("msg") or {}).get("cmd") == "move"]
    assert len(asked) >= 5 and len(moves) >= 5, (len(asked), len(moves))


def test_it_takes_and_leaves_draw_turns_the_table_hands_on(tmp_path: Path) -> None:
    """Two doc clients that lose a tenth of their your_turns and draw on a fifth without
    answering ok (14.6, "The draw turn"), and a ``ring peer``: the table hands those turns
    on, every player draws on its notices, no sender gives up, and the game ends as ever."""
    transcript = tmp_path / "t.jsonl"
    ending, lines = play(
        7, verified=True, clients=2, players=3, transcript=transcript,
        extra=("--drop-your-turn", "0.1", "--no-ok-to-your-turn", "0.2"),
    )  # fmt: skip
    assert ending.startswith("game over"), (ending, lines)
    assert all(" exit 0: " in line for line in lines), lines
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    handed = [r for r in records if (r.get("msg") or {}).get("cmd") == "draw_turn"]
    assert len(handed) >= 2, len(handed)  # each went to two players: its drawer, its sender


def test_it_checks_offers_and_sends_refused_ones_through_the_table(tmp_path: Path) -> None:
    """Two doc clients that garble a quarter of their offers' macs on the way, and a ``ring
    peer`` (14.6, "Checking an offer"): every receiver checks each offer with the table and
    refuses the garbled ones, each such offer comes through the table, and the game ends
    as ever, naming no one."""
    transcript = tmp_path / "t.jsonl"
    ending, lines = play(
        3, verified=True, clients=2, players=3, transcript=transcript,
        extra=("--garble-offer", "0.25"),
    )  # fmt: skip
    assert ending.startswith("game over"), (ending, lines)
    assert all(" exit 0: " in line for line in lines), lines
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    checks = [r for r in records if (r.get("msg") or {}).get("cmd") == "check_offer"]
    owed = [
        r for r in records
        if (r.get("msg") or {}).get("cmd") == "witnessed" and r["msg"].get("move") == "offer"
    ]  # fmt: skip
    assert len(checks) >= 5 and owed, (len(checks), len(owed))
