"""``ring serve``: services found through declarations, many in one process, a clean stop.

The first test declares a service of its own, here, and has it served and
found over mDNS (127.0.0.1 only) without any change to the command line's
code. The others run ``ring serve`` as a real process with both declared
game services and stop it with SIGTERM mid-game.
"""

from __future__ import annotations

import functools
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from ring.cli.app import build_parser
from ring.cli.registry import ServeSettings, Service, declared_services
from ring.cli.serve import chosen_services, serve_all, settings_for
from ring.games.record import read_game
from ring.mdns.discovery import discover, start_advertising
from ring.wire.net import listen
from scenarios.processes import ChildProcess
from services.fishnet.bots import make_player
from services.fishnet.client import BotAgent
from services.fishnet.conversation import play_one_game

RING = [sys.executable, "-m", "ring"]
WAIT = 20.0


async def _serve_echo(
    settings: ServeSettings, *, task_status: trio.TaskStatus[tuple[str, int]]
) -> None:
    prefix = settings.options.echo_prefix.encode()

    async def echo(stream: trio.SocketStream) -> None:
        with trio.fail_after(WAIT):
            await stream.send_all(prefix + await stream.receive_some(100))

    async with trio.open_nursery() as nursery:
        accepting = functools.partial(listen, echo, settings.host, settings.port)
        host, port = await nursery.start(accepting)
        if settings.advertise:
            start_advertising(
                nursery,
                "echo",
                port,
                host=host,
                mdns_interface=settings.mdns_interface,
                mdns_name="echo",
                txt={"v": "1"},
                who="echo",
            )
        task_status.started((host, port))


ECHO = Service(
    name="echo",
    default_port=7,
    summary="an echo service declared by a test",
    serve=_serve_echo,
    add_options=lambda group: group.add_argument("--echo-prefix", default=""),
)


async def test_a_service_declared_in_a_test_is_served_and_discovered() -> None:
    parser = build_parser(services=[ECHO], commands=[])
    args = parser.parse_args(
        ["serve", "--echo", "0", "--advertise", "--mdns-interface", "127.0.0.1",
         "--echo-prefix", "> ", "--seed", "5"]
    )  # fmt: skip
    assert chosen_services(args, [ECHO]) == [ECHO]
    settings = settings_for(args, ECHO, seed=5)
    assert (settings.port, settings.seed) == (0, 5)
    assert settings.transcripts is None
    assert parser.parse_args(["discover", "--kind", "echo"]).kind == ["echo"]
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            addresses = await nursery.start(serve_all, [(ECHO, settings)])
            host, port = addresses["echo"]
            stream = await trio.open_tcp_stream(host, port)
            await stream.send_all(b"hello")
            assert await stream.receive_some(100) == b"> hello"
            await stream.aclose()
            found = []
            while not any(f.port == port for f in found):
                found = await discover(["echo"], interfaces=["127.0.0.1"], timeout=1.0)
            [echo] = [f for f in found if f.port == port]
            assert echo.kind == "echo" and echo.instance.startswith("echo-")
            nursery.cancel_scope.cancel()


def test_the_installed_declarations_and_their_options_fit_one_command_line() -> None:
    services = declared_services()
    games = ["fishnet", "notipping", "oldmaid", "reversi"]
    assert [service.name for service in services] == [*games, "web"]
    parser = build_parser()  # every service's options at once: no clash between them
    args = parser.parse_args(["serve"])
    chosen = chosen_services(args, services)
    assert [service.name for service in chosen] == games  # the page only when asked for
    assert [settings_for(args, s, seed=1).port for s in chosen] == [1530, 10987, 9898, 5410]
    # --web serves the page beside every game; naming games still chooses them
    chosen = chosen_services(parser.parse_args(["serve", "--web"]), services)
    assert [service.name for service in chosen] == [*games, "web"]
    chosen = chosen_services(parser.parse_args(["serve", "--web", "--reversi"]), services)
    assert [service.name for service in chosen] == ["reversi", "web"]


def _line(child: ChildProcess) -> str:
    line = child.first_line(WAIT)
    assert line is not None, child.stderr
    return line


def _address(line: str, name: str) -> tuple[str, int]:
    prefix = f"{name} listening on "
    assert line.startswith(prefix), line
    host, _, port = line.removeprefix(prefix).rpartition(":")
    return host, int(port)


def _join(address: tuple[str, int], nick: str, port: int) -> socket.socket:
    sock = socket.create_connection(address, timeout=WAIT)
    message = {"cmd": "join", "nick": nick, "port": port, "host": "127.0.0.2", "watch": True}
    sock.sendall(json.dumps(message).encode() + b"\n")
    return sock


