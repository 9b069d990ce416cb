#!/usr/bin/env python3
"""An Old Maid client that cheats: a student's client (``student_peer.py``) changed to win.

It plays as ``student_peer.py`` does with no habit flags (blocking sockets, a
thread per connection, bare ``json.dumps`` writes, ``status`` polled to learn
the end, ``print`` to follow what it does), but for one attack a game, chosen
with ``--attack``, written the way a student would bend its own code. Every
attack strikes when its moment comes (``--report`` counts the strikes); the
rest of the game is played by the rules.

Attacks (issue 27), by where they strike:

offers and picks, as the offerer
  ``offer-fewer``        offer one card fewer than it holds (the last card is never picked)
  ``offer-more``         offer two cards more than it holds
  ``offer-zero``         pass the turn (``num_cards`` 0) while holding cards
  ``give-joker``         answer every pick with the Old Maid, keeping its own cards
  ``give-unheld``        answer every pick with a card it does not hold
  ``give-same-twice``    give a card, and answer the next pick with the same card again
  ``give-discarded``     answer a pick with a card it has discarded
verified games only (``--verify``)
  ``give-uncommitted``   answer a pick with a card its offer never committed to, with a
                         made-up salt
  ``steer-pick``         holding the Old Maid, answer a pick of it with another card of
                         its own (that card's salt): the picker never gets the Old Maid
  ``commit-one-card``    commit to one card it holds (the Old Maid if it holds it) at every
                         position of its offer, each with its own salt, and answer any pick
                         with that card and the salt of the position picked: the picker's
                         check passes, and its ``gave`` gives every position's salt
  ``false-receipt``      report getting another card than the one picked
  ``bad-mac``            send offers whose mac is made up
  ``seq-skip``           number its offers three exchanges ahead
  ``skip-report``        take an offer and never report it
  ``bad-ack``            the first offer of cards it gets: answer ``ok`` with a made-up
                         ``ack`` (32 random hex digits, not its ack of the offer's mac), pick
                         as ever (the pick signed as ever), take the card it is given (into
                         its hand, no discard), and then never report the exchange
                         (``received``) and never move again: it holds the turn for ever,
                         every connection kept open, saying nothing
  ``offer-ahead``        once in the offer phase, when it does not hold the turn (its offer
                         was just picked) and still holds a card: dial the next player in to
                         its left and offer it its whole hand, committed and with its own
                         good mac, numbered three above the highest exchange it has seen (an
                         exchange it has no right to make); serve the pick honestly (the
                         card picked, with its salt), send its ``gave`` (with the ack and the
                         signed pick), and play on as ever
  ``steer-pick-bad-mac`` steering the pick, carried by a bad mac: the first offer of two
                         cards or more it makes holding the Old Maid commits the Old Maid at
                         every position (each hash ``card_hash`` of a fresh salt and
                         ``joker|maid``), while its ``mac`` is the mac of its honest commitment
                         (its hand in order, with its honest salts), not of the hashes sent;
                         whatever position is picked, it gives the Old Maid with the salt that
                         opens that position, and its ``gave`` carries its honest mac and
                         honest salts. A retry of that exchange to the next seat (the first
                         answered ``out``) is bent the same way. Not holding the Old Maid (or
                         holding only it), it offers honestly and strikes at a later offer, if
                         any. Its offer refused (``error``: its receiver checked it with the
                         table), it wants the game to go on: it never sends the offer through
                         the table (the ``witnessed`` notices are skipped as ever) and waits,
                         polling ``status``, until the table ends the game
  ``pass-bad-ack``       the first pass it gets (an offer of ``num_cards`` 0, from a player
                         that went out holding the turn) while it holds cards: answer ``ok``
                         with a made-up ``ack`` (32 random hex digits, not its ack of the
                         pass's mac) and take the turn as after any pass (it offers on, as
                         exchange ``seq`` + 1), but never report the pass (``received``) and
                         never answer for it through the table (its ``witnessed`` notices are
                         skipped as ever); otherwise it plays honestly. No pass, no strike
  ``pick-bad-stay``      the first offer of cards it takes: pick ``card_num`` ``num_cards`` + 5,
                         each pick signed with its own good mac (``pick|picker|offerer|seq|
                         card_num``), again and again until its offerer stops answering (it
                         gives up after 8 bad picks in a row and accuses, ``bad_picks``);
                         then, unlike ``pick-bad``, it neither leaves nor exits: it stays,
                         every connection kept open, polling ``status`` until the table ends
                         the game
as the picker
  ``double-pick``        pick twice from one offer
  ``pick-bad``           pick card numbers outside the offer, again and again
discards
  ``discard-half``       while cards are being drawn, discard a card it holds with its
                         partner, which it does not
  ``discard-unheld``     once cards pass, discard a pair it holds neither card of
the turn
  ``keep-turn``          hold the turn for ever once the offers begin
  ``double-turn-draw``   hand the draw turn on twice: to its left neighbour and the next
  ``double-turn-offer``  after its offer is picked, pass the turn (``num_cards`` 0) to a
                         second player too
  ``impersonate-draw``   dial a seat further left and hand it the draw turn as that
                         seat's right neighbour (``from``)
  ``impersonate-offer``  dial a seat further left and offer it a card as that seat's
                         right neighbour
the draw turn (in a witnessed game the table hands on a draw turn that sits 2 s with a
``draw_turn`` notice, and names a player that does not draw 2 s after it: 14.6)
  ``silent-drawer``      the first ``your_turn`` it gets (not its own first draw as player1):
                         never answer it and never draw, every connection kept open; the
                         table's ``draw_turn`` notice that follows is ignored like any other
  ``ok-no-draw``         answer that first ``your_turn`` ``ok`` (as a verified player does: a
                         ``your_turn``'s ok has no ack) and never draw; ``draw_turn`` ignored
  ``draw-no-ok``         never answer that first ``your_turn``, but draw, discard and hand the
                         turn on as ever: its sender never gets its ``ok``
  ``no-hand-on``         after its first draw that is not the last card, send no ``your_turn``
                         to its left neighbour; then play on: it draws when a ``your_turn``
                         comes again (its own ``draw_turn`` notices are ignored, as ever)
being out
  ``answer-out``         answer ``out`` to every turn once the offers begin, holding cards
  ``false-out``          tell the table ``out_of_cards`` when the offers begin, holding cards
  ``out-with-joker``     tell the table ``out_of_cards`` when only the Old Maid is left
reports about others
  ``false-left-with-turn``  report a player who is still in as gone with the turn
  ``false-give-up``      leave with a ``give_up`` naming a player it never dealt with
  ``false-accuse``       accuse a player it never offered to of a second pick
silence (any game; in a witnessed one, ``--verify --witness``, the table names it)
  ``silent-receiver``    once the offers begin, read every offer of cards it gets and never
                         answer it (no ok, no out, no error), the connection kept open
  ``silent-offerer``     once the offers begin, read the first pick of an offer of its cards
                         that was taken and never send the card, the connection kept open
  ``garbage-card``       (any game, older clients, verified or witnessed) the first pick of an
                         offer of its cards that it serves: instead of the reply with the card,
                         send one line that is not JSON (``{"result":"ok","card":["7",`` and a
                         newline); then never give that card, never report it (no ``gave``) and
                         never move again: every connection kept open, every offer or turn that
                         comes to it read and never answered, every notice of the table (a
                         ``witnessed`` one asking it to give the card too) skipped, as ever
the listener
  ``close-listener``     once the offers begin (the first offer it gets holding cards, or the
                         first turn it holds, whichever comes first), close its listener, so
                         that a dial is refused, and every connection dialled to it (an offer
                         that told it goes unanswered, its connection closed with the rest);
                         it stays, polling the table, but its right neighbour cannot reach it

With ``--verify`` it is ``verified_student.py``'s client (protocol 14.5 and
14.6): it joins with ``verify`` and, in a game whose every player does, commits
to its offers, acks, and reports every exchange, and cheats all the same. An
offer's commitment is what it pretends to hold: a card it means to forge
takes the place of one of its own (``give-uncommitted`` forges one it never
committed to; ``commit-one-card`` commits to one card of its own at every position).

With ``--witness`` too (the table as witness, 14.6) its join also carries
``"witness": true``, so that a game of players that all ask for it is
witnessed. It never asks the table to witness an exchange, never sends a
``move`` and never acts on the table's ``witnessed`` or ``draw_turn`` notices:
it reads them off its table connection (whenever it next makes a request
there: at least its ``status`` poll, every 50 ms) and skips them, as it skips
``game_over``. So a draw turn the table hands it (``draw_turn`` with ``to``
itself) is never taken: it draws only on a ``your_turn`` from its right
neighbour, or first, as player1. (Without ``--verify``, ``--witness`` changes
nothing.)

Usage: python cheat_peer.py --nick NICK --table HOST:PORT --attack NAME [--verify [--witness]]
       [--seed S] [--report PATH] [--timeout SECONDS]
"""

