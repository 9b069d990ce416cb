"""``ring check oldmaid``: a student's Old Maid peer in rings of our table and our peers.

Whole games (``oldmaid.game.*``) put the program in a shuffled game of 2, 3
and 6; staged games stack the deck and choose the seats so that each
situation that a shuffle brings only sometimes comes every time, and give
our players the habits of other clients (``scenarios.check.oldmaid_ring``
plays them, ``scenarios.check.oldmaid_deck`` stacks them). In every case the
table referees every claim (protocol 14), our peers check every exchange
with the program, and the program must exit within a few seconds of the end.

Seats are written left to right, the turn going that way: in ``(P, L, R)``
the program P's left neighbour is L. With three players the deck's last card
goes to the second seat (7.3).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from scenarios.check import obligations as rules
from scenarios.check.context import Case, CaseContext, exits_as_fast_as_it_moves
from scenarios.check.oldmaid_deck import cards
from scenarios.check.oldmaid_ring import PROGRAM, Part, Stage, play_stage

MOVE_LIMIT = 10.0  # ring peer's default: how long a neighbour waits for an answer
NICK = PROGRAM
P = PROGRAM

# Four singles against their partners and the Old Maid: the offers go on a while.
FOUR = cards("2s 3s 4s 5s")
FOUR_AND_MAID = cards("2c 3c 4c 5c joker")


def stages(move_limit: float) -> list[tuple[str, str, str, Stage]]:
    """(id, title, section, stage) for every case."""
    late = min(0.5, move_limit / 2)
    return [
        ("oldmaid.game.2", "a whole game of two: every exchange with one neighbour both ways",
         "oldmaid.md 7", Stage(("ours1", P))),
        ("oldmaid.game.3", "a whole game of three: a left and a right neighbour",
         "oldmaid.md 7", Stage((P, "ours1", "ours2"))),
        ("oldmaid.game.6", "a whole game of six: players out and skipped around the ring",
         "oldmaid.md 7", Stage(("ours1", "ours2", P, "ours3", "ours4", "ours5"))),
        ("oldmaid.framing.split",
         "every message from the table and its neighbour arrives a byte at a time (on each "
         "connection, the first 0.3 s after its first byte, as a segment sent again would)",
         "oldmaid.md 2", Stage((P, "ours"), split=True)),
        ("oldmaid.framing.together",
         "an ok and a pick in one segment, as a picker may send them to an offer with "
         "stream: true (sent whatever the offer says: without it, a break is a WARN)",
         "oldmaid.md 6.2",
         Stage((P, "picker"), parts=(Part("picker", pick_with_ok=True),))),
        ("oldmaid.connect.late-neighbour",
         "its left neighbour listens only after its join reply: dial again until it does",
         "oldmaid.md 7.2",
         Stage((P, "late", "ours"), parts=(Part("late", listen_late=late),))),
        ("oldmaid.skip.out", "its left neighbour is out when the offers begin: offer to the next",
         "oldmaid.md 7.7",
         Stage((P, "empty", "ours"), {0: FOUR, 2: FOUR_AND_MAID})),
        ("oldmaid.skip.gone",
         "its left neighbour goes out and leaves: ask status, skip it, go on",
         "oldmaid.md 7.7",
         Stage((P, "leaver", "ours"), {0: FOUR, 2: FOUR_AND_MAID},
               parts=(Part("leaver", leaves_when_out=True),))),
        ("oldmaid.out.skipped",
         "its hand is empty when the offers begin: tell the table, then answer out to the end",
         "oldmaid.md 7.8",
         Stage((P, "ours1", "ours2"), {1: FOUR, 2: FOUR_AND_MAID}, goes_out=True)),
        ("oldmaid.offer.none-received",
         "an offer of num_cards 0: no pick, it holds the turn and offers its own hand",
         "oldmaid.md 6.2",
         Stage(("ours", "empty", P), {0: cards("2c 3c 4c joker"), 2: cards("2s 3s 4s")})),
        ("oldmaid.offer.none-sent",
         "its last draw empties its hand: go out, and pass the turn with num_cards 0",
         "oldmaid.md 7.5",
         Stage(("ours1", P, "ours2"), {0: FOUR, 2: FOUR_AND_MAID}, goes_out=True)),
        ("oldmaid.pick.ends",
         "picks of card_num 0 and num_cards - 1 from its offers: each gets a card",
         "oldmaid.md 6.3",
         Stage((P, "picker"), parts=(Part("picker", picks_ends=True),))),
        ("oldmaid.end.old-maid",
         "left with only the Old Maid, every other player out: find no one in, and end",
         "oldmaid.md 7.9",
         Stage(("ours", "empty", P), {2: cards("joker")})),
        ("oldmaid.time",
         f"every turn handed on within the time a neighbour waits ({move_limit:g} s)",
         "oldmaid.md 8", Stage((P, "ours1", "ours2"), timed=True)),
        ("oldmaid.end.aborted",
         "a player leaves the table mid-game and the table aborts: stop within a few seconds",
         "oldmaid.md 7.10",
         Stage((P, "leaver", "ours"), parts=(Part("leaver", leaves_at_draw=3),),
               aborted_by="leaver")),
        ("oldmaid.verify.game",
         "a verified game of three (--verified): proofs, a commitment to its whole hand, acks, "
         "signed picks and both reports of every exchange, judged by the table's ledger",
         "oldmaid.md 14.5, 14.6", Stage((P, "ours1", "ours2"), verified=True)),
        ("oldmaid.verify.signed-picks",
         "a verified game of three in which it picks from its right neighbour's offers: "
         "every pick carries its mac (pick|picker|offerer|seq|card_num, with its secret)",
         "oldmaid.md 14.6", Stage((P, "ours1", "ours2"), verified=True)),
        ("oldmaid.verify.witness",
         "a verified game of three in which our players ask the table to witness every "
         "exchange they wait in at all: make the moves you owe through the table, and "
         "check each offer with it before you take it",
         "oldmaid.md 14.6", Stage((P, "ours1", "ours2"), verified=True, witnessed=True)),
        ("oldmaid.verify.forged-turn",
         "a verified game of three in which a stranger sends it a turn as its right "
         "neighbour with a wrong proof: refuse it, report it, play on",
         "oldmaid.md 14.5", Stage((P, "ours1", "ours2"), verified=True, forges_turn=True)),
        ("oldmaid.verify.wrong-card",
         "a verified game of three in which its right neighbour answers its picks with the card "
         "of another position: refuse the card, accuse it (wrong_card), and stop once the table "
         "ends the game naming it", "oldmaid.md 14.6",
         Stage((P, "ours", "cheat"), verified=True, parts=(Part("cheat", serves_other=True),),
               aborted_by="cheat")),
        ("oldmaid.end.table-dies",
         "its table connection closes mid-game (the table died): stop within a few seconds",
         "oldmaid.md 7.10", Stage((P, "ours1", "ours2"), table_dies_at_draw=3)),
    ]  # fmt: skip


def cases(move_limit: float = MOVE_LIMIT) -> list[Case]:
    """The Old Maid peer's cases; ``move_limit``: how long a neighbour waits for it."""

    def play(stage: Stage) -> Callable[[CaseContext], Awaitable[None]]:
        async def play_it(context: CaseContext) -> None:
            await play_stage(context, stage, move_limit)

        return play_it

    deadline = 60.0 + 40 * move_limit  # more turns than any game gives a player
    return exits_as_fast_as_it_moves(
        [
            Case(case_id, title, section, play(stage), deadline, name=NICK, starts_itself=True,
                 tests=TESTS.get(case_id, DEFAULT_TESTS))
            for case_id, title, section, stage in stages(move_limit)
        ],
        move_limit,
    )


