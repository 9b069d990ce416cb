"""Never blame the wrong player: one faulty peer in a ring of honest ones.

The real table and real ``Peer``s play over loopback TCP in one process; one
seat is a ``Peer`` with a fault drawn by Hypothesis (a ring size, a seed, a
fault, the moment it strikes). Whatever happens, the game ends, and either
it ends with a loser or the table's abort names the faulty player, never an
honest one: the ``aborted`` record's culprit and the start of its reason.

Played twice: by older clients (no ``verify``), where a player that falls
silent is named on its neighbour's word, and as a verified game (protocol
14.6), where the table names a player only on what the reports prove, so
silence ends the game naming the faulty player or no one, never an honest one.
"""

from __future__ import annotations

import contextlib
from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from ring.oldmaid.messages import DrawTurn, Offer, YourTurn, ok
from ring.oldmaid.peer import Peer, PeerConfig, PeerError
from ring.oldmaid.taking import Taking
from ring.wire.transport import Connection
from services.oldmaid.table.server import TableConfig, serve_table

# Every peer's --peer-timeout here: a silent player in costs this much. An honest peer
# that answers later than this is taken for a silent one (in a game of older clients
# its neighbour's word then names it), so it must outlast what a loaded machine makes an
# honest answer take: 0.5 s did not, once, under make test (a pick answered late).
TIMEOUT = 1.0


class FaultyTaking(Taking):
    """The inbound side of a faulty peer: its faults that strike when a turn reaches it."""

    def __init__(self, faulty: Faulty, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._faulty = faulty

    async def answer_your_turn(
        self, link: Connection, request: YourTurn, known: str | None
    ) -> None:
        if self._faulty.fault == "freeze_draw" and self._faulty.struck():
            await trio.sleep_forever()  # stopped, as by SIGSTOP: the connection stays open
        await super().answer_your_turn(link, request, known)

    def draw_turn_from_table(self, notice: DrawTurn) -> None:
        if self._faulty.fault == "freeze_draw" and self._faulty.stopped:
            return  # stopped: it reads nothing more, the table's notices neither
        super().draw_turn_from_table(notice)

    async def answer_offer(self, link: Connection, offer: Offer, known: str | None) -> None:
        faulty = self._faulty
        if faulty.fault == "freeze_offer" and faulty.struck():
            await trio.sleep_forever()
        if faulty.fault in ("mute_when_out", "freeze_when_out") and faulty.out:
            await trio.sleep_forever()  # out, keeps the connection, never answers
        if faulty.fault == "no_card" and offer.num_cards > 0 and faulty.struck():
            await link.send_or_close(ok())
            await trio.sleep_forever()  # accepted the offer, never picks
        await super().answer_offer(link, offer, known)


class Faulty(Peer):
    """A peer with one fault, striking at its ``strike``-th turn request."""

    fault = "none"
    strike = 0

    def __init__(self, config: PeerConfig) -> None:
        self.requests = 0
        super().__init__(config)

    def _taking(self) -> Taking:
        return FaultyTaking(self, self.turns, self.links, self.picks, self.table,
                            self.suspicion, self.watch, self.log, seated=self.seated,
                            queue=self._turns_in)  # fmt: skip

    def struck(self) -> bool:
        self.requests += 1
        return self.requests > self.strike

    @property
    def stopped(self) -> bool:
        return self.requests > self.strike

    async def _serve_pick(self, link: Connection, seat: int, offered: int) -> None:
        if self.fault == "hold_card" and self.struck():
            await trio.sleep_forever()  # offered, then never gives the picked card
        await super()._serve_pick(link, seat, offered)


FAULTS = ["freeze_draw", "freeze_offer", "mute_when_out", "freeze_when_out", "no_card", "hold_card"]
# Faults that leave the game playable: the ring skips an out player that is silent.
HARMLESS = {"mute_when_out", "freeze_when_out"}


class _TableDone(Exception):
    """The table has ended its game and its players have gone, or its linger ran out."""


async def _play(
    players: int, seed: int, fault: str, strike: int, faulty_seat: int, verify: bool
) -> Any:
    """The table's outcome of one game with a faulty peer at ``faulty_seat``."""
    config = TableConfig(players=players, port=0, seed=seed, linger=0.5)
    outcomes: list[Any] = []
    with trio.fail_after(20):
        try:
            async with trio.open_nursery() as nursery:
                host, port = await nursery.start(_table, config, outcomes)
                for index in range(players):
                    peer = (Faulty if index == faulty_seat else Peer)(
                        PeerConfig(
                            nick=f"p{index}",
                            table=(host, port),
                            seed=seed * 10 + index,
                            timeout=TIMEOUT,
                            idle_timeout=5.0,
                            stall_timeout=1.0,
                            verify=verify,
                        )
                    )
                    if isinstance(peer, Faulty):
                        peer.fault, peer.strike = fault, strike
                    nursery.start_soon(_peer, peer)
        except* _TableDone:
            pass
    return outcomes[0]


async def _table(config: TableConfig, out: list[Any], *, task_status: trio.TaskStatus) -> None:
    out.append(await serve_table(config, task_status=task_status))
    # A faulty peer stopped for good would wait for ever, as a stopped process does.
    raise _TableDone


async def _peer(peer: Peer) -> None:
    with contextlib.suppress(PeerError):
        await peer.play()


FAULTY_GAMES = given(
    players=st.integers(2, 6),
    seed=st.integers(0, 2**16),
    fault=st.sampled_from(FAULTS),
    strike=st.integers(0, 6),
    faulty=st.integers(0, 5),
)


# Bounded for make test (a game takes about a second); derandomized: the same games each run.
@settings(max_examples=10, deadline=None, derandomize=True)
@FAULTY_GAMES
def test_a_faulty_peer_is_the_only_one_ever_named(
    players: int, seed: int, fault: str, strike: int, faulty: int
) -> None:
    culprit = f"p{faulty % players}"
    table = trio.run(_play, players, seed, fault, strike, faulty % players, False)
    if table.reason is None:
        assert table.loser is not None  # ended with a loser
        return
    assert fault not in HARMLESS, f"a harmless fault aborted the game: {table.reason}"
    assert table.culprit == culprit, table.reason
    assert table.reason.startswith(f"{culprit} "), table.reason


@settings(max_examples=6, deadline=None, derandomize=True)
@FAULTY_GAMES
def test_in_a_verified_game_no_honest_peer_is_named(
    players: int, seed: int, fault: str, strike: int, faulty: int
) -> None:
    culprit = f"p{faulty % players}"
    table = trio.run(_play, players, seed, fault, strike, faulty % players, True)
    if table.reason is None:
        assert table.loser is not None
        return
    assert fault not in HARMLESS, f"a harmless fault aborted the game: {table.reason}"
    assert table.culprit in (None, culprit), table.reason
