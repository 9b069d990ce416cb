"""The reports a player makes to the table about another: ``left_with_turn``, ``give_up``
and ``accuse`` (protocol 5.8, 5.9, 13.6), as the referee weighs them.

A report is the reporter's word about messages the table never sees. The
table takes it as far as it can check it: a report that contradicts what it
knows is refused (the game goes on), and one it cannot confirm ends the game
only where the reporter is leaving anyway, naming the reported player only
where the report can be true (protocol 14). ``Reports`` reads the table's
facts (``facts.TableFacts``) and holds the one accusation waiting for its
verdict; the referee (``rules.TableGame``) hands it each report.
"""

from __future__ import annotations

import math
from typing import Any

from services.oldmaid.referee.accusations import MAY_NAME, NAMED, RULES, Accusation, mutual
from services.oldmaid.referee.events import Accused, GameState, RefereeError
from services.oldmaid.referee.facts import TableFacts
from services.oldmaid.referee.seats import neighbours

# A player that leaves holding the turn stops the game: a report of it comes
# after the reporter's stall timeout (3 s), and the table takes it only if
# nothing has moved for this long (a game that moves is not stalled).
REPORT_QUIET = 0.5

# Accusations of a message the accuser refused, so that it changed nothing (protocol 5.9).
REFUSED = frozenset({"impersonation"})


