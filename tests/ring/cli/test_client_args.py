"""The shared client arguments (``ring.cli.client_args``), renamed flags (``cliargs.add_renamed``).

A game of the test's own is declared here, so the flags every ``ring play``
and ``ring bot`` share are checked without any real game.
"""

from __future__ import annotations

import argparse

import pytest

from ring.cli import cliargs
from ring.cli.app import build_parser
from ring.cli.client_args import GameClients, Names
from ring.cli.registry import Service
from tests.helpers.cli import subparser

SHARED_PLAY = ["--server", "--name", "--timeout"]
SHARED_BOT = [*SHARED_PLAY, "--level", "--games", "--seed"]


def _run(args: argparse.Namespace) -> int:
    return 0


async def _never(settings: object, *, task_status: object) -> None:
    raise AssertionError("not served in these tests")


def _parser(**clients: object) -> argparse.ArgumentParser:
    names = Names("letters only", str.isalpha)
    game = GameClients(4000, names, ["easy", "hard"], _run, **clients)  # type: ignore[arg-type]
    toy = Service("toy", 4000, "a toy game", _never, bot=game.bot, play=game.play)
    return build_parser([toy], [])


def _help(parser: argparse.ArgumentParser, verb: str, game: str) -> str:
    """What ``ring VERB GAME --help`` prints."""
    return subparser(subparser(parser, verb), game).format_help()


def test_every_client_takes_the_shared_flags_with_their_defaults() -> None:
    parser = _parser()
    play = parser.parse_args(["play", "toy", "--name", "ann"])
    assert (play.server, play.name, play.timeout) == (("127.0.0.1", 4000), "ann", 600.0)
    bot = parser.parse_args(["bot", "toy", "--name", "bo", "--level", "HARD"])
    assert (bot.level, bot.games, bot.seed) == ("hard", 1, None)
    assert all(flag in _help(parser, "bot", "toy") for flag in SHARED_BOT)
    play_help = _help(parser, "play", "toy")
    assert all(flag in play_help for flag in SHARED_PLAY)
    assert "--level" not in play_help and "--seat" not in play_help


def test_a_name_the_game_refuses_says_what_a_name_is(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["play", "toy", "--name", "a1"])
    assert "argument --name: a name is letters only, not 'a1'" in capsys.readouterr().err


def test_seats_where_the_game_has_them() -> None:
    parser = _parser(seats=[0, 1], seat_help="which seat")
    assert parser.parse_args(["play", "toy", "--name", "ann", "--seat", "1"]).seat == 1
    for argv in (["--name", "ann"], ["--name", "ann", "--seat", "2"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["play", "toy", *argv])


def test_an_old_spelling_works_and_is_hidden(capsys: pytest.CaptureFixture[str]) -> None:
    parser = _parser(seats=[0, 1], old_flags={"--name": "--handle", "--seat": "--player"})
    old = parser.parse_args(["play", "toy", "--handle", "ann", "--player", "1"])
    new = parser.parse_args(["play", "toy", "--name", "ann", "--seat", "1"])
    assert old == new
    shown = _help(parser, "play", "toy")
    assert "--handle" not in shown and "--player" not in shown
    with pytest.raises(SystemExit):  # still required, in either spelling
        parser.parse_args(["play", "toy", "--seat", "1"])
    err = capsys.readouterr().err
    assert "--name is required" in err and "--handle" not in err


def test_add_renamed_keeps_the_type_and_the_default() -> None:
    parser = argparse.ArgumentParser()
    cliargs.add_renamed(parser, "--move-time", "--move-timeout", type=cliargs.seconds, default=5.0)
    assert parser.parse_args([]).move_time == 5.0
    assert parser.parse_args(["--move-timeout", "2"]).move_time == 2.0
    with pytest.raises(SystemExit):
        parser.parse_args(["--move-timeout", "-1"])
    assert "--move-timeout" not in parser.format_help()
