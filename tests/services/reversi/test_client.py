"""``ring bot reversi`` and ``ring play reversi``: the conversation, the terminal, the commands."""

from __future__ import annotations

import io
import random
import re
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
import trio

from scenarios.processes import ChildProcess
from services.reversi.client import BotAgent
from services.reversi.conversation import ClientError, play_one_game
from services.reversi.rules import BLACK, WHITE, Position, iter_squares, square
from services.reversi.server import ReversiConfig, ReversiServer, serve_reversi
from services.reversi.terminal import (
    TerminalAgent,
    describe,
    describe_theirs,
    draw,
    parse_move,
    their_moves,
)
from tests.helpers import servers

RING = [sys.executable, "-m", "ring"]
WAIT = 30.0


def running(**settings: object) -> AbstractAsyncContextManager[ReversiServer]:
    config = ReversiConfig(**{"port": 0, "seed": 4, **settings})  # type: ignore[arg-type]
    return servers.running(serve_reversi, config)


def test_a_move_is_read_in_the_handouts_form_or_the_usual_one() -> None:
    assert parse_move("3 4") == (3, 4)
    assert parse_move("34") == (3, 4)
    assert parse_move("M34") == (3, 4)
    assert parse_move("3,4") == (3, 4)
    assert parse_move("d5") == (3, 4)
    assert parse_move("a1") == (0, 0)
    assert parse_move("H8") == (7, 7)
    for bad in ("", "88", "i1", "a9", "3 4 5", "M3"):
        assert parse_move(bad) is None


def test_the_board_is_drawn_as_the_handout_sees_it() -> None:
    lines = draw(Position.start(), BLACK).splitlines()
    # y = 7 on top; (3,3) and (4,4) white, (3,4) and (4,3) black; black's moves marked.
    assert lines[2] == "  7 | . . . . . . . . | 8"
    assert lines[5] == "  4 | . . . X O * . . | 5"
    assert lines[6] == "  3 | . . * O X . . . | 4"
    assert lines[9] == "  0 | . . . . . . . . | 1"
    assert lines[-1] == "      a b c d e f g h"


async def test_the_terminal_refuses_what_is_not_a_legal_square_before_sending() -> None:
    typed = iter(["zz\n", "help\n", "0 0\n", "d3\n"])

    async def read_line() -> str | None:
        return next(typed, None)

    out = io.StringIO()
    agent = TerminalAgent(read_line, out)
    await agent.started(BLACK)
    assert await agent.move(Position.start()) == (3, 2)
    said = out.getvalue()
    assert "not a square: 'zz'" in said and "(0,0) is not a legal move" in said
    assert "x then y" in said  # the help


def as_sent(position: Position, to: int) -> Position:
    """``position`` as a board message shows it to ``to``: the digits, and ``to`` to move."""
    return Position(position.black, position.white, to)


def a_pass_between(seed: int) -> tuple[Position, int, int, Position] | None:
    """From a seeded random game: a board, the two moves its player made in a row
    (the other having none between), and the board after them; None if none came."""
    rng = random.Random(seed)
    position = Position.start()
    while not position.over:
        first = rng.choice(list(iter_squares(position.legal_moves())))
        between = position.play(first)
        if between.to_move == position.to_move and not between.over:
            second = rng.choice(list(iter_squares(between.legal_moves())))
            after = between.play(second)
            if after.to_move != position.to_move:
                return position, first, second, after
        position = between
    return None


def test_the_opponents_moves_are_worked_out_from_the_boards() -> None:
    start = Position.start()
    d3 = square(3, 2)
    assert their_moves(start, as_sent(start.play(d3), WHITE)) == [d3]
    assert describe_theirs([d3]) == "opponent played d3 (3,2)"
    # The opponent had no move: the board after ours comes back unchanged.
    assert their_moves(start.play(d3), as_sent(start.play(d3), WHITE)) == []
    assert "passed" in describe_theirs([])
    # Two moves in a row, ours skipped between them: both, in order.
    before, first, second, after = next(
        found for seed in range(200) if (found := a_pass_between(seed)) is not None
    )
    us = WHITE if before.to_move == BLACK else BLACK
    assert their_moves(before, as_sent(after, us)) == [first, second]
    told = describe_theirs([first, second])
    assert told.startswith("opponent played ") and ", then (you had no move) " in told
    # A board no moves of theirs lead to (our move refused, say) is not explained.
    assert their_moves(start.play(d3), as_sent(start, WHITE)) is None


