"""``ring check notipping``: the server's side of docs/protocols/notipping.md, case by case.

Every case plays the course server's part against the program, which asks
for the seat ``{seat}``: it reads the program's messages exactly as ``ring
serve`` does (``ServerConnection``, section 6), grants the seat, begins the
game, sends each ``ROUND`` in the style the case tests, and plays the other
seat itself (a seeded random move that does not tip, while there is one). A
move that is not allowed, or garbled, is a FAIL in every case: the server
would answer it with ``INVALID;`` and the loss (the handout: "the game is
considered forfeit"). After ``DENIED;`` a program that waits, as the handout
says it should, is a WARN: our server begins no game on a denied request.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from ring.wire.sansio import Closed
from scenarios.check import obligations as rules
from scenarios.check.context import CONNECT_TIMEOUT, Case, CaseContext, exits_as_fast_as_it_moves
from scenarios.check.verdicts import CaseFailed
from scenarios.check.wire import CaseWire, Outbox, read_event
from services.notipping.protocol import (
    AddMove,
    BadJoin,
    Begin,
    Denied,
    Garbled,
    Granted,
    Invalid,
    JoinRequest,
    Lose,
    MessageTooLong,
    RemoveMove,
    Round,
    ServerConnection,
    ServerMessage,
    Win,
)
from services.notipping.rules import REMOVE, Add, Game, InvalidMove, Remove

TIME_BUDGET = 120.0  # section 7: --time-budget's default, all of a player's moves together
SEED = 2013
GAME_NUMBER = 1
JOIN_WAIT = CONNECT_TIMEOUT  # the longest wait for a join, or a join again after DENIED


@dataclass(frozen=True)
class Style:
    split: bool = False  # every byte its own segment
    together: bool = False  # GRANTED, BEGIN and the first ROUND in one write; the end too
    layout: bool = False  # the handout's layout: a line break after every colon
    bare: bool = False  # no whitespace at all between messages: `GRANTED;BEGIN:1:7;`


def handout_layout(data: bytes) -> bytes:
    """A message as the handout lays it out: "spacing and line breaks are irrelevant"."""
    return data.replace(b":", b":\n  ")


class ServerSide:
    """The course server's end of one player's connection, as one case plays it."""

    def __init__(self, context: CaseContext, wire: CaseWire, style: Style, budget: float) -> None:
        self.context = context
        self.judge = context.judge
        self.wire = wire
        self.style = style
        self.budget = budget
        self.connection = ServerConnection()
        self.move_times: list[float] = []
        self.outbox = Outbox(
            wire, self.judge, split=style.split, together=style.together,
            stay=rules.READ_TO_END,
        )  # fmt: skip

    async def send(self, *messages: ServerMessage, flush: bool = True) -> None:
        encoded = [self.connection.send(message) for message in messages]
        if self.style.layout:
            encoded = [handout_layout(data) for data in encoded]
        if self.style.bare:
            encoded = [data.strip() for data in encoded]
        await self.outbox.write(*encoded, flush=flush)

    async def next_event(self, wait: float, waiting_for: str, rule: rules.Rule) -> object:
        return await read_event(self.wire, self.connection, self.judge, wait, waiting_for, rule)

    async def join(self, seat: int, *, deny_first: bool = False) -> None:
        """Read the JOINREQUEST (again after a DENIED, with ``deny_first``) and grant it."""
        denied = False
        while True:
            try:
                event = await self.next_event(
                    min(JOIN_WAIT, self.budget), "JOINREQUEST", rules.CONNECT
                )
            except CaseFailed:
                if not denied:
                    raise
                # The handout's own reading: "The client should then wait for the game to
                # begin". Allowed; on our server it waits for ever (section 5.2).
                self.judge.warn(
                    f"after DENIED; it waited {JOIN_WAIT:g} s without asking again: the "
                    "handout says to wait for the game to begin, but our server begins no "
                    "game on a denied request; ask for the other seat, or close",
                    rules.NOTIPPING_DENIED,
                )
                raise _GaveUp(closed=False) from None
            if isinstance(event, Closed):
                if denied:
                    # Allowed: it was told the seat is taken (it could ask for the other).
                    self.judge.note("it gave up after DENIED, closing its connection")
                    raise _GaveUp(closed=True)
                raise self.judge.fail(
                    rules.NOTIPPING_JOIN, "it closed its connection before asking for a seat"
                )
            if isinstance(event, BadJoin) and event.player is not None:
                # Only its handle is one our server denies: the handout sets no form for
                # a handle, so a WARN, and the case plays on as if granted.
                self.judge.warn(
                    f"our server would answer DENIED; to its JOINREQUEST: {event.reason}",
                    rules.NOTIPPING_HANDLE,
                )
                event = JoinRequest(self.context.case.name, event.player)
            if isinstance(event, BadJoin):
                raise self.judge.fail(
                    rules.NOTIPPING_JOIN,
                    f"its JOINREQUEST would be DENIED (section 3): {event.reason}",
                )
            if not isinstance(event, JoinRequest):
                raise self.judge.fail(
                    rules.NOTIPPING_JOIN, f"its first message is not a JOINREQUEST: {event!r}"
                )
            if deny_first and not denied:
                denied = True
                await self.send(Denied())
                continue
            if not denied and str(event.player) != str(seat):
                self.judge.warn(
                    f"it asked for seat {event.player}, not the {{seat}} {seat}", rules.NAME_GIVEN
                )
            self.seat = event.player
            if event.handle != self.context.case.name:
                self.judge.warn(
                    f"its handle is {event.handle!r}, not the {{name}} given", rules.NAME_GIVEN
                )
            await self.send(Granted(), flush=False)
            return

    async def move(self, game: Game) -> AddMove | RemoveMove:
        """The program's answer to the ROUND just sent; FAIL if it is not allowed."""
        began = trio.current_time()
        left = self.budget - sum(self.move_times)
        awaited = f"answer to ROUND {_round_name(game)} (the time budget, section 7)"
        event = await self.next_event(max(left, 0.0), awaited, rules.NOTIPPING_MOVE)
        self.move_times.append(trio.current_time() - began)
        move_rule = rules.NOTIPPING_MOVE
        if isinstance(event, Closed):
            raise self.judge.fail(
                rules.READ_TO_END, f"it closed its connection at its turn ({_round_name(game)})"
            )
        if isinstance(event, MessageTooLong):
            raise self.judge.fail(
                move_rule, f"it sent a message over {event.limit} bytes (section 7)"
            )
        if isinstance(event, Garbled):
            raise self.judge.fail(
                move_rule, f"it sent {event.text!r}: {event.reason} (section 6)"
            )
        if not isinstance(event, AddMove | RemoveMove):
            raise self.judge.fail(move_rule, f"it sent {event!r} at its turn; a move was due")
        move = (
            Add(event.weight, event.position)
            if isinstance(event, AddMove)
            else Remove(event.position)
        )
        try:
            game.check(move)
        except InvalidMove as exc:
            raise self.judge.fail(
                move_rule,
                f"{_wire(event)} at ROUND {_round_name(game)} is not allowed: {exc} "
                "(section 5; the server answers INVALID; and the loss)",
            ) from None
        return event


