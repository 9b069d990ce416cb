"""``ring play fishnet``: a person plays FishNet from a terminal.

Every server line is told as a sentence; at each ``yourturn`` the client
shows the hand, the books on both sides, and what the messages so far prove
about the opponent's hand (ranks it must hold, and ranks it holds none of),
then asks for a rank. Input it can check itself (not a rank, a rank not in
the hand) is refused locally, so only sensible moves reach the server.
End of input or ``quit`` leaves the game (the server counts that as a loss).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

import trio

from services.fishnet.bots import Decision, Smarx
from services.fishnet.conversation import ClientError, play_one_game
from services.fishnet.rules import HAND_SIZE, RANK_COUNT

HELP = f"""\
On your turn, type one of:
  a rank you hold, 0-{RANK_COUNT - 1}   ask the opponent for all its cards of that rank
  pass                 forfeit the turn (a second pass in a row fishes a card)
  quit                 leave the game (you lose it)
  help                 this text"""


class Observer(Smarx):
    """Smarx's card accounting (``known``, ``lacks``) for display; the person decides."""

    name = "you"

    def __init__(self) -> None:
        super().__init__(0)
        self.decision: Decision | None = None

    def _decide(self) -> Decision:
        assert self.decision is not None
        return self.decision


def _cards(counts: list[int]) -> str:
    return " ".join(str(rank) for rank in range(RANK_COUNT) for _ in range(counts[rank])) or "-"


def _ranks(ranks: list[int]) -> str:
    return " ".join(str(rank) for rank in sorted(ranks)) or "-"


LineReader = Callable[[], Awaitable[str | None]]  # None: end of input


class TerminalAgent:
    """Tells the person what each server line means and asks for each move."""

    def __init__(self, opponent: str, read_line: LineReader, out: TextIO) -> None:
        self.opponent = opponent
        self.read_line = read_line
        self.out = out
        self.seen = Observer()
        self.dealt: list[int] = []

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def hear(self, line: str) -> str | None:
        op, *args = line.split()
        numbers = [int(a) for a in args] if op != "error" else []
        them = self.opponent
        if op == "yourturn":
            return await self._turn()
        if op == "fish" and len(self.dealt) < HAND_SIZE:
            self.dealt.append(numbers[0])
            if len(self.dealt) == HAND_SIZE:
                self.say(f"you are dealt: {_ranks(self.dealt)}")
        elif op == "fish":
            asked = self.seen._asking
            if asked is not None and numbers[0] == asked:
                self.say(f"go fish: you drew a {numbers[0]}, the rank you asked for: go again")
            elif asked is not None:
                self.say(f"go fish: you drew a {numbers[0]}")
            else:
                self.say(f"you passed twice in a row: you drew a {numbers[0]}")
        elif op == "oppgives":
            self.say(f"{them} gives you {numbers[0]} x {numbers[1]}: go again")
        elif op == "request":
            given = self.seen.hand[numbers[0]]
            if given:
                self.say(f"{them} asks for {numbers[0]}s: you give {given}")
            else:
                self.say(f"{them} asks for {numbers[0]}s: you have none; {them} goes fishing")
        elif op == "pass":
            self.say(f"{them} passes")
        elif op == "oppmakes":
            self.say(f"{them} makes a book of {numbers[0]}s")
        elif op == "youmake":
            pass  # told when the fourth card arrives
        elif op == "error":
            self.say(f"the server says: {' '.join(args)}")
        books_before = len(self.seen.books)
        self.seen.hear(line)
        for rank in self.seen.books[books_before:]:
            self.say(f"you make a book of {rank}s")
        if op in ("youwin", "youlose", "tiegame"):
            mine, theirs = len(self.seen.books), len(self.seen.opponent_books)
            verdict = {"youwin": "you win", "youlose": "you lose", "tiegame": "a tie"}[op]
            self.say(f"{verdict}: your {mine} books to {them}'s {theirs}")
        return None

    def _show(self) -> None:
        seen, them = self.seen, self.opponent
        self.say("")
        self.say(f"your hand: {_cards(seen.hand)}  ({sum(seen.hand)} cards)")
        self.say(
            f"books: you {len(seen.books)} [{_ranks(seen.books)}], "
            f"{them} {len(seen.opponent_books)} [{_ranks(seen.opponent_books)}]"
        )
        self.say(f"deck: {seen.deck_size} cards; {them} holds {seen.opponent_hand_size} cards")
        surely = [f"{r} (x{n})" for r, n in enumerate(seen.known) if n]
        self.say(
            f"{them} surely holds: {', '.join(surely) or '-'}; "
            f"holds none of: {_ranks(list(seen.lacks))}"
        )

    async def _turn(self) -> str | None:
        self._show()
        while True:
            print("your move (a rank, pass, quit, help)> ", end="", file=self.out, flush=True)
            text = await self.read_line()
            if text is None:
                self.say("")
                return None
            word = text.strip().lower()
            if word in ("quit", "q"):
                return None
            if word in ("help", "h", "?"):
                self.say(HELP)
                continue
            if word in ("pass", "p"):
                decision = Decision(None)
            elif word.isascii() and word.isdigit() and int(word) < RANK_COUNT:
                rank = int(word)
                if not self.seen.hand[rank]:
                    self.say(f"you hold no {rank}s: ask for a rank in your hand")
                    continue
                decision = Decision(rank)
            else:
                self.say(f"not a move: {text.strip()!r} (type help)")
                continue
            self.seen.decision = decision
            return self.seen.choose().line()


async def _stdin_line() -> str | None:
    # A worker thread: Trio cannot wait on a terminal without making it non-blocking
    # for the shell too. Abandoned on cancellation (the game ended meanwhile).
    line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return line if line else None


async def run_terminal(args: argparse.Namespace) -> int:
    host, port = args.server
    print(f"asking {host}:{port} for a game against {args.opponent} ...", flush=True)
    agent = TerminalAgent(args.opponent, _stdin_line, sys.stdout)
    try:
        await play_one_game(
            args.server, args.name, args.opponent, agent, timeout=args.timeout, send_quit=args.quit
        )
    except ClientError as exc:
        print(f"game over: {exc}", flush=True)
        return 1
    return 0
