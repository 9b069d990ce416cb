#!/usr/bin/env python3
"""An Old Maid ring peer written from docs/protocols/oldmaid.md alone.

Plain Python 3.11 standard library: blocking sockets, one thread per
connection, a lock around the shared state, print() for logging.

    python verified_peer.py --nick NICK --table HOST:PORT [--host HOST]
                            [--seed N] [--no-verify] [--no-witness]
                            [--witness-after SECONDS] [--drop-your-turn P]
                            [--no-ok-to-your-turn P] [--no-ok-how silent|error|close]
                            [--late-your-turn P] [--garble-offer P] [--fake-check P]
                            [--no-offer-check] [--quiet]
    python verified_peer.py --selftest

Section numbers in the comments are those of docs/protocols/oldmaid.md.
"""

import argparse
import hashlib
import hmac
import json
import os
import queue
import random
import secrets
import socket
import sys
import threading
import time

# ---------------------------------------------------------------------------
# Constants (section 4, section 8)
# ---------------------------------------------------------------------------

VALUES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = ["spades", "clubs", "diamonds", "hearts"]
JOKER = ["joker", "maid"]
COLOUR = {"spades": "black", "clubs": "black", "diamonds": "red", "hearts": "red"}

PEER_TIMEOUT = 10.0      # any single reply, pick or dial (section 8)
GRACE = 0.2              # a seat silent this long is looked up in status (7.7 step 6)
IDLE_TIMEOUT = 120.0     # nothing heard from anyone this long: give up (section 8)
JOIN_TIMEOUT = 600.0     # waiting for the join reply (7.1)
LINGER = 0.2             # keep answering `out` after the end (7.8)
MAX_MESSAGE = 65536      # section 2
BAD_PICKS_LIMIT = 8      # 6.3
LATE_DELAY = 2.5         # --late-your-turn: past the table's 2 s draw clock (14.6)
SLICE = 0.05             # how often a wait on a neighbour looks at the table's notices


# ---------------------------------------------------------------------------
# Crypto helpers (14.5 and 14.6)
# ---------------------------------------------------------------------------

def hex32_sha256(text):
    """First 32 hex digits of SHA-256 of a UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def hex32_hmac(key_bytes, text):
    """First 32 hex digits of HMAC-SHA256(key, text as UTF-8)."""
    return hmac.new(key_bytes, text.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def game_key(seed):
    """14.5: SHA-256 of `oldmaid-proofs:<seed>` (all 64 hex digits)."""
    return hashlib.sha256(("oldmaid-proofs:%s" % seed).encode("utf-8")).hexdigest()


def player_secret(game_key_hex, nick):
    """14.5: HMAC-SHA256 keyed with the game key's 32 bytes of `secret:<nick>`, /32."""
    return hex32_hmac(bytes.fromhex(game_key_hex), "secret:" + nick)


def make_proof(secret, to_nick):
    """14.5: HMAC-SHA256(key = secret as ASCII, message = to's nick), /32."""
    return hex32_hmac(secret.encode("ascii"), to_nick)


def mac(secret, text):
    """14.6: mac(text), keyed with the secret's 32 hex digits as ASCII bytes."""
    return hex32_hmac(secret.encode("ascii"), text)


def card_hash(salt, card):
    """14.6: SHA-256 of `<salt>|<value>|<suit>`, /32, canonical spelling."""
    value, suit = canonical_card(card)
    return hex32_sha256("%s|%s|%s" % (salt, value, suit))


def offer_text(seq, frm, to, num_cards, hashes):
    return "offer|%d|%s|%s|%d|%s" % (seq, frm, to, num_cards, ",".join(hashes))


def ack_text(offer_mac):
    return "ack|" + offer_mac


def out_text(asker):
    return "out|" + asker


def pick_text(picker, offerer, seq, card_num):
    return "pick|%s|%s|%d|%d" % (picker, offerer, seq, card_num)


def your_turn_text(frm, to):
    return "your_turn|%s|%s" % (frm, to)


def witness_msg(to, offer, ack=None, pick=None, answer=None):
    """14.6 "Asking": what we have of an exchange; `offer` as sent or as it came."""
    msg = {"cmd": "witness", "to": to, "offer": offer_fields(offer)}
    if ack is not None:
        msg["ack"] = ack          # the offerer, once it has the receiver's ok
    if pick is not None:
        msg["pick"] = {"card_num": pick["card_num"], "mac": pick["mac"]}   # the receiver
    if answer is not None:
        msg["answer"] = {"result": answer["result"], "ack": answer.get("ack")}   # an `out`
    return msg


OFFER_FIELDS = ("from", "seq", "num_cards", "hashes", "mac")


def offer_fields(offer):
    """An offer as `witness`, `check_offer` and the `offer` move carry it (14.6)."""
    return {k: offer.get(k) for k in OFFER_FIELDS}


def check_offer_msg(offer):
    """14.6 "Checking an offer": the offer as it came, before we answer it ok."""
    return {"cmd": "check_offer", "offer": offer_fields(offer)}


def move_msg(seq, answer=None, pick=None, card=None, salt=None, offer=None):
    """14.6 "Moving": one move, the same as it was (or would be) made directly;
    `offer`: the offerer's offer, owed after its receiver's check failed."""
    msg = {"cmd": "move", "seq": seq}
    if offer is not None:
        msg["offer"] = offer_fields(offer)
    elif answer is not None:
        msg["answer"] = {"result": answer["result"], "ack": answer.get("ack")}
    elif pick is not None:
        msg["pick"] = {"card_num": pick["card_num"], "mac": pick["mac"]}
    else:
        msg["card"] = card
        msg["salt"] = salt
    return msg


# ---------------------------------------------------------------------------
# Cards (section 4)
# ---------------------------------------------------------------------------

def canonical_card(card):
    """Return [value, suit] in the canonical spelling, or raise ValueError."""
    if isinstance(card, dict):
        card = [card.get("value"), card.get("suit")]
    if not isinstance(card, (list, tuple)) or len(card) != 2:
        raise ValueError("not a card: %r" % (card,))
    value, suit = card
    if not isinstance(value, str) or not isinstance(suit, str):
        raise ValueError("not a card: %r" % (card,))
    if value.lower() == "joker" and suit.lower() == "maid":
        return ["joker", "maid"]
    v = value.upper()
    s = suit.lower()
    if v not in VALUES or s not in SUITS:
        raise ValueError("unknown card %r" % (card,))
    return [v, s]


def is_pair(a, b):
    if a == JOKER or b == JOKER:
        return False
    return a[0] == b[0] and COLOUR[a[1]] == COLOUR[b[1]] and a[1] != b[1]


def card_str(card):
    return "%s-%s" % (card[0], card[1])


# ---------------------------------------------------------------------------
# Framing (section 2): a buffer, objects found by counting braces
# ---------------------------------------------------------------------------

class Framer:
    """Reads whole JSON objects from a socket.

    next() returns ("msg", dict), ("bad", reason) or None at end of stream.
    """

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _take(self):
        buf = self.buf
        n = len(buf)
        i = 0
        while i < n and buf[i] in b" \t\r\n":
            i += 1
        if i == n:
            self.buf = b""
            return None
        if buf[i] != ord("{"):
            j = buf.find(b"\n", i)
            if j < 0:
                if n - i > MAX_MESSAGE:
                    self.buf = b""
                    return ("bad", "message exceeds the 65536-byte limit")
                self.buf = buf[i:]
                return None
            self.buf = buf[j + 1:]
            return ("bad", "not a JSON object")
        depth = 0
        in_str = False
        esc = False
        k = i
        while k < n:
            c = buf[k]
            if c == 10:  # a raw newline inside an object ends it (section 2)
                self.buf = buf[k + 1:]
                return ("bad", "incomplete JSON object before end of line")
            if in_str:
                if esc:
                    esc = False
                elif c == 92:  # backslash
                    esc = True
                elif c == 34:  # quote
                    in_str = False
            elif c == 34:
                in_str = True
            elif c == 123:
                depth += 1
            elif c == 125:
                depth -= 1
                if depth == 0:
                    raw = buf[i:k + 1]
                    self.buf = buf[k + 1:]
                    try:
                        obj = json.loads(raw.decode("utf-8"))
                    except (ValueError, UnicodeDecodeError) as e:
                        return ("bad", "invalid JSON: %s" % e)
                    if not isinstance(obj, dict):
                        return ("bad", "not a JSON object")
                    return ("msg", obj)
            k += 1
        if n - i > MAX_MESSAGE:
            self.buf = b""
            return ("bad", "message exceeds the 65536-byte limit")
        self.buf = buf[i:]
        return None

    def next(self, timeout=None):
        """Block until one item is ready. Raises socket.timeout on timeout."""
        while True:
            item = self._take()
            if item is not None:
                return item
            self.sock.settimeout(timeout)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                raise
            except OSError:
                return None
            if not data:
                return None
            self.buf += data


def encode(obj):
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode("utf-8")


class Link:
    """A connection whose replies are read by a thread into a queue.

    Used for the table connection and for the connections this peer dials.
    Requests arriving on the link (a `game_over` notice, a late `pick`) are
    given to on_request, or queued like replies if on_request is None.
    """

    def __init__(self, sock, name, on_request=None, on_activity=None):
        self.sock = sock
        self.name = name
        self.on_request = on_request
        self.on_activity = on_activity
        self.q = queue.Queue()
        self.send_lock = threading.Lock()
        self.closed = False
        self.got_reply = False
        self.last_pick = None  # (seq, card_num, mac) of the pick last served on it
        t = threading.Thread(target=self._reader, name="reader-" + name, daemon=True)
        t.start()

    def _reader(self):
        framer = Framer(self.sock)
        try:
            while True:
                item = framer.next(None)
                if item is None:
                    break
                if self.on_activity:
                    self.on_activity()
                kind, obj = item
                if kind == "msg" and "cmd" in obj and self.on_request is not None:
                    self.on_request(obj)
                else:
                    self.q.put(item)
        except Exception:
            pass
        self.closed = True
        self.q.put(None)

    def send(self, obj):
        data = encode(obj)
        with self.send_lock:
            self.sock.sendall(data)  # one write per message (section 2)

    def get(self, timeout):
        """Next item: ("msg", obj) / ("bad", text) / None when closed.
        Raises queue.Empty on timeout."""
        return self.q.get(timeout=timeout)

    def close(self):
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


def nodelay(sock):
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


def plain_host(h):
    if isinstance(h, str) and h.lower().startswith("::ffff:"):
        return h[7:]
    return h


def is_dotted_ipv4(h):
    try:
        socket.inet_aton(h)
        return h.count(".") == 3
    except (OSError, TypeError):
        return False


class Fatal(Exception):
    """Something this peer cannot recover from: (blame, reason words)."""

    def __init__(self, line, blame=None, reason=None):
        Exception.__init__(self, line)
        self.line = line
        self.blame = blame
        self.reason = reason


class GameEnded(Exception):
    pass


class Exchange:
    """One exchange of the offer phase as this peer knows it, in a witnessed game
    (14.6 "The table as witness"). Keyed by (offerer, receiver, seq).

    Every field is read and written under Peer.lock; Peer.xcond (a condition on
    that lock) is notified whenever one changes."""

    def __init__(self, offerer, receiver, seq, offer):
        self.offerer = offerer
        self.receiver = receiver
        self.seq = seq
        self.offer = offer            # from, seq, num_cards, hashes, mac
        self.via_table_only = False   # receiver: the offer reached us only in a notice
        # the offerer's side
        self.hand = None              # the hand as offered
        self.salts = None
        self.link = None              # the connection the offer went out on
        self.direct_ack = None        # an ack that came on that connection
        self.given = None             # (card_num, card, salt) once the card is given
        # both sides
        self.answer = None            # {"result": "ok"/"out", "ack": ...}
        self.pick = None              # {"card_num": n, "mac": ...}
        self.taken = False            # receiver: the card (or the pass) is ours
        self.asked = False            # we sent `witness` about it
        self.asked_with = ()          # the moves that request carried ("answer", "pick")
        self.offer_moved = None       # offerer: True/False once we sent the offer through
                                      # the table (an `offer` move or `witness`), 14.6
        self.witnessed = False        # the table took it: its moves go through the table
        self.step = 0                 # the highest notice step seen
        self.notice = None            # that notice
        self.done = False             # a notice said move "done"
        self.finished = False         # nothing more for us to do or wait for
        self.touched = time.monotonic()

    def offer_num(self):
        n = self.offer.get("num_cards") if isinstance(self.offer, dict) else None
        return n if isinstance(n, int) and not isinstance(n, bool) else 0


# ---------------------------------------------------------------------------
# The peer
# ---------------------------------------------------------------------------