def _messages(sock: socket.socket, count: int) -> list[dict]:
    data = b""
    while data.count(b"\n") < count:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {data!r}"
        data += chunk
    return [json.loads(line) for line in data.splitlines()[:count]]


@pytest.mark.parametrize("how, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_ring_serve_runs_both_tables_and_a_stop_tells_the_games(
    how: signal.Signals, code: int, tmp_path: Path
) -> None:
    transcripts = tmp_path / "transcripts"
    child = ChildProcess(
        "serve",
        [*RING, "serve", "--oldmaid", "0", "--fishnet", "0", "--players", "2",
         "--seed", "9", "--transcripts", str(transcripts)],
        tmp_path,
    )  # fmt: skip
    try:
        fishnet = _address(_line(child), "fishnet")
        oldmaid = _address(_line(child), "oldmaid")
        # An Old Maid game under way: two players, joined and dealt their seats.
        players = [_join(oldmaid, "ann", 40001), _join(oldmaid, "bob", 40002)]
        for sock in players:
            [reply] = _messages(sock, 1)
            assert reply["result"] == "ok" and len(reply["players"]) == 2
        # A FishNet game under way against a built-in player: its deal has come.
        fisher = socket.create_connection(fishnet, timeout=WAIT)
        fisher.sendall(b"play ann spot\n")
        dealt = fisher.recv(4096)
        assert dealt, "the FishNet server closed instead of dealing"
        child.popen.send_signal(how)
        assert child.popen.wait(WAIT) == code
        child.wait(time.monotonic() + WAIT)
        for sock in players:
            [notice] = _messages(sock, 1)
            assert notice == {"cmd": "game_over", "aborted": True, "reason": "the table shut down"}
            sock.close()
        rest = b""
        while chunk := fisher.recv(4096):
            rest += chunk
        fisher.close()
        assert (dealt + rest).splitlines()[-1] == b"error server_shutting_down", dealt + rest
        assert child.stdout[-1] == "ring serve stopped"
        game = read_game(transcripts / "oldmaid" / "game-000001.jsonl")
        assert [r["event"] for r in game.records if "event" in r][-1] == "aborted"
        assert game.end is not None and game.end.reason == "the table shut down"
        assert game.start.seed == 9  # the first game of the table has the shared seed
    finally:
        child.kill()


def test_ring_serve_keeps_serving_when_its_stdout_goes_away(tmp_path: Path) -> None:
    # `ring serve | head -1`: the reader of stdout leaves after the first line.
    # Each finished game then writes its report line into a broken pipe.
    server = subprocess.Popen(
        [*RING, "serve", "--fishnet", "0", "--seed", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert server.stdout is not None and server.stderr is not None
        address = _address(server.stdout.readline().decode().strip(), "fishnet")
        server.stdout.close()

        async def two_games() -> list[str]:
            ends = []
            for game in range(2):
                agent = BotAgent(make_player("alice", game))
                end = await play_one_game(address, f"ann{game}", "spot", agent, timeout=WAIT)
                ends.append(end.result.name)
            return ends

        assert len(trio.run(two_games)) == 2  # both games ended; the server outlived its stdout
        server.send_signal(signal.SIGTERM)
        assert server.wait(WAIT) == 143
        errors = server.stderr.read().decode()
        assert "Traceback" not in errors and "internal error" not in errors, errors
    finally:
        server.kill()
        server.wait(WAIT)


async def test_every_service_of_one_ring_serve_publishes_to_one_hub() -> None:
    from ring.cli.serve import seeded_settings

    args = build_parser().parse_args(
        ["serve", "--host", "127.0.0.1", "--seed", "5", "--no-advertise"]
        + [f"--{name}=0" for name in ("fishnet", "notipping", "oldmaid", "reversi")]
    )
    chosen = chosen_services(args, declared_services())
    settings = seeded_settings(args, chosen)
    hub = settings[0].hub
    assert all(each.hub is hub for each in settings)
    seen: list[tuple[str, str]] = []
    hub.subscribe(lambda key, record: seen.append((key.service, record.get("event"))))
    async with trio.open_nursery() as nursery:
        addresses = await nursery.start(serve_all, list(zip(chosen, settings, strict=True)))
        with trio.fail_after(WAIT):
            agent = BotAgent(make_player("alice", 1))
            await play_one_game(addresses["fishnet"], "ann", "spot", agent, timeout=WAIT)
        nursery.cancel_scope.cancel()
    assert ("fishnet", "start") in seen and ("fishnet", "end") in seen
    assert seen.index(("fishnet", "start")) < seen.index(("fishnet", "end"))
