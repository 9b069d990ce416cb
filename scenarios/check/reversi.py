"""``ring check reversi``: the server's side of docs/protocols/reversi.md, case by case.

Every case plays the course server's part against the program: it reads the
name and the moves exactly as ``ring serve`` does (``ServerConnection``, the
rules of section 6), sends ``U``, the boards, ``W`` and ``G`` in the style the
case tests, and plays the other colour itself (a seeded random legal move).
A case may start from a position of its own choosing: every board carries the
whole position, and a client must play from the board it is sent. Any move
that is garbled or illegal is a FAIL in every case but ``reversi.board-again``,
where it is answered with the board again, as the server does, to see that
the program does not repeat it.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from scenarios.check.runner import Case, CaseContext, exits_as_fast_as_it_moves
from scenarios.check.verdicts import Judge
from scenarios.check.wire import Outbox, Wire
from services.reversi.protocol import (
    NEED_DATA,
    BadName,
    Board,
    Closed,
    Colour,
    GameOver,
    Garbled,
    LineTooLong,
    MoveAttempt,
    Named,
    Result,
    ServerConnection,
    ServerMessage,
)
from services.reversi.rules import BLACK, WHITE, Position, coordinates, iter_squares, square

NAME_SILENCE = 0.2  # section 6: a name with no newline is complete after 200 ms
MOVE_LIMIT = 30.0  # section 5: --move-time's default
SEED = 2013
# Positions found by a seeded search (``rules``), each with one legal move for
# the side to move: after it the mover moves again (a pass), the game ends
# with an empty square (Black wins), or it ends in a draw.
PASS_POSITION = ("2111111122112211212112112122121121122122212222102222222122222220", BLACK)
EMPTY_END_POSITION = ("2222222122112211212212112122112122112121222122112122110111111110", BLACK)
DRAW_POSITION = ("1111111011112222111222111222222212212122121212121122222212222222", WHITE)


@dataclass(frozen=True)
class Style:
    """How the server's messages are written for a case."""

    split: bool = False  # every byte its own segment
    together: bool = False  # U with the first board, W with G, in one write
    newlines: bool = True  # False: bare messages back to back (--no-newlines)


def show(x: int, y: int) -> str:
    return f"M{x}{y}"


def legal_text(position: Position) -> str:
    moves = [show(*coordinates(sq)) for sq in iter_squares(position.legal_moves())]
    return ", ".join(moves)


class ServerSide:
    """The course server's end of one connection, as one case plays it."""

    def __init__(self, context: CaseContext, wire: Wire, style: Style, move_limit: float) -> None:
        self.context = context
        self.judge: Judge = context.judge
        self.wire = wire
        self.style = style
        self.move_limit = move_limit
        self.connection = ServerConnection(newlines=style.newlines)
        self.move_times: list[float] = []
        self.outbox = Outbox(wire, self.judge, split=style.split, together=style.together)

    async def read_name(self) -> str:
        """The program's name, read as section 6 says; FAIL if refused."""
        while True:
            event = self.connection.next_event()
            if isinstance(event, Named):
                return event.name
            if isinstance(event, BadName | LineTooLong):
                reason = event.reason if isinstance(event, BadName) else "a line over 4 KiB"
                raise self.judge.fail(f"its name is refused (section 6): {reason}")
            if isinstance(event, Closed):
                raise self.judge.fail("it closed the connection before naming itself")
            assert event is NEED_DATA
            wait = NAME_SILENCE if self.connection.name_started else self.move_limit
            data = await self.wire.receive(wait)
            if data is None and self.connection.name_started:
                self.connection.name_silence()
                self.judge.warn(
                    "its name has no newline: the server waits 200 ms to know it is whole "
                    "(section 6); other servers may wait for ever"
                )
            elif data is None:
                raise self.judge.fail(f"it sent no name within {self.move_limit:g} s")
            else:
                self.connection.receive_data(data)

    async def send(self, *messages: ServerMessage, flush: bool = True) -> None:
        """Write messages (kept for the next write when ``together`` and not ``flush``)."""
        await self.outbox.write(*[self.connection.send(m) for m in messages], flush=flush)

    async def attempt(self, position: Position) -> MoveAttempt | Garbled:
        """The program's next attempt at ``position`` (timed from the board's write)."""
        began = trio.current_time()
        while True:
            event = self.connection.next_event()
            if isinstance(event, MoveAttempt | Garbled):
                self.move_times.append(trio.current_time() - began)
                return event
            if isinstance(event, Closed):
                raise self.judge.fail(
                    f"it closed its connection at its turn, on the board {position.digits()} "
                    f"(legal: {legal_text(position)})"
                )
            if isinstance(event, LineTooLong):
                raise self.judge.fail("it sent a line over 4 KiB (section 6)")
            assert event is NEED_DATA
            left = self.move_limit - (trio.current_time() - began)
            data = await self.wire.receive(max(left, 0.0))
            if data is None:
                raise self.judge.fail(
                    f"no move within {self.move_limit:g} s of the board {position.digits()} "
                    f"(section 5; legal: {legal_text(position)})"
                )
            self.connection.receive_data(data)

    def figures(self) -> None:
        self.judge.move_times(self.move_times)


