"""``ring check fishnet``: the server's side of docs/protocols/fishnet.md, case by case.

Every case plays the FishNet server's part against the program, which sends
``play {name} <opponent>``: it reads the program's lines with the server's own
parser (``Link``), deals and tells with the server's own ``News``, and
plays the opponent itself (a seeded random request for a rank it holds, or,
where the case says so, a pass). A case may deal a position of its own
choosing. A request for a rank the program does not hold, a line the server
would answer with ``error``, or a ``quit`` before the end is a FAIL in every
case: the server would answer it, but a correct client never sends it. Two
cases send ``error`` lines a correct client never caused, at its turn and at
the opponent's: the handout says a client "should print the error
description to the screen and attempt to continue", and fishnet.md makes it
a must.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from ring.wire.sansio import Closed, Invalid
from scenarios.check import obligations as rules
from scenarios.check.context import CONNECT_TIMEOUT, Case, CaseContext, exits_as_fast_as_it_moves
from scenarios.check.wire import CaseWire, Outbox, read_event
from services.fishnet.news import News, Tell
from services.fishnet.protocol import (
    Error,
    Link,
    Pass,
    Play,
    Quit,
    Request,
    Role,
    ServerMessage,
    YourTurn,
    YouWin,
)
from services.fishnet.rules import FishNetGame, RuleError

MOVE_LIMIT = 120.0  # the server's --move-time default: to answer yourturn
SEED = 2013
CLIENT, OPPONENT = 0, 1
# The error lines the checker sends unasked: reasons that say where they come from.
ERROR_AT_TURN = "check_error_at_your_turn"
ERROR_OUT_OF_TURN = "check_error_out_of_turn"


@dataclass(frozen=True)
class Style:
    split: bool = False  # every byte its own segment
    together: bool = False  # every batch of lines (the deal, a move's answer) in one segment


def deal_with_a_book_for_the_opponent() -> FishNetGame:
    """A deal in which the opponent, dealt second, completes the book of 0s."""
    rest = [rank for rank in range(1, 13) for _ in range(4)]
    client_cards, rest = rest[:7], rest[7:]
    opponent_cards = [0, 0, 0, 0, *rest[:3]]
    rest = rest[3:]
    deck = [card for pair in zip(client_cards, opponent_cards, strict=True) for card in pair]
    return FishNetGame.from_deck([*deck, *rest], first=CLIENT)


def deal_without_books_in_reach() -> FishNetGame:
    """Both dealt one each of ranks 0-6: the program's first request is a hit that makes
    no book, so the game can be stopped right after it with no book on either side."""
    rest = [rank for rank in range(13) for _ in range(4)]
    for rank in range(7):
        rest.remove(rank)
        rest.remove(rank)
    deck = [rank for rank in range(7) for _ in range(2)]
    return FishNetGame.from_deck([*deck, *rest], first=CLIENT)


def with_next_card(game: FishNetGame, rank: int) -> FishNetGame:
    """``game`` with a card of ``rank`` on top of the stock, if the stock holds one.

    The stock's order is the server's secret until a card is fished, so putting
    one of its cards first is a deal the program cannot tell from any other.
    """
    stock = list(game.stock())
    if rank not in stock:
        return game
    stock.remove(rank)
    hands = tuple([r for r, n in enumerate(game.hand(seat)) for _ in range(n)] for seat in (0, 1))
    return FishNetGame.from_position(
        hands=(hands[0], hands[1]),
        stock=[rank, *stock],
        books=(game.books(0), game.books(1)),
        turn=CLIENT,
    )


class ServerSide:
    def __init__(
        self, context: CaseContext, wire: CaseWire, style: Style, move_limit: float
    ) -> None:
        self.context = context
        self.judge = context.judge
        self.wire = wire
        self.move_limit = move_limit
        self.link = Link(Role.SERVER)
        self.outbox = Outbox(
            wire, self.judge, split=style.split, together=style.together,
            stay=rules.FISHNET_STAY,
        )  # fmt: skip
        self.move_times: list[float] = []

    async def send(self, messages: list[ServerMessage]) -> None:
        if messages:
            await self.outbox.write(*[self.link.send(message) for message in messages])

    async def next_event(self, wait: float, waiting_for: str, rule: rules.Rule) -> object:
        return await read_event(self.wire, self.link, self.judge, wait, waiting_for, rule)

    async def read_play(self) -> Play:
        event = await self.next_event(CONNECT_TIMEOUT, "play line", rules.CONNECT)
        if isinstance(event, Play):
            if event.team != self.context.case.name:
                self.judge.warn(
                    f"it played as {event.team!r}, not the {{name}} it was given",
                    rules.NAME_GIVEN,
                )
            return event
        if isinstance(event, Invalid):
            raise self.judge.fail(
                rules.FISHNET_PLAY, f"its first line is refused: error {event.reason} (Messages)"
            )
        raise self.judge.fail(
            rules.FISHNET_PLAY, f"its first line is not play <team> <opponent>: {event!r}"
        )

    async def move(self, game: FishNetGame) -> Request | Pass:
        began = trio.current_time()
        answer = rules.FISHNET_ANSWER
        event = await self.next_event(self.move_limit, "answer to yourturn", answer)
        self.move_times.append(trio.current_time() - began)
        hand = _ranks(game, CLIENT)
        if isinstance(event, Closed):
            raise self.judge.fail(
                rules.FISHNET_STAY, f"it closed its connection at its turn (holding {hand})"
            )
        if isinstance(event, Invalid):
            raise self.judge.fail(
                answer, f"the server would answer error {event.reason} (Errors)"
            )
        if isinstance(event, Quit):
            raise self.judge.fail(
                rules.FISHNET_STAY, "it sent quit in the middle of the game (it loses)"
            )
        if isinstance(event, Request) and event.rank not in hand:
            raise self.judge.fail(
                answer,
                f"it asked for {event.rank}s holding {hand}: the server answers error "
                "rank_not_held (The game: you must hold the rank you ask for)",
            )
        if not isinstance(event, Request | Pass):
            raise self.judge.fail(answer, f"it sent {event!r} at its turn")
        return event


def _ranks(game: FishNetGame, seat: int) -> list[int]:
    """The ranks ``seat`` holds (``hand`` is counts by rank)."""
    return [rank for rank, count in enumerate(game.hand(seat)) if count]


def _mine(tells: list[Tell]) -> list[ServerMessage]:
    return [tell.message for tell in tells if tell.seat == CLIENT]


async def play_game(
    context: CaseContext,
    *,
    game: FishNetGame | None = None,
    first: int = CLIENT,
    style: Style = Style(),
    move_limit: float = MOVE_LIMIT,
    opponent_passes: bool = False,
    close_after: int | None = None,
    fish_what_is_asked: bool = False,
    stop_after: int | None = None,
    error_at_turn: int | None = None,
    error_out_of_turn: int | None = None,
    opponent_leaves_after: int | None = None,
) -> None:
    """A whole game against the program; ``error_at_turn``: its move of that number is
    answered with an error line and yourturn again, as the server answers a refused line;
    ``error_out_of_turn``: an error line comes before the opponent's move of that number."""
    wire = await context.accept()
    server = ServerSide(context, wire, style, move_limit)
    await server.read_play()
    game = game or FishNetGame(SEED, first=first)
    news = News(game)
    rng = random.Random(SEED)
    await server.send(_mine(news.deal()))
    moves = theirs = 0
    while not game.over:
        if game.turn == OPPONENT:
            hand = _ranks(game, OPPONENT)
            move = Pass() if opponent_passes or not hand else Request(rng.choice(hand))
            theirs += 1
            if theirs == error_out_of_turn:
                await server.send([Error(ERROR_OUT_OF_TURN)])
            await server.send(_mine(news.act(OPPONENT, move)))
            continue
        if opponent_leaves_after is not None and moves == opponent_leaves_after:
            # The opponent's connection dropped (Errors): an error line, then the result.
            wire.note("the opponent left")
            await server.send([Error("opponent_left")])
            await context.end_pause(wire, "error opponent_left", "youwin")
            await server.send([YouWin()])
            context.over()
            await context.expect_close(wire, "youwin", allowed=b"quit", quiet=rules.FISHNET_QUIET)
            await context.expect_exit("youwin")
            context.judge.move_times(server.move_times)
            return
        if close_after is not None and moves == close_after:
            context.broke_off()
            await wire.close()
            wire.note("the server stops: no result")
            await context.expect_exit("the server closing the connection mid-game")
            context.judge.move_times(server.move_times)
            return
        await server.send([YourTurn()])
        move = await server.move(game)
        moves += 1
        if moves == error_at_turn:
            wire.note("its move is answered with an error, and yourturn again")
            await server.send([Error(ERROR_AT_TURN), YourTurn()])
            move = await server.move(game)
        if fish_what_is_asked and isinstance(move, Request) and not game.hand(OPPONENT)[move.rank]:
            steered = with_next_card(game, move.rank)
            if steered is not game:
                game, fish_what_is_asked = steered, False
                news = News(game)
                wire.note(f"the next card of the stock is a {move.rank}")
        try:
            tells = news.act(CLIENT, move)
        except RuleError as exc:  # pragma: no cover - ServerSide.move checks it first
            raise context.judge.fail(
                rules.FISHNET_ANSWER, f"the server refuses its move: {exc}"
            ) from None
        await server.send(_mine(tells))
        if stop_after is not None and moves == stop_after:
            game.stop()  # the server's --max-moves: the result by the books so far
            await server.send([Error("move_limit")])
            await context.end_pause(wire, "error move_limit", "the result")
            break
    if fish_what_is_asked:  # not the program's doing: the checker's deal did not allow it
        raise RuntimeError("no request of the game could be answered with its own rank")
    if (error_at_turn or 0) > moves or (error_out_of_turn or 0) > theirs:
        raise RuntimeError("the game ended before the case's error line was due")
    ending = _mine(news.ending())
    await server.send(ending)
    context.over()
    said = ending[0].command if ending else "the end"
    await context.expect_close(wire, said, allowed=b"quit", quiet=rules.FISHNET_QUIET)
    await context.expect_exit(said)
    context.judge.move_times(server.move_times)


