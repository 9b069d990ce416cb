"""The table's ledger of a verified game (protocol 14.6): where every card is, and who lied.

In a game where every player reports its exchanges, the table keeps each
player's hand exactly: what it drew, what it received and gave in the
exchanges both sides reported, what it discarded. Each player's doings reach
the ledger in the order that player did them (its table connection is one
ordered stream: its draws, discards, going out, and its ``received`` and
``gave`` reports); the ledger plays each stream forward, and an exchange is
judged when both its reports are at the front of their streams, in the
order of the exchanges (``seq``). So no report is judged against a hand that
is not yet up to date, however the connections' traffic interleaves.

A lie is found only in what its teller could have written (the offer's
``mac`` is the offerer's, a salt that opens a commitment came from the
offerer, a report is its sender's); where the evidence could come from
either of two players, both are suspects and no one is the culprit. Pure:
no I/O, no clock; the table feeds it and acts on the ``Lie`` it returns.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Mapping, Sequence

from ring.oldmaid import exchanges
from ring.oldmaid.cards import JOKER, Card
from services.oldmaid.verified.entries import Drew, Entry, Gave, Lie, Out, Received, Threw
from services.oldmaid.verified.evidence import commitment_lie, offer_mac_ok, signed_pick

__all__ = ["Drew", "Entry", "Gave", "Ledger", "Lie", "Out", "Received", "Threw"]


def _show(card: Card) -> str:
    return str(card)


class Ledger:
    """Every hand of one verified game; ``record`` each doing, act on the ``Lie`` it returns."""

    def __init__(self, seats: Sequence[str], secrets: Mapping[str, str]) -> None:
        self.seats = tuple(seats)
        self._secrets = dict(secrets)
        self.hands: dict[str, collections.Counter[Card]] = {n: collections.Counter() for n in seats}
        self._streams: dict[str, collections.deque[Entry]] = {n: collections.deque() for n in seats}
        self.seq = 0  # the last exchange judged
        self.holder: str | None = None  # who holds the turn of the offers, for certain
        self.settled: dict[int, tuple[str, str, str]] = {}  # seq -> (offerer, receiver, mac)
        self.lie: Lie | None = None
        # A witnessed game: a receiver checks each offer with the table before it takes it
        # (14.6, "Checking an offer"), so one taken without its offerer's mac is its own doing.
        self.offers_checked = False
        # Each player's last offer reported, while no turn has reached it since: a second
        # offer then is a turn it never had (``_offers_twice``).
        self._offered: dict[str, int] = {}

    # -- feeding --------------------------------------------------------------

    def record(self, nick: str, entry: Entry) -> Lie | None:
        """Add one of ``nick``'s doings, in the order it did them; the first lie found."""
        if self.lie is None and nick in self._streams:
            self._offers_twice(nick, entry)
            self._streams[nick].append(entry)
            self._advance()
        return self.lie

    def _offers_twice(self, nick: str, entry: Entry) -> None:
        """A player offers only with a turn that reached it (an offer it took, or the last
        card it drew), one offer a turn: its own stream, in its own order, shows a second
        offer with no turn between as a turn it never had, whatever the others report (a
        cheater's offer numbered ahead would otherwise leave the ledger waiting for
        exchanges that never come)."""
        if isinstance(entry, Received) or (isinstance(entry, Drew) and entry.last):
            self._offered.pop(nick, None)
        elif isinstance(entry, Gave):
            before = self._offered.get(nick)
            # A spent number (the same exchange again, or an older one) is a second turn
            # handed on, which the judging walks back to its giver (``two_turns``).
            if before is not None and entry.seq > before:
                self._found(
                    "turn_not_held",
                    nick,
                    f"{nick} offered exchange {entry.seq} without a turn of its own since its "
                    f"offer of exchange {before} (no offer reached it between)",
                )
            self._offered[nick] = entry.seq

    def _advance(self) -> None:
        moved = True
        while moved and self.lie is None:
            moved = False
            for nick in self.seats:
                while self.lie is None and self._streams[nick]:
                    if not self._step(nick, self._streams[nick][0]):
                        break
                    moved = True

    def _step(self, nick: str, entry: Entry) -> bool:
        """Play ``nick``'s next doing if it can be now; False if it waits for another's."""
        stream = self._streams[nick]
        if isinstance(entry, Drew):
            self.hands[nick][entry.card] += 1
            if entry.last:
                self.holder = nick
        elif isinstance(entry, Threw):
            missing = [c for c in entry.cards if self.hands[nick][c] < 1]
            if missing:
                cards = " and the ".join(_show(c) for c in missing)
                self._found(
                    "not_held", nick, f"{nick} discarded the {cards}, which it does not hold"
                )
                return False
            for card in entry.cards:
                self.hands[nick][card] -= 1
        elif isinstance(entry, Out):
            held = +self.hands[nick]
            if held:
                shown = ", ".join(_show(c) for c in sorted(held.elements())[:4])
                many = "" if sum(held.values()) <= 4 else ", ..."
                self._found(
                    "hand_not_empty",
                    nick,
                    f"{nick} went out holding {sum(held.values())} cards ({shown}{many})",
                )
                return False
        elif isinstance(entry, Received):
            if entry.seq <= self.seq:
                if not self._judge_second_offer(nick, entry):
                    return False  # its offerer's reports have not caught up with it yet
                if self.lie is None:
                    stream.popleft()
                return self.lie is None
            if entry.seq != self.seq + 1:
                return False  # an exchange still to be judged comes first
            return self._judge(nick, entry)
        elif isinstance(entry, Gave):
            # Judged with its Received (from the receiver's stream): wait for it.
            return False
        stream.popleft()
        return True

    # -- judging an exchange ------------------------------------------------------

    def _judge(self, receiver: str, got: Received) -> bool:
        sender = got.sender
        if sender not in self._secrets or sender == receiver:
            self._found(
                "false_report",
                receiver,
                f"{receiver} reported exchange {got.seq} from {sender!r}, who is not another "
                "player of this game",
            )
            return False
        offerer = self._streams[sender]
        if not offer_mac_ok(self._secrets, got, receiver):
            if not offerer or not isinstance(offerer[0], Gave):
                return False  # the offerer's own report of it may settle it: wait for it
            got = self._bad_mac(receiver, got, offerer[0])
            if self.lie is not None:
                return False
        # From here on the offer is certainly the sender's own words.
        if not offerer or not isinstance(offerer[0], Gave) or self.holder is None:
            return False  # the offerer's report of it, behind its discards, is still to come
        if sender != self.holder:
            self._found(
                "turn_not_held",
                sender,
                f"{sender} offered exchange {got.seq} to {receiver} without holding the turn "
                f"({self.holder} held it)",
            )
            return False
        gave = offerer[0]
        if gave.seq != got.seq or gave.to != receiver:
            self._found(
                "two_turns",
                sender,
                f"{sender} offered exchange {got.seq} to {receiver}, and reported handing "
                f"exchange {gave.seq} to {gave.to}",
            )
            return False
        if not exchanges.same(gave.mac, got.mac):
            self._found(
                "false_report",
                sender,
                f"{sender} reported giving exchange {got.seq} with another offer than the one "
                f"{receiver} took (the mac of its gave is not the mac of that offer)",
            )
            return False
        held = sum(self.hands[sender].values())
        if got.num_cards != len(got.hashes) or got.num_cards != held:
            self._found(
                "offer_count",
                sender,
                f"{sender} offered {got.num_cards} cards "
                + (f"with {len(got.hashes)} hashes " if got.num_cards != len(got.hashes) else "")
                + f"holding {held}",
            )
            return False
        lie = commitment_lie(self.hands[sender], sender, receiver, got, gave.salts)
        if lie is not None:
            self._found(lie.rule, lie.culprit, lie.what)
            return False
        if got.num_cards:
            if got.card is None or got.card_num is None:
                self._found(
                    "false_report",
                    receiver,
                    f"{receiver} reported taking an offer of {got.num_cards} cards from "
                    f"{sender} without the card it picked",
                )
                return False
            if not exchanges.opens(got.hashes, got.card_num, got.card, got.salt):
                self._found(
                    "false_receipt",
                    receiver,
                    f"{receiver} reported getting the {_show(got.card)} as card {got.card_num} "
                    f"of {sender}'s offer, which is not what that offer committed to",
                )
                return False
            if self.hands[sender][got.card] < 1:
                self._found(
                    "card_not_held",
                    sender,
                    f"{sender} gave {receiver} the {_show(got.card)}, which it does not hold",
                )
                return False
            self.hands[sender][got.card] -= 1
            self.hands[receiver][got.card] += 1
        self.seq = got.seq
        self.holder = receiver
        self.settled[got.seq] = (sender, receiver, got.mac)
        offerer.popleft()
        self._streams[receiver].popleft()
        return True

    def _bad_mac(self, receiver: str, got: Received, gave: Gave) -> Received:
        """An offer reported without its offerer's mac, weighed with the offerer's ``gave``.

        The offer as ``got`` with the offerer's mac, if the ``gave`` carries its mac of
        that very offer: only the mac on the wire was bad, what was offered is certain,
        and the game goes on. Else, if the salts of the ``gave`` open the hashes ``got``
        reports into exactly the offerer's hand (as many as ``num_cards``), the offer is
        certainly the offerer's (no one else could have written hashes its salts open),
        so a ``gave`` without its mac of it is the offerer's lie. Else either side could
        have written it (``self.lie``: suspects)."""
        sender = got.sender
        if gave.seq == got.seq and gave.to == receiver:
            signed = dataclasses.replace(got, mac=gave.mac)
            if offer_mac_ok(self._secrets, signed, receiver):
                return signed
            certain = got.num_cards == len(got.hashes) == sum(self.hands[sender].values())
            hand = self.hands[sender]
            if certain and commitment_lie(hand, sender, receiver, got, gave.salts) is None:
                self._found(
                    "bad_mac",
                    sender,
                    f"{sender}'s offer of exchange {got.seq} to {receiver} (its own salts open "
                    "its hashes into its hand) does not carry its mac, nor does its gave",
                )
                return got
        if self.offers_checked and got.num_cards:
            self._found(
                "bad_mac",
                receiver,
                f"{receiver} reports taking {sender}'s offer of exchange {got.seq} without "
                f"{sender}'s mac: the table's check of it would have said so (14.6)",
            )
            return got
        self._found(
            "bad_mac",
            None,
            f"the offer {receiver} reports from {sender} (exchange {got.seq}) does not carry "
            f"{sender}'s mac: {sender} sent a bad one, or {receiver} altered it",
            suspects=(sender, receiver),
        )
        return got

    def _judge_second_offer(self, receiver: str, got: Received) -> bool:
        """Judge an offer of an exchange already judged, once the reports tell whose
        second turn it comes from; False while they do not yet.

        An honest player that a cheater hands a second turn (a pass with a spent
        exchange number) offers from it, with the next number, which is spent too;
        so does the next player of that second chain, and so on. Those offers may
        reach the table before the reports of the turns that led to them, and the
        true chain may be judged first. Naming the offerer would then name an honest
        player, so ``_second_turn_lie`` walks the second chain back to the player that
        offered one exchange twice.
        """
        lie, decided = self._second_turn_lie(receiver, got)
        if not decided:
            return False
        if self.lie is None:
            self.lie = lie
        return True

    def _second_turn_lie(self, receiver: str, got: Received) -> tuple[Lie, bool]:
        """The lie behind an offer of a spent exchange: its offerer's, if its offerer
        reported making it holding no second turn; else the lie of the second turn
        the offerer was handed first, walked back to where the chain forked. With
        whether it is decided: False while a report that decides it has not come (the
        lie is then the deepest one the reports reach).

        Each step back is to an offer of a smaller exchange, so the walk ends."""
        lie = self._stale_lie(receiver, got)
        decided = True
        while lie.rule == "two_turns" and decided:  # a report twice, a bad mac: as it comes
            offerer, turn = got.sender, None
            for earlier in self._streams[offerer]:
                if isinstance(earlier, Gave) and earlier.seq == got.seq and earlier.to == receiver:
                    break
                if isinstance(earlier, Received):
                    turn = earlier  # the last turn it was handed before it offered
            else:
                decided = False  # its report of this offer is still to come
            if turn is None or turn.seq >= got.seq:
                return lie, decided  # it offered holding no second turn: its own lie
            receiver, got = offerer, turn  # it offered from a second turn it was handed
            lie = self._stale_lie(receiver, got)
        return lie, decided

    def _stale_lie(self, receiver: str, got: Received) -> Lie:
        """A report of an exchange already judged: a second offer of it, or a report twice."""
        offerer, taker, mac = self.settled.get(got.seq, ("", "", ""))
        if taker == receiver and exchanges.same(mac, got.mac):
            what = f"{receiver} reported exchange {got.seq} twice"
            return Lie("false_report", what, receiver, (receiver,))
        if not offer_mac_ok(self._secrets, got, receiver):
            return Lie(
                "bad_mac",
                f"the offer {receiver} reports from {got.sender} (exchange {got.seq}) does not "
                f"carry {got.sender}'s mac",
                None,
                (got.sender, receiver),
            )
        return Lie(
            "two_turns",
            f"{got.sender} offered exchange {got.seq} to {receiver}, though "
            + (
                f"it had handed exchange {got.seq} to {taker}"
                if offerer == got.sender
                else f"exchange {got.seq} was {offerer}'s, to {taker}"
            ),
            got.sender,
            (got.sender,),
        )

    def _found(
        self, rule: str, culprit: str | None, what: str, suspects: tuple[str, ...] = ()
    ) -> None:
        if self.lie is None:
            self.lie = Lie(rule, what, culprit, suspects or ((culprit,) if culprit else ()))

    @property
    def waiting(self) -> bool:
        """Whether some player's doings wait for a report still to come."""
        return any(self._streams.values())

    def waits_beyond(self, receiver: str, seq: int) -> bool:
        """Whether the ledger waits for more than ``receiver``'s report of exchange ``seq``
        (which never comes when ``receiver`` refused that exchange's card)."""
        for stream in self._streams.values():
            if not stream:
                continue
            head = stream[0]
            if isinstance(head, Gave) and head.to == receiver and head.seq == seq:
                continue
            return True
        return False

    # -- what the table asks ------------------------------------------------------

    def stalled(self) -> Lie:
        """Who the game waits for, when it has stopped moving (the table's turn timeout).

        Only what the reports make certain names anyone: a turn taken (the
        receiver's own report, or its ack) and then kept; an exchange one side
        reported and the other never did.
        """
        for receiver, stream in self._streams.items():
            if stream and isinstance(stream[0], Received) and stream[0].seq <= self.seq:
                # A second offer whose chain back ends at a player that never reported
                # its offer, nor a turn handed to it before it: the offer is its own.
                return self._second_turn_lie(receiver, stream[0])[0]
        k = self.seq + 1
        holder = self.holder
        if holder is None:
            return Lie("stalled", "the offers never began", None)
        got = self._pending_received(k)
        gave = self._pending_gave(holder, k)
        if got is not None:
            receiver, entry = got
            if not offer_mac_ok(self._secrets, entry, receiver):
                return Lie(
                    "bad_mac",
                    f"the offer {receiver} reports from {entry.sender} (exchange {k}) does not "
                    f"carry {entry.sender}'s mac",
                    None,
                    (entry.sender, receiver),
                )
            if entry.sender != holder:
                return Lie(
                    "turn_not_held",
                    f"{entry.sender} offered exchange {k} to {receiver} without holding the "
                    f"turn ({holder} held it)",
                    entry.sender,
                )
            if gave is None:
                return Lie(
                    "unreported",
                    f"{holder} handed exchange {k} to {receiver} and never reported it",
                    holder,
                )
            return Lie(
                "stalled", f"exchange {k} waits for {holder}'s earlier doings", None, (holder,)
            )
        if gave is not None:
            acked = gave.to in self._secrets and exchanges.same(
                gave.ack, exchanges.ack_mac(self._secrets[gave.to], gave.mac)
            )
            if acked:
                return Lie(
                    "unreported",
                    f"{gave.to} took exchange {k} from {holder} (its ack says so) and never "
                    "reported it",
                    gave.to,
                )
            if signed_pick(self._secrets, gave, holder, k):
                return Lie(
                    "unreported",
                    f"{gave.to} took exchange {k} from {holder} (its signed pick says so, "
                    "though the ack it sent was not its own) and never reported it",
                    gave.to,
                )
            return Lie(
                "stalled",
                f"{holder} says it handed exchange {k} to {gave.to}, which never reported it",
                None,
                (holder, gave.to),
            )
        return Lie(
            "kept_turn",
            f"{holder} took the turn"
            + (f" (exchange {self.seq})" if self.seq else " (it drew the last card)")
            + " and did nothing more",
            holder,
        )

    def _pending_received(self, k: int) -> tuple[str, Received] | None:
        for nick, stream in self._streams.items():
            for entry in stream:
                if isinstance(entry, Received) and entry.seq == k:
                    return nick, entry
        return None

    def _pending_gave(self, holder: str | None, k: int) -> Gave | None:
        if holder is None:
            return None
        return next((e for e in self._streams[holder] if isinstance(e, Gave) and e.seq == k), None)

    def joker_holder(self) -> str | None:
        return next((n for n, hand in self.hands.items() if hand[JOKER] > 0), None)