async def play_game(
    context: CaseContext,
    *,
    colour: int = BLACK,
    style: Style = Style(),
    start: Position | None = None,
    board_again: bool = False,
    move_limit: float = MOVE_LIMIT,
    end_with_close_after: int | None = None,
) -> ServerSide:
    """A whole game against the program, which plays ``colour``; the other side is ours."""
    wire = await context.accept()
    server = ServerSide(context, wire, style, move_limit)
    name = await server.read_name()
    if name != context.case.name:
        context.judge.warn(f"it named itself {name!r}, not the {{name}} it was given")
    position = start or Position.start()
    rng = random.Random(SEED)
    await server.send(Colour(Colour.BLACK if colour == BLACK else Colour.WHITE), flush=False)
    moves_made = 0
    rejected: set[tuple[int, int]] = set()
    while not position.over:
        if position.to_move != colour:
            position = position.play(rng.choice(list(iter_squares(position.legal_moves()))))
            continue
        if end_with_close_after is not None and moves_made == end_with_close_after:
            # The server stops while the program waits for its next board.
            await wire.close()
            wire.note("the server stops: no W, no G")
            await context.expect_exit("the server closing the connection mid-game")
            server.figures()
            return server
        await server.send(Board(position.digits()))
        while True:
            attempt = await server.attempt(position)
            problem = _problem(attempt, position)
            if problem is None:
                break
            if not board_again:
                raise context.judge.fail(problem)
            if isinstance(attempt, MoveAttempt) and (attempt.x, attempt.y) in rejected:
                raise context.judge.fail(
                    f"it repeated {show(attempt.x, attempt.y)} after the board came again for "
                    "it: the board again means the attempt was not taken (section 5)"
                )
            if isinstance(attempt, MoveAttempt):
                rejected.add((attempt.x, attempt.y))
            if len(rejected) + 1 > 10:
                raise context.judge.fail("ten bad attempts in a row at one board")
            wire.note(f"{problem}: the board again")
            await server.send(Board(position.digits()))
        assert isinstance(attempt, MoveAttempt)
        rejected.clear()
        position = position.play(square(attempt.x, attempt.y))
        moves_made += 1
    winner = position.winner()
    result = Result.DRAW if winner is None else Result.WIN if winner == colour else Result.LOSS
    await server.send(Result(result), flush=False)
    await server.send(GameOver())
    wire.note(f"game over: {position.count(BLACK)}-{position.count(WHITE)}")
    await context.expect_close(wire, "G")
    await context.expect_exit("G")
    server.figures()
    return server


def _problem(attempt: MoveAttempt | Garbled, position: Position) -> str | None:
    if isinstance(attempt, Garbled):
        return f"it sent {attempt.text!r}, which is not Mxy (section 6)"
    if not position.is_legal(square(attempt.x, attempt.y)):
        return (
            f"it played {show(attempt.x, attempt.y)}, an illegal move on the board "
            f"{position.digits()} (legal: {legal_text(position)}; x is the digit's index // 8, "
            "section 4)"
        )
    return None


# -- the cases -----------------------------------------------------------------------


def cases(move_limit: float = MOVE_LIMIT) -> list[Case]:
    """Every Reversi case; ``move_limit`` is the time a move may take (section 5), in
    every case: a program that misses a message waits, and fails at the limit."""

    def game(**options: object) -> Callable[[CaseContext], Awaitable[None]]:
        async def play(context: CaseContext) -> None:
            await play_game(context, move_limit=move_limit, **options)  # type: ignore[arg-type]

        return play

    def from_position(digits: str, colour: int) -> Callable[[CaseContext], Awaitable[None]]:
        return game(colour=colour, start=Position.from_digits(digits, colour))

    _black, _white = game(colour=BLACK), game(colour=WHITE)
    _split, _together = game(style=Style(split=True)), game(style=Style(together=True))
    _bare = game(style=Style(newlines=False, together=True))
    _pass, _empty_end = from_position(*PASS_POSITION), from_position(*EMPTY_END_POSITION)
    _draw = from_position(*DRAW_POSITION)
    _board_again, _server_closes = game(board_again=True), game(end_with_close_after=3)
    _time = game()  # a move past the limit fails in ServerSide.attempt; figures in the notes
    deadline = move_limit + 30.0
    return exits_as_fast_as_it_moves([
        Case("reversi.game.black", "a whole game as Black, every move legal", "reversi.md 5",
             _black, deadline),
        Case("reversi.game.white", "a whole game as White, every move legal", "reversi.md 5",
             _white, deadline),
        Case("reversi.framing.split", "every server message split into one-byte segments",
             "reversi.md 2", _split, deadline),
        Case("reversi.framing.together", "U with the first board, W with G, in one segment",
             "reversi.md 2", _together, deadline),
        Case("reversi.framing.bare", "messages without newlines, back to back (--no-newlines)",
             "reversi.md 2", _bare, deadline),
        Case("reversi.pass", "two boards in a row: the opponent passed", "reversi.md 5.7",
             _pass, deadline),
        Case("reversi.board-again", "a bad attempt gets the board again; never repeat it",
             "reversi.md 5.4", _board_again, deadline),
        Case("reversi.end.empty", "a game that ends with empty squares", "reversi.md 5.8",
             _empty_end, deadline),
        Case("reversi.end.draw", "a draw: W2, then G", "reversi.md 3", _draw, deadline),
        Case("reversi.end.server-closes", "the server closes mid-game, without W or G",
             "reversi.md 5.10", _server_closes, deadline),
        Case("reversi.time", f"every move within the move time ({move_limit:g} s)",
             "reversi.md 5.5", _time, deadline),
    ], move_limit)  # fmt: skip
