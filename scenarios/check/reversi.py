"""``ring check reversi``: the server's side of docs/protocols/reversi.md, case by case.

Every case plays the course server's part against the program: it reads the
name and the moves exactly as ``ring serve`` does (``ServerConnection``, the
rules of section 6), sends ``U``, the boards, ``W`` and ``G`` in the style the
case tests, and plays the other colour itself (a seeded random legal move).
A case may start from a position of its own choosing: every board carries the
whole position, and a client must play from the board it is sent. A garbled
or illegal attempt is answered with the board again, as the server does (the
handout: "the server will send the board situation to that client again"):
a WARN, and a FAIL only once the move time passes or at the 100th attempt in
a row, where the server ends the game (reversi.md 5.5, 5.6). In
``reversi.framing.bare`` a program that waits for a newline is a WARN: the
course's server ends every message with one.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from scenarios.check import obligations as rules
from scenarios.check.context import CONNECT_TIMEOUT, Case, CaseContext, exits_as_fast_as_it_moves
from scenarios.check.verdicts import CaseFailed, Judge
from scenarios.check.wire import CaseWire, Outbox
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
ATTEMPTS = 100  # section 5.6: the 100th bad attempt in a row loses the game
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

    def __init__(
        self, context: CaseContext, wire: CaseWire, style: Style, move_limit: float
    ) -> None:
        self.context = context
        self.judge: Judge = context.judge
        self.wire = wire
        self.style = style
        self.move_limit = move_limit
        self.connection = ServerConnection(newlines=style.newlines)
        self.move_times: list[float] = []
        self.outbox = Outbox(
            wire, self.judge, split=style.split, together=style.together,
            stay=rules.READ_TO_END,
        )  # fmt: skip

    async def read_name(self) -> str:
        """The program's name, read as section 6 says; FAIL if refused."""
        while True:
            event = self.connection.next_event()
            if isinstance(event, Named):
                return event.name
            if isinstance(event, BadName | LineTooLong):
                reason = event.reason if isinstance(event, BadName) else "a line over 4 KiB"
                raise self.judge.fail(
                    rules.REVERSI_NAME, f"its name is refused (section 6): {reason}"
                )
            if isinstance(event, Closed):
                raise self.judge.fail(
                    rules.REVERSI_NAME, "it closed the connection before naming itself"
                )
            assert event is NEED_DATA
            wait = NAME_SILENCE if self.connection.name_started else CONNECT_TIMEOUT
            data = await self.wire.receive(wait)
            if data is None and self.connection.name_started:
                self.connection.name_silence()
                self.judge.warn(
                    "its name has no newline: the server waits 200 ms to know it is whole "
                    "(section 6); other servers may wait for ever", rules.REVERSI_NEWLINE,
                )  # fmt: skip
            elif data is None:
                raise self.judge.fail(
                    rules.CONNECT, f"it sent no name within {CONNECT_TIMEOUT:g} s of connecting"
                )
            else:
                self.connection.receive_data(data)

    async def send(self, *messages: ServerMessage, flush: bool = True) -> None:
        """Write messages (kept for the next write when ``together`` and not ``flush``)."""
        await self.outbox.write(*[self.connection.send(m) for m in messages], flush=flush)

    async def attempt(self, position: Position, began: float) -> MoveAttempt | Garbled:
        """The program's next attempt at ``position`` (its turn's time runs from ``began``,
        the write of the turn's first board)."""
        while True:
            event = self.connection.next_event()
            if isinstance(event, MoveAttempt | Garbled):
                self.move_times.append(trio.current_time() - began)
                return event
            if isinstance(event, Closed):
                raise self.judge.fail(
                    rules.READ_TO_END,
                    f"it closed its connection at its turn, on the board {position.digits()} "
                    f"(legal: {legal_text(position)})",
                )
            if isinstance(event, LineTooLong):
                raise self.judge.fail(
                    rules.REVERSI_MOVE, "it sent a line over 4 KiB: the server ends its game "
                    "(section 6)",
                )  # fmt: skip
            assert event is NEED_DATA
            left = self.move_limit - (trio.current_time() - began)
            data = await self.wire.receive(max(left, 0.0))
            if data is None:
                raise self.judge.fail(
                    rules.REVERSI_MOVE,
                    f"no move within {self.move_limit:g} s of the board {position.digits()} "
                    f"(section 5; legal: {legal_text(position)})",
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
    move_limit: float = MOVE_LIMIT,
    end_with_close_after: int | None = None,
    opponent_leaves_after: int | None = None,
) -> ServerSide:
    """A whole game against the program, which plays ``colour``; the other side is ours."""
    wire = await context.accept()
    server = ServerSide(context, wire, style, move_limit)
    name = await server.read_name()
    if name != context.case.name:
        context.judge.warn(
            f"it named itself {name!r}, not the {{name}} it was given", rules.NAME_GIVEN
        )
    position = start or Position.start()
    rng = random.Random(SEED)
    await server.send(Colour(Colour.BLACK if colour == BLACK else Colour.WHITE), flush=False)
    moves_made = 0
    while not position.over:
        if position.to_move != colour:
            position = position.play(rng.choice(list(iter_squares(position.legal_moves()))))
            continue
        if end_with_close_after is not None and moves_made == end_with_close_after:
            # The server stops while the program waits for its next board.
            context.broke_off()
            await wire.close()
            wire.note("the server stops: no W, no G")
            await context.expect_exit("the server closing the connection mid-game")
            server.figures()
            return server
        if opponent_leaves_after is not None and moves_made == opponent_leaves_after:
            # The opponent's connection dropped: the program wins, mid-game (5.9).
            wire.note("the opponent left: W1, G")
            await _end(context, server, Result(Result.WIN), style)
            server.figures()
            return server
        try:
            attempt = await _turn(server, position)
        except CaseFailed as failed:
            if not style.newlines and failed.rule is rules.REVERSI_MOVE and moves_made == 0:
                # It never found the end of a bare message: it reads by lines.
                context.judge.warn(f"{failed}: it waits for a newline", rules.REVERSI_BARE)
                return server
            raise
        position = position.play(square(attempt.x, attempt.y))
        moves_made += 1
    winner = position.winner()
    result = Result.DRAW if winner is None else Result.WIN if winner == colour else Result.LOSS
    wire.note(f"game over: {position.count(BLACK)}-{position.count(WHITE)}")
    await _end(context, server, Result(result), style)
    server.figures()
    return server