class Peer:
    def __init__(self, nick, table_addr, host, seed, verify, quiet,
                 witness=True, witness_after=PEER_TIMEOUT,
                 drop_your_turn=0.0, no_ok_to_your_turn=0.0, late_your_turn=0.0,
                 no_ok_how="silent", garble_offer=0.0, fake_check=0.0, no_offer_check=False):
        self.nick = nick
        self.table_addr = table_addr
        self.host_opt = host
        self.rng = random.Random(seed)
        self.verify = verify
        self.quiet = quiet
        self.want_witness = verify and witness   # join with "witness": true (5.1)
        self.witness_after = witness_after       # ask the table after this long
        self.witnessed = False          # the join reply said "witness": true
        self.exchanges = {}             # (offerer, receiver, seq) -> Exchange
        self.notices = queue.Queue()    # `witnessed` notices, handled in order
        self.retired = []               # (seat, Link, Exchange): links left after a witness
        # 14.6 "Checking an offer": `offer` notices for exchanges of ours not offered
        # yet (seq -> the notice): that offer, when it comes, goes through the table
        self.pending_offers = {}
        # 14.6 "The draw turn" (witnessed games)
        self.draws_done = 0             # our draws the table accepted
        self.claimed_card = 0           # the highest card number we queued a draw for
        self.last_drawn = None          # the number of the card we drew last
        self.turns_in = 0               # draw turns that reached us (your_turn or notice)
        self.notices_from_me = set()    # card numbers of draw_turn notices with "from": us
        self.owed_late = 0              # turns taken from a notice whose your_turn may come late
        self.ignored_notice = None      # (draw, from) of a notice ignored as "drawing it already"
        self.stale_links = []           # links whose your_turn got no answer (never used again)
        # fault injection (testing only): seeded apart from the game's own choices
        self.drop_your_turn = drop_your_turn          # probability: do not send a your_turn
        self.no_ok_to_your_turn = no_ok_to_your_turn  # probability: draw without answering ok
        self.late_your_turn = late_your_turn          # probability: send a your_turn 2.5 s late
        self.no_ok_how = no_ok_how                    # instead of ok: silent, error or close
        self.garble_offer = garble_offer              # probability: a direct offer's mac garbled
        self.fake_check = fake_check                  # probability: check a made-up offer (2 players)
        self.no_offer_check = no_offer_check          # broken on purpose: never check_offer (14.6)
        self.fault_rng = random.Random("faults:%s" % seed if seed is not None else None)

        self.lock = threading.Lock()          # shared game state
        self.xcond = threading.Condition(self.lock)   # an Exchange changed
        self.table_lock = threading.RLock()   # one table request at a time, in order
        self.dial_lock = threading.Lock()
        self.print_lock = threading.Lock()

        self.hand = []
        self.phase = "draw"
        self.out = False                # the table acknowledged that we are out
        self.out_sent = False
        self.players = []               # nicks in seat order
        self.addresses = []             # (host, port) in seat order
        self.seat = None
        self.secret = None
        self.proofs = {}
        self.report = False
        self.known_out = set()          # seats known to be out
        self.links = {}                 # seat -> Link this peer dialled
        self.joined = threading.Event()
        self.game_over = threading.Event()
        self.game_over_msg = None
        self.lost = False
        self.fatal = None
        self.fatal_lock = threading.Lock()
        self.tasks = queue.Queue()
        self.last_activity = time.monotonic()
        self.table = None
        self.listener = None
        self.inbound = []

    # -- logging ----------------------------------------------------------

    def log(self, *args):
        if not self.quiet:
            line = " ".join(["[%s %.3f]" % (self.nick, time.monotonic() % 1000)]
                            + [str(a) for a in args])
            with self.print_lock:
                print(line, flush=True)

    def activity(self):
        self.last_activity = time.monotonic()

    def set_fatal(self, exc):
        with self.fatal_lock:
            if self.fatal is None:
                self.fatal = exc

    def ended(self):
        return self.game_over.is_set()

    # -- table ------------------------------------------------------------

    def on_table_request(self, obj):
        if obj.get("cmd") == "game_over":   # a notice: never answered (5.6)
            self.log("game_over notice:", json.dumps(obj))
            self.game_over_msg = obj
            self.game_over.set()
            with self.lock:
                self.xcond.notify_all()
        elif obj.get("cmd") == "witnessed":
            # 14.6: a notice, never answered; it may come while we wait for the
            # reply to a request, so the reader only queues it: the notice thread
            # makes the moves (a move is a request on this same connection)
            self.activity()
            self.notices.put(obj)
        elif obj.get("cmd") == "draw_turn":
            # 14.6 "The draw turn": a notice, never answered; it needs no table
            # request, so the reader thread handles it at once
            self.activity()
            self.on_draw_turn(obj)
        else:
            self.log("unexpected request from the table:", obj)

    # -- the draw turn (14.6 "The draw turn", witnessed games) -------------

    def next_card(self):
        """The number of the next card we are to draw (7.3: seat k draws cards
        k, k+N, k+2N, ...). Call with self.lock held."""
        return self.seat + 1 + len(self.players) * self.draws_done

    def on_draw_turn(self, notice):
        """The table hands on a draw turn that sat 2 s: to us (we draw now, unless
        we drew or are drawing that card), or from us (our your_turn went
        unanswered: the notice ends our wait)."""
        to = notice.get("to")
        draw = notice.get("draw")
        frm = notice.get("from")
        self.joined.wait(5.0)   # the join reply, read just before, is being handled
        self.log("draw_turn notice:", json.dumps(notice))
        if not self.witnessed:
            self.log("!! a draw_turn notice in a game that is not witnessed")
            return
        if not isinstance(draw, int) or isinstance(draw, bool):
            self.log("!! a draw_turn notice without a card number")
            return
        with self.lock:
            if frm == self.nick:
                self.notices_from_me.add(draw)
            if to != self.nick:
                if frm != self.nick:
                    self.log("!! a draw_turn notice that names neither to nor from as us")
                return
            self.turns_in += 1   # a draw turn reached us (it ends a wait of ours)
            nxt = self.next_card()
            if draw != nxt:
                if draw < nxt:
                    self.log("draw_turn ignored: we drew card %d already" % draw)
                else:
                    self.log("!! draw_turn ignored: card %d is not the next we draw (%d)"
                             % (draw, nxt))
                return
            if self.claimed_card >= draw:
                self.ignored_notice = (draw, frm)
                self.log("draw_turn ignored: we are drawing card %d already" % draw)
                return
            self.claimed_card = draw
            self.owed_late += 1   # the your_turn from `from` may still come
        self.log("draw_turn: the table handed us card %d (from %s): drawing" % (draw, frm))
        self.tasks.put(("draw", "notice", draw, frm))

    def draw_turn_moved(self, mark, card):
        """Why our wait for the answer to our your_turn is over, or None
        (14.6 "The sender"): the table's notice handed the turn on, or a draw
        turn reached us again (the turn went round), or an offer did."""
        with self.lock:
            if card is not None and card + 1 in self.notices_from_me:
                return "no answer before the table's notice"
            if self.turns_in > mark:
                return "no answer before the turn came round again"
            if self.phase == "offer":
                return "no answer before the draw phase ended (an offer reached us)"
        return None

    def wait_draw_turn_moved(self, seat, link, start, mark, card, why):
        """No ok to our your_turn (why: an error, a closed connection, no dial):
        do not give up; wait for the turn to move, at most our peer timeout
        from the send, then take it as handed on."""
        while True:
            if self.ended():
                raise GameEnded()
            moved = self.draw_turn_moved(mark, card)
            if moved is not None:
                return "%s; %s" % (why, moved.replace("no answer ", "", 1))
            if time.monotonic() - start >= PEER_TIMEOUT:
                return "%s; nothing moved within the peer timeout" % why
            time.sleep(SLICE)

    def send_late(self, link, nick, msg):
        if self.ended():
            return
        try:
            link.send(msg)
            self.log("fault: sent our late your_turn to %s" % nick)
        except OSError:
            pass

    def retire_draw_link(self, seat, link):
        """14.6: a connection whose your_turn got no answer may still carry that
        answer later: the next request to that player goes on a fresh one."""
        if link is None:
            return
        with self.dial_lock:
            if self.links.get(seat) is link:
                del self.links[seat]
            self.stale_links.append(link)

    def table_request(self, obj, timeout=PEER_TIMEOUT):
        with self.table_lock:
            try:
                self.table.send(obj)
            except OSError:
                raise Fatal("the table closed the connection")
            while True:
                try:
                    item = self.table.get(timeout)
                except queue.Empty:
                    raise Fatal("the table did not answer %s within %d s"
                                % (obj.get("cmd"), timeout))
                if item is None:
                    raise Fatal("the table closed the connection")
                kind, reply = item
                if kind != "msg" or "result" not in reply:
                    raise Fatal("the table sent garbage: %r" % (reply,))
                return reply

    def report_to_table(self, obj):
        """received / gave: sent as requests, each waiting for its reply."""
        reply = self.table_request(obj)
        if reply.get("result") != "ok":
            self.log("!! the table refused our %s: %s" % (obj.get("cmd"), reply))
        return reply

    def status(self):
        reply = self.table_request({"cmd": "status"})
        if reply.get("result") == "ok":
            outs = reply.get("out") or []
            with self.lock:
                for n in outs:
                    if n in self.players and n != self.nick:
                        self.known_out.add(self.players.index(n))
            if reply.get("game_over") or reply.get("aborted"):
                if not self.game_over.is_set():
                    self.game_over_msg = {
                        "cmd": "game_over", "loser": reply.get("loser"),
                        "out": reply.get("out"), "aborted": reply.get("aborted"),
                        "reason": reply.get("reason")}
                    self.game_over.set()
        return reply

    def discard_pair(self, pair, last):
        """5.3: discard one pair; `last` says whether it empties the hand for good."""
        reply = self.table_request({"cmd": "discard", "cards": pair,
                                    "last_cards": "true" if last else "false"})
        if reply.get("result") != "ok":
            if self.ended():
                raise GameEnded()
            raise Fatal("the table refused our discard of %s: %s"
                        % (pair, reply.get("message")))
        self.log("discarded", card_str(pair[0]), card_str(pair[1]),
                 "(last)" if last else "")
        if last:
            with self.lock:
                self.out = True
                self.out_sent = True
            self.log("out (by discarding our last pair)")

    def add_card_and_discard(self, card, deck_empty):
        """Put a card at a random place; discard the pair it makes (section 4).
        Call with the table lock held."""
        with self.lock:
            partner = None
            for c in self.hand:
                if is_pair(c, card):
                    partner = c
                    break
            if partner is None:
                pos = self.rng.randint(0, len(self.hand))
                self.hand.insert(pos, card)
                return
            self.hand.remove(partner)
            empty = len(self.hand) == 0
        self.discard_pair([partner, card], last=(empty and deck_empty))

    def go_out(self):
        """7.4/7.8: tell the table our hand is empty; wait for its ok."""
        with self.table_lock:
            with self.lock:
                if self.out:
                    return
                if self.hand:
                    return
            reply = self.table_request({"cmd": "out_of_cards"})
            if reply.get("result") != "ok":
                if self.ended():
                    return
                raise Fatal("the table refused our out_of_cards: %s" % reply.get("message"))
            with self.lock:
                self.out = True
                self.out_sent = True
            self.log("out (out_of_cards acknowledged)")

    # -- proofs and macs ---------------------------------------------------

    def my_mac(self, text):
        return mac(self.secret, text)

    def turn_fields(self, to_nick):
        """from and proof (14.5) for a your_turn or offer to to_nick."""
        fields = {"from": self.nick}
        if self.verify and self.secret:
            fields["proof"] = make_proof(self.secret, to_nick)
        return fields

    # -- dialling ---------------------------------------------------------

    def get_link(self, seat, fresh=False, stop=None):
        """The one connection this peer dialled to a seat (dial it if needed).
        Returns None when it cannot be dialled within the peer timeout, or as
        soon as stop() is true (a draw turn the table handed on meanwhile)."""
        with self.dial_lock:
            link = self.links.get(seat)
            if link is not None and not fresh and not link.closed:
                return link
            if link is not None:
                link.close()
                del self.links[seat]
            host, port = self.addresses[seat]
            deadline = time.monotonic() + PEER_TIMEOUT
            pause = 0.01
            attempts = 0
            while True:
                attempts += 1
                try:
                    s = socket.create_connection((host, port),
                                                 timeout=PEER_TIMEOUT if stop is None else 1.0)
                    s.settimeout(None)
                    nodelay(s)
                    break
                except OSError as e:
                    if (time.monotonic() + pause > deadline or self.ended()
                            or (stop is not None and stop())):
                        self.log("cannot dial %s at %s:%s: %s"
                                 % (self.players[seat], host, port, e))
                        return None
                    # section 8 "Dialling a seat": a seat the table lists as out is
                    # skipped at the first failure (and 13.1: others are retried)
                    if attempts == 1 or attempts % 10 == 0:
                        try:
                            listed = self.seat_listed_out(seat)
                        except Fatal:
                            listed = False
                        if listed:
                            self.log("cannot dial %s (%s), and the table lists it as out"
                                     % (self.players[seat], e))
                            return None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.2)
            if attempts > 1:
                self.log("dialled %s after %d attempts" % (self.players[seat], attempts))
            link = Link(s, self.players[seat],
                        on_request=None, on_activity=self.activity)
            self.links[seat] = link
            stale = sum(1 for old in self.stale_links if old.name == link.name)
            if stale:
                self.log("dialled %s afresh (%d older connection%s left unused since a "
                         "your_turn on it got no ok)" % (link.name, stale, "s" if stale > 1 else ""))
            return link

    def dial_left_at_start(self):
        try:
            self.get_link((self.seat + 1) % len(self.players))
        except Exception as e:  # noqa: BLE001 - logged, the worker dials again
            self.log("dial of the left neighbour failed:", e)

    # -- finding the next player who is in (7.7) ---------------------------

    def seat_listed_out(self, seat):
        """Ask the table; True if it lists the seat as out."""
        reply = self.status()
        return self.players[seat] in (reply.get("out") or [])

    def check_out_answer(self, seat, reply, exch=None):
        """The first time a seat says `out`, check it with the table (7.7, 14).
        Returns "witnessed" when the table took the exchange to witness (14.6:
        an offerer whose receiver answered out though the table counts it in)."""
        st = self.status()
        nick = self.players[seat]
        if nick in (st.get("out") or []):
            return None
        if st.get("state") == "playing" and nick in (st.get("in") or []):
            if exch is not None and self.witnessed and not exch.asked:
                answer = {"result": "out", "ack": reply.get("ack")}
                with self.lock:
                    exch.answer = None     # if the table takes it, its word decides
                    exch.finished = False
                if self.ask_witness(exch, {"answer": answer}):
                    return "witnessed"
                with self.lock:
                    exch.answer = answer
                    exch.finished = True
            evidence = {"what": "%s answered out while the table counts it in" % nick}
            if reply.get("ack"):
                evidence["ack"] = reply["ack"]
            self.accuse("false_out", nick, evidence)
            raise Fatal("%s answered out while the table counts it in" % nick,
                        blame="-")

    def ask(self, seat, build, ctx=None):
        """Send a turn (your_turn / offer) to a seat and wait for its answer.

        ctx, for an offer in a witnessed game: (seq, hand, salts, hashes), so that
        the exchange can be asked about and finished through the table (14.6).
        Returns (answer, reply, link, exch): answer "ok" or "out", or "skip" when
        the seat is gone and the table lists it as out."""
        nick = self.players[seat]
        msg = build(nick)
        exch = None
        through_table = False
        if ctx is not None and self.witnessed:
            seq, hand, salts, hashes = ctx
            exch = Exchange(self.nick, nick, seq, {
                "from": self.nick, "seq": seq, "num_cards": len(hand),
                "hashes": list(hashes), "mac": msg.get("mac")})
            exch.hand = list(hand)
            exch.salts = list(salts)
            with self.lock:
                self.exchanges[(self.nick, nick, seq)] = exch
                pending = self.pending_offers.get(seq)
                if pending is not None and pending.get("receiver") == nick:
                    # 14.6 "A bad mac": an `offer` notice came for this exchange before
                    # we offered it: the offer goes through the table, not directly
                    del self.pending_offers[seq]
                    step = pending.get("step")
                    exch.step = step if isinstance(step, int) else 0
                    exch.notice = pending
                    through_table = True
            if pending is not None and not through_table:
                self.log("an offer notice for our exchange %s names %s as receiver; we offer "
                         "it to %s: directly" % (seq, pending.get("receiver"), nick))
        if through_table:
            self.log("offering exchange %s to %s through the table (its offer notice came "
                     "before we offered it)" % (exch.seq, nick))
            if self.offer_through_table(exch):
                answer, reply, link = self.wait_witnessed_answer(seat, exch, None)
                return (answer, reply, link, exch)
            self.log("the table took neither our offer move nor our witness request for "
                     "exchange %s: offering it directly" % exch.seq)
        # 14.6 "The draw turn": in a witnessed game a your_turn that gets no ok
        # (no answer, an error, a closed connection, no dial) is not given up on
        soft = msg.get("cmd") == "your_turn" and self.witnessed
        dropped = False
        if soft:
            with self.lock:
                mark = self.turns_in
                card = self.last_drawn
            soft_start = time.monotonic()
            dropped = self.drop_your_turn > 0 and self.fault_rng.random() < self.drop_your_turn
            if not dropped and self.late_your_turn > 0:
                dropped = "late" if self.fault_rng.random() < self.late_your_turn else False
        resent = False
        if soft:
            # dial while the turn has not moved: we must be free to draw within 2 s
            # of a turn that reaches us meanwhile
            link = self.get_link(seat, stop=lambda: self.draw_turn_moved(mark, card) is not None)
        else:
            link = self.get_link(seat)
        while True:
            if link is None:
                if self.seat_listed_out(seat):
                    self.log("skip %s: cannot be reached, listed out" % nick)
                    with self.lock:
                        self.known_out.add(seat)
                    return ("skip", None, None, None)
                if self.ended():
                    raise GameEnded()
                if soft:
                    why = self.wait_draw_turn_moved(seat, None, soft_start, mark, card,
                                                    "could not dial it")
                    return ("handed_on", why, None, None)
                raise Fatal("cannot reach %s at %s:%s" % ((nick,) + tuple(self.addresses[seat])),
                            blame=nick, reason="could not be reached")
            if exch is not None:
                with self.lock:
                    exch.link = link
            if dropped == "late":
                # --late-your-turn (testing): the your_turn comes after the table's
                # notice handed the turn on (the receiver's draw for it is refused)
                self.log("fault: delaying our your_turn to %s by %g s" % (nick, LATE_DELAY))
                timer = threading.Timer(LATE_DELAY, self.send_late, args=(link, nick, msg))
                timer.daemon = True
                timer.start()
            elif dropped:
                # --drop-your-turn (testing): as if the message were lost on the way
                self.log("fault: dropped our your_turn to %s (not sent, as if lost)" % nick)
            elif (exch is not None and self.garble_offer > 0
                  and self.fault_rng.random() < self.garble_offer):
                # --garble-offer (testing): the offer's mac garbled on the way; the
                # receiver's check fails and the offer goes through the table (14.6)
                bad = dict(msg)
                m = msg.get("mac") or "0" * 32
                bad["mac"] = m[:-1] + ("1" if m[-1] == "0" else "0")
                self.log("fault: garbled the mac of our offer of exchange %s to %s"
                         % (exch.seq, nick))
                try:
                    link.send(bad)
                except OSError:
                    link.closed = True
            else:
                try:
                    link.send(msg)
                except OSError:
                    link.closed = True
            start = time.monotonic()
            next_status = start + GRACE
            while True:
                if exch is not None and exch.witnessed:
                    answer, reply, link = self.wait_witnessed_answer(seat, exch, link)
                    return (answer, reply, link, exch)
                wait = next_status - time.monotonic()
                if soft:
                    wait = min(wait, SLICE)
                if exch is not None and not exch.asked:
                    wait = min(wait, start + self.witness_after - time.monotonic())
                try:
                    item = link.get(max(wait, 0.0))
                except queue.Empty:
                    if self.ended():
                        raise GameEnded()
                    if soft:
                        # only with nothing left to read: an ok already on its way
                        # (2 players: it races the turn coming straight back) counts
                        moved = self.draw_turn_moved(mark, card)
                        if moved is not None:
                            self.retire_draw_link(seat, link)
                            return ("handed_on", moved, link, None)
                    now = time.monotonic()
                    if (exch is not None and not exch.asked
                            and now - start >= self.witness_after):
                        # 14.6 "Asking": waiting for the answer to our offer
                        self.ask_witness(exch, {})
                        continue
                    if now < next_status:
                        continue
                    next_status = now + GRACE
                    # 7.7 step 6: ask the table about a silent seat
                    if self.seat_listed_out(seat):
                        self.log("skip %s: silent, listed out" % nick)
                        with self.lock:
                            self.known_out.add(seat)
                        with self.dial_lock:
                            if self.links.get(seat) is link:
                                del self.links[seat]
                        link.close()
                        return ("skip", None, None, None)
                    if soft and time.monotonic() - soft_start >= PEER_TIMEOUT:
                        self.retire_draw_link(seat, link)
                        return ("handed_on", "no answer within the peer timeout", link, None)
                    if (time.monotonic() - start > PEER_TIMEOUT
                            and (exch is None or exch.asked)):
                        raise Fatal("%s did not answer %s within %d s"
                                    % (nick, msg["cmd"], PEER_TIMEOUT),
                                    blame=nick, reason="did not answer %s within %d s"
                                    % (msg["cmd"], PEER_TIMEOUT))
                    continue
                if item is None:
                    if exch is not None and exch.witnessed:
                        continue   # the rest of the exchange goes through the table
                    if soft:
                        # no redial: the table hands the turn on (a second your_turn
                        # could reach a receiver that got the first)
                        self.retire_draw_link(seat, link)
                        why = self.wait_draw_turn_moved(seat, link, soft_start, mark, card,
                                                        "it closed the connection")
                        return ("handed_on", why, link, None)
                    # closed before answering
                    if not link.got_reply and not resent:
                        # section 8: a link never used may have been evicted; dial again once
                        resent = True
                        self.log("link to %s closed before its first reply: redial" % nick)
                        link = self.get_link(seat, fresh=True)
                        break
                    if self.seat_listed_out(seat):
                        self.log("skip %s: closed, listed out" % nick)
                        with self.lock:
                            self.known_out.add(seat)
                        return ("skip", None, None, None)
                    if self.ended():
                        raise GameEnded()
                    time.sleep(0.5)  # 7.10: let the table say who died
                    if self.ended():
                        raise GameEnded()
                    raise Fatal("%s closed its connection instead of answering %s"
                                % (nick, msg["cmd"]), blame=nick,
                                reason="closed its connection instead of answering %s"
                                % msg["cmd"])
                kind, obj = item
                if kind == "wake":
                    continue
                if kind != "msg":
                    raise Fatal("%s sent garbage: %s" % (nick, obj), blame=nick,
                                reason="sent garbage instead of a reply (%s)" % obj)
                if "cmd" in obj:
                    self.late_request(link, seat, obj)
                    continue
                link.got_reply = True
                result = obj.get("result")
                if result in ("ok", "out"):
                    if exch is not None:
                        with self.lock:
                            if exch.witnessed:
                                # a late reply: the table has the exchange now
                                exch.direct_ack = exch.direct_ack or obj.get("ack")
                                continue
                            exch.answer = {"result": result, "ack": obj.get("ack")}
                            if result == "out":
                                exch.finished = True
                    return (result, obj, link, exch)
                if soft and result == "error":
                    self.retire_draw_link(seat, link)
                    why = self.wait_draw_turn_moved(seat, link, soft_start, mark, card,
                                                    "error: %s" % obj.get("message"))
                    return ("handed_on", why, link, None)
                if result == "error" and exch is not None:
                    # 14.6 "A bad mac": an offer answered error in a witnessed game
                    # (its receiver's check failed) goes through the table; not once
                    # the game is over (`the game is over` is a check's refusal too)
                    if self.ended():
                        raise GameEnded()
                    self.log("our offer of exchange %s was answered error by %s (%s): "
                             "offering it through the table"
                             % (exch.seq, nick, obj.get("message")))
                    if self.offer_through_table(exch):
                        continue   # the loop's top: the rest goes through the table
                    if self.ended():
                        raise GameEnded()
                raise Fatal("%s answered %s with %s" % (nick, msg["cmd"], json.dumps(obj)),
                            blame=nick, reason="answered %s with %s"
                            % (msg["cmd"], obj.get("message", result)))

    def late_request(self, link, seat, obj):
        """A request on a connection we dialled, where a reply was due:
        a second pick (14.6 "The answers")."""
        nick = self.players[seat]
        if obj.get("cmd") != "pick":
            link.send({"result": "error", "message": "%s is not a request for the offerer's "
                       "connection at this point" % obj.get("cmd")})
            return
        last = link.last_pick
        if last is not None and obj.get("card_num") == last[1] and obj.get("mac") == last[2]:
            link.send({"result": "error", "message": "a copy of a pick already answered: ignored"})
            return
        link.send({"result": "error", "message": "pick without an accepted offer"})
        if last is None:
            return
        evidence = {"what": "%s picked twice from one offer of %s's" % (nick, self.nick),
                    "card_num": obj.get("card_num")}
        if self.report:
            evidence["seq"] = last[0]
            evidence["picks"] = [[last[1], last[2]], [obj.get("card_num"), obj.get("mac")]]
        self.accuse("second_pick", nick, evidence)
        self.set_fatal(Fatal("%s picked twice from one offer" % nick, blame="-"))

    def accuse(self, rule, accused, evidence):
        msg = {"cmd": "accuse", "nick": self.nick, "accused": accused,
               "rule": rule, "evidence": evidence}
        try:
            reply = self.table_request(msg)
            self.log("accused %s (%s): %s" % (accused, rule, reply))
            return reply
        except Fatal as e:
            self.log("accusation failed:", e.line)
            return None

    def seats_left_of_me(self):
        n = len(self.players)
        return [(self.seat + i) % n for i in range(1, n)]

    def hand_on(self, kind, build, on_ok, ctx=None):
        """Ask seat after seat, going left, until one answers ok (7.7).
        on_ok(seat, reply, link, exch) is called for it. Returns False when no
        one else is in."""
        for seat in self.seats_left_of_me():
            if self.ended():
                raise GameEnded()
            with self.lock:
                if seat in self.known_out:
                    continue
            answer, reply, link, exch = self.ask(seat, build, ctx)
            if answer == "skip":
                continue
            if answer == "handed_on":
                # 14.6 "The sender": our turn is over; the turn is the receiver's,
                # handed on by the table if need be
                self.log("handed_on: our your_turn to %s got no ok (%s)"
                         % (self.players[seat], reply))
                return True
            if answer == "out":
                self.log("%s is out%s" % (self.players[seat],
                                          " (through the table)" if reply.get("via_table") else ""))
                with self.lock:
                    first = seat not in self.known_out
                    self.known_out.add(seat)
                # an out the table witnessed was judged by the table itself
                if not first or reply.get("via_table"):
                    continue
                if self.check_out_answer(seat, reply, exch) != "witnessed":
                    continue
                answer, reply, link = self.wait_witnessed_answer(seat, exch, link)
                if answer == "out":
                    continue
                with self.lock:
                    self.known_out.discard(seat)
            on_ok(seat, reply, link, exch)
            return True
        return False

    # -- the turn worker ---------------------------------------------------

    def worker(self):
        while True:
            task = self.tasks.get()
            try:
                if self.ended():
                    continue
                if task[0] == "draw":
                    self.do_draw(*task[1:])
                elif task[0] == "hold":
                    self.do_hold(task[1])
            except GameEnded:
                pass
            except Fatal as e:
                self.set_fatal(e)
            except Exception as e:  # noqa: BLE001
                self.set_fatal(Fatal("internal error: %r" % (e,)))

    def do_draw(self, origin="start", arg=None, frm=None):
        """Draw, discard, hand the turn on (7.3). origin: "start" (player1),
        "your_turn" (arg: the claim it replaced, see on_your_turn) or "notice"
        (arg: the card number a draw_turn notice handed us, from `frm`)."""
        with self.lock:
            number = self.next_card()
            if origin == "notice" and arg != number:
                self.log("draw_turn for card %s: drawn already, nothing to do" % arg)
                return
        with self.table_lock:
            reply = self.table_request({"cmd": "draw"})
            result = reply.get("result")
            if result in ("ok", "last_card"):
                with self.lock:
                    self.draws_done += 1
                    self.last_drawn = number
                    self.claimed_card = max(self.claimed_card, number)
                card = canonical_card(reply.get("card"))
                last = result == "last_card"
                self.log("drew", card_str(card), "(card %d)" % number,
                         "(last card)" if last else "",
                         "(draw turn from the table's notice)" if origin == "notice" else "")
                if last:
                    with self.lock:
                        self.phase = "offer"
                self.add_card_and_discard(card, deck_empty=last)
            elif str(reply.get("message", "")).startswith("the deck is empty"):
                # 7.4: the offer phase has begun; the turn is not ours
                with self.lock:
                    self.phase = "offer"
                self.go_out()
                return
            else:
                if self.ended():
                    return
                message = str(reply.get("message", ""))
                if (origin == "your_turn" and self.witnessed
                        and message.startswith("it is ")
                        and ("turn to draw, not %s's" % self.nick) in message):
                    with self.lock:
                        late = self.owed_late > 0
                        if late:
                            self.owed_late -= 1
                            if self.claimed_card == number and arg is not None:
                                self.claimed_card = arg   # the claim was the late turn's
                            pending = self.ignored_notice
                            retake = (pending is not None and pending[0] == self.next_card()
                                      and self.claimed_card < pending[0])
                            if retake:
                                self.claimed_card = pending[0]
                                self.owed_late += 1
                    if late:
                        # 14.6 "The receiver of the notice": the refusal is the late
                        # your_turn's (the table handed us that turn already): drop it
                        self.log("late_your_turn: our draw for it was refused (%s): dropped"
                                 % message)
                        if retake:
                            self.log("draw_turn: taking card %d now (from %s)" % pending)
                            self.tasks.put(("draw", "notice", pending[0], pending[1]))
                        return
                raise Fatal("the table refused our draw: %s" % reply.get("message"))
        if result == "last_card":
            # 7.3 step 5: we hold the turn, exchange 1 (14.6)
            self.do_hold(1)
            return
        # 7.3 step 3: hand the draw turn on
        def build(to):
            msg = {"cmd": "your_turn"}
            msg.update(self.turn_fields(to))
            if self.report:
                msg["mac"] = self.my_mac(your_turn_text(self.nick, to))
            return msg

        def on_ok(seat, reply, link, exch):
            self.log("your_turn handed to", self.players[seat])

        if not self.hand_on("your_turn", build, on_ok):
            raise Fatal("no one else is in during the draw phase")

    def do_hold(self, seq):
        """7.5: we hold the turn in the offer phase; `seq` is the exchange we offer."""
        with self.lock:
            self.phase = "offer"
            empty = not self.hand
            out = self.out
        if empty and not out:
            self.go_out()
        with self.lock:
            hand = list(self.hand)
        if hand:
            salts = [secrets.token_hex(16) for _ in hand]
            hashes = [card_hash(s, c) for s, c in zip(salts, hand)]
        else:
            salts, hashes = [], []
        num = len(hand)

        def build(to):
            msg = {"cmd": "offer", "num_cards": num, "stream": True}
            msg.update(self.turn_fields(to))
            if self.report:
                msg["seq"] = seq
                msg["hashes"] = hashes
                msg["mac"] = self.my_mac(offer_text(seq, self.nick, to, num, hashes))
            return msg

        def on_ok(seat, reply, link, exch):
            to = self.players[seat]
            offer_mac = self.my_mac(offer_text(seq, self.nick, to, num, hashes)) if self.report else None
            ack = reply.get("ack")
            if num == 0:
                self.log("passed the turn to %s (exchange %s)%s"
                         % (to, seq, " through the table" if reply.get("via_table") else ""))
                if self.report:
                    self.report_to_table({"cmd": "gave", "to": to, "seq": seq,
                                          "mac": offer_mac, "ack": ack, "salts": []})
                if exch is not None:
                    with self.lock:
                        exch.finished = True
                        self.xcond.notify_all()
                return
            self.serve_pick(seat, link, seq, hand, salts, offer_mac, ack, exch)

        ctx = (seq, hand, salts, hashes) if self.witnessed else None
        self.maybe_fake_check(seq, hand)
        if not self.hand_on("offer", build, on_ok, ctx):
            # 7.5 step 4: no one else is in: we hold the Old Maid
            with self.lock:
                self.lost = True
            self.log("no one else is in: we hold the Old Maid", [card_str(c) for c in hand])

    def maybe_fake_check(self, seq, hand):
        """--fake-check (testing, witnessed 2-player games): before we offer exchange
        `seq`, check with the table a made-up offer (a bad mac) of exchange seq + 1
        from the other player, which it has not offered yet (it will, once it takes
        ours). The table witnesses that exchange from its start; the other player
        must then offer it through the table (14.6 "A bad mac"). Only while we keep
        cards after the pick (so that the other player must offer it to us)."""
        if (not self.witnessed or self.fake_check <= 0 or self.no_offer_check
                or len(self.players) != 2
                or not isinstance(seq, int) or len(hand) < 2
                or self.fault_rng.random() >= self.fake_check):
            return
        other = self.players[1 - self.seat]
        fake = {"from": other, "seq": seq + 1, "num_cards": 0, "hashes": [], "mac": "0" * 32}
        reply = self.table_request(check_offer_msg(fake))
        self.log("fault: made-up check of exchange %d from %s (not offered yet): %s"
                 % (seq + 1, other, json.dumps(reply)))

    def serve_pick(self, seat, link, seq, hand, salts, offer_mac, ack, exch=None):
        """6.2/6.3: wait for the pick after an accepted offer and answer it.
        In a witnessed game, past --witness-after ask the table (14.6)."""
        to = self.players[seat]
        num = len(hand)
        bad = 0
        start = time.monotonic()
        deadline = start + PEER_TIMEOUT
        while True:
            if exch is not None and exch.witnessed:
                self.wait_witnessed_card(seat, exch, link)
                return
            remaining = deadline - time.monotonic()
            wait = min(remaining, 1.0)
            if exch is not None and not exch.asked:
                wait = min(wait, start + self.witness_after - time.monotonic())
            if remaining <= 0 and (exch is None or exch.asked):
                raise Fatal("%s did not pick within %d s" % (to, PEER_TIMEOUT),
                            blame=to, reason="did not pick within %d s of accepting an offer"
                            % PEER_TIMEOUT)
            try:
                item = link.get(max(wait, 0.0))
            except queue.Empty:
                if self.ended():
                    raise GameEnded()
                if (exch is not None and not exch.asked
                        and time.monotonic() - start >= self.witness_after):
                    # 14.6 "Asking": waiting for a pick after the receiver's ok
                    self.ask_witness(exch, {"ack": ack})
                continue
            if item is None:
                if exch is not None and exch.witnessed:
                    continue
                if self.ended():
                    raise GameEnded()
                time.sleep(0.5)
                if self.ended():
                    raise GameEnded()
                raise Fatal("%s closed its connection before picking" % to, blame=to,
                            reason="closed its connection before picking")
            kind, obj = item
            if kind == "wake":
                continue
            if exch is not None and exch.witnessed:
                continue   # a late message on the old connection: ignored (14.6)
            if kind != "msg" or obj.get("cmd") != "pick":
                link.send({"result": "error", "message": "expected a pick"})
                bad += 1
            else:
                n = obj.get("card_num")
                if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= num:
                    if n == num:
                        n = num - 1   # 13.3: num_cards itself is the last card
                    if self.give_card(to, link, seq, hand, salts, offer_mac, ack, n, obj, exch):
                        return
                    continue   # the table took the exchange meanwhile
                link.send({"result": "error",
                           "message": "card_num %r is not between 0 and %d" % (n, num - 1)})
                bad += 1
            if bad >= BAD_PICKS_LIMIT:
                self.accuse("bad_picks", to, {"what": "%s picked outside the offer %d times"
                                              % (to, bad)})
                raise Fatal("%s picked outside the offer %d times" % (to, bad), blame="-")

    def give_card(self, to, link, seq, hand, salts, offer_mac, ack, n, pick, exch,
                  via_table=False):
        """Answer a pick: directly on `link`, or with a `move` through the table
        (14.6). Either way then report `gave` before anything else reaches the
        table (and go out if it was our last card). Returns False when the pick
        came directly but the table witnesses the exchange now: the card goes
        through the table instead. A witnessed exchange whose card was given
        already gets the same card and salt again (14.6 "Moving")."""
        with self.table_lock:
            with self.lock:
                again = exch is not None and exch.given is not None
                if not again:
                    if exch is not None and exch.witnessed and not via_table:
                        return False
                    card = self.hand.pop(n)
                    empty = not self.hand
                    if card != hand[n]:
                        raise Fatal("internal error: the hand changed during an offer")
                    salt = salts[n] if self.report else None
                    if exch is not None:
                        exch.given = (n, card, salt)
                        exch.finished = True
                        self.xcond.notify_all()
                else:
                    n, card, salt = exch.given
            if via_table:
                self.send_move(move_msg(seq, card=card, salt=salt))
            elif not again:
                answer = {"result": "ok", "card": card}
                if self.report:
                    answer["salt"] = salt
                link.send(answer)
                link.last_pick = (seq, pick.get("card_num"), pick.get("mac"))
            if again:
                self.log("gave %s again through the table (exchange %s)" % (card_str(card), seq))
                return True
            self.log("%s picked %s (position %d of %d, exchange %s)%s"
                     % (to, card_str(card), n, len(hand), seq,
                        " through the table" if via_table else ""))
            if self.report:
                self.report_to_table({"cmd": "gave", "to": to, "seq": seq,
                                      "mac": offer_mac, "ack": ack, "salts": salts})
            if empty:
                self.go_out()   # 7.5 step 2: our last card was picked
        return True

    # -- the table as witness (14.6) ------------------------------------

    def ask_witness(self, exch, extra):
        """14.6 "Asking": send the table what we have of the exchange. Returns
        True when the table took it (its moves go through the table from now)."""
        other = exch.receiver if exch.offerer == self.nick else exch.offerer
        req = witness_msg(other, exch.offer, **extra)
        with self.lock:
            exch.asked = True   # asked once: after a refusal we wait on without it
            if "pick" in extra:
                exch.asked_with = ("answer", "pick")   # a pick means our ok too
        reply = self.table_request(req)
        if reply.get("result") == "ok":
            self.log("witness: the table took exchange %s with %s (%s)"
                     % (exch.seq, other, ", ".join(["offer"] + sorted(extra)) ))
            with self.lock:
                exch.witnessed = True
                exch.touched = time.monotonic()
                self.xcond.notify_all()
            return True
        with self.lock:
            exch.asked_with = ()
        if self.ended():
            raise GameEnded()
        self.log("witness refused for exchange %s with %s: %s"
                 % (exch.seq, other, reply.get("message")))
        return False

    def offer_through_table(self, exch):
        """14.6 "Checking an offer", the offerer's side: our offer of `exch` goes
        through the table: the `offer` move when the table's notice says we owe it,
        else (or if the move is refused) a `witness` request with the offer alone,
        which "does the same". Done once an exchange, whichever thread comes first
        (the direct `error` and the notice race); True when the table took it."""
        with self.table_lock:
            with self.lock:
                if exch.offer_moved is not None:
                    return exch.offer_moved
                notice = exch.notice or {}
                owed = notice.get("move") == "offer" and notice.get("owes") == self.nick
            ok = False
            if owed:
                reply = self.send_move(move_msg(exch.seq, offer=exch.offer), exch, quiet=True)
                ok = reply.get("result") == "ok"
                if ok:
                    self.log("offered exchange %s to %s through the table (offer move)"
                             % (exch.seq, exch.receiver))
                else:
                    self.log("the table refused our offer move of exchange %s (%s): asking "
                             "it with witness instead" % (exch.seq, reply.get("message")))
            if not ok:
                # a `witness` request with its offer does the same (14.6); also after
                # an earlier request of ours about it (an error answer is new news)
                ok = self.ask_witness(exch, {})
                if ok:
                    self.log("offered exchange %s to %s through the table (witness)"
                             % (exch.seq, exch.receiver))
            with self.lock:
                exch.offer_moved = ok
                exch.asked = True
                if ok:
                    exch.witnessed = True
                    exch.touched = time.monotonic()
                self.xcond.notify_all()
            if not ok:
                self.log("!! the table would not take our offer of exchange %s through it"
                         % exch.seq)
            return ok

    def check_offer(self, exch, offer):
        """14.6 "Checking an offer", the receiver's side: before we answer an offer
        ok (a pass too), the table checks that it carries its offerer's mac of an
        offer to us. Returns None (answer and pick as ever) or the table's refusal:
        then the offer is refused, no `received` is sent, and it is forgotten (its
        offerer owes it through the table; a notice brings it if so)."""
        reply = self.table_request(check_offer_msg(offer))
        if reply.get("result") == "ok":
            self.log("check_offer: exchange %s of %s passed" % (offer.get("seq"), offer.get("from")))
            return None
        why = str(reply.get("message") or "the table did not pass the offer")
        key = (exch.offerer, exch.receiver, exch.seq)
        with self.lock:
            if exch.witnessed or exch.answer is not None:
                # the table's notice about this exchange came first: keep the record
                # (the offer the table brings is the one we take), forget this copy
                exch.via_table_only = True
                kept = True
            else:
                if self.exchanges.get(key) is exch:
                    del self.exchanges[key]
                kept = False
        self.log("offer_refused: exchange %s of %s: %s (answered error, not taken%s)"
                 % (offer.get("seq"), offer.get("from"), why,
                    "; the table witnesses it" if kept else ""))
        return why

    def send_move(self, move, exch=None, quiet=False):
        """14.6 "Moving": a move on the table connection, in its place among our
        reports (the caller holds table_lock when order matters).

        A move the notice says we owe is made even when our own `witness`
        request carried it already (our pick, and with it our ok): the notice
        may have been sent before the table took that request (notices and
        replies overtake one another), and the table then refuses the move
        again, which changes nothing. Any other refusal is a warning."""
        reply = self.table_request(move)
        if reply.get("result") != "ok" and not quiet:
            if self.ended():
                raise GameEnded()
            kind = [k for k in ("offer", "answer", "pick", "card") if k in move]
            if exch is not None and kind and kind[0] in exch.asked_with:
                self.log("the table refused our %s move of exchange %s, which our own witness "
                         "request made already: %s" % (kind[0], move.get("seq"),
                                                       reply.get("message")))
            else:
                self.log("!! the table refused our move %s: %s" % (json.dumps(move), reply))
        return reply

    def wait_exch(self, exch, ready, what):
        """Wait (not holding table_lock) until ready() is true of a witnessed
        exchange. The table names whoever owes a move after 2 s; if nothing
        at all comes for our peer timeout, give up naming no one."""
        with self.lock:
            while not ready():
                if self.game_over.is_set():
                    raise GameEnded()
                if self.fatal is not None:
                    raise GameEnded()
                if time.monotonic() - exch.touched > PEER_TIMEOUT:
                    raise Fatal("the table witnesses exchange %s of %s to %s and nothing "
                                "came for %d s (waiting for %s)"
                                % (exch.seq, exch.offerer, exch.receiver, PEER_TIMEOUT, what))
                self.xcond.wait(0.5)

    def retire_link(self, seat, link, exch):
        """14.6: the rest of a witnessed exchange never goes over the direct
        connection: dial afresh for the next exchange, ignore what comes late
        on this one (and close older such links, whose exchanges are over)."""
        if link is None:
            return
        with self.dial_lock:
            if getattr(link, "retired", False):
                return
            link.retired = True
            if self.links.get(seat) is link:
                del self.links[seat]
            keep = []
            for entry in self.retired:
                if entry[0] == seat and entry[2].finished:
                    entry[1].close()
                else:
                    keep.append(entry)
            keep.append((seat, link, exch))
            self.retired = keep

    def wait_witnessed_answer(self, seat, exch, link):
        """The offerer: the receiver's answer, through the table."""
        self.retire_link(seat, link, exch)
        self.wait_exch(exch, lambda: exch.answer is not None or exch.done, "an answer")
        with self.lock:
            answer = exch.answer
        if answer is None:
            # a `done` notice that does not say which answer (a pass): out is
            # final and the table counts it (7.7), so its status tells
            listed = self.seat_listed_out(seat)
            answer = {"result": "out" if listed else "ok",
                      "ack": (exch.notice or {}).get("ack")}
            with self.lock:
                exch.answer = answer
        reply = {"result": answer.get("result"), "ack": answer.get("ack") or exch.direct_ack,
                 "via_table": True}
        if reply["result"] == "out":
            with self.lock:
                exch.finished = True
            return ("out", reply, None)
        return ("ok", reply, None)

    def wait_witnessed_card(self, seat, exch, link):
        """The offerer: the pick comes through the table, and the notice thread
        gives the card with a move; wait for it."""
        self.retire_link(seat, link, exch)
        self.wait_exch(exch, lambda: exch.given is not None or exch.finished, "a pick")

    def notice_loop(self):
        while True:
            notice = self.notices.get()
            try:
                self.on_witnessed(notice)
            except GameEnded:
                pass
            except Fatal as e:
                self.set_fatal(e)
            except Exception as e:  # noqa: BLE001
                self.set_fatal(Fatal("internal error: %r" % (e,)))

    def on_witnessed(self, notice):
        """A `witnessed` notice (14.6): keep the highest step of each exchange,
        make the move we owe, take a card the table brings."""
        seq = notice.get("seq")
        offerer = notice.get("offerer")
        receiver = notice.get("receiver")
        owes = notice.get("owes")
        move = notice.get("move")
        self.log("notice:", json.dumps({k: v for k, v in notice.items() if k != "offer"}))
        if not self.witnessed:
            self.log("!! a witnessed notice in a game that is not witnessed")
            return
        if self.nick not in (offerer, receiver) or not isinstance(seq, int):
            self.log("!! a witnessed notice about an exchange that is not ours")
            return
        key = (offerer, receiver, seq)
        with self.lock:
            exch = self.exchanges.get(key)
            if exch is None and offerer == self.nick:
                if owes == self.nick and move == "offer":
                    # 14.6 "A bad mac": a check of an exchange of ours that we have
                    # not offered yet: when we come to offer it, it goes through the
                    # table (ask() finds it here)
                    prev = self.pending_offers.get(seq)
                    if prev is None or (notice.get("step") or 0) > (prev.get("step") or 0):
                        self.pending_offers[seq] = notice
                    self.log("offer notice for our exchange %s to %s, which we have not "
                             "offered yet: that offer goes through the table"
                             % (seq, receiver))
                    return
                self.log("!! a witnessed notice about an offer we never made")
                return
            if exch is None:
                if receiver != self.nick or not isinstance(notice.get("offer"), dict):
                    self.log("!! a witnessed notice about an offer we never made")
                    return
                # an offer we learn of only through the table
                exch = Exchange(offerer, receiver, seq, dict(notice["offer"]))
                exch.via_table_only = True
                self.exchanges[key] = exch
            step = notice.get("step")
            if not isinstance(step, int):
                step = exch.step + 1
            if step <= exch.step:
                return   # overtaken by a later notice, or one sent again
            exch.step = step
            exch.notice = notice
            exch.witnessed = True
            exch.touched = time.monotonic()
            if offerer == self.nick and exch.answer is None:
                exch.answer = self.answer_in(notice, exch)
            if (receiver == self.nick and exch.answer is None
                    and isinstance(notice.get("offer"), dict)
                    and offer_fields(notice["offer"]) != offer_fields(exch.offer)):
                # 14.6 "A bad mac": the offer we answer is the one the table brings
                # (after the offerer's `offer` move), not the one our check refused
                # or the one a first notice carried
                self.log("exchange %s of %s: taking the offer the table brings (step %s)"
                         % (seq, offerer, step))
                exch.offer = dict(notice["offer"])
                exch.pick = None
            if (receiver == self.nick and exch.pick is None
                    and isinstance(notice.get("pick"), dict)):
                exch.pick = dict(notice["pick"])   # the notice asking for it was overtaken
            if move == "done":
                exch.done = True   # the exchange is complete (14.6)
            link = exch.link
            self.xcond.notify_all()
        if link is not None:
            link.q.put(("wake", None))   # a thread waiting on that link looks again
        if owes == self.nick:
            if move == "answer" and receiver == self.nick:
                self.table_answer(exch, notice)
            elif move == "pick" and receiver == self.nick:
                self.table_pick(exch, notice)
            elif move == "card" and offerer == self.nick:
                self.table_card(exch, notice.get("pick"))
            elif move == "offer" and offerer == self.nick:
                # our receiver's check found our offer's mac bad: offer it again
                # through the table within 2 s (14.6 "A bad mac")
                self.offer_through_table(exch)
            else:
                self.log("!! the table says we owe %r in exchange %s: not a move of ours"
                         % (move, seq))
        if receiver == self.nick and notice.get("card") is not None and notice.get("salt") is not None:
            self.take_card(exch, notice.get("card"), notice.get("salt"), via_table=True)
        with self.lock:
            # nothing more to wait for: the exchange is complete, or it ended for
            # us (the answer was out; our card is given)
            if (exch.done or exch.given is not None or exch.taken
                    or (exch.answer or {}).get("result") == "out"
                    or (offerer == self.nick and exch.offer_num() == 0
                        and exch.answer is not None)):
                exch.finished = True
                self.xcond.notify_all()

    def answer_in(self, notice, exch):
        """The receiver's answer as a notice shows it (None: not known yet)."""
        answer = notice.get("answer")
        if isinstance(answer, dict) and answer.get("result") in ("ok", "out"):
            return {"result": answer["result"], "ack": answer.get("ack") or notice.get("ack")}
        if answer in ("ok", "out"):
            # not in the document: the table's notices carry "answer":"ok" / "out"
            return {"result": answer, "ack": notice.get("ack")}
        if notice.get("result") in ("ok", "out"):
            return {"result": notice["result"], "ack": notice.get("ack")}
        if notice.get("out") is True:
            return {"result": "out", "ack": notice.get("ack")}
        if notice.get("move") in ("pick", "card") or notice.get("pick") is not None:
            return {"result": "ok", "ack": notice.get("ack")}
        if notice.get("move") == "done" and exch.offer_num() > 0:
            # done before any pick: the receiver answered out (14.6 "done")
            return {"result": "out", "ack": notice.get("ack")}
        return None

    def decide_answer(self, exch):
        """The receiver's answer to an offer, decided once (7.6), so that the
        answer made again through the table is the same bytes."""
        with self.lock:
            if exch.answer is not None:
                return exch.answer
            self.phase = "offer"      # 7.4: any offer ends the draw phase
            need_out = not self.out and not self.hand
        if need_out:
            self.go_out()             # 7.6: out_of_cards, its ok, then `out`
        with self.lock:
            if exch.answer is None:
                if self.out:
                    exch.answer = {"result": "out", "ack": self.my_mac(out_text(exch.offerer))}
                    exch.finished = True
                else:
                    exch.answer = {"result": "ok",
                                   "ack": self.my_mac(ack_text(exch.offer.get("mac") or ""))}
                self.xcond.notify_all()
            return exch.answer

    def my_pick(self, exch):
        """The receiver's pick, chosen once (6.3, 14.6)."""
        with self.lock:
            if exch.pick is None:
                n = exch.offer_num()
                card_num = self.rng.randrange(n) if n > 0 else 0
                exch.pick = {"card_num": card_num,
                             "mac": self.my_mac(pick_text(self.nick, exch.offerer,
                                                          exch.seq, card_num))}
            return dict(exch.pick)

    def table_answer(self, exch, notice):
        """We owe the answer: ok with its ack, or out with its out ack."""
        answer = self.decide_answer(exch)
        with self.table_lock:
            self.send_move(move_msg(exch.seq, answer=answer), exch)
        self.log("answered %s through the table (exchange %s of %s)"
                 % (answer["result"], exch.seq, exch.offerer))
        if answer["result"] == "ok" and exch.offer_num() == 0:
            self.take_pass(exch)

    def table_pick(self, exch, notice):
        pick = self.my_pick(exch)
        with self.table_lock:
            self.send_move(move_msg(exch.seq, pick=pick), exch)
        self.log("picked position %d through the table (exchange %s of %s)"
                 % (pick["card_num"], exch.seq, exch.offerer))

    def table_card(self, exch, pick):
        """We owe the card for the pick the notice carries."""
        with self.lock:
            given = exch.given
            hand = exch.hand
        if given is None:
            n = pick.get("card_num") if isinstance(pick, dict) else None
            num = len(hand or [])
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= num or num == 0:
                self.log("!! the table asks a card for pick %r of exchange %s" % (pick, exch.seq))
                return
            if n == num:
                n = num - 1   # 13.3
        else:
            n = given[0]
        with self.lock:
            answer = exch.answer or {}
            ack = (exch.notice or {}).get("ack") or answer.get("ack") or exch.direct_ack
        self.give_card(exch.receiver, None, exch.seq, hand, exch.salts, exch.offer.get("mac"),
                       ack, n, pick or {}, exch, via_table=True)

    def take_pass(self, exch):
        """A pass taken (directly or through the table): report it, hold the turn."""
        with self.table_lock:
            with self.lock:
                if exch.taken:
                    return
                exch.taken = True
                exch.finished = True
                self.xcond.notify_all()
            self.log("took the turn (a pass) from %s%s" % (
                exch.offerer, " through the table" if exch.witnessed else ""))
            self.report_to_table(self.received_report(exch))
        self.tasks.put(("hold", exch.seq + 1))

    def received_report(self, exch, card=None, salt=None):
        offer = exch.offer
        rep = {"cmd": "received", "from": exch.offerer, "seq": exch.seq,
               "num_cards": offer.get("num_cards"), "hashes": offer.get("hashes"),
               "mac": offer.get("mac")}
        if card is not None:
            rep.update({"card_num": exch.pick["card_num"], "card": card, "salt": salt})
        return rep

    def take_card(self, exch, card, salt, via_table):
        """The card for our pick (directly or in a notice). Returns "taken",
        "again" (taken already), "ignored" (a direct card once the table has
        the exchange) or "bad" (it does not open its position)."""
        try:
            card = canonical_card(card)
        except ValueError:
            card = None
        with self.table_lock:
            with self.lock:
                if exch.taken:
                    return "again"
                if exch.witnessed and not via_table:
                    return "ignored"
                pick = exch.pick
                hashes = exch.offer.get("hashes")
            card_num = pick["card_num"] if pick else None
            if (card is None or not isinstance(salt, str) or not isinstance(hashes, list)
                    or not isinstance(card_num, int) or not 0 <= card_num < len(hashes)
                    or card_hash(salt, card) != hashes[card_num]):
                if via_table:
                    # 14.6 "What it names": the table saw it come from the offerer
                    self.log("!! the card the table brings does not open position %s: "
                             "not taken (the table names the offerer)" % card_num)
                    with self.lock:
                        exch.finished = True
                        self.xcond.notify_all()
                    self.set_fatal(Fatal("%s gave a card through the table that does not open "
                                         "its position" % exch.offerer, blame="-"))
                return "bad"
            with self.lock:
                holding = list(self.hand)
                exch.taken = True
                exch.finished = True
                self.xcond.notify_all()
            if card in holding:
                self.log("!! we already hold %s" % card_str(card))
            self.log("picked %s from %s (position %d of %d)%s"
                     % (card_str(card), exch.offerer, card_num, len(hashes),
                        " through the table" if via_table else ""))
            self.report_to_table(self.received_report(exch, card, salt))
            self.add_card_and_discard(card, deck_empty=True)
        self.tasks.put(("hold", exch.seq + 1))
        return "taken"

    # -- inbound connections ----------------------------------------------

    def accept_loop(self):
        while True:
            try:
                s, addr = self.listener.accept()
            except OSError:
                return
            nodelay(s)
            self.inbound.append(s)
            t = threading.Thread(target=self.serve_inbound, args=(s, addr),
                                 name="in-%s:%s" % addr[:2], daemon=True)
            t.start()

    def serve_inbound(self, s, addr):
        framer = Framer(s)
        conn = {"proved": None, "addr": plain_host(addr[0])}
        try:
            while True:
                item = framer.next(None)
                if item is None:
                    return
                self.activity()
                kind, obj = item
                if kind != "msg":
                    self.send_raw(s, {"result": "error", "message": obj})
                    continue
                if "cmd" not in obj:
                    if "result" in obj:
                        if conn.get("witnessed"):
                            # 14.6: a late reply of an exchange the table witnessed
                            self.log("a late reply on a witnessed exchange's connection: ignored")
                            continue
                        # a reply where none was due: never answer a reply (3)
                        self.log("reply without a request on an inbound connection; closing")
                        return
                    self.send_raw(s, {"result": "error", "message":
                                      'a message needs "cmd" (a request) or "result" (a reply)'})
                    continue
                # 7.2: a turn may come before our own join reply: read it first
                while not self.joined.wait(1.0):
                    if self.ended():
                        return
                cmd = obj["cmd"]
                if cmd in ("your_turn", "offer"):
                    if not self.from_a_player(conn["addr"]):
                        self.send_raw(s, {"result": "error", "message":
                                          "%s is not the address of any player of this game; "
                                          "closing the connection" % conn["addr"]})
                        return
                    if cmd == "your_turn":
                        if self.on_your_turn(s, conn, obj) == "close":
                            return   # --no-ok-to-your-turn with close (testing)
                    else:
                        self.on_offer(s, framer, conn, obj)
                elif cmd == "pick":
                    self.send_raw(s, {"result": "error", "message": "pick without an accepted offer"})
                else:
                    self.send_raw(s, {"result": "error",
                                      "message": "unknown cmd %r" % cmd if cmd not in
                                      ("join", "draw", "discard", "out_of_cards", "status")
                                      else "%s is not a request a peer takes" % cmd})
        except GameEnded:
            pass
        except Fatal as e:
            self.set_fatal(e)
        except OSError:
            pass
        except Exception as e:  # noqa: BLE001
            self.set_fatal(Fatal("internal error: %r" % (e,)))
        finally:
            try:
                s.close()
            except OSError:
                pass

    def send_raw(self, s, obj):
        s.sendall(encode(obj))

    def from_a_player(self, ip):
        hosts = [plain_host(h) for h, _ in self.addresses]
        if any(not is_dotted_ipv4(h) for h in hosts):
            return True
        return ip in hosts

    def check_proof(self, conn, obj):
        """14.5 "Checking". Returns None to take the turn, or a refusal text."""
        if not (self.verify and self.secret is not None):
            return None
        frm = obj.get("from")
        proof = obj.get("proof")
        if proof is not None:
            expected = self.proofs.get(frm) if isinstance(frm, str) else None
            if expected is None or proof != expected:
                return "the proof is not the one expected from %s" % frm
            if conn["proved"] is not None and conn["proved"] != frm:
                return "this connection proved %s, and this turn claims %s" % (conn["proved"], frm)
            conn["proved"] = frm
            return None
        if conn["proved"] is not None:
            if frm is not None and frm != conn["proved"]:
                return "this connection proved %s, and this turn claims %s" % (conn["proved"], frm)
            return None
        if frm is not None and frm in self.proofs:
            return "no proof, from %s, a player that proves itself" % frm
        if frm is None and len(self.proofs) == len(self.players) - 1:
            return "no proof and no from, and every other player proves itself"
        return None

    def refuse_turn(self, s, obj, why):
        self.log("refused a %s: %s" % (obj.get("cmd"), why))
        self.send_raw(s, {"result": "error", "message": "refused: " + why})
        frm = obj.get("from") if isinstance(obj.get("from"), str) else None
        evidence = {"what": "%s %s that is not from the player it claims (%s)" % ("an" if obj.get("cmd") == "offer" else "a", obj.get("cmd"), why),
                    "from": frm, "mac": obj.get("mac")}
        if obj.get("cmd") == "offer":
            evidence["seq"] = obj.get("seq")
            evidence["num_cards"] = obj.get("num_cards")
            evidence["hashes"] = obj.get("hashes")
        accused = frm if frm in self.players else None
        self.accuse("impersonation", accused, evidence)
        # 5.9: the accuser plays on

    def asker_of(self, conn, obj):
        frm = obj.get("from")
        if isinstance(frm, str):
            return frm
        return conn["proved"]

    def out_reply(self, conn, obj):
        reply = {"result": "out"}
        if self.report:
            asker = self.asker_of(conn, obj)
            if asker is not None:
                reply["ack"] = self.my_mac(out_text(asker))
        return reply

    def on_your_turn(self, s, conn, obj):
        why = self.check_proof(conn, obj)
        if why is not None:
            self.refuse_turn(s, obj, why)
            return
        with self.lock:
            out = self.out
            if not out:
                # a draw turn reached us (14.6: it ends a wait for our own your_turn);
                # we draw the next card: a notice for it is then not taken
                self.turns_in += 1
                prev_claim = self.claimed_card
                self.claimed_card = max(self.claimed_card, self.next_card())
        if out:
            self.send_raw(s, self.out_reply(conn, obj))
            return
        if (self.witnessed and self.no_ok_to_your_turn > 0
                and self.fault_rng.random() < self.no_ok_to_your_turn):
            # --no-ok-to-your-turn (testing): draw without answering ok; the sender
            # must not give up (14.6 "The sender")
            self.log("fault: not answering the your_turn from %s (%s); drawing"
                     % (obj.get("from"), self.no_ok_how))
            self.tasks.put(("draw", "your_turn", prev_claim))
            if self.no_ok_how == "error":
                self.send_raw(s, {"result": "error", "message": "fault injected: no ok"})
            elif self.no_ok_how == "close":
                return "close"
            return None
        self.send_raw(s, {"result": "ok"})   # 6.1: ok at once, then draw
        self.log("your_turn from", obj.get("from"))
        self.tasks.put(("draw", "your_turn", prev_claim))

    def on_offer(self, s, framer, conn, obj):
        n = obj.get("num_cards")
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 53:
            self.send_raw(s, {"result": "error", "message":
                              "Expected `int` between 0 and 53 - at `$.num_cards`"})
            return
        why = self.check_proof(conn, obj)
        if why is not None:
            self.refuse_turn(s, obj, why)
            return
        if (self.witnessed and isinstance(obj.get("mac"), str) and isinstance(obj.get("seq"), int)
                and isinstance(self.asker_of(conn, obj), str)):
            self.on_offer_witnessed(s, framer, conn, obj, n)
            return
        with self.lock:
            self.phase = "offer"   # 7.4: any offer ends the draw phase
            out = self.out
            empty = not self.hand
        if not out and empty:
            self.go_out()          # 7.6: out_of_cards, wait for ok, then answer out
            with self.lock:
                out = self.out
                empty = not self.hand
        if out:
            self.send_raw(s, self.out_reply(conn, obj))
            return
        frm = self.asker_of(conn, obj)
        seq = obj.get("seq")
        ok = {"result": "ok"}
        if self.report:
            if not isinstance(obj.get("mac"), str) or not isinstance(seq, int):
                self.send_raw(s, {"result": "error", "message":
                                  "a verified game's offer needs seq, hashes and mac (14.6)"})
                return
            ok["ack"] = self.my_mac(ack_text(obj["mac"]))
        self.send_raw(s, ok)
        received = None
        if self.report:
            received = {"cmd": "received", "from": frm, "seq": seq, "num_cards": n,
                        "hashes": obj.get("hashes"), "mac": obj.get("mac")}
        next_seq = (seq + 1) if isinstance(seq, int) else None
        if n == 0:
            self.log("took the turn (a pass) from", frm)
            if received is not None:
                with self.table_lock:
                    self.report_to_table(received)
            self.tasks.put(("hold", next_seq))
            return
        if not obj.get("stream"):
            time.sleep(0.05)   # 13.2: older offerers read one message per recv
        # 6.3: pick at random below num_cards
        hashes = obj.get("hashes") if self.report else None
        if self.report and (not isinstance(hashes, list) or len(hashes) != n):
            self.log("!! the offer's hashes do not match num_cards:", obj)
        tries = 0
        while True:
            tries += 1
            card_num = self.rng.randrange(n)
            pick = {"cmd": "pick", "card_num": card_num}
            if self.report:
                pick["mac"] = self.my_mac(pick_text(self.nick, frm, seq, card_num))
            self.send_raw(s, pick)
            try:
                item = framer.next(PEER_TIMEOUT)
            except socket.timeout:
                raise Fatal("%s did not answer our pick within %d s" % (frm, PEER_TIMEOUT),
                            blame=frm, reason="did not answer a pick within %d s" % PEER_TIMEOUT)
            if item is None:
                if self.ended():
                    raise GameEnded()
                raise Fatal("%s closed its connection instead of answering our pick" % frm,
                            blame=frm, reason="closed its connection instead of answering a pick")
            kind, reply = item
            if kind != "msg" or "result" not in reply:
                raise Fatal("%s answered our pick with garbage" % frm, blame=frm,
                            reason="answered a pick with garbage")
            if reply.get("result") == "ok":
                break
            self.log("pick refused:", reply)
            if tries >= BAD_PICKS_LIMIT:
                raise Fatal("%s refused %d picks" % (frm, tries), blame=frm,
                            reason="refused every pick")
        try:
            card = canonical_card(reply.get("card"))
        except ValueError:
            raise Fatal("%s gave an unknown card %r" % (frm, reply.get("card")), blame=frm,
                        reason="answered a pick with an unknown card")
        salt = reply.get("salt")
        if self.report:
            # 14.6: the card must open its position before we take it
            if (not isinstance(salt, str) or not isinstance(hashes, list)
                    or card_num >= len(hashes) or card_hash(salt, card) != hashes[card_num]):
                self.log("!! the card does not open its position: refused")
                self.accuse("wrong_card", frm, {
                    "what": "the card %s does not open position %d of %s's offer"
                            % (card_str(card), card_num, frm),
                    "from": frm, "seq": seq, "hashes": hashes, "mac": obj.get("mac"),
                    "card_num": card_num, "card": card, "salt": salt})
                raise Fatal("%s gave a card that does not open its position" % frm, blame="-")
            received.update({"card_num": card_num, "card": card, "salt": salt})
        with self.lock:
            holding = list(self.hand)
        if card in holding or (card == JOKER and JOKER in holding):
            self.log("!! we already hold %s" % card_str(card))
        self.log("picked %s from %s (position %d of %d)" % (card_str(card), frm, card_num, n))
        with self.table_lock:
            if received is not None:
                self.report_to_table(received)
            self.add_card_and_discard(card, deck_empty=True)
        self.tasks.put(("hold", next_seq))

    def on_offer_witnessed(self, s, framer, conn, obj, n):
        """7.6 in a witnessed game: as on_offer, but the answer and the pick are
        decided once and kept, so that the table can be asked about the
        exchange, and a move made again is the same bytes (14.6)."""
        frm = self.asker_of(conn, obj)
        seq = obj["seq"]
        key = (frm, self.nick, seq)
        offer = {"from": frm, "seq": seq, "num_cards": n, "hashes": obj.get("hashes"),
                 "mac": obj["mac"]}
        with self.lock:
            exch = self.exchanges.get(key)
            if exch is None:
                exch = Exchange(frm, self.nick, seq, offer)
                self.exchanges[key] = exch
                known = False
            else:
                known = exch.via_table_only
        if known:
            # the table brought it first: the rest of it goes through the table
            # (14.6 "Moving": ignored; ring peer answers such an offer error)
            conn["witnessed"] = True
            self.log("offer %s of %s came directly after the table brought it: "
                     "answered error" % (seq, frm))
            self.send_raw(s, {"result": "error", "message": "exchange %s of %s goes through "
                              "the table: this copy is not taken" % (seq, frm)})
            return
        # 7.6: an empty hand goes out first, and an `out` answer needs no check
        with self.lock:
            self.phase = "offer"      # 7.4: any offer ends the draw phase
            decided = exch.answer is not None
            need_out = not decided and not self.out and not self.hand
        if need_out:
            self.go_out()
        with self.lock:
            out = self.out
        if not decided and not out and self.no_offer_check:
            # --no-offer-check (testing, broken on purpose): 14.6 "Checking an offer"
            # forgotten; the offer is answered ok and taken as in a game not witnessed
            self.log("fault: exchange %s of %s taken without check_offer" % (seq, frm))
        elif not decided and not out:
            # 14.6 "Checking an offer": the table checks it before we answer ok
            why = self.check_offer(exch, offer)
            if why is not None:
                self.send_raw(s, {"result": "error", "message": "refused: " + why})
                return
        answer = self.decide_answer(exch)
        self.send_raw(s, dict(answer))
        if answer["result"] == "out":
            return
        if n == 0:
            self.take_pass(exch)
            return
        if not obj.get("stream"):
            time.sleep(0.05)   # 13.2: older offerers read one message per recv
        hashes = obj.get("hashes")
        if not isinstance(hashes, list) or len(hashes) != n:
            self.log("!! the offer's hashes do not match num_cards:", obj)
        tries = 0
        while True:
            tries += 1
            pick = self.my_pick(exch)
            with self.lock:
                witnessed = exch.witnessed
            if not witnessed:
                self.send_raw(s, dict(pick, cmd="pick"))
            reply = self.wait_for_card(s, framer, conn, exch, pick)
            if reply is None:
                return   # the table has the exchange, and it is over for us
            if reply.get("result") == "ok":
                break
            self.log("pick refused:", reply)
            if tries >= BAD_PICKS_LIMIT:
                raise Fatal("%s refused %d picks" % (frm, tries), blame=frm,
                            reason="refused every pick")
            with self.lock:
                if not exch.witnessed:
                    exch.pick = None   # choose again
        card, salt = reply.get("card"), reply.get("salt")
        try:
            card = canonical_card(card)
        except ValueError:
            raise Fatal("%s gave an unknown card %r" % (frm, card), blame=frm,
                        reason="answered a pick with an unknown card")
        result = self.take_card(exch, card, salt, via_table=False)
        if result in ("taken", "again"):
            return
        if result == "bad" and not exch.asked:
            # 14.6 "When ring peer asks": at once, when a card does not open the
            # position picked: the offerer gives it again through the table
            self.log("!! the card does not open its position: asking the table")
            self.ask_witness(exch, {"pick": pick})
        with self.lock:
            witnessed = exch.witnessed
        if witnessed:
            conn["witnessed"] = True
            self.wait_exch(exch, lambda: exch.taken or exch.finished, "the card")
            return
        card_num = pick["card_num"]
        self.log("!! the card does not open its position: refused")
        self.accuse("wrong_card", frm, {
            "what": "the card %s does not open position %d of %s's offer"
                    % (card_str(card), card_num, frm),
            "from": frm, "seq": seq, "hashes": hashes, "mac": obj.get("mac"),
            "card_num": card_num, "card": card, "salt": salt})
        raise Fatal("%s gave a card that does not open its position" % frm, blame="-")

    def wait_for_card(self, s, framer, conn, exch, pick):
        """The reply to our pick, directly; past --witness-after, ask the table.
        Returns the reply, or None once the table witnessed the exchange and
        it is over for us (the notice thread took the card)."""
        frm = exch.offerer
        start = time.monotonic()
        while True:
            with self.lock:
                witnessed = exch.witnessed
            if witnessed:
                conn["witnessed"] = True
                self.wait_exch(exch, lambda: exch.taken or exch.finished, "the card")
                return None
            elapsed = time.monotonic() - start
            if not exch.asked and elapsed >= self.witness_after:
                # 14.6 "Asking": waiting for the card after our pick
                self.ask_witness(exch, {"pick": pick})
                continue
            if elapsed > PEER_TIMEOUT:
                raise Fatal("%s did not answer our pick within %d s" % (frm, PEER_TIMEOUT),
                            blame=frm, reason="did not answer a pick within %d s" % PEER_TIMEOUT)
            wait = SLICE
            if not exch.asked:
                wait = min(wait, self.witness_after - elapsed)
            try:
                item = framer.next(max(wait, 0.001))
            except socket.timeout:
                if self.ended():
                    raise GameEnded()
                continue
            if item is None:
                if self.ended():
                    raise GameEnded()
                if not exch.asked and self.ask_witness(exch, {"pick": pick}):
                    continue   # the connection died: finish through the table
                raise Fatal("%s closed its connection instead of answering our pick" % frm,
                            blame=frm, reason="closed its connection instead of answering a pick")
            kind, reply = item
            if kind != "msg" or "result" not in reply:
                raise Fatal("%s answered our pick with garbage" % frm, blame=frm,
                            reason="answered a pick with garbage")
            return reply

    # -- main -------------------------------------------------------------

    def run(self):
        host, port = self.table_addr
        try:
            ts = socket.create_connection((host, port), timeout=10)
        except OSError as e:
            raise Fatal("cannot connect to the table at %s:%s: %s" % (host, port, e))
        ts.settimeout(None)
        nodelay(ts)
        self.table = Link(ts, "table", on_request=self.on_table_request)
        my_host = self.host_opt or ts.getsockname()[0]
        # 7.1: listen before joining
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((my_host, 0))
        self.listener.listen(64)
        my_port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept_loop, name="accept", daemon=True).start()
        join = {"cmd": "join", "nick": self.nick, "host": my_host, "port": my_port,
                "watch": True}
        if self.verify:
            join["verify"] = True
            if self.want_witness:
                join["witness"] = True   # 5.1, 14.6 "The table as witness"
        self.log("listening on %s:%d; joining %s:%d%s%s"
                 % (my_host, my_port, host, port, " with verify" if self.verify else "",
                    " and witness" if self.want_witness else ""))
        reply = self.table_request(join, timeout=JOIN_TIMEOUT)
        if reply.get("result") != "ok":
            raise Fatal("the table refused the join: %s" % reply.get("message"))
        players = reply.get("players")
        self.players = [p[1] for p in players]
        self.addresses = [(plain_host(p[0][0]), int(p[0][1])) for p in players]
        self.seat = self.players.index(self.nick)
        if self.verify:
            self.secret = reply.get("secret")
            self.proofs = reply.get("proofs") or {}
            self.report = bool(reply.get("report")) and self.secret is not None
            # 14.6: the game is witnessed only when the join reply says so
            self.witnessed = self.report and self.want_witness and bool(reply.get("witness"))
        self.log("seated %d of %s; verify=%s proofs from %s; report=%s; witness=%s"
                 % (self.seat + 1, self.players, self.verify and self.secret is not None,
                    sorted(self.proofs), self.report, self.witnessed))
        self.activity()
        self.joined.set()
        threading.Thread(target=self.notice_loop, name="notices", daemon=True).start()
        threading.Thread(target=self.worker, name="worker", daemon=True).start()
        threading.Thread(target=self.dial_left_at_start, name="dial", daemon=True).start()
        if self.seat == 0:
            with self.lock:
                self.claimed_card = 1
            self.tasks.put(("draw",))   # 7.3 step 1
        return self.wait_for_end()

    def wait_for_end(self):
        lost_since = None
        while True:
            if self.game_over.wait(0.1):
                break
            if self.fatal is not None:
                # a neighbour gone at the very end is no error if the game is over
                # (never an internal error: those always fail the run)
                if (self.fatal.blame not in (None, "-")
                        and self.game_over.wait(0.5)
                        and not (self.game_over_msg or {}).get("aborted")):
                    self.log("ignoring after the end:", self.fatal.line)
                    break
                return self.fail(self.fatal)
            if self.table.closed and not self.game_over.is_set():
                time.sleep(0.05)
                if not self.game_over.is_set():
                    raise Fatal("the table closed the connection")
            if self.lost:
                if lost_since is None:
                    lost_since = time.monotonic()
                elif time.monotonic() - lost_since > 10:
                    try:
                        self.status()
                    except Fatal:
                        pass
                    if not self.game_over.is_set():
                        raise Fatal("no game_over notice within 10 s of finding no one else in")
            self.check_witnessed_exchanges()
            if time.monotonic() - self.last_activity > IDLE_TIMEOUT:
                raise Fatal("heard nothing for %d s" % IDLE_TIMEOUT, blame=None,
                            reason="heard nothing for %d s" % IDLE_TIMEOUT)
        msg = self.game_over_msg or {}
        if msg.get("aborted"):
            raise Fatal("game aborted: %s" % msg.get("reason"), blame="-")
        time.sleep(LINGER)   # 7.8: answer `out` a moment longer
        outs = msg.get("out") or []
        loser = msg.get("loser")
        if loser == self.nick:
            line = "lost: holds the Old Maid"
        elif self.nick in outs:
            i = outs.index(self.nick) + 1
            suffix = {1: "st", 2: "nd", 3: "rd"}.get(i if i < 20 else i % 10, "th")
            line = "out %d%s of %d" % (i, suffix, len(self.players))
        else:
            line = "game over: loser %s" % loser
        self.close_all()
        with self.print_lock:
            self.quiet = True   # the result is the last line on stdout
            print(line, flush=True)
        return 0

    def check_witnessed_exchanges(self):
        """A witnessed exchange we take part in that nothing moves for our peer
        timeout (the table names a player that owes a move after 2 s): give
        up, naming no one. Covers an offer we learnt of only from the table,
        which no thread of ours waits on."""
        now = time.monotonic()
        with self.lock:
            stuck = [e for e in self.exchanges.values()
                     if e.witnessed and not e.finished and now - e.touched > PEER_TIMEOUT + 1
                     and not self.owed_offer_by_other(e)]
        if stuck and not self.ended():
            e = stuck[0]
            raise Fatal("the table witnesses exchange %s of %s to %s and nothing moved for %d s"
                        % (e.seq, e.offerer, e.receiver, PEER_TIMEOUT))

    def owed_offer_by_other(self, exch):
        """An exchange whose last notice says its offerer (not us) owes the offer
        (14.6 "A bad mac"): the table names that offerer, or drops the exchange if
        the reports do not show it holding that turn, and says nothing to us then;
        so nothing of ours waits on it. Call with self.lock held."""
        notice = exch.notice or {}
        return (notice.get("move") == "offer" and notice.get("owes") != self.nick
                and exch.answer is None)

    def fail(self, exc):
        # 5.8: tell the table why before leaving, if the game is still on
        if not self.joined.is_set() or self.game_over.is_set():
            pass
        elif exc.blame == "-":
            # we accused someone: the table ends the game; wait for its word (5.9)
            self.game_over.wait(3.0)
        else:
            gu = {"cmd": "give_up", "reason": (exc.reason or exc.line)[:500]}
            if exc.blame:
                gu["nick"] = exc.blame
            try:
                with self.table_lock:
                    self.table.send(gu)
                    try:
                        self.table.get(2.0)
                    except queue.Empty:
                        pass
            except OSError:
                pass
            self.game_over.wait(0.5)
        self.close_all()
        print("%s: %s" % (self.nick, exc.line), file=sys.stderr, flush=True)
        return 1

    def close_all(self):
        try:
            self.listener.close()
        except (OSError, AttributeError):
            pass
        for link in list(self.links.values()):
            link.close()
        for _, link, _ in list(self.retired):
            link.close()
        for link in list(self.stale_links):
            link.close()
        for s in list(self.inbound):
            try:
                s.close()
            except OSError:
                pass
        if self.table is not None:
            self.table.close()


