"""The table as witness (protocol 14.6), from the peers' side: whole games of honest
``ring peer``s over loopback TCP, in which every exchange a neighbour is slow to answer
goes through the table.

A peer that asks the table after ``witness_after`` 0.1 ms of waiting asks about nearly
every exchange, so both sides meet every path: the asker's, the other side's moves made
again through the table, both sides asking at once, a reply that comes by the link after
the table had the exchange done. An honest game must still end as ever, naming no one.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import trio

from ring.oldmaid.peer import Outcome, Peer, PeerConfig, PeerError
from ring.oldmaid.stand_ins import StandIns
from scenarios.check.relay import PassThrough
from services.oldmaid.table.server import TableConfig, TableOutcome, serve_table


class DropsOnce(PassThrough):
    """A peer's link whose first write holding ``needle`` is lost (the bytes vanish)."""

    def __init__(self, stream: trio.SocketStream, needle: bytes, lost: list[bytes]) -> None:
        super().__init__(stream)
        self._needle, self._lost = needle, lost

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if not self._lost and self._needle in bytes(data):
            self._lost.append(bytes(data))
            await trio.lowlevel.checkpoint()
            return
        await self._stream.send_all(data)


class BendsRead(PassThrough):
    """A peer's link whose first read holding ``needle`` comes as ``instead`` (b"": the
    connection closes there)."""

    def __init__(
        self, stream: trio.SocketStream, needle: bytes, instead: bytes, bent: list[bytes]
    ) -> None:
        super().__init__(stream)
        self._needle, self._instead, self._bent = needle, instead, bent

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self._stream.receive_some(max_bytes)
        if not self._bent and self._needle in data:
            self._bent.append(data)
            return self._instead
        return data


class BendsOfferMac(PassThrough):
    """A peer's link whose first offer read comes with another mac: as a cheater's bad mac,
    or an honest offer garbled on the way, looks to its receiver."""

    def __init__(self, stream: trio.SocketStream, bent: list[bytes]) -> None:
        super().__init__(stream)
        self._bent = bent

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self._stream.receive_some(max_bytes)
        if not self._bent and b'"cmd":"offer"' in data and b'"mac":"' in data:
            self._bent.append(data)
            return re.sub(rb'"mac":"([0-9a-f])', _flip_digit, data, count=1)
        return data


def _flip_digit(match: re.Match[bytes]) -> bytes:
    digit = int(match.group(1), 16) ^ 1
    return b'"mac":"' + format(digit, "x").encode()


async def play(
    players: int,
    seed: int,
    witness_after: float | None,
    asking: int,
    *,
    loses: bytes | None = None,
    reads: tuple[bytes, bytes] | None = None,
    bend_mac: bool = False,
) -> tuple[TableOutcome, dict[str, Outcome | PeerError], list[dict[str, Any]]]:
    """A game; with ``loses``, p0's first write to a neighbour holding those bytes is lost;
    with ``reads`` (needle, instead), its first read holding the needle comes bent."""
    config = TableConfig(players=players, port=0, seed=seed, linger=1.0, turn_timeout=20.0)
    outcomes: list[TableOutcome] = []
    results: dict[str, Outcome | PeerError] = {}
    events: list[dict[str, Any]] = []
    lost: list[bytes] = []

    async def table(*, task_status: trio.TaskStatus) -> None:
        outcomes.append(await serve_table(config, task_status=task_status))

    async def peer(config: PeerConfig) -> None:
        try:
            results[config.nick] = await Peer(config).play()
        except PeerError as exc:
            results[config.nick] = exc

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(table)
            for index in range(players):
                nursery.start_soon(
                    peer,
                    PeerConfig(
                        nick=f"p{index}", table=(host, port), seed=seed * 10 + index,
                        timeout=3.0, linger=0.2,
                        witness_after=witness_after if index < asking else None,
                        on_event=events.append,
                        stand_ins=StandIns(wrap_stream=(
                            None if index
                            else (lambda stream: DropsOnce(stream, loses, lost)) if loses
                            else (lambda stream: BendsRead(stream, *reads, lost)) if reads
                            else (lambda stream: BendsOfferMac(stream, lost)) if bend_mac
                            else None
                        )),
                    ),
                )  # fmt: skip
    return outcomes[0], results, events


@pytest.mark.parametrize(("players", "seed", "asking"), [(3, 12, 3), (5, 14, 1)])
async def test_honest_games_whose_every_exchange_goes_through_the_table_end_as_ever(
    players: int, seed: int, asking: int
) -> None:
    """Every peer (or the first one) asks about each exchange it waits in at all."""
    table, results, events = await play(players, seed, 0.0001, asking)
    assert table.loser is not None and len(table.out) == players - 1, table.line
    assert table.culprit is None
    assert all(isinstance(result, Outcome) for result in results.values()), results
    asked = [e for e in events if e.get("event") == "witness"]
    assert len(asked) >= 10, "the table witnessed too few exchanges to prove anything"
    assert "[verified game: every exchange reported]" in table.line


