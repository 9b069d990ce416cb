"""``ring tournament oldmaid``: rings of real peers around our real table."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from scenarios.tournament import results
from scenarios.tournament.jobs import Entrant, Settings
from scenarios.tournament.runner import Tournament, run

STUDENT = Path(__file__).resolve().parents[2] / "interop" / "student_peer.py"


def test_a_ring_plays_on_without_its_no_shows_and_ranks_them_last(tmp_path: Path) -> None:
    entrants = (
        Entrant("peer", level="peer"),
        Entrant("peer2", level="peer"),
        # the 2013 student stand-in: blocking sockets, a thread per connection
        Entrant(
            "student", (sys.executable, str(STUDENT), "--nick", "{nick}", "--table", "{table}")
        ),
        Entrant("exits", (sys.executable, "-c", "raise SystemExit(4)")),
        Entrant("nojoin", (sys.executable, "-c", "import time; time.sleep(60)")),
    )
    out = tmp_path / "t"
    tournament = Tournament(
        "oldmaid", entrants, out, games=3, seed=5, ring_size=4, concurrency=3,
        settings=Settings(connect_within=2.0, exit_within=1.0),
    )  # fmt: skip
    assert run(tournament, stream=io.StringIO()) == 0
    played = results.load(out / "games")
    assert len(played) == 3
    expected = {
        "exits": "crashed (exited with status 4) before its game began",
        "nojoin": "did not join the table within 2 s",
    }
    for number, result in played.items():
        absent = [name for name in result.players if name in expected]
        assert result.faults == {name: expected[name] for name in absent}
        assert result.places is not None
        # first out first, the one holding the Old Maid, then those at fault
        assert result.places[len(result.places) - len(absent) :] == [
            name for name in result.players if name in absent
        ]
        holder = results.old_maid_holder(result)
        assert holder is not None and holder not in absent
        with (out / "games" / f"{number:05d}" / "transcript.jsonl").open() as transcript:
            lines = [json.loads(line) for line in transcript]
        [started] = [line for line in lines if line.get("event") == "start"]
        assert sorted(p["name"] for p in started["players"]) == sorted(
            name for name in result.players if name not in absent
        )
        end = lines[-1]
        assert end["event"] == "end" and end["losers"] == [holder]
    table = json.loads((out / "standings.json").read_text())
    ranking = {entry["name"]: entry for entry in table["ranking"]}
    for name in expected:
        assert ranking[name]["losses"] == ranking[name]["rings"] > 0
    assert [entry["name"] for entry in table["ranking"]][-2:] in (
        ["exits", "nojoin"],
        ["nojoin", "exits"],
    )


def test_rings_of_built_in_peers_replay_to_the_same_losers_at_any_concurrency(
    tmp_path: Path,
) -> None:
    """The cards decide who holds the Old Maid; players who go out in the same moment
    (discarding their dealt pairs, all at once) are placed in the order the table heard
    them, which no seed fixes."""
    entrants = tuple(Entrant(f"p{n}", level="peer") for n in range(4))
    for concurrency, out in ((2, tmp_path / "one"), (3, tmp_path / "three")):
        tournament = Tournament(
            "oldmaid", entrants, out, games=2, seed=9, ring_size=3, concurrency=concurrency
        )
        assert run(tournament, stream=io.StringIO()) == 0
    one, three = (results.load(tmp_path / name / "games") for name in ("one", "three"))
    assert len(one) == len(three) == 2
    for number in one:
        assert results.old_maid_holder(one[number]) == results.old_maid_holder(three[number])
        assert one[number].faults == three[number].faults == {}
        assert sorted(one[number].places or []) == sorted(three[number].places or [])


def test_a_verified_tournament_plays_its_rings_without_the_older_client(tmp_path: Path) -> None:
    """``--verified``: the 2013 student (no ``verify``) is refused at its join and its ring
    plays on without it; every game that began was verified, as its records say."""
    entrants = (
        Entrant("peer", level="peer"),
        Entrant("peer2", level="peer"),
        Entrant(
            "student", (sys.executable, str(STUDENT), "--nick", "{nick}", "--table", "{table}")
        ),
    )
    out = tmp_path / "t"
    tournament = Tournament(
        "oldmaid", entrants, out, games=1, seed=5, ring_size=3, concurrency=1,
        settings=Settings(connect_within=2.0, exit_within=1.0, verified=True),
    )  # fmt: skip
    assert run(tournament, stream=io.StringIO()) == 0
    [result] = results.load(out / "games").values()
    assert result.faults == {
        "student": 'joined without "verify":true and "witness":true, which a --verified '
        "tournament refuses (docs/protocols/oldmaid.md 14.5, 14.6)"
    }
    assert result.places is not None and result.places[-1] == "student"
    with (out / "games" / "00001" / "transcript.jsonl").open() as transcript:
        lines = [json.loads(line) for line in transcript]
    [start] = [line for line in lines if line.get("event") == "start"]
    assert start["options"]["verified"] is True
    [started] = [line for line in lines if line.get("event") == "started"]
    assert sorted(started["verified"]) == ["peer", "peer2"]
    refusals = [
        line["msg"]["message"]
        for line in lines
        if line.get("dir") == "out" and (line.get("msg") or {}).get("result") == "error"
    ]
    assert any("verified games only" in message for message in refusals)
