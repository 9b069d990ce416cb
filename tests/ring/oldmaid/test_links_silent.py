"""The links on their own: an out player that is silent on a fresh connection (13.7).

Once out, some 2013 clients stopped calling ``accept()`` (a dial completes in
the kernel's backlog and hears nothing), and others accepted and never read.
Our peers now seldom dial such a player: the status they take when a seat
first answers ``out`` lists it too (7.7). When one is dialled all the same,
it is skipped after the grace on the table's word, never waited on for the
whole peer timeout. Both habits are imitated as such programs had them: a
blocking listening socket that is never accepted from, and a thread that
accepts one connection and never reads it.
"""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Iterator

import pytest
import trio
import trio.testing

from ring.games.events import EventLog
from ring.oldmaid.links import OUT_GRACE, Links
from ring.oldmaid.messages import Message, Offer, Reply, Status, ok
from ring.oldmaid.peer import PeerConfig
from ring.oldmaid.turns import GONE, SILENT, Turns

PEER_TIMEOUT = 10.0
NICK, SILENT_NICK = "p0", "s"


class ListingTable:
    """The table as the links see it: a ``status`` that lists ``out``; each one counted."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.statuses = 0
        self.game_over = trio.Event()

    async def request(self, message: Message, **_: object) -> Reply:
        assert isinstance(message, Status)
        self.statuses += 1
        return ok(in_=[NICK], out=self.out)


@pytest.fixture
def deaf_listener() -> Iterator[int]:
    """A port that listens and never accepts: the handshake completes in the backlog."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.fixture
def mute_listener() -> Iterator[int]:
    """A port whose program accepts one connection in a thread and never reads it."""
    done = threading.Event()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(PEER_TIMEOUT)  # bounded: the thread never outlives the test

        def accept_and_hold() -> None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                done.wait(PEER_TIMEOUT)

        thread = threading.Thread(target=accept_and_hold, daemon=True)
        thread.start()
        yield listener.getsockname()[1]
        done.set()
        thread.join(PEER_TIMEOUT)


def links_to(port: int, table: ListingTable) -> tuple[Links, Turns, list[dict]]:
    turns = Turns(NICK, random.Random(1))
    turns.take_seat([(("127.0.0.1", 1), NICK), (("127.0.0.1", port), SILENT_NICK)])
    events: list[dict] = []
    log = EventLog(None, sink=events.append)
    config = PeerConfig(nick=NICK, table=None, timeout=PEER_TIMEOUT)
    return Links(config, turns, table, log, seated=trio.Event()), turns, events  # type: ignore[arg-type]


@pytest.mark.parametrize("habit", ["deaf_listener", "mute_listener"])
async def test_an_out_player_silent_on_a_fresh_connection_is_skipped_after_the_grace(
    habit: str, request: pytest.FixtureRequest, autojump_clock: trio.testing.MockClock
) -> None:
    port = request.getfixturevalue(habit)
    table = ListingTable(out=[SILENT_NICK])
    links, turns, events = links_to(port, table)
    started = trio.current_time()
    with trio.fail_after(PEER_TIMEOUT / 2):  # (virtual time) far less than the peer timeout
        reply = await links.ask(1, Offer(num_cards=2, sender=NICK))
    assert reply is SILENT
    assert trio.current_time() - started == pytest.approx(OUT_GRACE)
    assert table.statuses == 1
    assert turns.gone == {1: "silent"}
    assert [(e["event"], e["nick"], e["why"]) for e in events] == [("gone", SILENT_NICK, "silent")]
    # Not asked again this game: no dial, no wait, no status.
    assert await links.ask(1, Offer(num_cards=1, sender=NICK)) is GONE
    assert table.statuses == 1
    await links.aclose()


async def test_a_player_still_in_keeps_the_whole_peer_timeout(
    deaf_listener: int, autojump_clock: trio.testing.MockClock
) -> None:
    # The table counts it in: it may be slow, and it may hold cards the game needs.
    table = ListingTable(out=[])
    links, turns, _ = links_to(deaf_listener, table)
    started = trio.current_time()
    with pytest.raises(Exception, match=f"{SILENT_NICK} did not answer offer within 10 s"):
        await links.ask(1, Offer(num_cards=2, sender=NICK))
    assert trio.current_time() - started == pytest.approx(PEER_TIMEOUT)
    assert table.statuses >= round(PEER_TIMEOUT / OUT_GRACE) - 1  # asked again every grace
    assert turns.gone == {}
    await links.aclose()
