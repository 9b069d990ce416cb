"""``ring play notipping``: a person plays No Tipping on the server from a terminal.

Before each of our moves the lever is drawn as text: the positions -10..10,
every block with its weight and whose it is, the supports at -3 and -1, both
hands, and both support torques with what is left before the board tips. A
move is typed ``3 -2`` or ``add 3 -2`` (a weight, a position) while weights
are being placed, ``-2`` or ``remove -2`` after. Nothing the server would
refuse is sent (the rules check it first, and say why), and a move that tips
the board is only sent after the player confirms it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TextIO

import trio

from services.notipping import rules
from services.notipping.conversation import ClientError, GameEnd, View, play_one_game

MARGIN = " " * 10
MINE, THEIRS, INITIAL = "y", "o", "*"
LEGEND = (
    f"{MINE}5: your 5 kg block   {THEIRS}5: your opponent's   {INITIAL}3: the initial block   "
    "^: the supports"
)
HELP = """\
Blocks go on positions -10..10 of a lever resting on supports at -3 and -1
(the lever itself weighs 3 kg at 0). It tips, and the player who moved loses, when
  left  = sum of w*(x+3), over the lever and every block, falls below 0, or
  right = sum of w*(x+1), over the lever and every block, rises above 0.
First each player places their weights 1..max in turn (any free position);
then each removes any one block in turn (the opponent's and the initial one too).
  3 -2  or  add 3 -2     place your weight 3 at position -2
  -2    or  remove -2    remove the block at position -2
  h  this help      q  leave the game (you lose it)"""

Typed = rules.Move | Literal["help", "quit"]


@dataclass(frozen=True)
class Unreadable:
    """What was typed is not a move; ``reason`` says what to type instead."""

    reason: str


def _owner_mark(owner: int | None, player: int) -> str:
    if owner == player:
        return MINE
    if owner == rules.TABLE:
        return INITIAL
    return THEIRS


def _support_line(name: str, support: int, torque: int, must: str, spare: int) -> str:
    formula = f"sum w*(x{-support:+d})"
    state = f"{spare} to spare" if spare >= 0 else "TIPPED"
    return f"{name} support ({support}): {formula} = {torque}, must stay {must} 0: {state}"


def _weights(hand: frozenset[int]) -> str:
    return " ".join(map(str, sorted(hand))) if hand else "none"


def draw(game: rules.Game, player: int) -> str:
    """The lever as seen by ``player``: blocks marked as theirs or ours, torques, hands."""
    # Three characters a position fit 80 columns; a 10 kg block ("y10") needs a fourth.
    cell = 4 if game.max_weight >= 10 else 3
    header = "".join(f"{p:>{cell}}" for p in rules.POSITIONS)
    cells = []
    for weight, owner in zip(game.weights, game.owners, strict=True):
        label = f"{_owner_mark(owner, player)}{weight}" if weight else "."
        cells.append(f"{label:>{cell}}")
    supports = [" "] * (cell * len(rules.POSITIONS))
    for support in (rules.LEFT_SUPPORT, rules.RIGHT_SUPPORT):
        supports[cell * rules.index(support) + cell - 1] = "^"
    lines = [
        f"{'position':>9} {header}",
        f"{'blocks':>9} {''.join(cells)}",
        f"{MARGIN}{'=' * (cell * len(rules.POSITIONS))}",
        f"{MARGIN}{''.join(supports).rstrip()}",
        LEGEND,
        _support_line("left ", rules.LEFT_SUPPORT, game.left, ">=", game.left),
        _support_line("right", rules.RIGHT_SUPPORT, game.right, "<=", -game.right),
    ]
    if game.phase == rules.ADD:
        lines.append(f"your weights:            {_weights(game.hands[player])}")
        lines.append(f"your opponent's weights: {_weights(game.hands[1 - player])}")
    else:
        lines.append("every weight is placed: each move now removes one block, any block")
    return "\n".join(lines)


def parse_input(text: str, phase: str) -> Typed | Unreadable:
    """A move, ``"help"`` or ``"quit"`` from what was typed, or why it is none of them.

    ``phase`` (``rules.ADD`` or ``rules.REMOVE``) only decides what bare numbers
    mean; a move of the wrong phase typed in full is returned for the rules to refuse.
    """
    words = text.lower().replace(":", " ").replace(";", " ").replace(",", " ").split()
    if not words:
        return Unreadable("type a move (h for help)")
    if words[0] in ("h", "help", "?"):
        return "help"
    if words[0] in ("q", "quit", "exit"):
        return "quit"
    verb: str | None = None
    if words[0] in ("add", "a"):
        verb, words = rules.ADD, words[1:]
    elif words[0] in ("remove", "r", "rm"):
        verb, words = rules.REMOVE, words[1:]
    numbers = []
    for word in words:
        try:
            numbers.append(int(word))
        except ValueError:
            return Unreadable(f"{word!r} is not a number (h for help)")
    if verb is None and len(numbers) in (1, 2):
        wanted = rules.ADD if len(numbers) == 2 else rules.REMOVE
        if wanted != phase:
            if phase == rules.ADD:
                return Unreadable("weights are still being placed: type a weight and a position")
            return Unreadable("every weight is placed: type the position of a block to remove")
        verb = wanted
    if verb == rules.ADD and len(numbers) == 2:
        return rules.Add(numbers[0], numbers[1])
    if verb == rules.REMOVE and len(numbers) == 1:
        return rules.Remove(numbers[0])
    if verb == rules.ADD:
        return Unreadable("add takes a weight and a position, e.g. add 3 -2")
    if verb == rules.REMOVE:
        return Unreadable("remove takes a position, e.g. remove -2")
    return Unreadable(f"{text.strip()!r} is not a move (h for help)")


def describe_move(move: rules.Move, before: rules.Game | None = None) -> str:
    """``added 3 kg at -2`` or ``removed 5 kg from 4``: ``before`` is the board the
    move was made on, which holds the weight a removal took away."""
    if isinstance(move, rules.Add):
        return f"added {move.weight} kg at {move.position}"
    weight = before.weight_at(move.position) if before is not None else 0
    if not weight:
        return f"removed the block at {move.position}"
    return f"removed {weight} kg from {move.position}"


def describe(end: GameEnd) -> str:
    """How the game ended, for the person who played it."""
    if end.won:
        return "game over: you won (your opponent tipped the board, broke the rules, or left)"
    if end.invalid:
        return "game over: you lost: the server answered INVALID (a move refused, or time spent)"
    board = end.last_board()
    if end.last_move is not None and board is not None and board.loser == end.player:
        before = None if end.last_view is None else end.last_view.game
        move = describe_move(end.last_move, before)
        return (
            f"{draw(board, end.player)}\ngame over: you lost: your move ({move}) tipped the board"
        )
    return "game over: you lost (the server's verdict, without a tipping move of yours)"


class TerminalAgent:
    """A person as the agent: the lever drawn before each move, the move read and checked."""

    def __init__(self, read_line: Callable[[], Awaitable[str | None]], out: TextIO) -> None:
        self.read_line = read_line
        self.out = out
        self.view: View | None = None  # the position a move is being asked for
        self.sent: rules.Move | None = None  # our answer to it

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def begin(self, game_number: int, max_weight: int, player: int) -> None:
        first = "you move first" if player == 0 else "your opponent moves first"
        self.say(
            f"game {game_number} begins: you are player {player} ({first}); "
            f"each of you holds weights 1..{max_weight}. h for help"
        )

    async def move(self, view: View) -> rules.Move:
        before = self._board_they_moved_on()
        self.view = view
        game = view.game
        self.say("")
        if view.their_move is not None:
            self.say(f"opponent {describe_move(view.their_move, before)}")
        self.say(draw(game, view.player))
        if game.phase == rules.ADD:
            self.say(f"round {view.round}, your move: a weight and a position, e.g. 3 -2")
        else:
            self.say(f"round {view.round}, your move: the position of a block to remove")
        while True:
            move = await self._typed_move(game.phase)
            try:
                game.check(move)
            except rules.InvalidMove as exc:
                self.say(f"{exc}: not sent, try again")
                continue
            if game.tips_after(move) and not await self._confirmed():
                self.say("not played: your move")
                continue
            self.say(f"you {describe_move(move, game)}; waiting for your opponent ...")
            self.sent = move
            return move

    def _board_they_moved_on(self) -> rules.Game | None:
        """The board after our last move, on which the opponent then moved."""
        if self.view is None or self.sent is None:
            return None
        try:
            return self.view.game.play(self.sent)
        except rules.InvalidMove:
            return None

    async def _typed_move(self, phase: str) -> rules.Move:
        while True:
            line = await self.read_line()
            typed = "quit" if line is None else parse_input(line, phase)
            if typed == "quit":
                raise ClientError("you left the game")
            if typed == "help":
                self.say(HELP)
            elif isinstance(typed, Unreadable):
                self.say(typed.reason)
            else:
                assert isinstance(typed, rules.Add | rules.Remove)
                return typed

    async def _confirmed(self) -> bool:
        self.say("that move tips the board: you lose. Play it anyway? [y/N]")
        answer = await self.read_line()
        if answer is None:
            raise ClientError("you left the game")
        return answer.strip().lower() in ("y", "yes")


async def _stdin_line() -> str | None:
    # A worker thread: Trio cannot wait on a terminal without making it non-blocking
    # for the shell too. Abandoned on cancellation (the server spoke meanwhile).
    line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return line if line else None


async def run_terminal(args: argparse.Namespace, agent: TerminalAgent | None = None) -> int:
    """``ring play notipping``: one game; 0 when it was played to its end, 1 otherwise.

    ``agent`` reads stdin and writes stdout unless one with other lines is given (tests).
    """
    agent = TerminalAgent(_stdin_line, sys.stdout) if agent is None else agent
    host, port = args.server
    agent.say(
        f"asking {host}:{port} for seat {args.seat} of a No Tipping game as {args.name}; "
        "it begins when both seats are taken ..."
    )
    try:
        end = await play_one_game(args.server, args.name, args.seat, agent, timeout=args.timeout)
    except ClientError as exc:
        agent.say(f"game over: {exc}")
        return 1
    agent.say(describe(end))
    return 0