class _GaveUp(Exception):
    """The program did not ask again after DENIED: it closed its connection (then it must
    exit, and passes) or it waited (a WARN; the case ends there)."""

    def __init__(self, *, closed: bool) -> None:
        super().__init__()
        self.closed = closed


def _round_name(game: Game) -> str:
    return f"{game.round}.{game.to_move}"


def _wire(move: AddMove | RemoveMove) -> str:
    if isinstance(move, AddMove):
        return f"ADD:{move.weight}:{move.position};"
    return f"REMOVE:{move.position};"


def round_for(game: Game, seat: int) -> Round:
    if game.phase == REMOVE:
        return Round(game.round, seat, REMOVE, None, None, game.weights)
    mine, theirs = sorted(game.hands[seat]), sorted(game.hands[1 - seat])
    return Round(game.round, seat, "ADD", tuple(mine), tuple(theirs), game.weights)


def our_move(game: Game, rng: random.Random, *, tip: bool = False) -> Add | Remove:
    """A random move that does not tip (``tip``: one that does, if any)."""
    moves = game.legal_moves()
    wanted = [m for m in moves if game.tips_after(m) == tip]
    return rng.choice(wanted or moves)


async def play_game(
    context: CaseContext,
    *,
    seat: int = 0,
    style: Style = Style(),
    budget: float = TIME_BUDGET,
    deny_first: bool = False,
    we_tip: bool = False,
    invalid_after: int | None = None,
    close_after: int | None = None,
    need_remove: bool = False,
    opponent_leaves_after: int | None = None,
) -> ServerSide:
    wire = await context.accept()
    server = ServerSide(context, wire, style, budget)
    try:
        await server.join(seat, deny_first=deny_first)
    except _GaveUp as gave_up:
        if gave_up.closed:
            context.broke_off()  # refused a seat, it had no game: any ending is fine
            await context.expect_exit("DENIED")
        return server
    seat = server.seat
    game = Game.start()
    rng = random.Random(SEED)
    await server.send(Begin(GAME_NUMBER, game.max_weight), flush=False)
    theirs_made = removes = 0
    while not game.over:
        if game.to_move != seat:
            game = game.play(our_move(game, rng, tip=we_tip))
            continue
        if close_after is not None and theirs_made == close_after:
            # The server stops while the program waits for its next ROUND.
            context.broke_off()
            await wire.close()
            wire.note("the server stops: no WIN, no LOSE")
            await context.expect_exit("the server closing the connection mid-game")
            context.judge.move_times(server.move_times)
            return server
        if opponent_leaves_after is not None and theirs_made == opponent_leaves_after:
            # The opponent's connection dropped: the program wins, mid-game (7, "In a game").
            wire.note("the opponent left: WIN;")
            await server.send(Win())
            context.over()
            await context.expect_close(wire, "WIN;", quiet=rules.NOTIPPING_QUIET)
            await context.expect_exit("WIN;")
            context.judge.move_times(server.move_times)
            return server
        await server.send(round_for(game, seat))
        event = await server.move(game)
        if invalid_after is not None and theirs_made == invalid_after:
            # The server's clock says the answer came after the budget was spent.
            wire.note("the server: its time budget is spent")
            await server.send(Invalid(), flush=not style.together)
            if not style.together:
                await context.end_pause(wire, "INVALID;", "LOSE;")
            await server.send(Lose())
            context.over()
            await context.expect_close(wire, "INVALID; LOSE;", quiet=rules.NOTIPPING_QUIET)
            await context.expect_exit("INVALID; LOSE;")
            return server
        removes += isinstance(event, RemoveMove)
        game = game.play(Add(event.weight, event.position) if isinstance(event, AddMove)
                         else Remove(event.position))  # fmt: skip
        theirs_made += 1
    if need_remove and removes == 0:  # not the program's doing: the checker's game is wrong
        raise RuntimeError("the game ended before the REMOVE phase; the case needs it")
    ending = Win() if game.winner == seat else Lose()
    await server.send(ending)
    context.over()
    wire.note(f"the board tipped after {game.moves_made} moves")
    said = "WIN;" if isinstance(ending, Win) else "LOSE;"
    await context.expect_close(wire, said, quiet=rules.NOTIPPING_QUIET)
    await context.expect_exit("the end of the game")
    context.judge.move_times(server.move_times)
    return server