async def test_the_terminal_says_what_the_opponent_played() -> None:
    black_d3 = Position.start().play(square(3, 2))
    ours = black_d3.play(square(2, 2))  # White's c3
    black_b3 = ours.play(square(1, 2))
    reply = next(iter_squares(black_b3.legal_moves()))
    typed = iter(["c3\n", f"{reply // 8} {reply % 8}\n"])

    async def read_line() -> str | None:
        return next(typed, None)

    out = io.StringIO()
    agent = TerminalAgent(read_line, out)
    await agent.started(WHITE)
    assert await agent.move(as_sent(black_d3, WHITE)) == (2, 2)
    await agent.move(as_sent(black_b3, WHITE))
    said = [line for line in out.getvalue().splitlines() if line.startswith("opponent ")]
    assert said == ["opponent played d3 (3,2)", "opponent played b3 (1,2)"]


async def test_two_bots_play_a_whole_game_and_agree_on_the_result() -> None:
    async with running() as server:
        ends = {}

        async def play(name: str, level: str) -> None:
            agent = BotAgent.of_level(level, f"{name}:1", None)
            ends[name] = await play_one_game(server.address, name, agent, timeout=WAIT)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, "ann", "random")
            nursery.start_soon(play, "bob", "greedy")
    ann, bob = ends["ann"], ends["bob"]
    assert {ann.colour, bob.colour} == {1, 2}
    assert sorted([ann.result, bob.result]) in ([0, 1], [2, 2])
    [report] = server.reports
    assert report.reason == "board"


async def test_the_servers_verdict_reaches_a_player_still_thinking() -> None:
    class Thinking:
        async def started(self, colour: int) -> None:
            return None

        async def move(self, position: Position) -> tuple[int, int]:
            await trio.sleep_forever()
            raise AssertionError

    async with running(move_time=0.2) as server:
        ends = []

        async def play(name: str) -> None:
            ends.append(await play_one_game(server.address, name, Thinking(), timeout=WAIT))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, "ann")
            nursery.start_soon(play, "bob")
    assert sorted(end.result for end in ends) == [0, 1]  # black never moved: it lost
    assert "you lost" in describe(next(end for end in ends if end.result == 0))


async def test_a_player_who_gives_up_while_thinking_gets_one_clear_error() -> None:
    """Quitting at the terminal: ClientError itself, not an exception group around it."""

    class Quitter:
        async def started(self, colour: int) -> None:
            return None

        async def move(self, position: Position) -> tuple[int, int]:
            raise ClientError("you left the game")

    async with running(move_time=0) as server:
        errors = []

        async def play(name: str, agent: object) -> None:
            try:
                await play_one_game(server.address, name, agent, timeout=WAIT)  # type: ignore[arg-type]
            except ClientError as exc:
                errors.append(str(exc))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, "ann", Quitter())
            nursery.start_soon(play, "bob", Quitter())
    # Black quits at its first board; White is then told it won, and returns normally.
    assert errors == ["you left the game"]


async def test_no_server_is_one_clear_error() -> None:
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with pytest.raises(ClientError, match=f"cannot reach the server at 127.0.0.1:{port}"):
        agent = BotAgent.of_level("random", 1, None)
        await play_one_game(("127.0.0.1", port), "ann", agent, timeout=2)


def test_ring_bot_reversi_plays_games_on_ring_serve(tmp_path: Path) -> None:
    server = ChildProcess("serve", [*RING, "serve", "--reversi", "0", "--seed", "5"], tmp_path)
    try:
        first = server.first_line(WAIT)
        assert first is not None and first.startswith("reversi listening on "), server.stderr
        address = first.removeprefix("reversi listening on ")
        bots = []
        for name, level in (("rnd", "random"), ("grd", "greedy")):
            argv = [*RING, "bot", "reversi", "--level", level, "--server", address,
                    "--name", name, "--games", "2", "--seed", "3"]  # fmt: skip
            bots.append(ChildProcess(name, argv, tmp_path))
        for bot in bots:
            assert bot.popen.wait(WAIT) == 0, bot.stderr
            bot.kill()  # reaps its output readers
            lines = bot.stdout
            assert len(lines) == 3, lines
            assert all(re.fullmatch(r"\w+ \((random|greedy)\) (won|lost|tied) as (black|white)",
                                    line) for line in lines[:2])  # fmt: skip
            assert re.fullmatch(rf"{bot.name}: \d won, \d tied, \d lost", lines[2])
    finally:
        server.kill()
