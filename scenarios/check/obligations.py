"""What ``ring check`` holds a program to: each rule quoted from the protocol docs.

A FAIL always names a rule whose sentence says the program *must* (or must
not) do something, and quotes it; a WARN names one that says it *should*.
Every sentence here is in the doc it cites, word for word
(``tests/scenarios/check/test_obligations.py`` reads the docs and checks):
the docs are the spec, this module only points into them. Where a handout
leaves a reading open, the rule that a client written from it alone could
break is a *should*, never a *must* (docs/check.md, "Verdicts").

``Rule.key`` is stable (``reversi.move``): a report, the JSON and the
obligations table of docs/check.md use it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Level(enum.Enum):
    MUST = "must"  # broken: FAIL
    SHOULD = "should"  # not followed: WARN


@dataclass(frozen=True)
class Rule:
    key: str  # e.g. "reversi.move"
    doc: str  # the file under docs/protocols/, e.g. "reversi.md"
    section: str  # where in it, e.g. "11.1"
    level: Level
    text: str  # the sentence, word for word as the doc has it

    @property
    def cited(self) -> str:
        """``reversi.md 11.1 (reversi.move)``: where to read it."""
        return f"{self.doc} {self.section} ({self.key})"

    @property
    def quoted(self) -> str:
        return f"{self.cited}: \u201c{self.text}\u201d"


def _must(key: str, doc: str, section: str, text: str) -> Rule:
    return Rule(key, doc, section, Level.MUST, text)


def _should(key: str, doc: str, section: str, text: str) -> Rule:
    return Rule(key, doc, section, Level.SHOULD, text)


# -- every program (docs/protocols/programs.md) ----------------------------------------

P = "programs.md"
CONNECT = _must("program.connect", P, "3", "A program must connect to the address it is "
                "given within 10 seconds of its start, and send its first message within 10 "
                "seconds of connecting.")  # fmt: skip
READ_TO_END = _must("program.read-to-end", P, "3", "A program must read its game to the "
                    "end: it must not close its connection or exit before the game's last "
                    "message has come.")  # fmt: skip
EXIT = _must("program.exit", P, "3", "A program must exit by itself within 3 seconds of its "
             "game's last message, or of the server closing its connection.")  # fmt: skip
STATUS = _must("program.status", P, "3", "A program that played its game to the end must "
               "exit with status 0, whether it won, lost or drew.")  # fmt: skip
CRASH = _must("program.no-crash", P, "3", "A program must not crash: it must not be killed "
              "by a signal of its own doing, nor exit with a non-zero status before its game "
              "is over, nor print a traceback or a panic on its standard error once its "
              "game's last message has come.")  # fmt: skip
NAME_GIVEN = _should("program.name", P, "3", "A program should use the name it is given "
                     "(`{name}`, `{nick}`) and, in No Tipping, the seat (`{seat}`).")  # fmt: skip

PROGRAM_RULES = (CONNECT, READ_TO_END, EXIT, STATUS, CRASH, NAME_GIVEN)

# -- Reversi (docs/protocols/reversi.md 11.1) ---------------------------------------------

R = "reversi.md"
REVERSI_NAME = _must("reversi.name", R, "11.1", "A client must name itself first: `N` and "
                     "1 to 10 letters, digits or underscores.")  # fmt: skip
REVERSI_MOVE = _must("reversi.move", R, "11.1", "A client must answer every board it is "
                     "sent with a legal move, within the move time of its turn's first "
                     "board, in fewer than 100 attempts.")  # fmt: skip
REVERSI_STREAM = _must("reversi.stream", R, "11.1", "A client must cope with any split of "
                       "the server's bytes: a message may arrive in pieces, and several "
                       "messages in one read.")  # fmt: skip
REVERSI_NEWLINE = _should("reversi.name-newline", R, "11.1", "A client should end its name "
                          "with a newline: without one our server waits 200 ms to know it "
                          "is whole, and another server may wait for ever.")  # fmt: skip
REVERSI_BARE = _should("reversi.bare", R, "11.1", "A client should find where each server "
                       "message ends by its length, not by a newline: the course's server "
                       "ends every message with a newline, but ours with `--no-newlines` "
                       "sends them bare.")  # fmt: skip
REVERSI_FIRST_TRY = _should("reversi.first-try", R, "11.1", "A client should send a legal "
                            "move the first time: an illegal or garbled attempt gets the "
                            "board again, and costs its time.")  # fmt: skip
REVERSI_QUIET = _should("reversi.quiet-after-end", R, "11.1", "A client should send nothing "
                        "after `G`.")  # fmt: skip

REVERSI_RULES = (REVERSI_NAME, REVERSI_MOVE, REVERSI_STREAM, REVERSI_NEWLINE, REVERSI_BARE,
                 REVERSI_FIRST_TRY, REVERSI_QUIET)  # fmt: skip

# -- No Tipping (docs/protocols/notipping.md 11.1) ----------------------------------------

N = "notipping.md"
NOTIPPING_JOIN = _must("notipping.join", N, "11.1", "A client must first send "
                       "`JOINREQUEST:<handle>:<player>;`, with the player 0 or "
                       "1.")  # fmt: skip
NOTIPPING_MOVE = _must("notipping.move", N, "11.1", "A client must answer every `ROUND` "
                       "with a move allowed in that round, `ADD` while adding and `REMOVE` "
                       "while removing, within its time budget for all its moves.")  # fmt: skip
NOTIPPING_STREAM = _must("notipping.stream", N, "11.1", "A client must read the server's "
                         "messages up to each `;`, whatever the spacing and line breaks "
                         "and however the bytes are split into reads.")  # fmt: skip
NOTIPPING_HANDLE = _should("notipping.handle", N, "11.1", "A client should keep its "
                           "handle to 1 to 32 of `A-Z a-z 0-9 _ . -`: the handout sets no "
                           "form for it, but our server denies any other.")  # fmt: skip
NOTIPPING_DENIED = _should("notipping.after-denied", N, "11.1", "After `DENIED;` a client "
                           "should ask again, for the other seat say, or close: the handout "
                           "says it should wait for the game to begin, but our server "
                           "begins no game on a denied request.")  # fmt: skip
NOTIPPING_QUIET = _should("notipping.quiet-after-end", N, "11.1", "A client should send "
                          "nothing after `WIN;` or `LOSE;`.")  # fmt: skip

NOTIPPING_RULES = (NOTIPPING_JOIN, NOTIPPING_MOVE, NOTIPPING_STREAM, NOTIPPING_HANDLE,
                   NOTIPPING_DENIED, NOTIPPING_QUIET)  # fmt: skip

# -- FishNet (docs/protocols/fishnet.md, "What a client must do") ------------------------

F = "fishnet.md"
FS = "What a client must do"
FISHNET_PLAY = _must("fishnet.play", F, FS, "A client must first send "
                     "`play <team> <opponent>`.")  # fmt: skip
FISHNET_ANSWER = _must("fishnet.answer", F, FS, "A client must answer every `yourturn` with "
                       "`request <r>` for a rank it holds, or `pass`, within the move "
                       "time.")  # fmt: skip
FISHNET_ERROR = _must("fishnet.error-goes-on", F, FS, "A client must go on after an `error` "
                      "line, at its turn or not: print it, and carry on with the "
                      "game.")  # fmt: skip
FISHNET_STREAM = _must("fishnet.stream", F, FS, "A client must read the server's lines from "
                       "a stream: a line may arrive in pieces, and several lines in one "
                       "read.")  # fmt: skip
FISHNET_STAY = _must("fishnet.stay", F, FS, "A client must not leave before its game's "
                     "result: a `quit` or a close before it forfeits the game.")  # fmt: skip
FISHNET_QUIET = _should("fishnet.quiet-after-end", F, FS, "A client should send nothing "
                        "after the result but `quit`.")  # fmt: skip

FISHNET_RULES = (FISHNET_PLAY, FISHNET_ANSWER, FISHNET_ERROR, FISHNET_STREAM, FISHNET_STAY,
                 FISHNET_QUIET)  # fmt: skip

# -- Old Maid peers (docs/protocols/oldmaid.md 11.1) --------------------------------------

OM = "oldmaid.md"
OLDMAID_RULES_OF_TABLE = _must("oldmaid.table-rules", OM, "11.1", "A peer must keep the "
                               "table's rules: a claim the table proves false, or a rule of "
                               "section 5 broken, aborts the game naming the peer.")  # fmt: skip
OLDMAID_TURN = _must("oldmaid.turn", OM, "11.1", "A peer must hand on every turn it is "
                     "handed, and answer every message of its neighbours, within the time a "
                     "neighbour waits for an answer.")  # fmt: skip
OLDMAID_PICK = _must("oldmaid.pick", OM, "11.1", "A peer must pick a card of the offer, "
                     "0 <= `card_num` < `num_cards`, and give a card for every such pick of "
                     "its own offers.")  # fmt: skip
OLDMAID_GO_OUT = _must("oldmaid.go-out", OM, "11.1", "A peer must go out once its hand is "
                       "empty in the offer phase: tell the table `out_of_cards`, and answer "
                       "`out` to every offer after the table's `ok`.")  # fmt: skip
OLDMAID_STREAM = _must("oldmaid.stream", OM, "11.1", "A peer must read every connection as a "
                       "stream: a message may arrive in pieces, and, once it says "
                       "`\"stream\": true` (in its offers, or its join for the table "
                       "connection), several messages in one read.")  # fmt: skip
OLDMAID_TO_END = _must("oldmaid.to-end", OM, "11.1", "A peer must play its game to the end: "
                       "a game that our table and peers cannot finish with it is its "
                       "doing.")  # fmt: skip
OLDMAID_LISTEN = _should("oldmaid.listen-first", OM, "11.1", "A peer should listen before it "
                         "joins, so that its right neighbour's first dial is "
                         "answered.")  # fmt: skip
OLDMAID_COUNT = _should("oldmaid.count-from-0", OM, "11.1", "A peer should count `card_num` "
                        "from 0: a pick of `num_cards` is taken as the last card, by our "
                        "peers only.")  # fmt: skip
OLDMAID_ONE_RECV = _should("oldmaid.one-recv", OM, "11.1", "A peer should keep a buffer of "
                           "what it read: one message a `recv` works only with peers that "
                           "pause for it.")  # fmt: skip
OLDMAID_VERIFY = _should("oldmaid.verify", OM, "11.1", "A peer should join with "
                         "`\"verify\":true` and prove who it is, commit to its hand and report "
                         "its exchanges, so that it can play at a table run with "
                         "`--verified`.")  # fmt: skip
OLDMAID_VERIFIED_PLAY = _must("oldmaid.verified-play", OM, "11.1", "A peer that joins with "
                              "`\"verify\":true` must prove who it is, refuse and report a turn "
                              "that is not from whom it says, commit to its whole hand and "
                              "report every exchange as sections 14.5 and 14.6 say; joined with "
                              "`\"witness\":true` too, it must make every move it owes of an "
                              "exchange the table witnesses, draw when the table hands it the "
                              "draw turn, not give up on a draw turn it handed on, and "
                              "check every offer of cards with the table before it takes it "
                              "(`check_offer`).")  # fmt: skip
OLDMAID_WITNESS = _should("oldmaid.witness", OM, "11.1", "A peer that verifies should join "
                          "with `\"witness\":true` and take part in exchanges the table "
                          "witnesses.")  # fmt: skip

OLDMAID_RULES = (OLDMAID_RULES_OF_TABLE, OLDMAID_TURN, OLDMAID_PICK, OLDMAID_GO_OUT, OLDMAID_STREAM,
                 OLDMAID_TO_END, OLDMAID_LISTEN, OLDMAID_COUNT, OLDMAID_ONE_RECV, OLDMAID_VERIFY,
                 OLDMAID_VERIFIED_PLAY, OLDMAID_WITNESS)  # fmt: skip

BY_GAME = {
    "reversi": REVERSI_RULES,
    "notipping": NOTIPPING_RULES,
    "fishnet": FISHNET_RULES,
    "oldmaid": OLDMAID_RULES,
}
ALL = PROGRAM_RULES + REVERSI_RULES + NOTIPPING_RULES + FISHNET_RULES + OLDMAID_RULES