# ---------------------------------------------------------------------------
# Self-check: the worked example of 14.6
# ---------------------------------------------------------------------------

def selftest():
    ok = True

    def check(name, got, want):
        nonlocal ok
        flag = "ok  " if got == want else "FAIL"
        if got != want:
            ok = False
        print("%s %-28s %s" % (flag, name, got))
        if got != want:
            print("     expected                     %s" % want)

    gk = game_key(7)
    check("game key", gk, "2fada59a922172700dc26a26df820b90171ccbec55fe9208c6183318c8dcff7b")
    bob = player_secret(gk, "bob")
    check("bob's secret", bob, "6e6830c8c6df9b9fa1244b77dc05877a")
    carol = player_secret(gk, "carol")
    check("carol's secret", carol, "13ebff0a656105b4102d85a3b221a2f5")
    check("bob's proof to carol", make_proof(bob, "carol"), "9f46fa86d2bc467c80721493f5341cd5")
    salts = ["00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100"]
    hand = [["10", "hearts"], ["joker", "maid"]]
    h0 = card_hash(salts[0], hand[0])
    h1 = card_hash(salts[1], hand[1])
    check("hash 0", h0, "364d108dc9163bdde122c3e745ca078e")
    check("hash 1", h1, "839456ea4f297778c2b57885251c8de4")
    check("hash 0, card in other case", card_hash(salts[0], ["10", "Hearts"]), h0)
    check("hash 1, card in other case", card_hash(salts[1], ["JOKER", "Maid"]), h1)
    text = offer_text(7, "bob", "carol", 2, [h0, h1])
    check("offer text", text, "offer|7|bob|carol|2|364d108dc9163bdde122c3e745ca078e,"
          "839456ea4f297778c2b57885251c8de4")
    omac = mac(bob, text)
    check("offer mac", omac, "acafbee413319dc1724a3e53317a3b34")
    check("carol's ack", mac(carol, ack_text(omac)), "887c02b7f39ab40cac384fd7e0104690")
    check("carol's pick mac", mac(carol, pick_text("carol", "bob", 7, 1)),
          "efad20551c2a0b530b3a8b2b703d8750")
    check("pass text", offer_text(8, "bob", "carol", 0, []), "offer|8|bob|carol|0|")
    check("bob's pass mac (exchange 8)", mac(bob, offer_text(8, "bob", "carol", 0, [])),
          "c78aba39d6f7f16a0c88b2fc9d9860db")
    check("bob's your_turn mac", mac(bob, your_turn_text("bob", "carol")),
          "3d217d98ecdf5730e9c814365c89eb68")
    check("carol's out ack to bob", mac(carol, out_text("bob")),
          "0e5898b4a3d43092f7db3dbfe793d014")
    # the example's messages, built as this client builds them
    offer = {"cmd": "offer", "num_cards": 2, "from": "bob",
             "proof": make_proof(bob, "carol"), "seq": 7, "hashes": [h0, h1], "mac": omac}
    doc_offer = json.loads('{"cmd":"offer","num_cards":2,"from":"bob","proof":"9f46fa86d2bc467c'
                           '80721493f5341cd5","seq":7,"hashes":["364d108dc9163bdde122c3e745ca07'
                           '8e","839456ea4f297778c2b57885251c8de4"],"mac":"acafbee413319dc1724a'
                           '3e53317a3b34"}')
    check("the offer message", offer, doc_offer)
    check("the card opens position 1", card_hash(salts[1], hand[1]) == offer["hashes"][1], True)
    check("a wrong card does not", card_hash(salts[1], hand[0]) == offer["hashes"][1], False)
    received = {"cmd": "received", "from": "bob", "seq": 7, "num_cards": 2, "hashes": [h0, h1],
                "mac": omac, "card_num": 1, "card": ["joker", "maid"], "salt": salts[1]}
    doc_received = json.loads(
        '{"cmd":"received","from":"bob","seq":7,"num_cards":2,"hashes":["364d108dc9163bdde122c3'
        'e745ca078e","839456ea4f297778c2b57885251c8de4"],"mac":"acafbee413319dc1724a3e53317a3b3'
        '4","card_num":1,"card":["joker","maid"],"salt":"ffeeddccbbaa99887766554433221100"}')
    check("the received report", received, doc_received)
    gave = {"cmd": "gave", "to": "carol", "seq": 7, "mac": omac,
            "ack": mac(carol, ack_text(omac)), "salts": salts}
    doc_gave = json.loads(
        '{"cmd":"gave","to":"carol","seq":7,"mac":"acafbee413319dc1724a3e53317a3b34","ack":"887c'
        '02b7f39ab40cac384fd7e0104690","salts":["00112233445566778899aabbccddeeff","ffeeddccbbaa'
        '99887766554433221100"]}')
    check("the gave report", gave, doc_gave)
    check("the pick message", {"cmd": "pick", "card_num": 1,
                               "mac": mac(carol, pick_text("carol", "bob", 7, 1))},
          {"cmd": "pick", "card_num": 1, "mac": "efad20551c2a0b530b3a8b2b703d8750"})

    # 14.6 "The table as witness": the document's witness request and moves,
    # built as this client builds them from the worked example
    exch_offer = {"from": "bob", "seq": 7, "num_cards": 2, "hashes": [h0, h1], "mac": omac}
    check("the witness request", witness_msg("carol", exch_offer), json.loads(
        '{"cmd":"witness","to":"carol","offer":{"from":"bob","seq":7,"num_cards":2,"hashes":'
        '["364d108dc9163bdde122c3e745ca078e","839456ea4f297778c2b57885251c8de4"],"mac":"acafbe'
        'e413319dc1724a3e53317a3b34"}}'))
    carol_ack = mac(carol, ack_text(omac))
    carol_pick = {"card_num": 1, "mac": mac(carol, pick_text("carol", "bob", 7, 1))}
    check("the answer move", move_msg(7, answer={"result": "ok", "ack": carol_ack}), json.loads(
        '{"cmd":"move","seq":7,"answer":{"result":"ok","ack":"887c02b7f39ab40cac384fd7e0104690"}}'))
    check("the pick move", move_msg(7, pick=carol_pick), json.loads(
        '{"cmd":"move","seq":7,"pick":{"card_num":1,"mac":"efad20551c2a0b530b3a8b2b703d8750"}}'))
    check("the card move", move_msg(7, card=hand[1], salt=salts[1]), json.loads(
        '{"cmd":"move","seq":7,"card":["joker","maid"],"salt":"ffeeddccbbaa99887766554433221100"}'))
    # 14.6 "Checking an offer": the check (exact bytes of the doc) and the offer move
    check("the check_offer request", check_offer_msg(dict(exch_offer, extra="ignored")),
          json.loads('{"cmd":"check_offer","offer":{"from":"bob","seq":7,"num_cards":2,"hashes"'
                     ':["364d108dc9163bdde122c3e745ca078e","839456ea4f297778c2b57885251c8de4"],'
                     '"mac":"acafbee413319dc1724a3e53317a3b34"}}'))
    check("the offer move", move_msg(7, offer=exch_offer),
          {"cmd": "move", "seq": 7, "offer": exch_offer})
    w = witness_msg("bob", exch_offer, pick=carol_pick)
    check("the receiver's witness request", [sorted(w), w["to"], w["pick"]],
          [["cmd", "offer", "pick", "to"], "bob", carol_pick])
    w = witness_msg("carol", exch_offer, ack=carol_ack)
    check("the offerer's, with the ack", [sorted(w), w["ack"]],
          [["ack", "cmd", "offer", "to"], carol_ack])

    # framing (section 2): split, joined, CRLF, no newline, junk
    class FakeSock:
        def __init__(self, chunks):
            self.chunks = list(chunks)

        def settimeout(self, t):
            pass

        def recv(self, n):
            return self.chunks.pop(0) if self.chunks else b""

    stream = [b'{"a":1}\r\n\n {"b":"}{\\""}', b'{"c"', b':[1,2]}\n', b'hello\n{"d":4}{"e"\n{"f":5}\n']
    fr = Framer(FakeSock(stream))
    items = []
    while True:
        it = fr.next()
        if it is None:
            break
        items.append(it)
    check("framing", items, [("msg", {"a": 1}), ("msg", {"b": '}{"'}), ("msg", {"c": [1, 2]}),
                             ("bad", "not a JSON object"), ("msg", {"d": 4}),
                             ("bad", "incomplete JSON object before end of line"),
                             ("msg", {"f": 5})])
    check("pair rule", [is_pair(["7", "spades"], ["7", "clubs"]),
                        is_pair(["7", "spades"], ["7", "hearts"]),
                        is_pair(["joker", "maid"], ["joker", "maid"])], [True, False, False])

    # if the doc is next to us, compare with its own table too
    here = os.path.dirname(os.path.abspath(__file__))
    doc = os.path.join(here, "..", "..", "..", "docs", "protocols", "oldmaid.md")
    if os.path.exists(doc):
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        start = text.find("<!-- worked example: begin -->")
        end = text.find("<!-- worked example: end -->")
        rows = {}
        for line in text[start:end].splitlines():
            if line.startswith("| ") and "`" in line:
                cells = [c.strip() for c in line.replace("\\|", "\x00").split("|")[1:-1]]
                rows[cells[0]] = cells[4].strip("`").replace("\x00", "|")
        mine = {
            "game key": gk, "bob's secret": bob, "carol's secret": carol,
            "bob's proof to carol": make_proof(bob, "carol"), "hash 0": h0, "hash 1": h1,
            "offer mac": omac, "carol's ack": mac(carol, ack_text(omac)),
            "carol's pick mac": mac(carol, pick_text("carol", "bob", 7, 1)),
            "bob's pass mac (exchange 8)": mac(bob, offer_text(8, "bob", "carol", 0, [])),
            "bob's your_turn mac": mac(bob, your_turn_text("bob", "carol")),
            "carol's out ack to bob": mac(carol, out_text("bob")),
        }
        check("rows found in the doc", sorted(rows), sorted(mine))
        for k in sorted(mine):
            check("doc row: " + k, mine[k], rows.get(k))
    print("selftest:", "all passed" if ok else "FAILED")
    return 0 if ok else 1


