"""Smarx's endgame search runs in a worker process, off the loop that serves every game.

A client that always passes runs the deck down while both hands stay small,
which is where smarx searches the rest of the game exactly (issue 28: up to
half a second each, on the loop, stalling every other service). Here each
search is seen going through the server's workers while a task counting the
loop's passes keeps counting, and a seeded game replays exactly: the same
game as one played in-process, where smarx searches on its own. No timing is
asserted.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio

from ring.games.record import read_game
from ring.games.workers import Workers
from services.fishnet import endgame
from services.fishnet.bots import PASS, Decision, Player, make_player, play_game
from services.fishnet.client import BotAgent
from services.fishnet.conversation import play_one_game
from services.fishnet.rules import FishNetGame
from services.fishnet.server import FishNetServer
from tests.helpers.fishnet import BASE, WAIT, running


class Passer(Player):
    """Always passes: legal play, and the surest way into smarx's endgame search."""

    name = "passer"

    def _decide(self) -> Decision:
        return PASS


class Listening(BotAgent):
    """A client's agent that keeps every line the server sent it."""

    def __init__(self, player: Player) -> None:
        super().__init__(player)
        self.heard: list[str] = []

    async def hear(self, line: str) -> str | None:
        self.heard.append(line)
        return await super().hear(line)


def count_loop_passes_during_searches(server: FishNetServer, ticks: list[int]) -> list[int]:
    """Wrap the server's workers: for each search, how far ``ticks[0]`` moved meanwhile."""
    during: list[int] = []
    run = server.searches.workers.run

    async def counted(function: Any, *args: Any, timeout: float) -> Any:
        before = ticks[0]
        answer = await run(function, *args, timeout=timeout)
        during.append(ticks[0] - before)
        return answer

    server.searches.workers.run = counted  # type: ignore[method-assign]
    return during


async def test_smarx_searches_in_a_worker_while_the_loop_keeps_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Smarx's search, counted whenever it runs in this process. Pickled by
    # name, it is still the real one in a worker.
    in_process = []

    def counted_search(*args: Any) -> Any:
        in_process.append(args)
        return search(*args)

    search = endgame.endgame_values
    counted_search.__qualname__ = search.__qualname__
    counted_search.__module__ = search.__module__
    monkeypatch.setattr(endgame, "endgame_values", counted_search)
    ticks = [0]

    async def ticker() -> None:
        while True:
            ticks[0] += 1
            await trio.sleep(0)

    async with running() as server:
        during = count_loop_passes_during_searches(server, ticks)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            agent = BotAgent(Passer())
            await play_one_game(server.address, "passer", "smarx", agent, timeout=WAIT)
            nursery.cancel_scope.cancel()
        assert len(during) == server.searches.workers.calls > 0  # every search went to a worker,
        assert in_process == []  # none ran on the loop,
        assert max(during) > 0  # and the loop ran on meanwhile (a search on it: 0 each)
        assert server.searches.failed == 0


async def test_a_game_with_searches_in_a_worker_is_the_game_played_in_one_process() -> None:
    async with running() as server:
        client = Listening(Passer())
        await play_one_game(server.address, "passer", "smarx", client, timeout=WAIT)
        assert server.searches.workers.calls > 0
        seed = server.reports[0].seed
    # The same deal and the same smarx, refereed in-process: smarx searches itself.
    heard: list[str] = []
    players = [Passer(), make_player("smarx", f"{seed}:bot")]
    play_game(players, FishNetGame(seed), listener=lambda p, line: p or heard.append(line))
    assert client.heard == heard


def _transcript(path: Path) -> list[tuple[Any, ...]]:
    records = read_game(path).records
    return [(r.get("seat"), r.get("dir"), r.get("line"), r.get("search_failed")) for r in records]


async def test_a_search_past_its_deadline_falls_back_to_the_quick_rules_the_same_way(
    tmp_path: Path,
) -> None:
    transcripts = []
    for run in range(2):
        folder = tmp_path / str(run)
        config = replace(BASE, search_timeout=0, transcript_dir=folder)
        async with running(config) as server:
            await play_one_game(server.address, "passer", "smarx", BotAgent(Passer()),
                                timeout=WAIT)  # fmt: skip
            assert server.searches.failed > 0 and server.searches.workers.calls == 0
            assert server.reports[0].reason == "books"
        transcripts.append(_transcript(folder / "game-000001.jsonl"))
    assert transcripts[0] == transcripts[1]
    assert any(record[3] == "timed out" for record in transcripts[0])


async def test_the_workers_close_with_the_server() -> None:
    async with running() as server:
        await play_one_game(server.address, "passer", "smarx", BotAgent(Passer()), timeout=WAIT)
        workers: Workers = server.searches.workers
        processes = [worker.process for worker in workers._idle]
        assert processes
    assert not workers._idle
    assert all(process.returncode == 0 for process in processes)  # ended and reaped
