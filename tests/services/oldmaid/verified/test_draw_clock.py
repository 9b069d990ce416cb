"""The draw turn in a witnessed game (protocol 14.6, "The draw turn"): the table hands on
a draw turn that sits, and names the player that then does not draw; a draw in time, by
a your_turn or after the notice, stops nothing. On trio's mock clock: the referee is
the real one, the table's connections are not needed to see what it would send."""

from __future__ import annotations

import pytest
import trio

from ring.oldmaid.messages import DrawTurn
from services.oldmaid.referee.rules import DECK_SIZE, GameState, TableGame
from services.oldmaid.verified.draw_clock import DRAW_WAIT, DrawClock
from services.oldmaid.verified.witness import MOVE_TIMEOUT


def started(players: int = 3, seed: int = 7) -> TableGame:
    referee = TableGame(players, seed)
    for index in range(players):
        referee.join(f"p{index}", ("127.0.0.1", 5000 + index))
    referee.start()
    return referee


class Table:
    """The referee and the clock, and the notices the table would send (nick, notice)."""

    def __init__(self, players: int = 3) -> None:
        self.referee = started(players)
        self.sent: list[tuple[str, DrawTurn]] = []
        self.clock = DrawClock(self.referee, lambda nick, notice: self.sent.append((nick, notice)))
        self.named: bool | None = None

    @property
    def nicks(self) -> list[str]:
        return [seat.nick for seat in self.referee.seats]

    def draw(self) -> None:
        drawer = self.referee.turn
        assert drawer is not None
        self.referee.draw(drawer)
        self.clock.drew()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        self.named = await self.clock.run()


async def test_a_first_draw_that_never_comes_is_handed_on_then_named(
    autojump_clock: trio.abc.Clock,
) -> None:
    table = Table()
    first = table.nicks[0]
    async with trio.open_nursery() as nursery:
        await nursery.start(table.run)
        await trio.sleep(DRAW_WAIT - 0.01)
        assert table.sent == []
        await trio.sleep(0.02)
        assert table.sent == [(first, DrawTurn(to=first, draw=1, sender=None))]
        await trio.sleep(MOVE_TIMEOUT)
    assert table.named is True
    assert table.referee.state is GameState.ABORTED
    assert table.referee.culprit == first and table.referee.rule == "no_answer"
    assert f"{first} did not draw (card 1)" in (table.referee.reason or "")


async def test_a_silent_sender_costs_a_moment_and_the_game_goes_on(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The your_turn never comes: the notice goes to the drawer and to the one before it,
    the drawer draws on it, and the clock starts again from that draw."""
    table = Table(players=4)
    p = table.nicks
    async with trio.open_nursery() as nursery:
        await nursery.start(table.run)
        table.draw()  # card 1, seat 0: in time
        await trio.sleep(DRAW_WAIT + 0.01)  # seat 1's turn sits
        assert table.sent == [(p[1], DrawTurn(to=p[1], draw=2, sender=p[0])),
                              (p[0], DrawTurn(to=p[1], draw=2, sender=p[0]))]  # fmt: skip
        await trio.sleep(MOVE_TIMEOUT - 0.1)
        table.draw()  # on the notice, just in time
        await trio.sleep(DRAW_WAIT - 0.1)
        assert len(table.sent) == 2  # the next draw's clock started at that draw
        table.draw()
        await trio.sleep(0)
        assert table.referee.state is GameState.PLAYING
        nursery.cancel_scope.cancel()
    assert table.named is None


@pytest.mark.parametrize("players", [2, 5])
async def test_a_game_drawn_in_time_hears_nothing_to_the_last_card(
    autojump_clock: trio.abc.Clock, players: int
) -> None:
    table = Table(players)
    async with trio.open_nursery() as nursery:
        await nursery.start(table.run)
        for _ in range(DECK_SIZE):
            await trio.sleep(DRAW_WAIT / 2)
            table.draw()
    assert table.named is False  # the deck is empty: the offers are the ledger's
    assert table.sent == [] and table.referee.undrawn == 0


async def test_an_ended_game_stops_the_clock(autojump_clock: trio.abc.Clock) -> None:
    table = Table()
    async with trio.open_nursery() as nursery:
        await nursery.start(table.run)
        await trio.sleep(DRAW_WAIT + 0.01)
        table.referee.abort("the table shut down")
        await trio.sleep(MOVE_TIMEOUT)
    assert table.named is False and table.referee.culprit is None
