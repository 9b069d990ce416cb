"""``ring play reversi``: a person plays Reversi on the server from a terminal.

The board is drawn as the handout sees it, (0,0) bottom left, x across and y
up, with the usual names beside (columns a-h from x, rows 1-8 from y + 1);
legal moves are marked, and a move is typed either way: ``3 4``, ``34`` or
``M34`` (x, y, as on the wire), or ``d5``. Nothing illegal is sent: the
client checks the move against the rules first. The opponent's moves are
said in both namings (``opponent played c3 (2,2)``), worked out from the
board the server sends, which is all the protocol tells of them.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TextIO

import trio

from services.reversi.conversation import (
    COLOUR_WORDS,
    RESULT_WORDS,
    ClientError,
    GameEnd,
    play_one_game,
)
from services.reversi.rules import BLACK, WHITE, Position, coordinates, iter_squares

SYMBOLS = {BLACK: "X", WHITE: "O"}
_HANDOUT = re.compile(r"^m?\s*([0-7])\s*,?\s*([0-7])$")
_USUAL = re.compile(r"^([a-h])([1-8])$")


def parse_move(text: str) -> tuple[int, int] | None:
    """(x, y) from ``3 4``, ``34``, ``M34``, ``3,4`` or ``d5``; None if it is neither."""
    text = text.strip().lower()
    if match := _HANDOUT.match(text):
        return int(match[1]), int(match[2])
    if match := _USUAL.match(text):
        return ord(match[1]) - ord("a"), int(match[2]) - 1
    return None


def square_name(sq: int) -> str:
    """``c3 (2,2)``: the usual name, then (x,y) as the handout and the wire have it."""
    x, y = coordinates(sq)
    return f"{'abcdefgh'[x]}{y + 1} ({x},{y})"


def their_moves(before: Position, now: Position) -> list[int] | None:
    """The opponent's moves from ``before`` (the board after our move, or the start)
    to ``now`` (the next board we are sent), in order: one; none when they had no
    move and passed; several when we had none between them. None if no moves of
    theirs lead there (the board is not one the rules explain)."""
    us = now.to_move
    target = (now.black, now.white)
    placed = (now.black | now.white) & ~(before.black | before.white)

    def search(position: Position) -> list[int] | None:
        if (position.black, position.white) == target:
            return []
        if position.to_move == us or position.over:
            return None
        for sq in iter_squares(position.legal_moves() & placed):
            rest = search(position.play(sq))
            if rest is not None:
                return [sq, *rest]
        return None

    return search(before)


def describe_theirs(moves: list[int]) -> str:
    """What the opponent did since our move, for the person at the terminal."""
    if not moves:
        return "opponent had no legal move and passed: your move again"
    names = [square_name(sq) for sq in moves]
    return "opponent played " + ", then (you had no move) ".join(names)


def draw(position: Position, colour: int) -> str:
    """The board, y = 7 on top; the legal moves of ``colour`` marked ``*``."""
    legal = set(iter_squares(position.legal_moves())) if position.to_move == colour else set()
    lines = ["    x 0 1 2 3 4 5 6 7", "  y +-----------------+"]
    for y in range(7, -1, -1):
        cells = []
        for x in range(8):
            sq = x * 8 + y
            owner = position.square_colour(sq)
            cells.append(SYMBOLS.get(owner, "*" if sq in legal else "."))
        lines.append(f"  {y} | {' '.join(cells)} | {y + 1}")
    lines += ["    +-----------------+", "      a b c d e f g h"]
    return "\n".join(lines)


class TerminalAgent:
    def __init__(self, read_line, out: TextIO) -> None:  # type: ignore[no-untyped-def]
        self.read_line = read_line
        self.out = out
        self.colour = BLACK
        # The board the opponent moves on next: the start (when it moves first),
        # then the board after each of our moves; None before White's first.
        self.before: Position | None = None

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def started(self, colour: int) -> None:
        self.colour = colour
        self.before = Position.start() if colour == WHITE else None
        first = "you move first" if colour == BLACK else "your opponent moves first"
        self.say(f"you play {COLOUR_WORDS[colour]} ({SYMBOLS[colour]}); {first}")

    async def move(self, position: Position) -> tuple[int, int]:
        theirs = WHITE if self.colour == BLACK else BLACK
        self.say("")
        if self.before is not None:
            moves = their_moves(self.before, position)
            if moves is not None:
                self.say(describe_theirs(moves))
        self.say(draw(position, self.colour))
        self.say(
            f"discs: you {position.count(self.colour)}, opponent {position.count(theirs)}; "
            "your move (x y as in the handout, e.g. 3 4, or d5; * marks legal moves)"
        )
        while True:
            line = await self.read_line()
            if line is None or line.strip().lower() in ("q", "quit"):
                raise ClientError("you left the game")
            text = line.strip()
            if text.lower() in ("h", "help", "?"):
                self.say("type a square: x then y (0-7, (0,0) bottom left), or a-h and 1-8")
                continue
            move = parse_move(text)
            if move is None:
                self.say(f"not a square: {text!r} (type help)")
                continue
            x, y = move
            if not position.is_legal(x * 8 + y):
                self.say(f"({x},{y}) is not a legal move here: choose a square marked *")
                continue
            self.before = position.play(x * 8 + y)
            return move


def describe(end: GameEnd) -> str:
    words = {1: "you won", 0: "you lost", 2: "a draw"}[end.result]
    discs = end.discs
    if discs is None:
        return f"game over: {words}"
    ours, theirs = discs
    return (
        f"game over: {words} ({RESULT_WORDS[end.result]} as {COLOUR_WORDS[end.colour]}); "
        f"after your last move the discs stood {ours} - {theirs} "
        "(the server sends no final board)"
    )


async def _stdin_line() -> str | None:
    # A worker thread: Trio cannot wait on a terminal without making it non-blocking
    # for the shell too. Abandoned on cancellation (the server spoke meanwhile).
    line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return line if line else None


async def run_terminal(args: argparse.Namespace) -> int:
    host, port = args.server
    print(f"asking {host}:{port} for a game of Reversi as {args.name} ...", flush=True)
    agent = TerminalAgent(_stdin_line, sys.stdout)
    try:
        end = await play_one_game(args.server, args.name, agent, timeout=args.timeout)
    except ClientError as exc:
        print(f"game over: {exc}", flush=True)
        return 1
    print(describe(end), flush=True)
    return 0
