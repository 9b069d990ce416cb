"""The table's side of a verified game (protocol 14.6): feeding the ledger, and its verdicts.

A game is verified when every player joined with ``verify``: the join reply
then says ``"report": true``, and each player reports its exchanges
(``received``, ``gave``). ``VerifiedPlay`` turns what the table sees (the
referee's decisions on draws, discards and players going out) and the
reports into the ledger's entries, in the order each player made them, and
judges the reports a player makes before it leaves: an ``accuse`` is taken
only where the ledger, a mac or a salt makes it certain; any other names no
one (a verified game closes the way a player's word alone named its
neighbour).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from ring.oldmaid import exchanges, proofs
from ring.oldmaid.cards import Card, parse_card
from ring.oldmaid.messages import Accuse, Gave, OfferSeen, Received
from services.oldmaid.referee.events import Dealt, Discarded, RefereeEvent, WentOut
from services.oldmaid.verified import ledger
from services.oldmaid.verified.evidence import pick_signed
from services.oldmaid.verified.refusals import refused_card
from services.oldmaid.verified.witness import WitnessDesk


def joined_text(nicks: Sequence[str]) -> str:
    return " and ".join(nicks) if len(nicks) <= 2 else ", ".join(nicks[:-1]) + " and " + nicks[-1]


def abort_reason(lie: ledger.Lie) -> str:
    """The words of an abort on ``lie``: the suspects are named when no one is to blame."""
    if lie.culprit is None and len(lie.suspects) > 1:
        return f"{lie.what} (suspects: {joined_text(lie.suspects)}; the table cannot tell which)"
    return lie.what


class VerifiedPlay:
    """One verified game's ledger, fed from the table."""

    def __init__(self, seats: Sequence[str], key: bytes) -> None:
        self._seats = tuple(seats)
        self._secrets = {nick: proofs.secret_for(key, nick) for nick in seats}
        self.ledger = ledger.Ledger(seats, self._secrets)

    def saw(self, event: RefereeEvent) -> ledger.Lie | None:
        """One of the referee's decisions, as an entry of the player it concerns."""
        if isinstance(event, Dealt):
            return self.ledger.record(event.nick, ledger.Drew(event.card, event.last))
        if isinstance(event, Discarded):
            first, second = event.cards
            return self.ledger.record(event.nick, ledger.Threw((first, second)))
        if isinstance(event, WentOut):
            return self.ledger.record(event.nick, ledger.Out())
        return None

    def claimed(self, nick: str, cards: tuple[Card, Card]) -> ledger.Lie | None:
        """A discard refused as a card claimed twice: the ledger knows who held it."""
        return self.ledger.record(nick, ledger.Threw(cards))

    def report(self, nick: str, report: Received | Gave) -> ledger.Lie | None:
        if isinstance(report, Gave):
            salts = None if report.salts is None else tuple(report.salts)
            pick = None if report.pick is None else (report.pick.card_num, report.pick.mac)
            entry: ledger.Entry = ledger.Gave(
                report.seq, report.to, report.mac, report.ack, salts, pick
            )
        else:
            entry = ledger.Received(
                report.seq,
                report.sender,
                report.num_cards,
                tuple(report.hashes),
                report.mac,
                report.card_num,
                report.card,
                report.salt,
            )
        return self.ledger.record(nick, entry)

    def unacked_pass(self, nick: str, report: Gave) -> OfferSeen | None:
        """The pass ``nick`` reports handing on (``gave`` with no salts), as offered, if the
        ack it carries is not its receiver's: the offerer cannot check an ack, and a
        receiver that sent one not its own could then stall the game with two suspects,
        so in a witnessed game the table witnesses that pass (the receiver answers it again
        through the table, or is named). None for anything else."""
        if report.salts != [] or report.to not in self._secrets:
            return None
        ack = exchanges.ack_mac(self._secrets[report.to], report.mac)
        if report.ack is not None and exchanges.same(report.ack, ack):
            return None
        return OfferSeen(sender=nick, seq=report.seq, num_cards=0, hashes=[], mac=report.mac)

    def witness_desk(self, out: Callable[[], Collection[str]]) -> WitnessDesk:
        """The table as witness of this game's exchanges (``out``: who the table counts out).
        Its receivers check every offer with the table before they take it (14.6)."""
        self.ledger.offers_checked = True
        return WitnessDesk(self._seats, self._secrets, self.ledger, out)

    def stalled(self) -> ledger.Lie:
        return self.ledger.stalled()

    def accusation(self, accuser: str, request: Accuse, out: Sequence[str]) -> ledger.Lie | None:
        """What an ``accuse`` in a verified game proves, or None if it is only a word.

        ``wrong_card`` (the picker refused a card that does not open the
        commitment it picked from), ``false_out`` (an ``out`` with the asked
        player's ack, from a player the table has not counted out),
        ``second_pick`` (two different picks from one offer, each with the
        picker's mac) and a turn whose mac shows who wrote it can be proved;
        anything else is the accuser's word, which the referee takes without
        naming anyone.
        """
        accused = request.accused
        evidence = dict(request.evidence)
        if request.rule == "wrong_card":
            evidence["card"] = _card(evidence.get("card"))
            return refused_card(self._secrets, accuser, evidence)
        if request.rule == "false_out" and accused in self._secrets and accused not in out:
            ack = evidence.get("ack")
            expected = exchanges.out_ack(self._secrets[accused], accuser)
            if isinstance(ack, str) and exchanges.same(ack, expected):
                return ledger.Lie(
                    "false_out",
                    f"{accused} answered {accuser}'s turn with out (its ack says so), and the "
                    "table has not counted it out",
                    accused,
                )
        if request.rule == "second_pick" and accused in self._secrets:
            lie = self._second_pick(accuser, accused, evidence)
            if lie is not None:
                return lie
        if request.rule == "bad_picks" and accused in self._secrets:
            lie = self._bad_picks(accuser, accused, evidence)
            if lie is not None:
                return lie
        if request.rule in ("not_neighbour", "impersonation") and "mac" in evidence:
            lie = self._forged_turn(accuser, request.rule, evidence)
            if lie is not None:
                return lie
        return None

    def _bad_picks(
        self, accuser: str, accused: str, evidence: dict[str, Any]
    ) -> ledger.Lie | None:
        """A pick outside ``accuser``'s offer to ``accused`` (``card_num`` past its
        positions), signed by ``accused``: the offer's mac shows the offer is the
        accuser's, and only the picker's secret writes its picks' macs."""
        seq, num_cards = evidence.get("seq"), evidence.get("num_cards")
        hashes, mac, picks = evidence.get("hashes"), evidence.get("mac"), evidence.get("picks")
        if not (isinstance(seq, int) and isinstance(num_cards, int) and isinstance(mac, str)
                and isinstance(hashes, list) and isinstance(picks, list)):  # fmt: skip
            return None
        offer_mac = exchanges.offer_mac(
            self._secrets[accuser], seq=seq, sender=accuser, to=accused,
            num_cards=num_cards, hashes=[str(h) for h in hashes],
        )  # fmt: skip
        if not exchanges.same(offer_mac, mac):
            return None
        signed = [self._signed(accused, accuser, seq, pick) for pick in picks]
        # card_num == num_cards is served as the last card (13.3), so not outside.
        outside = [n for n in signed if n is not None and (n < 0 or n > num_cards)]
        if not outside:
            return None
        return ledger.Lie(
            "bad_picks",
            f"{accused} picked card_num {', '.join(map(str, outside))} from {accuser}'s offer "
            f"{seq} of {num_cards} cards, outside it (each pick signed by {accused})",
            accused,
        )

    def _second_pick(
        self, accuser: str, accused: str, evidence: dict[str, Any]
    ) -> ledger.Lie | None:
        """Two different picks from one offer of ``accuser``'s, each signed by
        ``accused``: only its secret writes those macs, so it picked twice."""
        seq, picks = evidence.get("seq"), evidence.get("picks")
        if not isinstance(seq, int) or not isinstance(picks, list) or len(picks) != 2:
            return None
        signed = {self._signed(accused, accuser, seq, pick) for pick in picks}
        if None in signed or len(signed) != 2:
            return None
        return ledger.Lie(
            "second_pick",
            f"{accused} picked twice from {accuser}'s offer {seq} (card_num "
            f"{' and '.join(str(pick[0]) for pick in picks)}; its macs say so)",
            accused,
        )

    def _signed(self, picker: str, offerer: str, seq: int, pick: Any) -> int | None:
        """The ``card_num`` of ``pick`` (``[card_num, mac]``) if ``picker``'s secret wrote
        its mac for ``offerer``'s offer ``seq``; None otherwise."""
        if not (isinstance(pick, list) and len(pick) == 2 and isinstance(pick[0], int)):
            return None
        card_num, mac = pick
        return card_num if pick_signed(self._secrets, picker, offerer, seq, card_num, mac) else None

    def _forged_turn(self, accuser: str, rule: str, evidence: dict[str, Any]) -> ledger.Lie | None:
        """Who wrote a turn that reached ``accuser``, told by its mac: only its author's
        secret makes it (the table tries each). A draw turn goes only to the next seat."""
        claimed, mac = evidence.get("from"), evidence.get("mac")
        if not isinstance(claimed, str) or not isinstance(mac, str):
            return None
        offer = "seq" in evidence
        for author, secret in self._secrets.items():
            if offer:
                try:
                    expected = exchanges.offer_mac(
                        secret,
                        seq=int(evidence["seq"]),
                        sender=claimed,
                        to=accuser,
                        num_cards=int(evidence["num_cards"]),
                        hashes=[str(h) for h in evidence["hashes"]],
                    )
                except (KeyError, TypeError, ValueError):
                    return None
            else:
                expected = exchanges.turn_mac(secret, claimed, accuser)
            if not exchanges.same(expected, mac):
                continue
            if author != claimed:
                what = "an offer" if offer else "a draw turn"
                return ledger.Lie(
                    "impersonation",
                    f"{author} sent {accuser} {what} as {claimed} (its mac is {author}'s)",
                    author,
                )
            seat = self._seats.index(author)
            if not offer and self._seats[(seat + 1) % len(self._seats)] != accuser:
                return ledger.Lie(
                    "not_neighbour",
                    f"{author} handed {accuser} a draw turn (its mac says so), which goes only "
                    "to the next seat",
                    author,
                )
            return None
        return None


def _card(value: Any) -> Card | None:
    if isinstance(value, dict) and set(value) == {"value", "suit"}:
        value = (value["value"], value["suit"])
    if isinstance(value, list | tuple) and len(value) == 2:
        try:
            return parse_card(*value)
        except ValueError:
            return None
    return None