# ---------------------------------------------------------------------------

def parse_address(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, got %r" % text)
    return host, int(port)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Old Maid ring peer (from the protocol doc)")
    ap.add_argument("--nick")
    ap.add_argument("--table", type=parse_address)
    ap.add_argument("--host", default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--no-witness", action="store_true",
                    help="verify, but join without \"witness\" (14.6): the game is not witnessed")
    ap.add_argument("--witness-after", type=float, default=PEER_TIMEOUT, metavar="SECONDS",
                    help="in a witnessed game, ask the table about an exchange after waiting "
                         "this long for an answer, a pick or a card (default: the peer "
                         "timeout, %g s)" % PEER_TIMEOUT)
    ap.add_argument("--drop-your-turn", type=float, default=0.0, metavar="P",
                    help="testing, witnessed games: with probability P (seeded by --seed), do "
                         "not send the your_turn due after a draw, as if it were lost; the "
                         "table must hand the turn on (14.6 \"The draw turn\")")
    ap.add_argument("--no-ok-to-your-turn", type=float, default=0.0, metavar="P",
                    help="testing, witnessed games: with probability P, draw on a your_turn "
                         "without answering it ok; its sender must not give up")
    ap.add_argument("--no-ok-how", choices=("silent", "error", "close"), default="silent",
                    help="what --no-ok-to-your-turn does instead of ok: nothing (default), "
                         "answer error, or close the connection")
    ap.add_argument("--late-your-turn", type=float, default=0.0, metavar="P",
                    help="testing, witnessed games: with probability P, send the your_turn "
                         "due after a draw %g s late, after the table has handed the turn on"
                         % LATE_DELAY)
    ap.add_argument("--garble-offer", type=float, default=0.0, metavar="P",
                    help="testing, witnessed games: with probability P, send an offer directly "
                         "with its mac garbled, as if on the way; the receiver's check_offer "
                         "fails and this client offers it through the table (14.6)")
    ap.add_argument("--fake-check", type=float, default=0.0, metavar="P",
                    help="testing, witnessed 2-player games: with probability P, before "
                         "offering, check a made-up offer (bad mac) of the other player's next "
                         "exchange, so that its offer notice comes before it offers (14.6)")
    ap.add_argument("--no-offer-check", action="store_true",
                    help="testing, broken on purpose (a variant for `ring check`): in a "
                         "witnessed game, never send check_offer; take every offer that comes "
                         "on a connection as in a verified game that is not witnessed (14.6)")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest()
    if not args.nick or not args.table:
        ap.error("--nick and --table are required")
    if args.witness_after < 0:
        ap.error("--witness-after must not be negative")
    for name in ("drop_your_turn", "no_ok_to_your_turn", "late_your_turn", "garble_offer",
                 "fake_check"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            ap.error("--%s must be a probability, 0 to 1" % name.replace("_", "-"))
    peer = Peer(args.nick, args.table, args.host, args.seed, not args.no_verify, args.quiet,
                witness=not args.no_witness, witness_after=args.witness_after,
                drop_your_turn=args.drop_your_turn, no_ok_to_your_turn=args.no_ok_to_your_turn,
                late_your_turn=args.late_your_turn, no_ok_how=args.no_ok_how,
                garble_offer=args.garble_offer, fake_check=args.fake_check,
                no_offer_check=args.no_offer_check)
    try:
        return peer.run()
    except Fatal as e:
        return peer.fail(e)
    except KeyboardInterrupt:
        print("%s: interrupted" % args.nick, file=sys.stderr, flush=True)
        return 1
    except Exception as e:  # noqa: BLE001
        return peer.fail(Fatal("internal error: %r" % (e,)))


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