async def test_a_game_of_peers_that_do_not_ask_is_not_witnessed() -> None:
    """Without a slow neighbour no one asks: the table sees the reports only."""
    table, results, events = await play(3, 12, None, 0)
    assert table.loser is not None and table.culprit is None
    assert not [e for e in events if e.get("event") in ("witness", "witnessed")]
    assert all(isinstance(result, Outcome) for result in results.values()), results


def draw_turn_events(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    kinds = ("draw_turn", "handed_on", "late_your_turn")
    return {kind: [e for e in events if e.get("event") == kind] for kind in kinds}


async def test_a_lost_your_turn_is_handed_on_by_the_table_and_the_game_goes_on() -> None:
    """p0's first your_turn never arrives: 2 s after p0's draw the table hands the turn to
    its receiver, which draws on the notice; p0's wait ends at the notice (protocol 14.6,
    "The draw turn")."""
    table, results, events = await play(3, 12, None, 0, loses=b'"your_turn"')
    assert table.loser is not None and table.culprit is None, table.line
    assert all(isinstance(result, Outcome) for result in results.values()), results
    seen = draw_turn_events(events)
    [taken] = seen["draw_turn"]
    assert taken["from"] == "p0" and taken["nick"] != "p0"
    [handed] = seen["handed_on"]
    assert handed["nick"] == "p0" and handed["to"] == taken["nick"]


async def test_an_ok_lost_on_the_way_ends_its_senders_wait_when_the_turn_comes_back() -> None:
    """p0's first ok to a your_turn never arrives, though p0 drew: no notice comes (the
    table saw the draw), and its sender waits until the turn comes round to it again."""
    table, results, events = await play(3, 12, None, 0, loses=b'"result":"ok"')
    assert table.loser is not None and table.culprit is None, table.line
    assert all(isinstance(result, Outcome) for result in results.values()), results
    seen = draw_turn_events(events)
    assert not seen["draw_turn"]
    [handed] = seen["handed_on"]
    assert handed["to"] == "p0" and handed["nick"] != "p0"


async def test_an_offer_lost_on_the_way_reaches_its_receiver_through_the_table() -> None:
    """p0's first offer never arrives: after its peer timeout p0 asks the table, and the
    receiver, which never had it, takes it from the table's notice as a turn like any
    other (``Witnessing._take_from_table``); the game ends as ever."""
    table, results, events = await play(3, 12, None, 0, loses=b'"cmd":"offer"')
    assert table.loser is not None and table.culprit is None, table.line
    assert all(isinstance(result, Outcome) for result in results.values()), results
    [asked] = [e for e in events if e.get("event") == "witness" and e["nick"] == "p0"]
    [taken] = [e for e in events if e.get("event") == "witnessed"]
    assert taken["nick"] == asked["to"] and taken["seq"] == asked["seq"]
    assert taken["move"] == "answer" and taken["owes"] == taken["nick"]


@pytest.mark.parametrize(
    ("instead", "why"), [(b'{"result":ok}\n', "garbage"), (b"", "a closed connection")]
)
async def test_a_card_that_comes_as_garbage_or_not_at_all_comes_through_the_table(
    instead: bytes, why: str
) -> None:
    """p0's first card after its pick comes as ``why``: a reply it cannot read, like a
    closed link, sends it to the table at once (before, the unreadable one ended the
    task that took the offer, and the table named p0 for the report it never sent). The
    offerer gives the card again there, and the game ends as ever."""
    table, results, events = await play(3, 12, None, 0, reads=(b'"salt"', instead))
    assert table.loser is not None and table.culprit is None, (why, table.line)
    assert all(isinstance(result, Outcome) for result in results.values()), results
    asked = [e for e in events if e.get("event") == "witness" and e["nick"] == "p0"]
    assert len(asked) == 1, (why, asked)


async def test_an_offer_whose_mac_is_not_its_offerers_is_refused_and_comes_through_the_table() -> (
    None
):
    """p0 reads its first offer with another mac (a cheater's, or garbled on the way): it
    checks the offer with the table before taking it (protocol 14.6, "Checking an offer"),
    refuses it, and the offerer, honest, gives it through the table, where p0 takes it.
    The game ends as ever, naming no one (before, p0 took it, and the table named both
    as suspects)."""
    table, results, events = await play(3, 12, None, 0, bend_mac=True)
    assert table.loser is not None and table.culprit is None, table.line
    assert all(isinstance(result, Outcome) for result in results.values()), results
    # (A pass checked as the game ends is refused too, as over: it changes nothing.)
    refusals = [e for e in events if e.get("event") == "offer_refused"]
    [refused] = [e for e in refusals if "game is over" not in e["message"]]
    assert refused["nick"] == "p0" and "mac" in refused["message"]
    [taken] = [e for e in events if e.get("event") == "witnessed" and e["nick"] == "p0"]
    assert taken["seq"] == refused["seq"] and taken["move"] == "answer"
