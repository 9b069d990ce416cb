"""The games' declarations: the same flags in every ``ring play`` and ``ring bot``,
``ring serve --move-time``, renamed flags' old spellings, and the configs each
service builds from ``ring serve``'s settings (its server replaced by a stand-in)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio

from ring.cli.app import build_parser
from ring.cli.registry import Service, declared_services
from ring.cli.serve import settings_for
from tests.helpers.cli import subparser

GAMES = ["fishnet", "notipping", "reversi"]


def _service(name: str) -> Service:
    return next(service for service in declared_services() if service.name == name)


def _help(*words: str) -> str:
    """What ``ring WORDS... --help`` prints."""
    parser = build_parser()
    for word in words:
        parser = subparser(parser, word)
    return parser.format_help()


@pytest.mark.parametrize("game", GAMES)
def test_every_game_client_has_the_same_flags(game: str) -> None:
    seat = ["--seat"] if game == "notipping" else []
    for verb, flags in (
        ("play", ["--server", "--name", *seat, "--timeout"]),
        ("bot", ["--server", "--name", *seat, "--timeout", "--level", "--games", "--seed"]),
    ):
        shown = _help(verb, game)
        assert all(f"  {flag} " in shown for flag in flags), (verb, game, shown)
        assert "--handle" not in shown and "--player" not in shown


def test_no_tipping_keeps_handle_and_player_as_hidden_old_spellings() -> None:
    parser = build_parser()
    old = parser.parse_args(["bot", "notipping", "--handle", "ann", "--player", "1",
                             "--level", "greedy"])  # fmt: skip
    new = parser.parse_args(["bot", "notipping", "--name", "ann", "--seat", "1",
                             "--level", "greedy"])  # fmt: skip
    assert old == new and (new.name, new.seat) == ("ann", 1)
    play = parser.parse_args(["play", "notipping", "--handle", "ann", "--player", "0"])
    assert (play.name, play.seat) == ("ann", 0)


def test_serve_has_one_move_time_and_move_timeout_still_works() -> None:
    shown = _help("serve")
    assert "--move-time SECONDS" in shown and "--move-timeout" not in shown
    parser = build_parser()
    old = parser.parse_args(["serve", "--fishnet", "0", "--move-timeout", "20"])
    new = parser.parse_args(["serve", "--fishnet", "0", "--move-time", "20"])
    assert old == new and new.move_time == 20.0


def test_each_service_gets_its_own_move_time_unless_one_is_given() -> None:
    parser = build_parser()
    default = parser.parse_args(["serve"])
    chosen = parser.parse_args(["serve", "--move-time", "5"])
    own_times = {"fishnet": 120.0, "reversi": 30.0, "notipping": None, "oldmaid": None}
    for name, own in own_times.items():
        service = _service(name)
        assert settings_for(default, service, seed=1).move_time == own
        given = settings_for(chosen, service, seed=1).move_time
        assert given == (None if own is None else 5.0)


SERVERS = {
    "fishnet": ("services.fishnet.server", "serve_fishnet"),
    "notipping": ("services.notipping.server", "serve_notipping"),
    "reversi": ("services.reversi.server", "serve_reversi"),
    "oldmaid": ("services.oldmaid.table.server", "serve_tables"),
}


async def _configured(
    monkeypatch: pytest.MonkeyPatch, name: str, argv: list[str]
) -> tuple[Any, SimpleNamespace, list[str]]:
    """The config service ``name`` builds for ``ring serve ARGV``, the stand-in server
    it started, and the lines it said."""
    module, function = SERVERS[name]
    made: list[Any] = []
    server = SimpleNamespace(address=("127.0.0.1", 1234), on_report=None)

    async def stand_in(config: Any, *, task_status: trio.TaskStatus[Any]) -> None:
        made.append(config)
        task_status.started(server.address if name == "oldmaid" else server)
        await trio.sleep_forever()

    monkeypatch.setattr(f"{module}.{function}", stand_in)
    args = build_parser().parse_args(["serve", f"--{name}", "0", *argv])
    said: list[str] = []
    service = _service(name)
    settings = replace(settings_for(args, service, seed=7, keyed=True), say=said.append)
    async with trio.open_nursery() as nursery:
        assert await nursery.start(service.serve, settings) == ("127.0.0.1", 1234)
        nursery.cancel_scope.cancel()
    return made[0], server, said


@pytest.mark.parametrize("name", sorted(SERVERS))
async def test_each_service_takes_the_shared_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    argv = ["--host", "0.0.0.0", "--transcripts", str(tmp_path), "--idle-timeout", "7",
            "--wait-timeout", "8", "--max-per-address", "3", "--no-advertise",
            "--mdns-interface", "10.0.0.1", "--name", "lab"]  # fmt: skip
    config, _, _ = await _configured(monkeypatch, name, argv)
    transcripts = config.transcript_dir if name == "fishnet" else config.transcripts
    assert transcripts == tmp_path / name
    # The seed 7 here is a secret key (keyed): No Tipping deals nothing, so it
    # must not write the key into its records; the others derive game seeds.
    seed = None if name == "notipping" else 7
    assert (config.host, config.port, config.seed) == ("0.0.0.0", 0, seed)
    assert (config.idle_timeout, config.wait_timeout) == (7.0, 8.0)
    assert (config.max_connections, config.max_per_address) == (256, 3)
    assert (config.advertise, config.mdns_interface, config.mdns_name) == (False, "10.0.0.1", "lab")
    assert getattr(config, "keyed", True)  # No Tipping deals nothing, and has no key


async def test_the_move_time_reaches_the_servers_that_time_moves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fishnet, server, said = await _configured(monkeypatch, "fishnet", ["--move-time", "9"])
    assert fishnet.move_timeout == 9.0
    server.on_report(SimpleNamespace(line="game 1: ann 7 - 6 bob: ann wins"))
    assert said == ["fishnet: game 1: ann 7 - 6 bob: ann wins"]
    unlimited, _, _ = await _configured(monkeypatch, "fishnet", ["--move-time", "0"])
    assert unlimited.move_timeout == math.inf  # 0: no limit, as for Reversi
    reversi, _, _ = await _configured(monkeypatch, "reversi", ["--move-timeout", "9"])
    assert reversi.move_time == 9.0
    assert (await _configured(monkeypatch, "reversi", []))[0].move_time == 30.0