def cases(move_limit: float = TIME_BUDGET) -> list[Case]:
    """Every No Tipping case; ``move_limit`` is the player's time budget (section 7)."""

    def game(seat: int = 0, **options: object) -> Callable[[CaseContext], Awaitable[None]]:
        async def play(context: CaseContext) -> None:
            await play_game(context, seat=seat, budget=move_limit, **options)  # type: ignore[arg-type]

        return play

    deadline = move_limit + 30.0

    def case(case_id: str, title: str, section: str, seat: int = 0,
             tests: tuple[rules.Rule, ...] = (), **options: object) -> Case:
        return Case(case_id, title, f"notipping.md {section}", game(seat, **options), deadline,
                    seat=str(seat), tests=tests)  # fmt: skip

    ends = (rules.READ_TO_END, rules.EXIT, rules.STATUS, rules.CRASH)
    whole = (rules.CONNECT, rules.NOTIPPING_JOIN, rules.NOTIPPING_HANDLE, rules.NOTIPPING_MOVE,
             rules.NAME_GIVEN, rules.NOTIPPING_QUIET, *ends)
    stream = (rules.NOTIPPING_STREAM,)
    return exits_as_fast_as_it_moves([
        case("notipping.game.seat0", "a whole game from seat 0, every move allowed", "5",
             tests=whole),
        case("notipping.game.seat1", "a whole game from seat 1, every move allowed", "5", 1,
             tests=whole),
        case("notipping.framing.split", "every server message split into one-byte segments",
             "2", style=Style(split=True), tests=stream),
        case("notipping.framing.together", "GRANTED, BEGIN and the first ROUND in one segment",
             "2", style=Style(together=True), tests=stream),
        case("notipping.framing.layout", "the handout's layout: line breaks inside messages",
             "2", style=Style(layout=True), tests=stream),
        case("notipping.framing.bare", "no whitespace between messages, several in a segment "
             "(GRANTED;BEGIN:1:7;ROUND:...)", "2", style=Style(bare=True, together=True),
             tests=stream),
        case("notipping.denied", "DENIED first: ask again and play, or close", "5.2",
             deny_first=True, tests=(rules.NOTIPPING_DENIED, rules.NOTIPPING_JOIN)),
        case("notipping.remove", "the REMOVE phase: both ROUND forms, any block removed",
             "5.7", need_remove=True, tests=(rules.NOTIPPING_MOVE,)),
        case("notipping.end.win", "the opponent tips the board: WIN;", "5.9", we_tip=True,
             tests=ends),
        case("notipping.end.invalid", "INVALID; then LOSE; (the time budget spent)", "5.11",
             invalid_after=2, tests=ends),
        case("notipping.end.opponent-left", "the opponent leaves mid-game: WIN; while it "
             "waits for its ROUND", "7", opponent_leaves_after=3, tests=ends),
        case("notipping.end.server-closes", "the server closes mid-game, without WIN or LOSE",
             "1", close_after=3, tests=(rules.EXIT,)),
        case("notipping.time", f"every move within the time budget ({move_limit:g} s in all)",
             "7", tests=(rules.NOTIPPING_MOVE,)),
    ], move_limit)  # fmt: skip
