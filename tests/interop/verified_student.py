"""A student's client that also plays verified games (protocol 14.5 and 14.6).

``student_peer.py`` with the extension added the way a student would add it
from the protocol document: the same blocking sockets, a thread per
connection and ``print``s; ``hashlib`` and ``hmac`` from the standard library
for the proofs, commitments and acks; and every report a blocking request on
the table connection. It joins with ``"verify": true``; when the join reply
says ``"report": true`` it commits to each offer, gives each picked card's
salt, acks each offer it takes, checks each card it picks, and reports both
sides of every exchange: its ``gave`` carries the salts of every position of
the offer that was taken, so that the table can open the whole commitment
(``[]`` for a pass). ``cheat_peer.py --verify`` cheats on top of it.

``--no-card-check``
    a student who forgot the picker's check (14.6, "The answers"): it takes
    whatever card comes back for its pick without checking
    ``card_hash(salt, card)`` against the offer's ``hashes[card_num]``, so it
    never refuses a card nor accuses with ``wrong_card``; its ``received``
    is the same as ever, with the card and salt it got.

``--bad-pick-mac``
    a student who signs the wrong text for each pick (14.6, "Hashes and
    macs"): the ``mac`` of its ``pick`` is over ``pick|<picker>|<offerer>|
    <seq>|<card_num + 1>``, the card counted from 1, while the pick's own
    ``card_num`` is right (from 0). It plays and reports as ever.

``--witness``
    a student who signed up for the table as witness (14.6, "The table as
    witness") and implemented none of it: its ``join`` carries
    ``"witness": true`` beside ``"verify": true``, but it never asks the
    table to witness an exchange and never sends a ``move``; a ``witnessed``
    notice on its table connection is skipped like ``game_over``, even while
    it waits for the reply to one of its own requests. So is a ``draw_turn``
    notice (14.6, "The draw turn"): it never draws on one, whether it is
    ``to`` or ``from``, and waits on for the ``your_turn`` from the player
    before it, as without the flag. All else is as without the flag.
"""

import argparse
import hashlib
import hmac
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import student_peer
from student_peer import JOKER, SUITS, VALUES, BadInput, PeerError, canon_card

DECK = [(v, s) for v in VALUES for s in SUITS] + [JOKER]


def hexmac(key, text):
    return hmac.new(key.encode(), text.encode(), hashlib.sha256).hexdigest()[:32]


def card_hash(salt, card):
    return hashlib.sha256(f"{salt}|{card[0]}|{card[1]}".encode()).hexdigest()[:32]


class WitnessDeafTableConn(student_peer.Conn):
    """--witness: the table connection, where ``witnessed`` and ``draw_turn`` are skipped.

    ``Conn.recv_reply`` with the witness's notices skipped the way it skips
    ``game_over``: a ``witnessed`` or ``draw_turn`` notice that comes while we
    wait for a reply is read and dropped, never acted on."""

    def recv_reply(self, deadline):
        while True:
            try:
                obj = self.recv(deadline)
            except BadInput as e:
                raise PeerError(f"{self.name}: garbage instead of a reply ({e})") from None
            if "result" in obj:
                return obj
            if obj.get("cmd") in ("game_over", "witnessed", "draw_turn"):
                continue  # a notice, never a reply; we never act on a witnessed or draw_turn one
            raise PeerError(f"{self.name}: expected a reply, got {obj!r}")