class Reports:
    """The referee's answers to reports about other players."""

    def __init__(self, facts: TableFacts) -> None:
        self.facts = facts
        self._pending: Accusation | None = None  # an accusation waiting for its verdict

    @property
    def pending(self) -> Accusation | None:
        """An accusation the table will act on once its window has passed (``settle``)."""
        return self._pending if self.facts.state is GameState.PLAYING else None

    def left_with_turn(self, reporter: str, nick: str, *, quiet: float = math.inf) -> str:
        """A peer reports that ``nick`` took the turn, went out and left without passing it.

        Nobody holds the turn any more, so the game cannot go on; it is
        aborted naming ``nick``. The report is believed only as far as the
        table can check it (protocol 13.6): ``nick`` is out and gone from the
        table; nothing moved since it went out (a player holding the turn is
        the only one who moves); the reporter sits right of it with no one in
        between, as the player that handed it the turn does; and nothing has
        moved for ``quiet`` >= ``REPORT_QUIET`` seconds (the caller's clock).
        Returns the reason the game was aborted with.
        """
        facts = self.facts
        facts.require(GameState.PLAYING)
        facts.seat(reporter)
        facts.seat(nick)
        if nick == reporter:
            raise RefereeError("a player cannot report itself")
        if nick not in facts.out:
            raise RefereeError(f"{nick} is still in the game, so it cannot have left with the turn")
        if nick not in facts.left:
            raise RefereeError(f"{nick} is out but still connected to the table")
        # Only the player that handed it the turn by its last card may move
        # since: it goes out, its card picked.
        since = facts.moves[facts.out_at[nick] :]
        if any(not (mover == reporter and bare_out) for mover, bare_out in since):
            raise RefereeError(
                f"the game moved after {nick} went out ({facts.last_move}), so {nick} did not "
                "leave holding the turn"
            )
        in_between = facts.in_between(reporter, nick)
        if in_between:
            raise RefereeError(
                f"{reporter} cannot have handed {nick} the turn: {in_between[0]} sits between "
                "them and is still in"
            )
        if quiet < REPORT_QUIET:
            raise RefereeError(
                f"the game moved {quiet:.2f} s ago; a game whose turn holder left stands still "
                "(ask again if it does)"
            )
        reason = (
            f"{nick} went out holding the turn and left without passing it (a player who "
            f"goes out holding the turn must pass it on with an offer of num_cards 0); "
            f"reported by {reporter}"
        )
        facts.abort(reason, culprit=nick, rule="left_with_turn")
        return reason

    def give_up(self, reporter: str, nick: str | None, reason: str) -> str:
        """``reporter`` cannot go on and is about to leave, because of ``nick``.

        A player who is in and leaves aborts the game anyway; its last word
        lets the abort name the player who fell silent or broke the protocol
        towards it, rather than the one who waited for it. The table cannot
        see messages between peers, so the reason says whose word it is, and
        the table names ``nick`` only where the report can be true: a player
        deals only with its neighbours among the players in, and a player
        that is out only answers ``out``. Returns the reason the game was
        aborted with.
        """
        facts = self.facts
        facts.require(GameState.PLAYING)
        facts.seat(reporter)
        reason = " ".join(reason.split()) or "gave no reason"
        if nick is not None:
            facts.seat(nick)
            if nick == reporter:
                raise RefereeError("a player cannot give up because of itself; leave instead")
        if self._pending is not None:
            return "the table is deciding an accusation: the game ends in a moment"
        if facts.witnessed:
            # Every wait a player has goes through the table, which names whoever does
            # not move: a word ends nothing. One that leaves while in is named (left).
            about = f", saying {nick} {reason}" if nick is not None else f": {reason}"
            return (
                f"noted: {reporter} gave up{about}; in a witnessed game the table names a "
                "player only on what it sees (protocol 14.6), and the game goes on: a "
                "player that leaves while it is in is named for leaving"
            )
        if nick is None:
            text = f"{reporter} gave up: {reason}"
            if facts.last_move is not None:
                text += f"; the last the table saw: {facts.last_move}"
            facts.abort(text)
            return text
        doubt = self._cannot_blame(reporter, nick)
        if doubt is not None:
            text = (
                f"{reporter} gave up, saying {nick} {reason}; {doubt}, so the table blames no one"
            )
            facts.abort(text)
            return text
        text = f"{nick} {reason} (reported by {reporter}, which gave up waiting)"
        facts.abort(text, culprit=nick, rule="give_up")
        return text

    def accuse(self, accuser: str, accused: str | None, rule: str, evidence: dict[str, Any]) -> str:
        """``accuser`` saw ``accused`` break ``rule`` (protocol 5.9): the table's answer.

        See ``services.oldmaid.referee.accusations``. An accusation the table names
        the accused on is held ``pending`` for a moment (the caller calls
        ``settle`` once its window has passed), so that a counter-accusation
        can cancel it; any other ends the game at once naming no one.
        """
        facts = self.facts
        facts.require(GameState.PLAYING)
        facts.seat(accuser)
        if rule not in RULES:
            raise RefereeError(f"unknown rule {rule!r}; the rules are {', '.join(sorted(RULES))}")
        if accused is not None:
            facts.seat(accused)
            if accused == accuser:
                raise RefereeError("a player cannot accuse itself")
        elif rule in NAMED and rule not in MAY_NAME:
            raise RefereeError(f"an accusation of {rule} names the accused")
        accusation = Accusation(accuser, accused, rule, evidence)
        held = accused is not None and self._impersonation_problem(accuser, accused) is None
        if accusation.proved and not held:
            # A sender the table cannot hold to its proof: named by no one.
            accusation = Accusation(accuser, accused, rule, {**evidence, "proved": False})
        pending = self._pending
        if pending is not None:
            if (pending.accuser, pending.accused) == (accused, accuser):
                text = mutual(pending, accusation)
                self._pending = None
                self._accused(accusation, "taken", text)
                facts.abort(text, rule="mutual")
                return text
            self._accused(accusation, "noted", "an earlier accusation is being decided")
            return "noted: the table is deciding an earlier accusation"
        problem = self._accusation_problem(accusation)
        if problem is not None:
            self._accused(accusation, "refused", problem)
            raise RefereeError(problem)
        if accusation.rule in REFUSED and (facts.reports_exchanges or not accusation.names):
            # The table cannot hold it against anyone (in a verified game, the turn's mac
            # did not tell its author: ``VerifiedPlay``), and a refused turn changed
            # nothing: ending the game on it would let anyone end any game.
            sent_as = f" sent as {accused}" if accused else ""
            text = (
                f"noted: {accuser} refused a turn{sent_as}{accusation.said()}; nothing in it "
                "shows who wrote it, and it changed nothing, so the game goes on"
            )
            self._accused(accusation, "noted", text)
            return text
        if facts.witnessed:
            # What the table can prove was judged already (``VerifiedPlay``); the rest is
            # a word, and in a witnessed game a word ends nothing (see ``give_up``).
            text = (
                f"noted: {accuser} accused {accused or 'someone'} of {rule}"
                f"{accusation.said()}; in a witnessed game the table names a player only on "
                "what it sees (protocol 14.6), and the game goes on"
            )
            self._accused(accusation, "noted", text)
            return text
        if accusation.names and facts.reports_exchanges:
            # A verified game: what the reports prove was judged already (protocol
            # 14.6); the rest is the accuser's word, and names no one.
            text = (
                f"{accuser} accused {accused} of {rule}{accusation.said()}; in a verified game "
                "the table names a player only on what the reports prove, so it names no one "
                f"(suspects: {accuser} and {accused})"
            )
            self._accused(accusation, "taken", text)
            facts.abort(text, rule=rule)
            return text
        if accusation.names:
            self._pending = accusation
            self._accused(accusation, "pending")
            return (
                f"the game ends in a moment naming {accused} ({rule}), unless {accused} "
                f"accuses {accuser} meanwhile"
            )
        text = accusation.verdict()
        self._accused(accusation, "taken", text)
        facts.abort(text, rule=rule)
        return text

    def settle(self) -> None:
        """Act on the pending accusation: abort naming the accused, with the rule."""
        facts = self.facts
        accusation, self._pending = self._pending, None
        if accusation is None or facts.state is not GameState.PLAYING:
            return
        facts.abort(accusation.verdict(), culprit=accusation.accused, rule=accusation.rule)

    def _cannot_blame(self, reporter: str, nick: str) -> str | None:
        """Why a report of ``reporter``'s about ``nick`` cannot be true, or None."""
        facts = self.facts
        if facts.reports_exchanges:
            return (
                "in a verified game the table names a player only on what the reports prove "
                "(protocol 14.6)"
            )
        if nick in facts.out:
            return f"{nick} is out, and a player that is out only answers out"
        if not neighbours(facts.nicks(), facts.out, reporter, nick):
            return (
                f"{nick} is not next to {reporter} among the players in, and a player deals only "
                "with its neighbours"
            )
        return None

    def _accusation_problem(self, accusation: Accusation) -> str | None:
        """What the table knows that contradicts ``accusation``, or None."""
        facts = self.facts
        accuser, accused = accusation.accuser, accusation.accused
        if accused is None:
            return None
        if accusation.side == "left":
            in_between = facts.in_between(accuser, accused)
            if in_between:
                return (
                    f"{accused} is not the player {accuser} offers to: {in_between[0]} sits "
                    "between them and is still in"
                )
        if accusation.rule == "false_out" and accused in facts.out:
            return f"{accused} is out, so it answers out"
        if accusation.rule == "impersonation":
            return self._impersonation_problem(accuser, accused)
        return None

    def _impersonation_problem(self, accuser: str, accused: str) -> str | None:
        """Protocol 14.5: only a player that proves who it is can tell, and the accused
        either proved who it is on that connection or is the one player sending no proofs."""
        facts = self.facts
        if accuser not in facts.verified:
            return f"{accuser} did not join with verify, so it cannot tell who sent a turn"
        unproved = [nick for nick in facts.nicks() if nick not in facts.verified]
        if accused not in facts.verified and unproved != [accused]:
            others = ", ".join(nick for nick in unproved if nick != accused)
            return (
                f"{accused} sends no proofs, but neither do {others}: the table cannot tell "
                "which of them sent it"
            )
        return None

    def _accused(self, accusation: Accusation, verdict: str, message: str = "") -> None:
        self.facts.events.append(
            Accused(accusation.accuser, accusation.accused, accusation.rule, verdict, message)
        )
