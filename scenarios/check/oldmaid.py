"""``ring check oldmaid``: a student's Old Maid peer in a ring with our table and our peers.

A peer cannot be checked alone: it talks to a table and to two neighbours.
Each case runs our own table (``services.oldmaid.table``, which referees
every claim, section 14) and our own ``ring peer``s in this process, over
loopback TCP, with the program as one more player (``{nick}``, ``{table}``).
The table's verdict is the case's: a game over by the rules is a PASS; an
abort that names the program (its rule, in the table's words) is a FAIL, as
is any other abort or a game that never ends. At the end the program must
exit within a few seconds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from ring.oldmaid.peer import Peer, PeerConfig, PeerError
from scenarios.check.runner import Case, CaseContext, exits_as_fast_as_it_moves
from services.oldmaid.referee import GameState
from services.oldmaid.table import TableConfig, TableOutcome, serve_table

MOVE_LIMIT = 10.0  # ring peer's default: how long a neighbour waits for an answer
SEED = 2013
NICK = "checker"


async def play_ring(context: CaseContext, players: int, move_limit: float) -> TableOutcome:
    """One game of ``players`` seats: the program and ``players - 1`` of our peers."""
    outcomes: list[TableOutcome] = []
    ended = trio.Event()
    config = TableConfig(
        players=players,
        port=context.fixed_port,
        seed=SEED + players,
        linger=1.0,
        last_pair_grace=1.0,
        turn_timeout=max(5.0, 4 * move_limit),
    )
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(_table, config, outcomes, ended)
        address = f"{host}:{port}"
        await context.start(
            {"host": host, "port": str(port), "address": address, "nick": NICK, "table": address}
        )
        for i in range(players - 1):
            peer = Peer(
                PeerConfig(
                    nick=f"ours{i}",
                    table=(host, port),
                    seed=SEED * 10 + i,
                    timeout=move_limit,
                    idle_timeout=4 * move_limit + 5.0,
                )
            )
            nursery.start_soon(_peer, peer)
        await ended.wait()  # the table returns when its game is over or aborted
        nursery.cancel_scope.cancel()
    outcome = outcomes[0]
    context.judge.note(outcome.line)
    if outcome.state is GameState.OVER:
        await context.expect_exit("the game's end")
        return outcome
    if outcome.culprit == NICK:
        raise context.judge.fail(
            f"the table aborted the game naming it (rule {outcome.rule}): {outcome.reason}"
        )
    raise context.judge.fail(f"the game was aborted, naming no one: {outcome.reason}")


async def _table(
    config: TableConfig, outcomes: list, ended: trio.Event, *, task_status: trio.TaskStatus
) -> None:
    outcomes.append(await serve_table(config, task_status=task_status))
    ended.set()


async def _peer(peer: Peer) -> None:
    try:
        await peer.play()
    except PeerError:
        pass  # the table's outcome says what happened; our peer's line adds nothing
    finally:
        peer.log.close()


def cases(move_limit: float = MOVE_LIMIT) -> list[Case]:
    """The Old Maid peer's cases; ``move_limit``: how long a neighbour waits for it."""

    def ring(players: int) -> Callable[[CaseContext], Awaitable[None]]:
        async def play(context: CaseContext) -> None:
            await play_ring(context, players, move_limit)

        return play

    deadline = 60.0 + 8 * move_limit

    def case(players: int, title: str) -> Case:
        return Case(f"oldmaid.game.{players}", title, "oldmaid.md 7", ring(players), deadline,
                    name=NICK, starts_itself=True)  # fmt: skip

    return exits_as_fast_as_it_moves([
        case(2, "a whole game of two: every exchange with one neighbour both ways"),
        case(3, "a whole game of three: a left and a right neighbour"),
        case(6, "a whole game of six: players out and skipped around the ring"),
    ], move_limit)  # fmt: skip