import argparse
import contextlib
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import student_peer  # the client this one was made from
import verified_student
from student_peer import (
    JOKER,
    SUITS,
    VALUES,
    BadInput,
    ConnClosed,
    PeerError,
    ReplyTimeout,
    pairs_with,
)

ATTACKS = (
    "offer-fewer",
    "offer-more",
    "offer-zero",
    "give-joker",
    "give-unheld",
    "give-same-twice",
    "give-discarded",
    "double-pick",
    "pick-bad",
    "discard-half",
    "discard-unheld",
    "keep-turn",
    "double-turn-draw",
    "double-turn-offer",
    "impersonate-draw",
    "impersonate-offer",
    "answer-out",
    "false-out",
    "out-with-joker",
    "false-left-with-turn",
    "false-give-up",
    "false-accuse",
    "give-uncommitted",
    "steer-pick",
    "false-receipt",
    "bad-mac",
    "seq-skip",
    "skip-report",
    "commit-one-card",
    "silent-receiver",
    "silent-offerer",
    "close-listener",
    "silent-drawer",
    "ok-no-draw",
    "draw-no-ok",
    "no-hand-on",
    "bad-ack",
    "offer-ahead",
    "steer-pick-bad-mac",
    "pass-bad-ack",
    "pick-bad-stay",
    "garbage-card",  # last: test_cheat_rings derives other attacks' seeds from their index
)
VERIFIED_ONLY = ("give-uncommitted", "steer-pick", "false-receipt", "bad-mac", "seq-skip",
                 "skip-report", "commit-one-card", "bad-ack", "offer-ahead",
                 "steer-pick-bad-mac", "pass-bad-ack", "pick-bad-stay")  # fmt: skip
DECK = [(v, s) for v in VALUES for s in SUITS]


def partner(card):
    return next(c for c in DECK if pairs_with(c, card))


# Notices the table may send on its connection at any moment, never a reply to a request:
# the end, and (a witnessed game, 14.6) an exchange the table witnesses or a draw turn it
# hands on. We act on none of them.
NOTICES = ("game_over", "witnessed", "draw_turn")
# The attacks that strike on the first your_turn we get.
ON_YOUR_TURN = ("silent-drawer", "ok-no-draw", "draw-no-ok")


