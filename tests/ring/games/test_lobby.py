"""ring.games.lobby without any real game: the race to ten of ``race_game``, served on loopback.

A connection sits with ``SIT <seat> <name>``; two seats make a game. What is
checked here is the lobby's own part: seating, the wait, the record hub and
the transcripts, the stop.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio

from ring.games.lobby import Lobby, ServerError, serve
from ring.games.match import Match, Seat
from ring.games.record import RecordHub, read_game
from tests.helpers import servers
from tests.helpers.race_game import Client, LineWire, Race, State, shown


@dataclass(frozen=True)
class RaceConfig:
    host: str = "127.0.0.1"
    port: int = 0
    transcripts: Path | None = None
    hub: RecordHub | None = None
    wait_timeout: float = 600.0
    max_connections: int = 16
    max_per_address: int | None = None
    exempt_loopback: bool = True
    advertise: bool | None = None
    mdns_interface: str | None = None
    mdns_name: str = "race"
    on_end: Any = field(default=None, compare=False)


class RaceLobby(Lobby):
    service = "race"

    def seat(self, stream: trio.abc.Stream, peer: str) -> Seat:
        return Seat(stream, LineWire(), peer, max_unread=64, shown=shown)

    async def introduce(self, player: Seat) -> bool:
        event = await player.event()
        if not isinstance(event, str) or not event.startswith("SIT "):
            return False
        _, seat, player.name = event.split()
        player.granted = self.take(player, int(seat))
        return player.granted

    def match(self, number: int, players: tuple[Seat, Seat]) -> Match[State]:
        return Match(Race(), players, (0, 0), number=number, seed=None, hub=self.hub)


def running(config: RaceConfig) -> AbstractAsyncContextManager[RaceLobby]:
    return servers.running(serve, RaceLobby(config))


async def sit(server: RaceLobby, seat: int, name: str) -> Client:
    client = Client(await trio.open_tcp_stream(*server.address))
    await client.send(f"SIT {seat} {name}")
    return client


async def test_two_seats_make_a_game_recorded_through_the_hub_and_in_files(
    tmp_path: Path,
) -> None:
    hub = RecordHub()
    seen: list[dict[str, Any]] = []
    hub.subscribe(lambda key, record: seen.append(record))
    async with running(RaceConfig(transcripts=tmp_path, hub=hub)) as server:
        bob = await sit(server, 1, "bob")  # seat 1 first: it waits
        ann = await sit(server, 0, "ann")
        await ann.expect("GAME 1 FIRST", "TOTAL 0")
        await ann.send("QUIT")
        await ann.expect("LOSE")
        await bob.expect("GAME 1 SECOND", "WIN")
        assert await ann.line() is None and await bob.line() is None  # both closed
        assert server.forming == {} and not server.games_running
    [report] = server.reports
    assert report[:2] == (1, ("ann", "bob"))
    game = read_game(tmp_path / "game-000001.jsonl")
    assert game.players == ["ann", "bob"] and game.end is not None
    assert (game.end.culprit, game.end.reason) == ("ann", "gave up")
    assert (seen[0]["event"], seen[-1]["event"]) == ("start", "end")
    assert len(seen) == len(game.records) + 2  # the same records, start and end included


async def test_a_seat_left_before_its_game_is_free_again(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with running(RaceConfig()) as server:
        leaving = await sit(server, 0, "ann")
        with trio.fail_after(5):
            while server.forming != {0: "ann"}:
                await trio.sleep(0.01)
        await leaving.stream.aclose()
        with trio.fail_after(5):
            while server.forming:
                await trio.sleep(0.01)
        bob, cat = await sit(server, 1, "bob"), await sit(server, 0, "cat")
        await cat.expect("GAME 1 FIRST", "TOTAL 0")
        await bob.expect("GAME 1 SECOND")
    assert "race: ann (127.0.0.1:" in capfd.readouterr().err


async def test_a_stop_ends_the_games_under_way_without_a_result(tmp_path: Path) -> None:
    async with running(RaceConfig(transcripts=tmp_path)) as server:
        ann, bob = await sit(server, 0, "ann"), await sit(server, 1, "bob")
        await ann.expect("GAME 1 FIRST", "TOTAL 0")
    assert await bob.line() == "GAME 1 SECOND" and await bob.line() is None
    end = read_game(tmp_path / "game-000001.jsonl").end
    assert end is not None and end.reason == "the server shut down" and not end.winners


async def test_transcripts_that_cannot_be_written_are_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ServerError, match="cannot write transcripts in"):
        await serve(RaceLobby(RaceConfig(transcripts=tmp_path / "file" / "games")))