async def _end(context: CaseContext, server: ServerSide, result: Result, style: Style) -> None:
    """``W`` then ``G`` (with a pause between unless they go in one write), then the
    program must close and exit."""
    await server.send(result, flush=not style.together)
    if not style.together:
        await context.end_pause(server.wire, f"W{result.result}", "G")
    await server.send(GameOver())
    context.over()
    await context.expect_close(server.wire, "G", quiet=rules.REVERSI_QUIET)
    await context.expect_exit("G")


async def _turn(server: ServerSide, position: Position) -> MoveAttempt:
    """One turn: the board, and again after each bad attempt (a WARN) until a legal
    move; FAIL at the move time or at the 100th bad attempt in a row (section 5)."""
    judge, wire = server.judge, server.wire
    await server.send(Board(position.digits()))
    began = trio.current_time()
    for attempts in range(1, ATTEMPTS + 1):
        attempt = await server.attempt(position, began)
        problem = _problem(attempt, position)
        if problem is None:
            assert isinstance(attempt, MoveAttempt)
            return attempt
        if attempts == ATTEMPTS:
            break
        judge.warn(f"{problem}: the board again", rules.REVERSI_FIRST_TRY)
        wire.note(f"{problem}: the board again")
        await server.send(Board(position.digits()))
    raise judge.fail(
        rules.REVERSI_MOVE,
        f"{ATTEMPTS} bad attempts in a row at the board {position.digits()}, the last "
        f"{problem}: the server ends its game (section 5.6)",
    )


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
    _server_closes = game(end_with_close_after=3)
    _opponent_left = game(opponent_leaves_after=3)
    _time = game()  # a move past the limit fails in ServerSide.attempt; figures in the notes
    deadline = 60 * move_limit + 30.0  # a program moves at most 60 times in a game
    ends = (rules.READ_TO_END, rules.EXIT, rules.STATUS, rules.CRASH)
    whole = (rules.CONNECT, rules.REVERSI_NAME, rules.REVERSI_MOVE, rules.REVERSI_FIRST_TRY,
             rules.REVERSI_NEWLINE, rules.NAME_GIVEN, rules.REVERSI_QUIET, *ends)
    return exits_as_fast_as_it_moves([
        Case("reversi.game.black", "a whole game as Black, every move legal", "reversi.md 5",
             _black, deadline, tests=whole),
        Case("reversi.game.white", "a whole game as White, every move legal", "reversi.md 5",
             _white, deadline, tests=whole),
        Case("reversi.framing.split", "every server message split into one-byte segments",
             "reversi.md 2", _split, deadline, tests=(rules.REVERSI_STREAM,)),
        Case("reversi.framing.together", "U with the first board, W with G, in one segment",
             "reversi.md 2", _together, deadline, tests=(rules.REVERSI_STREAM,)),
        Case("reversi.framing.bare", "messages without newlines, back to back (--no-newlines)",
             "reversi.md 2", _bare, deadline, tests=(rules.REVERSI_BARE,)),
        Case("reversi.pass", "two boards in a row: the opponent passed", "reversi.md 5.7",
             _pass, deadline, tests=(rules.REVERSI_MOVE, rules.CRASH)),
        Case("reversi.end.empty", "a game that ends with empty squares", "reversi.md 5.8",
             _empty_end, deadline, tests=ends),
        Case("reversi.end.draw", "a draw: W2, then G", "reversi.md 3", _draw, deadline,
             tests=ends),
        Case("reversi.end.opponent-left", "the opponent leaves mid-game: W1 and G while it "
             "waits for its board", "reversi.md 5.9", _opponent_left, deadline, tests=ends),
        Case("reversi.end.server-closes", "the server closes mid-game, without W or G",
             "reversi.md 5.10", _server_closes, deadline, tests=(rules.EXIT,)),
        Case("reversi.time", f"every move within the move time ({move_limit:g} s)",
             "reversi.md 5.5", _time, deadline, tests=(rules.REVERSI_MOVE,)),
    ], move_limit)  # fmt: skip
