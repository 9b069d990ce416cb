"""Deals nobody can predict (issue 28): a secret by default, a published seed on request.

Without ``--seed``, ``ring serve`` draws a 128-bit secret that it prints
nowhere; each service's key and each game's seed are keyed hashes
(HMAC-SHA256), and each game's transcript holds the seed that replays it.
With ``--seed``, every game is dealt exactly as before: the deal below was
recorded from the code before this change.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import signal
import socket
import sys
import time
from pathlib import Path

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import seed_line, seeded_settings
from ring.games.record import GameRecord, read_game
from ring.games.seeds import SECRET_BITS, keyed_seed, keyed_text, new_secret, server_seed
from scenarios.processes import ChildProcess
from services.fishnet.rules import Dealt, FishNetGame
from services.fishnet.server import FishNetServer, ServerConfig
from services.reversi.server import ReversiConfig, ReversiServer

RING = [sys.executable, "-m", "ring"]
WAIT = 20.0
# FishNet "play ann spot" on `ring serve --seed 4`: what ann was dealt before
# this change (game seed "4:ann:spot:0").
ANN_DEALT_ON_SEED_4 = ["fish 6", "fish 5", "fish 3", "fish 10", "fish 5", "fish 1", "fish 2"]


# -- the derivation -------------------------------------------------------------------------


def test_a_keyed_seed_is_hmac_sha256_of_the_parts_under_the_key() -> None:
    key = 0x0123456789ABCDEF0123456789ABCDEF
    digest = hmac.new(key.to_bytes(16, "big"), b'["fishnet", "ann", "bob", "0"]', hashlib.sha256)
    expected = int.from_bytes(digest.digest()[:16], "big")
    assert keyed_seed(key, "fishnet", "ann", "bob", 0) == expected
    assert keyed_text(key, "fishnet", "ann", "bob", 0) == f"{expected:032x}"
    assert keyed_seed(key, "fishnet", "ann", "bob", 1) != expected
    assert keyed_seed(key + 1, "fishnet", "ann", "bob", 0) != expected


def test_a_secret_is_large_and_fresh_each_time() -> None:
    secrets = {new_secret() for _ in range(8)}
    assert len(secrets) == 8 and max(secrets) < 2**SECRET_BITS
    assert server_seed(None, False)[1] is True  # no seed given: a secret
    assert server_seed(7, False) == (7, False)


def _first_deal(server: FishNetServer) -> list[tuple[int, int]]:
    game = FishNetGame(server.game_seed(["ann", "bob"]))
    return [(entry.player, entry.rank) for entry in game.deal_log if isinstance(entry, Dealt)]


def test_fishnet_deals_come_from_the_secret_not_from_the_names() -> None:
    config = ServerConfig(port=0)
    one, other = (FishNetServer(config, key, keyed=True) for key in (2**127 + 1, 2**127 + 2))
    assert one.game_seed(["ann", "bob"]) == keyed_text(2**127 + 1, "fishnet", "ann", "bob", 0)
    assert _first_deal(one) != _first_deal(other)  # same names, other secret: another deal
    assert one.game_seed(["ann", "bob"]) != one.game_seed(["ann", "bob"])  # each game its own


def test_a_published_seed_deals_as_before() -> None:
    server = FishNetServer(ServerConfig(port=0, seed=4), 4)
    assert server.game_seed(["ann", "spot"]) == "4:ann:spot:0"
    assert ReversiServer(ReversiConfig(port=0, seed=4), 4).game_seed(1) == "4:1"
    secret = ReversiServer(ReversiConfig(port=0), 99, keyed=True)
    assert secret.game_seed(1) == keyed_text(99, "reversi", 1)


def test_ring_serve_gives_each_service_its_own_key_or_everyone_the_published_seed() -> None:
    parser = build_parser()
    services = declared_services()
    published = seeded_settings(parser.parse_args(["serve", "--seed", "9"]), services)
    assert {(s.seed, s.keyed) for s in published} == {(9, False)}
    args = parser.parse_args(["serve"])
    first, second = seeded_settings(args, services), seeded_settings(args, services)
    keys = [s.seed for s in first]
    assert all(s.keyed for s in first) and len(set(keys)) == len(services)
    assert keys != [s.seed for s in second]  # a fresh secret each start
    assert "9" not in seed_line(args) and "predict" in seed_line(
        parser.parse_args(["serve", "--seed", "9"])
    )


# -- ring serve, as a process ----------------------------------------------------------------


def _serve(tmp_path: Path, *extra: str) -> tuple[ChildProcess, tuple[str, int]]:
    child = ChildProcess(
        "serve",
        [*RING, "serve", "--fishnet", "0", "--transcripts", str(tmp_path / "games"), *extra],
        tmp_path,
    )
    line = child.first_line(WAIT)
    assert line is not None and line.startswith("fishnet listening on "), child.stderr
    host, _, port = line.removeprefix("fishnet listening on ").rpartition(":")
    return child, (host, int(port))


def _dealt(address: tuple[str, int], team: str) -> list[str]:
    """Play ``team`` against spot until the deal is told; then leave."""
    with socket.create_connection(address, timeout=WAIT) as sock:
        sock.sendall(f"play {team} spot\n".encode())
        data = b""
        while data.count(b"\n") < 7:
            chunk = sock.recv(4096)
            assert chunk, data
            data += chunk
    return [line.decode() for line in data.splitlines()[:7]]


def _stop(child: ChildProcess) -> str:
    child.popen.send_signal(signal.SIGTERM)
    assert child.popen.wait(WAIT) == 143
    child.wait(time.monotonic() + WAIT)
    return "\n".join(child.stdout + child.stderr)


def _game_record(tmp_path: Path) -> GameRecord:
    [path] = (tmp_path / "games" / "fishnet").iterdir()
    return read_game(path)


def test_without_a_seed_nothing_prints_the_secret_and_the_record_replays_the_game(
    tmp_path: Path,
) -> None:
    child, address = _serve(tmp_path, "--oldmaid", "0", "--players", "2")
    try:
        assert (child.first_line(WAIT) or "").startswith("oldmaid listening on ")
        dealt = _dealt(address, "ann")
        output = _stop(child)
    finally:
        child.kill()
    record = _game_record(tmp_path)
    seed = str(record.start.seed)
    assert re.fullmatch(r"[0-9a-f]{32}", seed), seed
    # The game's record replays it: its seed deals what ann was dealt.
    game = FishNetGame(seed)
    assert [f"fish {e.rank}" for e in game.deal_log if isinstance(e, Dealt) and e.player == 0] == (
        dealt
    )
    assert record.events("deal")[0]["first"] == game.first_player
    # Nothing the server printed names a seed, a key, or any long number.
    assert seed not in output
    assert not re.search(r"[0-9a-f]{16,}|\d{10,}|seed \d", output), output
    assert "printed nowhere" in output


def test_a_published_seed_deals_exactly_as_before(tmp_path: Path) -> None:
    child, address = _serve(tmp_path, "--seed", "4")
    try:
        assert _dealt(address, "ann") == ANN_DEALT_ON_SEED_4
        output = _stop(child)
    finally:
        child.kill()
    assert _game_record(tmp_path).start.seed == "4:ann:spot:0"
    assert "ring serve seed 4 (replay with --seed 4" in output
    assert "predict every deal" in output
