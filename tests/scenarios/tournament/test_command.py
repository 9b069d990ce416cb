"""``ring tournament``'s command line: what a mistyped command says, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ring.cli.app import main


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--player", "alice"], "--player is NAME=COMMAND, not 'alice'"),
        (
            ["--builtin", "strongest"],
            "no built-in Reversi player 'strongest': random, greedy, positional, deep",
        ),
        (["--builtin", "team-07=deep"], "'team-07' is not a Reversi name (1-10 of A-Z a-z 0-9 _)"),
        (
            ["--builtin", "deep", "--builtin", "deep", "--games", "3"],
            "--games is how many games a pair plays, half with each colour: an even number",
        ),
        (["--builtin", "deep"], "a tournament needs at least 2 entrants, not 1"),
        (["--builtin", "a=deep", "--builtin", "a=random"], "two entrants are named 'a'"),
        (
            ["--builtin", "deep", "--builtin", "random", "--move-time", "0"],
            "a tournament needs a time limit",
        ),
    ],
)
def test_a_bad_tournament_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], words: list[str], said: str
) -> None:
    assert main(["tournament", "reversi", *words, "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ring tournament: {said}") and err.count("\n") == 1
    assert not (tmp_path / "t").exists()


def test_built_in_players_of_one_level_get_names_of_their_own(tmp_path: Path) -> None:
    from scenarios.tournament.command import entrants_of

    given = [("builtin", "positional"), ("builtin", "positional"), ("builtin", "x=deep")]
    entrants = entrants_of("reversi", [*given, ("player", "me=./client {port}")])
    assert [(e.name, e.level, e.command) for e in entrants] == [  # type: ignore[attr-defined]
        ("positional", "positional", ()),
        ("position2", "positional", ()),
        ("x", "deep", ()),
        ("me", None, ("./client", "{port}")),
    ]