class VerifiedPeer(student_peer.Peer):
    def __init__(self, args):
        super().__init__(args)
        self.secret = None
        self.reporting = False
        self.held_seq = 0  # the exchange that gave us the turn; 0: we drew the last card
        self.offers = {}  # receiver's nick -> our last offer to it: seq, cards, salts, mac
        self.pending_gave = None
        self.salt_rng = random.Random(args.seed)
        self.card_check = not getattr(args, "no_card_check", False)
        self.bad_pick_mac = getattr(args, "bad_pick_mac", False)
        self.witness = getattr(args, "witness", False)

    def conn(self, sock, name):
        if self.witness and name == "table":
            # --witness: the same connection, but deaf to the table's witnessed and
            # draw_turn notices
            return WitnessDeafTableConn(sock, name, self.one_recv, self.recv_size, self.chatty)
        return super().conn(sock, name)

    def join_message(self, port):
        msg = {**super().join_message(port), "verify": True}
        if self.witness:
            msg["witness"] = True  # --witness: signed up for it, implemented nothing of it
        return msg

    def joined(self, rep):
        self.secret = rep.get("secret")
        self.reporting = bool(rep.get("report")) and self.secret is not None
        print(f"{self.nick}: verified game: {self.reporting}", flush=True)

    # ---- what we send ------------------------------------------------------

    def decorate(self, nick, msg):
        """A your_turn or offer to ``nick`` with our proof and, in a reporting game, mac."""
        if self.secret is None or msg.get("cmd") not in ("your_turn", "offer"):
            return msg
        msg = {**msg, "from": msg.get("from", self.nick), "proof": hexmac(self.secret, nick)}
        if not self.reporting:
            return msg
        if msg["cmd"] == "your_turn":
            msg["mac"] = hexmac(self.secret, f"your_turn|{msg['from']}|{nick}")
            return msg
        return {**msg, **self.commit(nick, msg["num_cards"], msg["from"])}

    def committed_cards(self, n):
        """The cards an offer of ``n`` commits to: our hand, in order."""
        with self.lock:
            cards = list(self.hand[:n])
        spare = [c for c in DECK if c not in cards]
        return cards + spare[: n - len(cards)]

    def commit(self, to, n, sender):
        # A retry of the turn to the next seat (the first answered out) keeps the seq, so
        # these salts and this order too; only its mac changes, with its receiver.
        seq = self.next_seq()
        cards = self.committed_cards(n)
        salts = [hexmac(self.secret, f"salt|{seq}|{i}") for i in range(n)]
        hashes = [card_hash(salt, card) for salt, card in zip(salts, cards, strict=True)]
        mac = hexmac(self.secret, f"offer|{seq}|{sender}|{to}|{n}|{','.join(hashes)}")
        self.offers[to] = {"seq": seq, "cards": cards, "salts": salts, "mac": mac}
        return {"seq": seq, "hashes": hashes, "mac": mac}

    def next_seq(self):
        return self.held_seq + 1

    def ask(self, seat, msg):
        return super().ask(seat, self.decorate(self.players[seat][2], msg))

    def offer_taken(self, seat, msg, rep):
        if not self.reporting:
            return
        to = self.players[seat][2]
        offer = self.offers.get(to) or {}  # the offer that was taken: our last one to it
        self.pending_gave = {
            "cmd": "gave",
            "to": to,
            "seq": msg["seq"],
            "mac": msg["mac"],
            "ack": rep.get("ack"),
            "salts": list(offer.get("salts", [])),  # every position, in order; [] for a pass
        }
        if msg["num_cards"] == 0:
            self.report_gave()

    def send_card(self, conn, card, card_num):
        reply = {"result": "ok", "card": list(card)}
        offer = self.offers.get(self.pending_gave["to"]) if self.pending_gave else None
        if self.reporting and offer is not None:
            cards, salts = offer["cards"], offer["salts"]
            if isinstance(card_num, int) and 0 <= card_num < len(cards) and cards[card_num] == card:
                reply["salt"] = salts[card_num]
            elif card in cards:
                reply["salt"] = salts[cards.index(card)]
            else:
                reply["salt"] = f"{self.salt_rng.getrandbits(128):032x}"
        conn.send(reply)
        self.report_gave()  # before we go out: the table sees the card leave first

    def report_gave(self):
        gave, self.pending_gave = self.pending_gave, None
        if gave is not None:
            rep = self.table_request(gave)
            if rep.get("result") != "ok":
                print(f"{self.nick}: the table refused our gave: {rep}", flush=True)

    # ---- what we answer ------------------------------------------------------

    def answer(self, conn, msg, result):
        reply = {"result": result}
        if self.reporting and msg is not None:
            if result == "ok" and msg.get("cmd") == "offer" and msg.get("mac"):
                reply["ack"] = hexmac(self.secret, f"ack|{msg['mac']}")
            elif result == "out" and msg.get("from"):
                reply["ack"] = hexmac(self.secret, f"out|{msg['from']}")
        conn.send(reply)

    def on_offer(self, conn, msg):
        if not self.reporting:
            return super().on_offer(conn, msg)
        num = msg.get("num_cards")
        if not isinstance(num, int) or isinstance(num, bool) or not 0 <= num <= 53:
            conn.send({"result": "error", "message": "num_cards must be an integer 0-53"})
            return
        if any(msg.get(field) is None for field in ("from", "seq", "hashes", "mac")):
            conn.send({"result": "error", "message": "an offer needs from, seq, hashes and mac"})
            return
        with self.lock:
            self.phase = "offer"
            if not self.is_out and not self.hand:
                self.go_out()
            out = self.is_out
            self.answer(conn, msg, "out" if out else "ok")
        if out:
            if self.leave_out:
                self.leave()
            return
        report = {
            "cmd": "received",
            "from": msg["from"],
            "seq": msg["seq"],
            "num_cards": num,
            "hashes": msg["hashes"],
            "mac": msg["mac"],
        }
        card = None
        if num > 0:
            self.picking_from = msg  # the offer our picks sign (pick_message)
            card = self.pick_from(conn, num)
            k, rep = self.last_pick
            position = num - 1 if k == num else k
            salt = rep.get("salt")
            hashes = msg["hashes"]
            opened = isinstance(salt, str) and 0 <= position < len(hashes)
            # --no-card-check: a student who forgot this check takes whatever came
            if self.card_check and (not opened or card_hash(salt, card) != hashes[position]):
                self.refuse_card(msg, position, card, salt)
            report.update(card_num=position, card=list(self.receipt_card(card)), salt=salt)
        self.held_seq = msg["seq"]
        self.send_report(report)
        if card is not None:
            self.take_card(canon_card(list(card)))
        self.holding_turn()

    def pick_message(self, k):
        offer = getattr(self, "picking_from", None)
        if not self.reporting or offer is None:
            return super().pick_message(k)
        # --bad-pick-mac: a student who counts the card from 1 in the mac's text
        signed = k + 1 if self.bad_pick_mac else k
        text = f"pick|{self.nick}|{offer['from']}|{offer['seq']}|{signed}"
        return {"cmd": "pick", "card_num": k, "mac": hexmac(self.secret, text)}

    def receipt_card(self, card):
        """The card our ``received`` report says we got."""
        return card

    def send_report(self, report):
        rep = self.table_request(report)
        if rep.get("result") != "ok":
            raise PeerError(f"the table refused our report: {rep.get('message')}")

    def refuse_card(self, msg, position, card, salt):
        evidence = {
            "from": msg["from"],
            "seq": msg["seq"],
            "hashes": msg["hashes"],
            "mac": msg["mac"],
            "card_num": position,
            "card": list(card),
            "salt": salt,
        }
        rep = self.table_request(
            {"cmd": "accuse", "accused": msg["from"], "rule": "wrong_card", "evidence": evidence}
        )
        raise PeerError(f"{msg['from']} gave a card its offer did not commit to ({rep})")


def main():
    ap = argparse.ArgumentParser(usage=argparse.SUPPRESS, add_help=False, allow_abbrev=False)
    flags = ap.add_argument_group("verified-game flags (on top of student_peer's, below)")
    flags.add_argument(
        "--no-card-check",
        action="store_true",
        help="take a picked card without checking it against the offer's hash",
    )
    flags.add_argument(
        "--bad-pick-mac",
        action="store_true",
        help="sign each pick's mac over card_num + 1 (counted from 1); the pick's "
        "card_num stays 0-based",
    )
    flags.add_argument(
        "--witness",
        action="store_true",
        help='join with "witness": true (beside "verify") but implement nothing of the '
        "table as witness: never ask it to witness, never send a move, never draw on a "
        "draw_turn notice, and skip every witnessed and draw_turn notice on the table "
        "connection",
    )
    own, argv = ap.parse_known_args(sys.argv[1:])
    if "-h" in argv or "--help" in argv:
        ap.print_help()
    args = student_peer.parse_args(argv)
    args.no_card_check = own.no_card_check
    args.bad_pick_mac = own.bad_pick_mac
    args.witness = own.witness
    student_peer.play(VerifiedPeer(args), args)


if __name__ == "__main__":
    main()
