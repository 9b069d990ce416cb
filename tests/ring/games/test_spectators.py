"""``ring.games.spectators``: records fanned out to viewers, a game never waiting for one."""

from __future__ import annotations

import trio

from ring.games.record import GameKey, RecordHub
from ring.games.spectators import Spectators, TooManyViewers

KEY = GameKey("reversi", 1)


def start(names: list[str]) -> dict[str, object]:
    return {"event": "start", "t": 1.0, "players": [{"name": name} for name in names]}


def drain(viewer) -> list[dict]:  # type: ignore[no-untyped-def]
    messages = []
    while True:
        try:
            messages.append(viewer._receive.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return messages


async def test_a_game_goes_from_forming_to_playing_to_over_in_the_lobby() -> None:
    hub = RecordHub()
    spectators = Spectators(hub)
    with spectators.watch() as lobby:
        hub.publish(KEY, {"dir": "in", "t": 0.5, "line": "Nann"})
        hub.publish(KEY, start(["ann", "bob"]))
        hub.publish(KEY, {"dir": "out", "t": 1.1, "line": "B..."})
        hub.publish(KEY, {"event": "end", "t": 2.0, "reason": "board", "winners": ["bob"],
                          "losers": ["ann"]})  # fmt: skip
        said = drain(lobby)
    assert said[0] == {"type": "lobby", "games": []}
    states = [m["game"]["state"] for m in said[1:]]
    assert states == ["forming", "playing", "over"]  # the board line changed nothing shown
    assert said[-1]["game"]["winners"] == ["bob"] and said[-1]["game"]["players"] == ["ann", "bob"]
    assert spectators.lobby()[0]["records"] == 4


async def test_a_late_viewer_gets_the_game_so_far_then_each_record() -> None:
    hub = RecordHub()
    spectators = Spectators(hub)
    hub.publish(KEY, start(["ann", "bob"]))
    with spectators.watch("reversi-1") as viewer:
        hub.publish(KEY, {"dir": "out", "t": 1.1, "line": "U1"})
        said = drain(viewer)
    assert said[0]["type"] == "snapshot" and said[0]["records"][0]["event"] == "start"
    assert said[1] == {"type": "record", "game": "reversi-1",
                       "record": {"dir": "out", "t": 1.1, "line": "U1"}}  # fmt: skip


async def test_a_viewer_that_never_reads_is_dropped_and_the_game_goes_on() -> None:
    hub = RecordHub()
    spectators = Spectators(hub, queue_size=8)
    hub.publish(KEY, start(["ann", "bob"]))
    with spectators.watch("reversi-1") as stalled, spectators.watch("reversi-1") as reading:
        for n in range(100):
            hub.publish(KEY, {"dir": "out", "t": 2.0 + n, "line": f"B{n}"})
            drain(reading)
        assert stalled.dropped and not reading.dropped
        assert stalled not in spectators.viewers and reading in spectators.viewers
    # every record was kept for the game, whoever stopped reading
    assert len(spectators.games["reversi-1"].records) == 101


async def test_viewers_are_capped_and_an_unknown_game_is_refused() -> None:
    spectators = Spectators(RecordHub(), max_viewers=1)
    with spectators.watch():
        try:
            with spectators.watch():
                raise AssertionError("a second viewer over the cap")
        except TooManyViewers:
            pass
    try:
        with spectators.watch("reversi-9"):
            raise AssertionError("a viewer of a game that does not exist")
    except KeyError:
        pass


async def test_old_finished_games_are_forgotten_and_long_ones_cut() -> None:
    hub = RecordHub()
    spectators = Spectators(hub, max_games=2, max_records=3)
    for number in range(1, 5):
        key = GameKey("reversi", number)
        hub.publish(key, start(["a", "b"]))
        for n in range(5):
            hub.publish(key, {"dir": "out", "t": 1.0 + n})
        hub.publish(key, {"event": "end", "t": 9.0, "reason": "board"})
    assert sorted(spectators.games) == ["reversi-3", "reversi-4"]
    game = spectators.games["reversi-4"]
    assert len(game.records) == 3 and game.cut and game.state == "over"


async def test_a_forming_game_is_in_the_lobby_with_its_players_until_it_starts() -> None:
    """Before its start a game has no records; the hub's forming announcements show it."""
    hub = RecordHub()
    spectators = Spectators(hub)
    key = GameKey("oldmaid", 2)
    with spectators.watch() as lobby:
        hub.forming(key, ["p1"], 4)
        with spectators.watch("oldmaid-2") as viewer:
            hub.forming(key, ["p1", "p2"], 4)
            hub.publish(key, start(["p2", "p1", "p3", "p4"]))
            hub.forming(key, ["p1", "p2", "p3", "p4"], 4)  # late: the start said it all
            seen = drain(viewer)
        said = drain(lobby)
    shown = [(m["game"]["state"], m["game"]["players"], m["game"]["wanted"]) for m in said[1:]]
    assert shown == [("forming", ["p1"], 4), ("forming", ["p1", "p2"], 4),
                     ("playing", ["p2", "p1", "p3", "p4"], None)]  # fmt: skip
    assert seen[0]["type"] == "snapshot" and seen[0]["records"] == []
    assert seen[1]["type"] == "game" and seen[1]["game"]["players"] == ["p1", "p2"]
    assert [m["type"] for m in seen[2:]] == ["record"]


async def test_a_forming_game_everyone_left_leaves_the_lobby() -> None:
    hub = RecordHub()
    spectators = Spectators(hub)
    key = GameKey("oldmaid", 1)
    hub.forming(key, ["p1"], 4)
    assert [g["id"] for g in spectators.lobby()] == ["oldmaid-1"]
    with spectators.watch() as lobby:
        hub.forming(key, [], 4)
        said = drain(lobby)
    assert said[-1]["game"]["state"] == "gone"
    assert spectators.lobby() == []
    hub.forming(key, [], 4)  # nothing to say of a game not known
    assert spectators.lobby() == []
