"""ring.games.match for games shaped like FishNet's: a move's news to either seat, a reason before
the prompt again, a player that cannot be told losing at once, a ``begun`` record, and a
seat that is no connection (a built-in player, off the clock)."""

from __future__ import annotations

import math
from typing import Any

import trio
import trio.testing

from ring.games.match import Again, Match, Moved, Seat, Terms, Verdict
from ring.games.record import GameKey, Held, RecordHub
from tests.helpers.race_game import Client, LineWire, Race, State, shown


class TellingRace(Race):
    """The race, telling the other seat each move and the mover why it was refused."""

    def judge(self, state: State, seat: int, event: Any) -> Moved[State] | Again | Verdict:
        judged = super().judge(state, seat, event)
        if isinstance(judged, Moved):
            return Moved(judged.state, None, [(1 - seat, f"OTHER {event}")])
        if isinstance(judged, Again):
            return Again([(seat, f"NO {event}")])
        return judged


class Builtin:
    """A player of the server's own: it thinks for ``think`` seconds, then adds 3."""

    clocked = False

    def __init__(self, think: float) -> None:
        self.name = "bot"
        self.think = think
        self.heard: list[str] = []
        self.prelude = Held()
        self.log: Any = lambda **line: None

    async def send(self, message: str, timeout: float) -> bool:
        self.heard.append(message)
        self.log(line=message)
        return True

    async def flush(self, timeout: float) -> bool:
        return True

    async def event(self, deadline: float = math.inf) -> str:
        await trio.sleep(self.think)
        return "ADD 3"


def seat(name: str) -> tuple[Client, Seat]:
    ours, theirs = trio.testing.memory_stream_pair()
    player = Seat(theirs, LineWire(), "?", max_unread=64, shown=shown)
    player.name = name
    return Client(ours), player


def recording() -> tuple[RecordHub, list[dict[str, Any]]]:
    hub, records = RecordHub(), []
    hub.subscribe(lambda key, record: records.append(record) if key == GameKey("race", 1) else 0)
    return hub, records


async def test_a_moves_news_goes_to_either_seat_and_a_refusal_says_why() -> None:
    (ann, ann_seat), (bob, bob_seat) = seat("ann"), seat("bob")
    hub, records = recording()
    rules = TellingRace(Terms(attempts=math.inf))
    match = Match(rules, [ann_seat, bob_seat], (7, 0), number=1, seed=None, hub=hub)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(match.run)
        await ann.expect("GAME 1 FIRST", "TOTAL 7")
        await ann.send("ADD 9")
        await ann.expect("NO ADD 9", "TOTAL 7")  # why, then the prompt again
        await ann.send("ADD 2")
        await bob.expect("GAME 1 SECOND", "OTHER ADD 2", "TOTAL 9")
        await bob.send("ADD 1")  # 10: a draw
        await ann.expect("OTHER ADD 1", "DRAW")
        await bob.expect("DRAW")
    assert not [r for r in records if r.get("event") == "move"]  # a move without a record


async def test_a_player_that_cannot_be_told_loses_at_once_when_the_terms_say_so() -> None:
    (ann, ann_seat), (bob, bob_seat) = seat("ann"), seat("bob")
    await bob.stream.aclose()  # bob cannot be told its opening
    hub, records = recording()
    rules = TellingRace(Terms(untold_leaves=True))
    begun = {"event": "deal", "first": 0}
    match = Match(rules, [ann_seat, bob_seat], (0, 0), number=1, seed=None, hub=hub, begun=begun)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(match.run)
        await ann.expect("GAME 1 FIRST", "WIN")  # no prompt: bob has left
    assert [r.get("event") for r in records][:2] == ["start", "deal"]
    end = records[-1]
    assert (end["winners"], end["culprit"], end["reason"]) == (["ann"], "bob", "left")


async def test_a_builtin_player_is_off_the_clock(autojump_clock: trio.abc.Clock) -> None:
    (ann, ann_seat), bot = seat("ann"), Builtin(think=60)
    hub, records = recording()
    match = Match(Race(Terms(move_time=1)), [ann_seat, bot], (5, 1), number=1, seed=None, hub=hub)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(match.run)
        await ann.expect("GAME 1 FIRST", "TOTAL 8")  # the bot took 60 s, past move_time
        await ann.send("ADD 3")
        await ann.expect("WIN")
    assert bot.heard == ["GAME 1 SECOND", "TOTAL 5", "LOSE"]
    assert [r["line"] for r in records if r.get("nick") == "bot"] == bot.heard  # tagged
    match.abandon("too late", {"total": 10})  # a game already ended keeps its end
    assert records[-1]["reason"] == "counted"