class Conn(student_peer.Conn):
    """``student_peer``'s connection, skipping every notice of ours while it waits for a reply."""

    last_reply = None  # the last reply read here (steer-pick-bad-mac: was its offer refused?)

    def recv_reply(self, deadline):
        while True:
            try:
                obj = self.recv(deadline)
            except BadInput as e:
                raise PeerError(f"{self.name}: garbage instead of a reply ({e})") from None
            if "result" in obj:
                self.last_reply = obj
                return obj
            if obj.get("cmd") in NOTICES:
                if obj.get("cmd") == "witnessed":
                    print(
                        f"{self.name}: witnessed exchange {obj.get('seq')} step {obj.get('step')}"
                        f" ({obj.get('owes')} owes {obj.get('move')}): not ours to answer",
                        flush=True,
                    )
                elif obj.get("cmd") == "draw_turn":
                    print(
                        f"{self.name}: draw_turn notice: card {obj.get('draw')} to"
                        f" {obj.get('to')} from {obj.get('from')}: ignored",
                        flush=True,
                    )
                continue  # a notice, never a reply
            raise PeerError(f"{self.name}: expected a reply, got {obj!r}")


FORGERIES = ("give-joker", "give-unheld", "give-same-twice", "give-discarded", "give-uncommitted")


class Cheat(verified_student.VerifiedPeer):
    def __init__(self, args):
        super().__init__(args)
        self.verify = args.verify
        self.witness = args.verify and args.witness
        self.next_forged = None  # the card our committed offer pretends to hold
        self.attack = args.attack
        self.cheat_rng = random.Random(args.seed)
        self.thrown = []  # cards we discarded, in order
        self.last_given = None
        self.done_once = set()
        self.listener_closed = False  # close-listener: we closed it, and its connections
        self.seen_seq = 0  # the highest exchange number we have seen: offered to us or by us
        self.steer_seq = None  # steer-pick-bad-mac: the exchange whose offers we bent
        self.stats.update(attack=self.attack, struck=0, struck_at=None)
        # Held from a cheating request until its strike is recorded: the main thread can
        # see the game end (its status poll) between the reply and the record, and must
        # not write the report in that gap (seen once under a loaded test run).
        self.attempt_lock = threading.RLock()

    def terminate(self, code, out=None, err=None, locked=False, wait=None):
        self.attempt_lock.acquire(timeout=student_peer.REPLY_TIMEOUT)  # kept: the end
        super().terminate(code, out, err, locked, wait)

    def conn(self, sock, name):
        return Conn(sock, name, self.one_recv, self.recv_size, self.chatty)

    def join_message(self, port):
        if self.witness:
            return {**super().join_message(port), "witness": True}
        if self.verify:
            return super().join_message(port)
        return student_peer.Peer.join_message(self, port)

    def fail(self, exc):
        if self.listener_closed and str(exc).startswith("listener failed"):
            return  # close-listener: we closed it ourselves; its accept loop just ends
        super().fail(exc)

    def close_listener(self, when):
        """close-listener: stop listening (a dial is refused) and close every inbound connection.

        Each connection is shut down, not closed: its reader wakes at once to the end of its
        stream and closes it on its way out (serve_inbound), so no thread reads a closed socket.
        """
        with self.lock:  # the accept loop adds inbound connections under it
            self.listener_closed = True
            inbound = list(self.inbound)
        self.strike(f"closing its listener {when} and the {len(inbound)} connections to it")
        listener = self.listener
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # accept() wakes; the backlog is reset
            with contextlib.suppress(OSError):
                listener.close()
        for conn in inbound:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)

    def serve_inbound(self, conn):
        if self.listener_closed:  # accepted just as we closed the listener: closed too
            conn.close()
            return
        super().serve_inbound(conn)

    def stay_silent(self):
        """Say nothing more here, the connection kept open, until the game ends for us."""
        self.done.wait()

    def forgery(self, given):
        """The card to give instead of ``given`` (None: give it), for the give-* attacks."""
        attack = self.attack
        if attack == "give-joker":
            return JOKER
        if attack in ("give-unheld", "give-uncommitted"):
            unheld = [c for c in DECK if c not in self.hand and c != given]
            return self.cheat_rng.choice(unheld)
        if attack == "give-same-twice" and self.last_given is not None:
            return self.last_given
        if attack == "give-discarded" and self.thrown:
            return self.cheat_rng.choice(self.thrown)
        return None

    def next_seq(self):
        if self.attack == "seq-skip" and self.reporting:
            self.strike("numbering its offer three exchanges ahead")
            seq = self.held_seq + 3
        else:
            seq = super().next_seq()
        self.saw_seq(seq)
        return seq

    def saw_seq(self, seq):
        if isinstance(seq, int) and not isinstance(seq, bool):
            with self.lock:
                self.seen_seq = max(self.seen_seq, seq)

    def commit(self, to, n, sender):
        fields = super().commit(to, n, sender)
        if self.attack == "bad-mac":
            self.strike("sending a made-up mac")
            fields["mac"] = f"{self.cheat_rng.getrandbits(128):032x}"
        if self.attack == "steer-pick-bad-mac":
            fields = self.commit_maid_everywhere(to, n, fields)
        return fields

    def commit_maid_everywhere(self, to, n, fields):
        """steer-pick-bad-mac: the Old Maid at every position, under our honest commitment's mac.

        ``fields`` is the honest offer (our hand in order, honest salts: ``self.offers[to]``,
        which our ``gave`` reports); only its hashes are replaced, each the Old Maid under a
        fresh salt, kept in ``self.offers[to]["maid_salts"]`` for the pick."""
        seq = fields["seq"]
        with self.lock:
            holds_maid = JOKER in self.hand
        if not holds_maid or n < 2:
            return fields  # nothing to steer: honest
        if self.steer_seq is None:
            self.steer_seq = seq
            self.strike(
                f"offering {to} the Old Maid at all {n} positions of exchange {seq}, under the"
                " mac of its honest commitment"
            )
        elif self.steer_seq == seq:  # the same exchange, retried to the next seat
            print(f"{self.nick}: exchange {seq} again, to {to}: the Old Maid at each", flush=True)
        else:
            return fields  # struck once already: honest from then on
        salts = [f"{self.cheat_rng.getrandbits(128):032x}" for _ in range(n)]
        self.offers[to]["maid_salts"] = salts
        hashes = [verified_student.card_hash(salt, JOKER) for salt in salts]
        return {**fields, "hashes": hashes}  # the mac stays the honest commitment's

    def receipt_card(self, card):
        if self.attack != "false-receipt":
            return card
        with self.lock:
            held = [c for c in self.hand if c != JOKER]
        lie = partner(held[0]) if held else card
        if lie != card:
            self.strike(f"reporting {lie} instead of {card}")
        return lie

    def send_report(self, report):
        if self.attack == "skip-report" and self.once("skip"):
            self.strike(f"never reporting exchange {report['seq']}")
            return
        super().send_report(report)

    def committed_cards(self, n):
        """Verified games: commit to the card we mean to forge in place of one of ours."""
        cards = super().committed_cards(n)
        self.next_forged = None
        if self.attack == "commit-one-card" and n >= 2:
            with self.lock:
                held = list(self.hand)
            if held:
                one = JOKER if JOKER in held else self.cheat_rng.choice(held)
                self.strike(f"committing to {one} at all {n} positions of its offer")
                return [one] * n  # each position still gets its own salt (commit)
        if self.attack in FORGERIES and cards:
            forged = self.forgery(None)
            if forged is not None and forged not in cards and self.attack != "give-uncommitted":
                cards[self.cheat_rng.randrange(len(cards))] = forged
            self.next_forged = forged
        return cards

    def strike(self, what):
        if not self.stats["struck"]:
            self.stats["struck_at"] = time.monotonic()  # one clock with the table's (Linux)
        self.stats["struck"] += 1
        self.write_report()
        print(f"{self.nick}: cheating ({self.attack}): {what}", flush=True)

    def once(self, name):
        if name in self.done_once:
            return False
        self.done_once.add(name)
        return True

    def table_request(self, msg):
        rep = super().table_request(msg)
        if msg.get("cmd") == "discard" and rep.get("result") == "ok":
            self.thrown.extend(tuple(c) for c in msg["cards"])
        return rep

    def others(self):
        return [seat for seat in range(len(self.players)) if seat != self.seat]

    def dial(self, seat):
        """A fresh connection to a seat's listener, kept aside from the usual ones."""
        host, port, nick = self.players[seat]
        sock = socket.create_connection((host, port), timeout=student_peer.REPLY_TIMEOUT)
        return self.conn(sock, f"{self.nick}~>{nick}")

    # ---- the offerer -------------------------------------------------------

    def ask(self, seat, msg):
        """steer-pick-bad-mac: a bent offer answered ``error`` is ``"refused"``, not our error."""
        if self.attack != "steer-pick-bad-mac" or msg.get("cmd") != "offer":
            return super().ask(seat, msg)
        conn = self.outs.get(seat)
        if conn is not None:
            conn.last_reply = None
        try:
            return super().ask(seat, msg)
        except PeerError:
            nick = self.players[seat][2]
            conn = self.outs.get(seat)
            rep = conn.last_reply if conn is not None else None
            bent = "maid_salts" in (self.offers.get(nick) or {})
            if not bent or rep is None or rep.get("result") != "error":
                raise
            print(f"{self.nick}: {nick} refused our offer: {rep}", flush=True)
            return "refused", conn

    def wait_for_the_end(self):
        """steer-pick-bad-mac, refused: no move of ours (nor through the table) till the end."""
        print(f"{self.nick}: waiting for the table to end the game", flush=True)
        if threading.current_thread() is threading.main_thread():
            return  # the main thread polls the table's status to the end (poll_until_over)
        self.stay_silent()  # the main thread's status poll ends the game for us

    def hold_turn(self):
        if self.gone_quiet():
            return self.stay_silent()
        attack = self.attack
        with self.lock:
            n = 0 if self.is_out else len(self.hand)
        if attack == "close-listener" and not self.is_out and self.once("close"):
            self.close_listener("holding the turn")  # then offers on, as ever
        if attack == "keep-turn" and not self.is_out:
            self.strike("keeping the turn")
            while not self.done.is_set():
                time.sleep(0.1)
            return
        if attack == "out-with-joker" and self.hand == [JOKER] and not self.is_out:
            self.strike("out_of_cards holding the Old Maid")
            self.go_out()
            n = 0
        lie = {"offer-fewer": n - 1, "offer-more": n + 2, "offer-zero": 0}.get(attack)
        if lie is not None and n >= 2:
            self.strike(f"offering {lie} of {n} cards")
            n = lie
        for seat in self.left_seats():
            result, _ = self.ask(seat, {"cmd": "offer", "num_cards": n})
            if result == "ok":
                self.after_offer(seat, n)
                return
            if result == "refused":  # steer-pick-bad-mac: its bent offer was refused
                self.wait_for_the_end()
                return
        with self.lock:
            if not self.is_out:
                self.lost = True

    def after_offer(self, seat, n):
        """Our offer went to ``seat``: a second turn for someone else, for some attacks."""
        beyond = [s for s in self.left_seats() if s != seat and s != self.left_seats()[0]]
        if self.attack == "double-turn-offer" and n > 0 and beyond and self.once("double"):
            self.strike(f"passing a second turn to {self.players[beyond[0]][2]}")
            result, _ = self.ask(beyond[0], {"cmd": "offer", "num_cards": 0})
            print(f"{self.nick}: the second turn was answered {result}", flush=True)
        impersonating = self.attack == "impersonate-offer" and not self.is_out and self.hand
        if impersonating and beyond and self.once("impersonate"):
            self.impersonate(beyond[0], {"cmd": "offer", "num_cards": 1})
        # Our offer of cards was picked: the picker holds the turn now, not us.
        if self.attack == "offer-ahead" and self.reporting and n > 0:
            with self.lock:
                holding = bool(self.hand) and not self.is_out
            if holding and self.once("ahead"):
                self.offer_ahead()

    def next_in_seat(self):
        """The first seat to our left that the table does not list as out (None: none)."""
        out = self.status().get("out") or []
        return next((s for s in self.left_seats() if self.players[s][2] not in out), None)

    def offer_ahead(self):
        """offer-ahead: offer our whole hand, three exchanges past any we saw, not holding the turn.

        Everything in it is well formed and our own: the commitment is our hand, the mac is
        ours, the pick is served with the salt of its position and the gave follows. Only the
        turn is not ours (the table should find it: turn_not_held)."""
        try:
            seat = self.next_in_seat()
        except PeerError as exc:
            print(f"{self.nick}: no status for offer-ahead: {exc}", flush=True)
            return
        if seat is None:
            return
        to = self.players[seat][2]
        with self.lock:
            cards = list(self.hand)
            seq = self.seen_seq + 3
        n = len(cards)
        salts = [verified_student.hexmac(self.secret, f"salt|{seq}|{i}") for i in range(n)]
        hashes = [verified_student.card_hash(s, c) for s, c in zip(salts, cards, strict=True)]
        mac = verified_student.hexmac(
            self.secret, f"offer|{seq}|{self.nick}|{to}|{n}|{','.join(hashes)}"
        )
        msg = {
            "cmd": "offer",
            "num_cards": n,
            "from": self.nick,
            "proof": verified_student.hexmac(self.secret, to),
            "seq": seq,
            "hashes": hashes,
            "mac": mac,
        }
        try:
            conn = self.dial(seat)
        except OSError as exc:
            print(f"{self.nick}: cannot dial {to} for offer-ahead: {exc}", flush=True)
            return
        try:
            with self.attempt_lock:
                self.strike(
                    f"offering {to} its {n} cards as exchange {seq}, not holding the turn"
                    f" (the highest exchange it saw: {seq - 3})"
                )
                rep = conn.request(msg)
            print(f"{self.nick}: {to} answered the offer ahead {rep}", flush=True)
            if rep.get("result") == "ok":
                self.serve_ahead_pick(conn, to, seq, cards, salts, mac, rep.get("ack"))
        except (ConnClosed, ReplyTimeout, PeerError) as exc:
            print(f"{self.nick}: the offer ahead to {to} failed: {exc}", flush=True)
        finally:
            conn.close()

    def serve_ahead_pick(self, conn, to, seq, cards, salts, mac, ack):
        """The pick of our offer ahead, served honestly, then its gave (14.6)."""
        deadline = time.monotonic() + student_peer.REPLY_TIMEOUT
        for _ in range(student_peer.MAX_BAD_PICKS):
            try:
                pick = conn.recv(deadline)
            except BadInput as exc:
                conn.send({"result": "error", "message": str(exc)})
                continue
            k = pick.get("card_num")
            if pick.get("cmd") != "pick" or student_peer.pick_index(k, len(cards), False) != k:
                conn.send({"result": "error", "message": f"no card {k!r} of {len(cards)}"})
                continue
            card = cards[k]
            with self.lock:
                if card in self.hand:
                    self.hand.remove(card)
                empty = not self.hand
            conn.send({"result": "ok", "card": list(card), "salt": salts[k]})
            print(f"{self.nick}: gave {card} for pick {k} of the offer ahead", flush=True)
            gave = {
                "cmd": "gave",
                "to": to,
                "seq": seq,
                "mac": mac,
                "ack": ack,
                "salts": salts,
                "pick": {"card_num": k, "mac": pick.get("mac")},
            }
            rep = self.table_request(gave)  # before we go out: the card leaves first
            print(f"{self.nick}: the table said {rep} to our gave of exchange {seq}", flush=True)
            if empty:
                self.go_out()
            return
        print(f"{self.nick}: {student_peer.MAX_BAD_PICKS} bad picks of the offer ahead", flush=True)

    def impersonate(self, seat, msg):
        """Dial ``seat`` and hand it a turn as the player to its right."""
        right = self.players[(seat - 1) % len(self.players)][2]
        conn = self.dial(seat)
        self.strike(f"sending {msg['cmd']} to {self.players[seat][2]} as {right}")
        try:
            # A verified cheater sends it as it sends everything: with its own proof and mac.
            rep = conn.request(self.decorate(self.players[seat][2], {**msg, "from": right}))
            print(f"{self.nick}: the impostor's {msg['cmd']} was answered {rep}", flush=True)
            if rep.get("result") == "ok" and msg.get("num_cards"):
                pick = conn.recv(time.monotonic() + student_peer.REPLY_TIMEOUT)
                with self.lock:
                    card = self.hand.pop(0) if self.hand else JOKER
                conn.send({"result": "ok", "card": list(card)})
                print(f"{self.nick}: gave {card} for pick {pick}", flush=True)
        except (ConnClosed, ReplyTimeout) as exc:
            print(f"{self.nick}: the impostor's {msg['cmd']} failed: {exc}", flush=True)

    def serve_pick(self, conn, n):
        attack = self.attack
        if attack == "silent-offerer" and "silent" not in self.done_once:
            return self.withhold_card(conn, n)
        if attack == "garbage-card" and "garbage" not in self.done_once:
            return self.send_garbage(conn, n)
        if attack == "steer-pick" and self.reporting:
            return self.steer(conn)
        if attack == "commit-one-card" and self.reporting:
            return self.give_committed(conn, n)
        if attack == "steer-pick-bad-mac" and self.reporting:
            return self.give_maid(conn, n)
        if attack not in FORGERIES:
            return super().serve_pick(conn, n)
        msg = conn.recv(time.monotonic() + student_peer.REPLY_TIMEOUT)
        if msg.get("cmd") != "pick":
            raise PeerError(f"expected a pick, got {msg!r}")
        with self.lock:
            card = student_peer.pop_picked(self.hand, msg.get("card_num"), False)
            if card is None:
                conn.send({"result": "error", "message": "no such card"})
                return self.serve_pick(conn, n)
            forged = self.next_forged if self.reporting else self.forgery(card)
            if forged is not None and forged != card:
                self.hand.insert(0, card)  # keep the card that was picked
                self.strike(f"giving {forged} for pick {msg.get('card_num')}")
                card = forged
            self.last_given = card
            self.send_card(conn, card, msg.get("card_num"))
            if not self.hand:
                self.go_out()

    def withhold_card(self, conn, n):
        """Read the pick of our offer of ``n`` cards, and never answer it."""
        msg = conn.recv(time.monotonic() + student_peer.REPLY_TIMEOUT)
        if msg.get("cmd") != "pick":
            raise PeerError(f"expected a pick, got {msg!r}")
        self.done_once.add("silent")
        self.strike(f"never sending the card for pick {msg.get('card_num')} of {n}")
        self.stay_silent()

    def send_garbage(self, conn, n):
        """garbage-card: answer the pick of our offer of ``n`` cards with a line that is not JSON.

        The picked card stays in our hand; no gave, no other move ever again (``gone_quiet``)."""
        while True:
            msg = conn.recv(time.monotonic() + student_peer.REPLY_TIMEOUT)
            if msg.get("cmd") != "pick":
                raise PeerError(f"expected a pick, got {msg!r}")
            with self.lock:
                card = student_peer.pop_picked(self.hand, msg.get("card_num"), False)
                if card is not None:
                    self.hand.insert(0, card)  # never given
                    break
            conn.send({"result": "error", "message": "no such card"})
        garbage = '{"result":"ok","card":["' + card[0] + '",\n'
        with self.attempt_lock:
            self.done_once.add("garbage")
            try:
                conn.sock.sendall(garbage.encode())  # by hand: json.dumps would not break it
            except OSError as exc:
                print(f"{self.nick}: could not send the garbage: {exc}", flush=True)
            self.strike(
                f"answering pick {msg.get('card_num')} of {n} (the {card}) with {garbage!r},"
                " and never moving again"
            )
        self.stay_silent()

    def gone_quiet(self):
        """garbage-card, once struck: no move of ours ever again."""
        return self.attack == "garbage-card" and "garbage" in self.done_once

    def steer(self, conn):
        """A pick of the Old Maid gets another card of ours, with that card's own salt."""
        msg = conn.recv(time.monotonic() + student_peer.REPLY_TIMEOUT)
        with self.lock:
            card = student_peer.pop_picked(self.hand, msg.get("card_num"), False)
            if card is None:
                conn.send({"result": "error", "message": "no such card"})
                return self.steer(conn)
            if card == JOKER and self.hand:
                given = self.hand.pop(0)
                self.hand.insert(0, card)
                self.strike(f"giving {given} for a pick of the Old Maid")
                card = given
            self.send_card(conn, card, msg.get("card_num"))
            if not self.hand:
                self.go_out()

    def give_committed(self, conn, n):
        """Any pick gets the card committed at its position, with that position's salt."""
        offer = self.offers.get(self.pending_gave["to"]) if self.pending_gave else None
        if offer is None:
            return super().serve_pick(conn, n)
        msg = conn.recv(time.monotonic() + student_peer.REPLY_TIMEOUT)
        if msg.get("cmd") != "pick":
            raise PeerError(f"expected a pick, got {msg!r}")
        with self.lock:
            position = student_peer.pick_index(msg.get("card_num"), len(offer["cards"]), False)
            if position is None:
                conn.send({"result": "error", "message": "no such card"})
                return self.give_committed(conn, n)
            card = offer["cards"][position]  # the one card, at every position of a struck offer
            if card in self.hand:
                self.hand.remove(card)
            self.send_card(conn, card, position)  # that position's salt; gave: all of them
            if not self.hand:
                self.go_out()

    def give_maid(self, conn, n):
        """steer-pick-bad-mac: any pick of a bent offer gets the Old Maid, with the salt that
        opens its position; then the gave, with our honest mac and honest salts."""
        offer = self.offers.get(self.pending_gave["to"]) if self.pending_gave else None
        if offer is None or "maid_salts" not in offer:
            return super().serve_pick(conn, n)  # an honest offer
        salts = offer["maid_salts"]
        for _ in range(student_peer.MAX_BAD_PICKS):
            msg = conn.recv(time.monotonic() + student_peer.REPLY_TIMEOUT)
            if msg.get("cmd") != "pick":
                raise PeerError(f"expected a pick, got {msg!r}")
            position = student_peer.pick_index(msg.get("card_num"), len(salts), False)
            if position is None:
                conn.send({"result": "error", "message": "no such card"})
                continue
            with self.lock:
                if JOKER in self.hand:
                    self.hand.remove(JOKER)
                conn.send({"result": "ok", "card": list(JOKER), "salt": salts[position]})
                print(
                    f"{self.nick}: gave the Old Maid for pick {msg.get('card_num')}, with the"
                    " salt that opens it",
                    flush=True,
                )
                self.report_gave()  # our honest mac and salts: before we go out
                if not self.hand:
                    self.go_out()
            return
        raise PeerError(f"{student_peer.MAX_BAD_PICKS} bad picks in a row")

    # ---- the picker ----------------------------------------------------------

    def pick_from(self, conn, num):
        if self.attack == "pick-bad-stay" and self.reporting and self.once("pick-bad-stay"):
            return self.pick_bad_and_stay(conn, num)
        if self.attack == "pick-bad":
            self.strike(f"picking card_num {num + 3} of {num}")
            for _ in range(student_peer.MAX_BAD_PICKS):
                conn.send({"cmd": "pick", "card_num": num + 3})
                rep = conn.recv_reply(time.monotonic() + student_peer.REPLY_TIMEOUT)
                if rep.get("result") == "ok":
                    return student_peer.canon_card(rep.get("card"))
            raise PeerError("every pick refused")
        card = super().pick_from(conn, num)
        if self.attack == "double-pick" and num > 1 and self.once("double"):
            self.strike("picking again from the same offer")
            first = self.last_pick[0]
            # another card than the first, signed as every pick of ours (a verified game)
            conn.send(self.pick_message(0 if first != 0 else 1))  # and never reads the answer
        return card

    def pick_bad_and_stay(self, conn, num):
        """pick-bad-stay: signed picks past the offer until its offerer stops answering; then
        stay, saying nothing, until the game ends (the main thread polls ``status``)."""
        offer = self.picking_from  # set by on_offer: our picks sign this offer
        bad = num + 5
        sent = 0
        with self.attempt_lock:
            self.strike(
                f"picking card_num {bad} of the {num} cards offered by {offer.get('from')}"
                f" (exchange {offer.get('seq')}), signed, until refused for good"
            )
            conn.send(self.pick_message(bad))  # its mac: pick|us|offerer|seq|bad
            sent = 1
        while not self.done.is_set():
            try:
                rep = conn.recv_reply(time.monotonic() + student_peer.REPLY_TIMEOUT)
            except (ConnClosed, ReplyTimeout, PeerError) as exc:
                print(f"{self.nick}: after {sent} bad picks the offerer stopped: {exc}", flush=True)
                break
            if rep.get("result") == "ok":  # an offerer that serves a pick past its offer
                print(f"{self.nick}: bad pick {bad} answered {rep}", flush=True)
                self.last_pick = (bad, rep)
                return student_peer.canon_card(rep.get("card"))
            if sent >= 4 * student_peer.MAX_BAD_PICKS:  # an offerer that never tires: enough
                print(f"{self.nick}: {sent} bad picks refused, and it still answers", flush=True)
                break
            try:
                conn.send(self.pick_message(bad))
            except (ConnClosed, ReplyTimeout) as exc:
                print(f"{self.nick}: after {sent} bad picks the offerer stopped: {exc}", flush=True)
                break
            sent += 1
        print(f"{self.nick}: staying, saying nothing, until the table ends the game", flush=True)
        self.stay_silent()
        raise PeerError("the game is over")  # done is set: nothing more to do here

    def on_offer(self, conn, msg):
        self.saw_seq(msg.get("seq"))
        if self.gone_quiet():
            print(f"{self.nick}: an offer from {msg.get('from')}: never answered", flush=True)
            self.stay_silent()
            return
        with self.lock:
            self.phase = "offer"
            holding = bool(self.hand) and not self.is_out
        num = msg.get("num_cards")
        cards = isinstance(num, int) and not isinstance(num, bool) and num > 0
        sender = msg.get("from") or "its right neighbour"
        if self.attack == "close-listener" and holding and self.once("close"):
            self.close_listener(f"on an offer of {num} cards from {sender}")
            return  # never answered: its connection was closed with the rest
        if self.attack == "bad-ack" and holding and cards and self.reporting:
            signed = all(msg.get(f) is not None for f in ("from", "seq", "hashes", "mac"))
            if signed and num <= 53 and self.once("bad-ack"):
                self.take_with_bad_ack(conn, msg, num, sender)
                return
        if self.attack == "pass-bad-ack" and holding and self.reporting:
            signed = all(msg.get(f) is not None for f in ("from", "seq", "hashes", "mac"))
            passed = isinstance(num, int) and not isinstance(num, bool) and num == 0
            if signed and passed and self.once("pass-bad-ack"):
                self.take_pass_with_bad_ack(conn, msg, sender)
                return
        if self.attack == "silent-receiver" and holding and cards:
            self.strike(f"never answering an offer of {num} cards from {sender}")
            self.stay_silent()
            return
        if self.attack == "answer-out" and holding:
            self.strike("answering out with cards in hand")
            self.answer(conn, msg, "out")
            return
        if self.attack == "false-out" and holding and len(self.hand) > 2 and self.once("out"):
            self.strike(f"out_of_cards holding {len(self.hand)} cards")
            self.go_out()
        reports = ("false-left-with-turn", "false-give-up", "false-accuse")
        if self.attack in reports and holding and self.once("report"):
            self.report_falsely()
        return super().on_offer(conn, msg)

    def take_with_bad_ack(self, conn, msg, num, sender):
        """bad-ack: ok with a made-up ack, pick, keep the card, and never report or move again."""
        bad = f"{self.cheat_rng.getrandbits(128):032x}"
        real = verified_student.hexmac(self.secret, f"ack|{msg['mac']}")
        while bad == real:  # never our real ack, however unlikely
            bad = f"{self.cheat_rng.getrandbits(128):032x}"
        with self.attempt_lock:
            self.strike(
                f"answering the offer of {num} cards from {sender} (exchange "
                f"{msg['seq']}) ok with a made-up ack"
            )
            conn.send({"result": "ok", "ack": bad})
        self.picking_from = msg  # our pick is signed as ever (pick_message)
        card = self.pick_from(conn, num)
        with self.lock:
            self.hand.insert(self.rng.randrange(len(self.hand) + 1), card)  # no discard
        print(
            f"{self.nick}: took {card}; no received for exchange {msg['seq']}, and no"
            " move ever again: holding the turn",
            flush=True,
        )
        self.stay_silent()

    def take_pass_with_bad_ack(self, conn, msg, sender):
        """pass-bad-ack: ok a pass with a made-up ack, take the turn, and never report the pass."""
        bad = f"{self.cheat_rng.getrandbits(128):032x}"
        real = verified_student.hexmac(self.secret, f"ack|{msg['mac']}")
        while bad == real:  # never our real ack, however unlikely
            bad = f"{self.cheat_rng.getrandbits(128):032x}"
        with self.attempt_lock:
            self.strike(
                f"answering the pass from {sender} (exchange {msg['seq']}) ok with a made-up"
                " ack; never reporting it, nor answering for it through the table"
            )
            conn.send({"result": "ok", "ack": bad})
        self.held_seq = msg["seq"]  # the turn is ours, as after any pass: we offer seq + 1
        print(
            f"{self.nick}: took the turn on exchange {msg['seq']}; no received for it",
            flush=True,
        )
        self.holding_turn()

    # ---- discards --------------------------------------------------------------

    def take_card(self, card):
        super().take_card(card)
        attack = self.attack
        if attack == "discard-half" and self.phase == "draw" and "half" not in self.done_once:
            with self.lock:
                single = [c for c in self.hand if c != JOKER]
            for mine in single:
                with self.attempt_lock:
                    rep = self.table_request(
                        {"cmd": "discard", "cards": [list(mine), list(partner(mine))]}
                    )
                    print(f"{self.nick}: discarding {mine} with its partner: {rep}", flush=True)
                    if rep.get("result") == "ok":
                        self.strike(f"discarded {mine} and {partner(mine)}")
                        self.done_once.add("half")
                        with self.lock:
                            self.hand.remove(mine)
                        break
                    if "not been drawn" not in str(rep.get("message")):
                        self.strike(f"tried {mine} and {partner(mine)}: {rep.get('message')}")
                        self.done_once.add("half")
                        break
        if attack == "discard-unheld" and self.phase == "offer" and self.once("unheld"):
            with self.lock:
                mine = set(self.hand) | set(self.thrown)
            pairs = [
                (c, partner(c))
                for c in DECK
                if c[1] in ("spades", "diamonds") and c not in mine and partner(c) not in mine
            ]
            first, second = self.cheat_rng.choice(pairs)
            self.strike(f"discarding {first} and {second}, held by someone else")
            rep = self.table_request({"cmd": "discard", "cards": [list(first), list(second)]})
            print(f"{self.nick}: the table said {rep}", flush=True)

    # ---- the draw phase -------------------------------------------------------------

    def on_your_turn(self, conn, msg=None):
        if self.gone_quiet():
            print(f"{self.nick}: a your_turn: never answered", flush=True)
            self.stay_silent()
            return
        attack = self.attack
        if attack not in ON_YOUR_TURN or not self.once("your_turn"):
            return super().on_your_turn(conn, msg)
        sender = (msg or {}).get("from") or "its right neighbour"
        if attack == "silent-drawer":
            self.strike(f"never answering the your_turn from {sender}, and never drawing")
            self.stay_silent()
        elif attack == "ok-no-draw":
            self.answer(conn, msg, "ok")
            self.strike(f"answered the your_turn from {sender} ok, and never drawing")
            self.stay_silent()
        else:  # draw-no-ok
            self.strike(f"never answering the your_turn from {sender}, drawing all the same")
            self.draw_turn()  # draws, discards, hands the turn on; this connection stays open

    def pass_draw_turn(self):
        if self.attack == "no-hand-on" and self.once("no-hand-on"):
            left = self.players[self.left_seats()[0]][2]
            self.strike(f"never handing the draw turn on to {left}")
            return  # and plays on: the next your_turn to come is served as ever
        super().pass_draw_turn()
        ahead = self.left_seats()[1:]
        if not ahead:
            return
        if self.attack == "double-turn-draw" and self.once("double"):
            self.strike(f"handing the draw turn to {self.players[ahead[0]][2]} too")
            result, _ = self.ask(ahead[0], {"cmd": "your_turn"})
            print(f"{self.nick}: the second draw turn was answered {result}", flush=True)
        if self.attack == "impersonate-draw" and self.once("impersonate"):
            self.impersonate(ahead[0], {"cmd": "your_turn"})

    # ---- reports about others ---------------------------------------------------------

    def report_falsely(self):
        me = self.seat
        count = len(self.players)
        far = [s for s in self.others() if s not in ((me + 1) % count, (me - 1) % count)]
        if self.attack == "false-left-with-turn":
            victim = self.players[(me + 1) % count][2]
            self.strike(f"reporting {victim} as gone with the turn")
            rep = self.table_request({"cmd": "left_with_turn", "nick": victim})
            print(f"{self.nick}: the table said {rep}", flush=True)
        elif self.attack == "false-accuse":
            victim = self.players[(me + 2) % count][2]
            self.strike(f"accusing {victim} of a second pick")
            rep = self.table_request(
                {"cmd": "accuse", "accused": victim, "rule": "second_pick", "evidence": {}}
            )
            print(f"{self.nick}: the table said {rep}", flush=True)
        elif self.attack == "false-give-up" and far:
            victim = self.players[far[0]][2]
            self.strike(f"giving up, blaming {victim}")
            rep = self.table_request(
                {"cmd": "give_up", "nick": victim, "reason": "did not answer offer within 10 s"}
            )
            print(f"{self.nick}: the table said {rep}", flush=True)
            self.die(f"gave up because of {victim}")


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"cheat_peer: {message}\n")
        sys.exit(1)