# The rules each case is there to test (docs/check.md's obligations table). Every case
# holds the program to all of them; these are the ones its situation brings.
DEFAULT_TESTS = (rules.OLDMAID_RULES_OF_TABLE, rules.OLDMAID_TURN, rules.OLDMAID_TO_END)
_WHOLE = (*DEFAULT_TESTS, rules.OLDMAID_PICK, rules.OLDMAID_LISTEN, rules.OLDMAID_COUNT,
          rules.NAME_GIVEN, rules.CONNECT, rules.EXIT, rules.STATUS, rules.CRASH)  # fmt: skip
TESTS = {
    "oldmaid.game.2": _WHOLE,
    "oldmaid.game.3": _WHOLE,
    "oldmaid.game.6": _WHOLE,
    "oldmaid.framing.split": (rules.OLDMAID_STREAM,),
    "oldmaid.framing.together": (rules.OLDMAID_STREAM, rules.OLDMAID_ONE_RECV),
    "oldmaid.connect.late-neighbour": (rules.OLDMAID_TO_END, rules.OLDMAID_LISTEN),
    "oldmaid.pick.ends": (rules.OLDMAID_PICK,),
    "oldmaid.out.skipped": (*DEFAULT_TESTS, rules.OLDMAID_GO_OUT),
    "oldmaid.offer.none-sent": (*DEFAULT_TESTS, rules.OLDMAID_GO_OUT),
    "oldmaid.time": (rules.OLDMAID_TURN,),
    "oldmaid.end.old-maid": (*DEFAULT_TESTS, rules.EXIT, rules.STATUS),
    "oldmaid.end.aborted": (rules.EXIT,),
    "oldmaid.end.table-dies": (rules.EXIT,),
    "oldmaid.verify.game": (
        rules.OLDMAID_VERIFY,
        rules.OLDMAID_VERIFIED_PLAY,
        rules.OLDMAID_TO_END,
    ),
    "oldmaid.verify.signed-picks": (rules.OLDMAID_VERIFY, rules.OLDMAID_VERIFIED_PLAY),
    "oldmaid.verify.witness": (
        rules.OLDMAID_VERIFY,
        rules.OLDMAID_VERIFIED_PLAY,
        rules.OLDMAID_WITNESS,
    ),
    "oldmaid.verify.forged-turn": (rules.OLDMAID_VERIFY, rules.OLDMAID_VERIFIED_PLAY),
    "oldmaid.verify.wrong-card": (rules.OLDMAID_VERIFY, rules.OLDMAID_VERIFIED_PLAY),
}