def cases(move_limit: float = MOVE_LIMIT) -> list[Case]:
    """Every FishNet case; ``move_limit`` is the time to answer ``yourturn`` (Limits)."""

    def game(**options: object) -> Callable[[CaseContext], Awaitable[None]]:
        async def play(context: CaseContext) -> None:
            if "make" in options:
                made = dict(options)
                make = made.pop("make")
                made["game"] = make()  # type: ignore[operator]
                await play_game(context, move_limit=move_limit, **made)  # type: ignore[arg-type]
            else:
                await play_game(context, move_limit=move_limit, **options)  # type: ignore[arg-type]

        return play

    deadline = 100 * move_limit + 30.0  # more answers to yourturn than any game has

    def case(case_id: str, title: str, section: str, tests: tuple[rules.Rule, ...] = (),
             **options: object) -> Case:
        return Case(case_id, title, f"fishnet.md {section}", game(**options), deadline,
                    tests=tests)  # fmt: skip

    ends = (rules.READ_TO_END, rules.EXIT, rules.STATUS, rules.CRASH)
    whole = (rules.CONNECT, rules.FISHNET_PLAY, rules.FISHNET_ANSWER, rules.FISHNET_STAY,
             rules.NAME_GIVEN, rules.FISHNET_QUIET, *ends)
    stream = (rules.FISHNET_STREAM,)
    return exits_as_fast_as_it_moves([
        case("fishnet.game.first", "a whole game, moving first: every request for a rank held",
             "The game", first=CLIENT, tests=whole),
        case("fishnet.game.second", "a whole game, moving second", "The game", first=OPPONENT,
             tests=whole),
        case("fishnet.framing.split", "every server line split into one-byte segments", "Lines",
             style=Style(split=True), tests=stream),
        case("fishnet.framing.together", "the deal, and each move's lines, in one segment",
             "Lines", style=Style(together=True), tests=stream),
        case("fishnet.deal-book", "oppmakes during the deal", "The game",
             make=deal_with_a_book_for_the_opponent, tests=(rules.FISHNET_ANSWER, rules.CRASH)),
        case("fishnet.fished-the-rank", "yourturn again after fishing the rank asked for",
             "The game", fish_what_is_asked=True, tests=(rules.FISHNET_ANSWER,)),
        case("fishnet.opponent-passes", "the opponent passes every turn (pass lines, twice "
             "and more)", "The game", opponent_passes=True, tests=(rules.FISHNET_ANSWER,)),
        case("fishnet.error.at-its-turn", "an error line at its turn, then yourturn again: "
             "print it and go on", "Errors", error_at_turn=2,
             tests=(rules.FISHNET_ERROR, rules.CRASH)),
        case("fishnet.error.out-of-turn", "an error line at the opponent's turn: print it and "
             "go on", "Errors", first=OPPONENT, error_out_of_turn=2,
             tests=(rules.FISHNET_ERROR, rules.CRASH)),
        case("fishnet.end.tie", "error move_limit, then tiegame (no book made)", "The game",
             make=deal_without_books_in_reach, stop_after=1, tests=ends),
        case("fishnet.end.opponent-left", "the opponent leaves mid-game: error opponent_left, "
             "then youwin", "Errors", opponent_leaves_after=3, tests=(rules.FISHNET_ERROR, *ends)),
        case("fishnet.end.server-closes", "the server closes mid-game, without a result",
             "Errors", close_after=3, tests=(rules.EXIT,)),
        case("fishnet.time", f"every answer to yourturn within {move_limit:g} s", "Limits",
             tests=(rules.FISHNET_ANSWER,)),
    ], move_limit)  # fmt: skip
