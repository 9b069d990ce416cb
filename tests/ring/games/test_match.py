"""ring.games.match without any real game: the race to ten of ``race_game``, over in-memory
streams; Trio's mock clock times the clocks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import trio
import trio.testing

from ring.games.match import SHUT_DOWN, Arena, Match, Seat, Terms, Verdict, game_seed
from ring.games.record import GameKey, RecordHub
from ring.games.seeds import keyed_text
from tests.helpers.race_game import Client, LineWire, Race, State, shown


@dataclass
class Table:
    clients: list[Client]
    seats: list[Seat]
    match: Match[State]
    arena: Arena
    records: list[dict[str, Any]]

    def own(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("event") == name]

    @property
    def end(self) -> dict[str, Any]:
        [end] = self.own("end")
        return end


@asynccontextmanager
async def table(
    terms: Terms | None = None, state: State = (0, 0), *, lockstep: bool = False
) -> AsyncIterator[Table]:
    """A match between ann (seat 0) and bob (seat 1), under way in the block; the block's
    end waits for it to end."""
    hub = RecordHub()
    records: list[dict[str, Any]] = []
    hub.subscribe(lambda key, record: records.append(record) if key == GameKey("race", 3) else 0)
    clients, seats = [], []
    for name in ("ann", "bob"):
        pair = trio.testing.lockstep_stream_pair if lockstep else trio.testing.memory_stream_pair
        ours, theirs = pair()
        seat = Seat(theirs, LineWire(), "?", max_unread=64, shown=shown)
        seat.name = name
        clients.append(Client(ours))
        seats.append(seat)
    match = Match(Race(terms or Terms()), seats, state, number=3, seed=7, hub=hub)
    arena = Arena()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(arena.play, match)
        yield Table(clients, seats, match, arena, records)


# -- whole games ------------------------------------------------------------------------------


async def test_a_game_from_opening_to_verdict_and_its_record() -> None:
    async with table() as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        await bob.expect("GAME 3 SECOND")
        for mover, total, add in ((ann, 0, 3), (bob, 3, 3), (ann, 6, 3)):
            if total:
                await mover.expect(f"TOTAL {total}")
            await mover.send(f"ADD {add}")
        await bob.expect("TOTAL 9")
        await bob.send("ADD 2")  # 11: bob wins
        await ann.expect("LOSE")
        await bob.expect("WIN")
    assert t.arena.reports == [(3, ("ann", "bob"), Verdict(1, "counted"))]
    assert not t.arena.running
    start = t.records[0]
    assert {k: start[k] for k in ("event", "service", "game", "seed", "options")} == {
        "event": "start", "service": "race", "game": 3, "seed": 7, "options": {"goal": 10},
    }  # fmt: skip
    assert start["players"] == [{"name": "ann", "seat": 0}, {"name": "bob", "seat": 1}]
    assert [(r["seat"], r["add"]) for r in t.own("move")] == [(0, 3), (1, 3), (0, 3), (1, 2)]
    lines = [(r["nick"], r["dir"], r["line"]) for r in t.records if "dir" in r]
    assert lines[:4] == [("ann", "out", "GAME 3 FIRST"), ("bob", "out", "GAME 3 SECOND"),
                         ("ann", "out", "TOTAL 0"), ("ann", "in", "ADD 3")]  # fmt: skip
    end = t.end
    assert (end["winners"], end["losers"], end["draw"], end["culprit"]) == (
        ["bob"], ["ann"], False, None,
    )  # fmt: skip
    assert end["reason"] == "counted" and end["details"] == {"total": 11}
    times = [r["t"] for r in t.records]
    assert times == sorted(times)


async def test_a_draw_names_no_winner() -> None:
    async with table(state=(8, 1)) as t:
        ann, bob = t.clients
        await bob.expect("GAME 3 SECOND", "TOTAL 8")
        await bob.send("ADD 2")
        await ann.expect("GAME 3 FIRST", "DRAW")
        await bob.expect("DRAW")
    assert (t.end["winners"], t.end["losers"], t.end["draw"]) == ([], [], True)


async def test_a_game_over_from_the_start_plays_no_turn() -> None:
    async with table(state=(12, 0)) as t:
        await t.clients[0].expect("GAME 3 FIRST", "LOSE")  # past 10, and bob moved last
    assert (t.end["winners"], t.end["culprit"]) == (["bob"], None)
    assert t.own("move") == []


# -- answers ------------------------------------------------------------------------------------


async def test_a_refused_answer_gets_the_prompt_again_up_to_the_attempts() -> None:
    async with table(Terms(attempts=3)) as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        await ann.send("ADD 9", "hello")
        await ann.expect("TOTAL 0", "TOTAL 0")
        await ann.send("ADD 1")  # legal: the count starts again next turn
        await bob.expect("GAME 3 SECOND", "TOTAL 1")
        await bob.send("ADD 4", "ADD 5", "ADD 6")
        await bob.expect("TOTAL 1", "TOTAL 1", "FOUL", "LOSE")
        await ann.expect("WIN")
    assert (t.end["culprit"], t.end["reason"], t.end["winners"]) == ("bob", "refused", ["ann"])


async def test_a_forfeit_by_the_rules_names_its_culprit() -> None:
    async with table() as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        await ann.send("QUIT")
        await ann.expect("LOSE")
        await bob.expect("GAME 3 SECOND", "WIN")
    assert (t.end["culprit"], t.end["reason"], t.end["losers"]) == ("ann", "gave up", ["ann"])


async def test_answers_sent_early_are_read_in_order_when_the_turn_comes() -> None:
    async with table() as t:
        ann, bob = t.clients
        await bob.send("ADD 1", "ADD 2")  # both of its next two answers, before its turn
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        await ann.send("ADD 3")
        await ann.expect("TOTAL 4")  # bob's first answer was waiting
        await ann.send("ADD 3")
        await ann.expect("TOTAL 9")  # and its second
        await ann.send("ADD 3")
        await bob.expect("GAME 3 SECOND", "TOTAL 3", "TOTAL 7", "LOSE")
    assert [r["add"] for r in t.own("move")] == [3, 1, 3, 2, 3]


# -- leaving ---------------------------------------------------------------------------------------


async def test_a_mover_who_leaves_loses_and_is_told_nothing() -> None:
    async with table() as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        await ann.stream.aclose()
        await bob.expect("GAME 3 SECOND", "WIN")
    assert t.seats[0].gone
    assert (t.end["culprit"], t.end["reason"]) == ("ann", "left")
    assert {"nick": "ann", "dir": "in", "closed": True} in [
        {k: v for k, v in r.items() if k not in ("t", "seat")} for r in t.records
    ]


@pytest.mark.parametrize("watch", [True, False])
async def test_the_waiting_player_is_watched_only_when_the_terms_say_so(watch: bool) -> None:
    async with table(Terms(watch_waiting=watch)) as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        await bob.stream.aclose()
        if watch:  # bob loses at once, with ann's move still to come
            await ann.expect("WIN")
        else:  # noticed at bob's turn
            await trio.testing.wait_all_tasks_blocked()
            assert t.match.recorder is not None and not t.match.recorder.ended
            await ann.send("ADD 1")
            await ann.expect("WIN")
    assert (t.end["culprit"], t.end["reason"]) == ("bob", "left")


async def test_a_waiting_player_that_sends_too_much_loses() -> None:
    async with table(Terms(watch_waiting=True)) as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        await bob.send("x" * 70)  # over max_unread (64) while ann moves
        await bob.expect("GAME 3 SECOND", "FOUL", "LOSE")
        await ann.expect("WIN")
    assert (t.end["culprit"], t.end["reason"]) == ("bob", "flooded")


async def test_a_player_that_does_not_read_is_gone_after_the_send_timeout(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table(Terms(send_timeout=10), lockstep=True) as t:
        start = trio.current_time()
        bob = t.clients[1]
        await bob.expect("GAME 3 SECOND")  # ann reads nothing: her opening takes 10 s
        assert trio.current_time() - start == pytest.approx(10)
        await bob.expect("WIN")
    assert (t.end["culprit"], t.end["reason"]) == ("ann", "left")


# -- clocks ----------------------------------------------------------------------------------------


async def test_the_move_time_runs_from_the_first_prompt_of_the_turn(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with table(Terms(move_time=30, attempts=10)) as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        start = trio.current_time()
        for _ in range(3):
            await trio.sleep(9)
            await ann.send("nonsense")
            await ann.expect("TOTAL 0")  # asked again: the clock runs on
        await ann.expect("FOUL", "LOSE")
        assert trio.current_time() - start == pytest.approx(30)
        await bob.expect("GAME 3 SECOND", "WIN")
    assert (t.end["culprit"], t.end["reason"]) == ("ann", "timed out")


async def test_a_budget_counts_all_of_a_players_turns(autojump_clock: trio.abc.Clock) -> None:
    async with table(Terms(budget=30)) as t:
        ann, bob = t.clients
        await ann.expect("GAME 3 FIRST", "TOTAL 0")
        start = trio.current_time()
        await trio.sleep(20)
        await ann.send("ADD 1")
        await bob.expect("GAME 3 SECOND", "TOTAL 1")
        await trio.sleep(29)  # bob's own time: ann's budget does not run
        await bob.send("ADD 1")
        await ann.expect("TOTAL 2", "FOUL", "LOSE")  # 10 s left of ann's 30
        assert trio.current_time() - start == pytest.approx(59)
        await bob.expect("WIN")
    assert t.match.budgets[1] == pytest.approx(1)


# -- records, the arena, seeds --------------------------------------------------------------


async def test_lines_from_before_the_game_come_after_start_with_their_own_times() -> None:
    hub = RecordHub()
    records: list[dict[str, Any]] = []
    hub.subscribe(lambda key, record: records.append(record))
    seats = []
    for name in ("ann", "bob"):
        _, theirs = trio.testing.memory_stream_pair()
        seat = Seat(theirs, LineWire(), "?", max_unread=64, shown=shown)
        seat.name = name
        seats.append(seat)
    seats[1].log(dir="in", line="HELLO")  # bob's came first
    seats[0].log(dir="in", line="HI")
    match = Match(Race(), seats, (12, 0), number=1, seed=None, hub=hub)
    await match.run()
    assert [(r.get("nick"), r.get("line")) for r in records[1:3]] == [("bob", "HELLO"),
                                                                      ("ann", "HI")]  # fmt: skip
    assert records[1]["t"] < records[2]["t"] < records[0]["t"]


async def test_a_stop_ends_the_records_of_the_games_under_way_with_no_result() -> None:
    async with table() as t:
        await t.clients[0].expect("GAME 3 FIRST", "TOTAL 0")
        assert t.arena.running == {t.match}
        t.arena.stop()
        t.arena.stop()  # once is enough
        # The game plays on (the server would close it), unrecorded: 3, 6, 9, 12.
        await t.clients[0].send("ADD 3", "ADD 3")
        await t.clients[1].send("ADD 3", "ADD 3")
        await t.clients[0].expect("TOTAL 6", "LOSE")
    end = t.end
    assert end["reason"] == SHUT_DOWN
    assert (end["winners"], end["losers"], end["draw"], end["culprit"]) == ([], [], False, None)
    assert t.own("move") == []


async def test_the_arena_reports_each_game_that_ended() -> None:
    seen: list[Any] = []
    hub = RecordHub()
    arena = Arena(on_end=seen.append)
    for number in (1, 2):
        seats = [Seat(trio.testing.memory_stream_pair()[1], LineWire(), "?", max_unread=64,
                      shown=shown) for _ in (0, 1)]  # fmt: skip
        await arena.play(Match(Race(), seats, (11, 1), number=number, seed=None, hub=hub))
    assert [report[0] for report in arena.reports] == [1, 2] and seen == arena.reports


async def test_the_arena_keeps_only_the_last_reports() -> None:
    """A server runs all day: every report goes to on_end, and only the last few stay."""
    seen: list[Any] = []
    arena = Arena(on_end=seen.append, keep=2)
    for number in (1, 2, 3):
        seats = [Seat(trio.testing.memory_stream_pair()[1], LineWire(), "?", max_unread=64,
                      shown=shown) for _ in (0, 1)]  # fmt: skip
        await arena.play(Match(Race(), seats, (11, 1), number=number, seed=None, hub=RecordHub()))
    assert [report[0] for report in seen] == [1, 2, 3]
    assert [report[0] for report in arena.reports] == [2, 3]


def test_game_seeds_published_or_keyed() -> None:
    assert game_seed(7, False, "race", 3) == "7:3"
    assert game_seed(7, True, "race", 3) == keyed_text(7, "race", 3)
    assert game_seed(7, True, "race", 3) != game_seed(7, True, "other", 3)