def main():
    ap = OneLineParser(usage=argparse.SUPPRESS, add_help=False, allow_abbrev=False)
    flags = ap.add_argument_group("cheating flags (on top of student_peer's, below)")
    flags.add_argument(
        "--attack",
        metavar="NAME",
        help=f"the one attack of this game (required), one of: {', '.join(ATTACKS)}",
    )
    flags.add_argument(
        "--verify",
        action="store_true",
        help='join with "verify": true and play verified games (protocol 14.5, 14.6)',
    )
    flags.add_argument(
        "--witness",
        action="store_true",
        help='with --verify: join with "witness": true too (the table as witness, 14.6); '
        "it never asks for a witness, never moves, and skips the witnessed and draw_turn "
        "notices",
    )
    own, argv = ap.parse_known_args(sys.argv[1:])
    if "-h" in argv or "--help" in argv:
        ap.print_help()
        print()
        student_peer.parse_args(argv)  # prints its own flags, and exits
    if own.attack not in ATTACKS:
        sys.stderr.write(f"cheat_peer: --attack must be one of {', '.join(ATTACKS)}\n")
        sys.exit(1)
    args = student_peer.parse_args(argv)
    args.attack = own.attack
    args.verify = own.verify
    args.witness = own.witness
    student_peer.play(Cheat(args), args)


if __name__ == "__main__":
    main()
