#!/usr/bin/env python3
"""A stand-in for the Old Maid clients students wrote in 2013 (Python 2, blocking sockets).

Those clients were written against the original course table and the handout
(``oldmaid-ring.txt``), and each had its own habits. This program plays one of
them: with no behaviour flags it is a correct, well-behaved peer; each flag
switches on one habit of the old clients, in any combination:

``--listen-late SECONDS``
    bind the listening socket before joining and send its port in ``join``,
    but call ``listen()`` on it only SECONDS after the join reply arrives (a
    dial before then is refused); then dial the left neighbour (with retries:
    it may be late too). The socket stays bound meanwhile, so no other program
    on the machine can be given the port (the 2013 clients that closed it and
    bound again later lost it now and then; a test must not).
``--one-recv``
    read every message with exactly one ``recv(--recv-size)`` (1024 bytes, the
    size most of that code used) and ``json.loads`` it; two objects in one
    read crash the client, as they did the 2013 ones. As a picker, pause 50 ms
    between ``ok`` and ``pick``.
``--pick-inclusive``
    pick ``card_num`` from 0..n inclusive; as an offerer read the index as
    1-based the way Python 2 code did: ``hand.pop(card_num - 1)``.
``--leave-when-out``
    once out (and acknowledged), close everything, print ``out`` and exit 0
    (after passing the turn on with an empty offer if it holds it).
``--keep-last-pair``
    in the offer phase, keep a final pair instead of discarding it: send
    ``out_of_cards`` and count as out with the pair in hand.
``--leave-holding-turn``
    when it goes out holding the turn (by a pick or by the last draw), exit at
    once without passing the turn on. Implies ``--leave-when-out``.
``--deaf-when-out``
    once out, stop calling ``accept()`` but keep the listening socket open:
    the connections it already has are served (``out``), a new one completes
    its handshake in the kernel's backlog and is never read. One 2013 client
    did exactly this (its accept loop ended with its part in the game).
``--mute-when-out``
    once out, accept new connections but never read or answer them.
``--chatty``
    ``print`` every message sent and received to stdout as it goes, the way
    students debug, into a pipe that is block-buffered; the result line is
    the last line printed.
``--all``
    the first six and ``--chatty`` (``--listen-late`` 0.3 s unless given).
``--all-deaf``, ``--all-mute``
    ``--all`` with ``--deaf-when-out`` (or ``--mute-when-out``) instead of
    leaving once out: it stays to the end, never leaves holding the turn.

Whatever the flags: stdlib only, blocking sockets, one thread per connection,
TCP_NODELAY on every socket, every message bare ``json.dumps`` output with no
newline in one ``sendall``, ``join`` with ``nick`` and ``port`` only, and
``status`` polled every 50 ms to learn the end.

Usage: python student_peer.py --nick NICK --table HOST:PORT [--seed S] [flags]
       [--report PATH] [--timeout SECONDS]

Prints ``out 2nd of 4``, ``lost: holds the Old Maid`` or (when it left early)
``out`` and exits 0; on any error prints one line ``NICK: reason`` on stderr and
exits 1. ``--report PATH`` writes one JSON object of counters at exit.
"""

import argparse
import contextlib
import json
import os
import random
import socket
import sys
import threading
import time

VALUES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = ["spades", "clubs", "diamonds", "hearts"]
COLOUR = {"spades": "black", "clubs": "black", "diamonds": "red", "hearts": "red"}
JOKER = ("joker", "maid")

REPLY_TIMEOUT = 10.0  # any single reply, any dial (with retries), the pick after an offer
POLL_INTERVAL = 0.05  # status polling while idle
DIAL_RETRY = 0.05  # pause between refused dials
PICK_PAUSE = 0.05  # --one-recv: between "ok" and "pick", as the 2013 clients did
LINGER = 0.2  # an out player keeps answering this long after the end
ONE_RECV_SIZE = 1024  # --recv-size: what most of the 2013 code passed to recv
MAX_MESSAGE = 65536
MAX_BAD_PICKS = 8
DEFAULT_LISTEN_LATE = 0.3

WS = b" \t\r\n"
OPEN, CLOSE, QUOTE, BACKSLASH = ord("{"), ord("}"), ord('"'), ord("\\")


class PeerError(Exception):
    """Ends the game for us with one error line."""


class ConnClosed(PeerError):
    pass


class ReplyTimeout(PeerError):
    pass


class TwoInOneRead(PeerError):
    """--one-recv: one read held two objects; the 2013 clients crashed here."""


class BadInput(Exception):
    """Bytes that are not a JSON object (stream mode: the connection stays usable)."""


# ---- cards ------------------------------------------------------------------


def canon_card(obj):
    """A card from the wire as a canonical tuple."""
    if not (isinstance(obj, list) and len(obj) == 2 and all(isinstance(x, str) for x in obj)):
        raise PeerError(f"not a card: {obj!r}")
    value, suit = obj[0].lower(), obj[1].lower()
    if (value, suit) == JOKER:
        return JOKER
    if value.upper() in VALUES and suit in SUITS:
        return (value.upper(), suit)
    raise PeerError(f"unknown card {obj!r}")


def pairs_with(a, b):
    """Same value, same colour; the joker pairs with nothing."""
    if JOKER in (a, b) or a == b:
        return False
    return a[0] == b[0] and COLOUR[a[1]] == COLOUR[b[1]]


def ordinal(n):
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def pick_index(card_num, hand_len, one_based):
    """The index into the offered hand that a pick asks for, or None to refuse it.

    Default: 0 <= card_num < n, and card_num == n as the last card (docs/protocols/oldmaid.md 13.3).
    one_based (--pick-inclusive): the Python 2 reading ``hand.pop(card_num - 1)``,
    so 0 is -1 (the last card), n is the last card too, and only an index
    outside -n..n-1 (or a non-integer) is refused."""
    if not isinstance(card_num, int) or isinstance(card_num, bool):
        return None
    if one_based:
        idx = card_num - 1
        return idx if -hand_len <= idx <= hand_len - 1 else None
    if 0 <= card_num < hand_len:
        return card_num
    if card_num == hand_len and hand_len > 0:
        return hand_len - 1
    return None


def pop_picked(hand, card_num, one_based):
    """Remove and return the picked card, or None (hand unchanged) for a bad pick."""
    idx = pick_index(card_num, len(hand), one_based)
    return None if idx is None else hand.pop(idx)


# ---- reading messages ---------------------------------------------------------


class StreamReader:
    """Cuts a byte stream into JSON objects by counting braces outside strings.

    Objects may come back to back with or without newlines (or other
    whitespace) between them, several in one read or split across reads. The
    scan state is kept between feeds, so a long object is scanned once."""

    def __init__(self):
        self.buf = bytearray()
        self.pos = 0  # scanned this far into the object at the front (0: not started)
        self.depth = 0
        self.in_str = False
        self.esc = False
        self.skip_line = False  # after junk: drop bytes up to the next newline

    def feed(self, data):
        self.buf += data

    def _reset(self, upto):
        del self.buf[:upto]
        self.pos = self.depth = 0
        self.in_str = self.esc = False

    def next(self):
        """The next complete object, or None until more bytes come."""
        buf = self.buf
        if self.pos == 0:
            if self.skip_line:
                nl = buf.find(b"\n")
                if nl < 0:
                    buf.clear()
                    return None
                del buf[: nl + 1]
                self.skip_line = False
            start = 0
            while start < len(buf) and buf[start] in WS:
                start += 1
            del buf[:start]
            if not buf:
                return None
            if buf[0] != OPEN:
                self.skip_line = True
                raise BadInput("not a JSON object")
        i = self.pos
        while i < len(buf):
            c = buf[i]
            i += 1
            if self.in_str:
                if self.esc:
                    self.esc = False
                elif c == BACKSLASH:
                    self.esc = True
                elif c == QUOTE:
                    self.in_str = False
            elif c == QUOTE:
                self.in_str = True
            elif c == OPEN:
                self.depth += 1
            elif c == CLOSE:
                self.depth -= 1
                if self.depth == 0:
                    raw = bytes(buf[:i])
                    self._reset(i)
                    if len(raw) > MAX_MESSAGE:
                        raise PeerError(f"message over {MAX_MESSAGE} bytes")
                    try:
                        return json.loads(raw.decode("utf-8"))
                    except (ValueError, UnicodeDecodeError) as e:
                        raise BadInput(f"invalid JSON: {e}") from None
        if i > MAX_MESSAGE:
            raise PeerError(f"message over {MAX_MESSAGE} bytes")
        self.pos = i
        return None


def decode_one_read(data, name):
    """--one-recv: the bytes of one recv() must be exactly one JSON object."""
    try:
        text = data.decode("utf-8").strip()
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":
            raise TwoInOneRead(f"crashed: two messages in one read on {name}: {e}") from None
        raise PeerError(f"crashed: bad message in one read on {name}: {e}") from None
    except UnicodeDecodeError as e:
        raise PeerError(f"crashed: bad message in one read on {name}: {e}") from None
    if not isinstance(obj, dict):
        raise PeerError(f"crashed: not a JSON object in one read on {name}: {obj!r}")
    return obj


class Conn:
    """One TCP connection: bare json.dumps writes, and one of two readers."""

    def __init__(self, sock, name, one_recv=False, recv_size=ONE_RECV_SIZE, chatty=False):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.name = name
        self.one_recv = one_recv
        self.recv_size = recv_size
        self.chatty = chatty
        self.reader = StreamReader()
        self.lock = threading.Lock()  # one exchange at a time on a dialled connection

    def send(self, msg):
        data = json.dumps(msg).encode("utf-8")  # no newline: the 2013 clients sent none
        if self.chatty:
            print(f"{self.name} send {data.decode()}")  # block-buffered into a pipe
        self.sock.settimeout(REPLY_TIMEOUT)
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise ReplyTimeout(f"{self.name}: send timed out") from None
        except OSError as e:
            raise ConnClosed(f"{self.name}: send failed: {e}") from None

    def _read(self, deadline, size):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ReplyTimeout(f"{self.name}: no answer in time")
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(size)
        except TimeoutError:
            raise ReplyTimeout(f"{self.name}: no answer in time") from None
        except OSError as e:
            raise ConnClosed(f"{self.name}: {e}") from None
        if not data:
            raise ConnClosed(f"{self.name}: connection closed")
        if self.chatty:
            print(f"{self.name} recv {data!r}")
        return data

    def recv(self, deadline):
        """The next object; ReplyTimeout at the deadline, ConnClosed on EOF."""
        if self.one_recv:
            return decode_one_read(self._read(deadline, self.recv_size), self.name)
        while True:
            obj = self.reader.next()
            if obj is not None:
                return obj
            self.reader.feed(self._read(deadline, 65536))

    def recv_reply(self, deadline):
        """The next reply (an object with "result") on a connection we asked on."""
        while True:
            try:
                obj = self.recv(deadline)
            except BadInput as e:
                raise PeerError(f"{self.name}: garbage instead of a reply ({e})") from None
            if "result" in obj:
                return obj
            if obj.get("cmd") == "game_over":
                continue  # a notice, never a reply
            raise PeerError(f"{self.name}: expected a reply, got {obj!r}")

    def request(self, msg, timeout=REPLY_TIMEOUT):
        self.send(msg)
        return self.recv_reply(time.monotonic() + timeout)

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.close()


# ---- the player ---------------------------------------------------------------


class Peer:
    def __init__(self, args):
        self.nick = args.nick
        self.table_addr = args.table
        self.rng = random.Random(args.seed)
        self.listen_late = args.listen_late  # None or seconds
        self.one_recv = args.one_recv
        self.pick_inclusive = args.pick_inclusive
        self.keep_last_pair = args.keep_last_pair
        self.leave_holding = args.leave_holding_turn
        self.leave_out = args.leave_when_out or args.leave_holding_turn
        self.deaf_when_out = args.deaf_when_out
        self.mute_when_out = args.mute_when_out
        self.recv_size = args.recv_size
        self.chatty = args.chatty
        self.report_path = args.report

        self.lock = threading.RLock()  # hand, phase, out flag
        self.table_lock = threading.Lock()  # one table request at a time
        self.dial_lock = threading.Lock()
        self.exit_lock = threading.Lock()  # taken once, by whoever ends the process
        self.hand = []
        self.phase = "draw"
        self.is_out = False  # the table acknowledged it
        self.lost = False  # holding the turn, we found no one else in
        self.started = threading.Event()
        self.done = threading.Event()
        self.failed = threading.Event()
        self.error = None
        self.outs = {}  # seat -> Conn we dialled
        self.inbound = []
        self.table = None
        self.listener = None
        self.players = []  # [(host, port, nick)] in seat order
        self.seat = None
        self.stats = {
            "picks_at_n": 0,
            "picks_total": 0,
            "refused_picks": 0,
            "listened_late": False,
            "kept_pair": False,
            "left_when_out": False,
            "left_holding_turn": False,
            "passed_turn": 0,
            "two_in_one_read": False,
            "result": None,
            "error": None,
            "left_at": None,
            "deaf_conns": 0,  # connections left unaccepted in the backlog once out
            "mute_conns": 0,  # connections accepted once out and never answered
        }

    def conn(self, sock, name):
        return Conn(sock, name, self.one_recv, self.recv_size, self.chatty)

    # ---- ending the process ----------------------------------------------

    def close_all(self):
        self.done.set()
        try:
            conns = list(self.outs.values()) + list(self.inbound)
        except RuntimeError:  # changed under us by another thread: the exit closes them
            conns = []
        if self.table is not None:
            conns.append(self.table)
        for conn in conns:
            conn.close()
        if self.deaf_when_out and self.is_out and self.listener is not None:
            self.stats["deaf_conns"] = _backlog(self.listener)
        if self.listener is not None:
            with contextlib.suppress(OSError):
                self.listener.close()

    def write_report(self):
        if not self.report_path:
            return
        with contextlib.suppress(OSError):
            tmp = f"{self.report_path}.tmp{os.getpid()}"
            with open(tmp, "w") as f:
                json.dump(self.stats, f)
                f.write("\n")
            os.replace(tmp, self.report_path)

    def terminate(self, code, out=None, err=None, locked=False, wait=None):
        """Write the report and the one line, and end the process. Never returns."""
        if not locked and not self.exit_lock.acquire(timeout=wait if wait else -1):
            self.stuck_exit(err)
        self.stats["result"] = out
        self.stats["error"] = err
        self.write_report()
        if out is not None:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        if err is not None:
            sys.stderr.write(err + "\n")
            sys.stderr.flush()
        os._exit(code)

    def stuck_exit(self, err):
        """Only the watchdog gets here, when another exit is stuck for seconds."""
        sys.stderr.write(f"{err or self.nick + ': exit stuck'}\n")
        sys.stderr.flush()
        os._exit(1)

    def die(self, reason, locked=False, wait=None):
        if not locked and not self.exit_lock.acquire(timeout=wait if wait else -1):
            self.stuck_exit(f"{self.nick}: {reason}")
        self.close_all()
        self.terminate(1, err=f"{self.nick}: {reason}", locked=True)

    def leave(self, holding_turn=False):
        """Leave the game now that we are out (--leave-when-out/--leave-holding-turn)."""
        self.exit_lock.acquire()
        self.stats["left_when_out"] = True
        self.stats["left_holding_turn"] = holding_turn
        self.stats["left_at"] = time.monotonic()  # one clock with the transcripts (Linux)
        self.close_all()
        self.terminate(0, out="out", locked=True)

    def fail(self, exc):
        """A failure in a helper thread: the main thread reports it (or a crash ends us now)."""
        if isinstance(exc, TwoInOneRead):
            self.stats["two_in_one_read"] = True
            self.die(str(exc))
        with self.lock:
            if self.error is None:
                self.error = str(exc)
        self.failed.set()

    # ---- table ------------------------------------------------------------

    def table_request(self, msg):
        with self.table_lock:
            try:
                return self.table.request(msg)
            except ConnClosed:
                raise PeerError("the table closed the connection") from None

    def status(self):
        rep = self.table_request({"cmd": "status"})
        if rep.get("result") != "ok":
            raise PeerError(f"status refused: {rep.get('message')}")
        if rep.get("aborted") or rep.get("state") == "aborted":
            raise PeerError(f"game aborted: {rep.get('reason')}")
        return rep

    def go_out(self):
        """Tell the table we are out; only after its ok do we count as out."""
        with self.lock:
            if self.is_out:
                return
            rep = self.table_request({"cmd": "out_of_cards"})
            if rep.get("result") != "ok":
                raise PeerError(f"out_of_cards refused: {rep.get('message')}")
            self.is_out = True

    def take_card(self, card):
        """Put a card at a random place; discard the pair it makes (but see --keep-last-pair)."""
        with self.lock:
            self.hand.insert(self.rng.randrange(len(self.hand) + 1), card)
            mate = next((c for c in self.hand if pairs_with(c, card)), None)
            if mate is None:
                return
            last = self.phase == "offer" and len(self.hand) == 2
            if last and self.keep_last_pair:
                self.go_out()  # out, with the pair still in hand, never offered
                self.stats["kept_pair"] = True
                return
            rep = self.table_request(
                {
                    "cmd": "discard",
                    "cards": [list(mate), list(card)],
                    "last_cards": "true" if last else "false",
                }
            )
            if rep.get("result") != "ok":
                raise PeerError(f"discard of {mate} and {card} refused: {rep.get('message')}")
            self.hand.remove(mate)
            self.hand.remove(card)
            if last:
                self.is_out = True

    # ---- other seats -------------------------------------------------------

    def left_seats(self):
        n = len(self.players)
        return [(self.seat + k) % n for k in range(1, n)]

    def seat_gone(self, seat):
        """A seat we cannot reach may be skipped once the table lists it as out."""
        st = self.status()
        return bool(st.get("game_over")) or self.players[seat][2] in (st.get("out") or [])

    def reach(self, seat, check_gone=True):
        """Our connection to a seat, dialling (with retries) if need be; None if it left."""
        with self.dial_lock:
            conn = self.outs.get(seat)
            if conn is not None:
                return conn
            host, port, nick = self.players[seat]
            deadline = time.monotonic() + REPLY_TIMEOUT
            while True:
                remaining = deadline - time.monotonic()
                try:
                    sock = socket.create_connection((host, port), timeout=max(0.1, remaining))
                    break
                except OSError as e:
                    if check_gone and self.seat_gone(seat):
                        return None
                    if time.monotonic() + DIAL_RETRY >= deadline:
                        raise PeerError(f"cannot dial {nick} at {host}:{port}: {e}") from None
                    time.sleep(DIAL_RETRY)
            conn = self.conn(sock, f"{self.nick}>{nick}")
            self.outs[seat] = conn
            return conn

    def ask(self, seat, msg):
        """Send a turn request to a seat: "ok", "out", or "gone" (it left, the table says out).

        For an accepted offer with cards the pick is served before returning."""
        conn = self.reach(seat)
        if conn is None:
            return "gone", None
        nick = self.players[seat][2]
        with conn.lock:
            try:
                rep = conn.request(msg)
            except ConnClosed:
                with self.dial_lock:
                    self.outs.pop(seat, None)
                conn.close()
                if self.seat_gone(seat):
                    return "gone", None
                raise PeerError(
                    f"{nick} closed the connection before answering {msg['cmd']}"
                ) from None
            except ReplyTimeout:
                raise PeerError(
                    f"{nick} did not answer {msg['cmd']} within {REPLY_TIMEOUT:g} s"
                ) from None
            result = rep.get("result")
            if result not in ("ok", "out"):
                raise PeerError(f"{nick} answered {msg['cmd']} with {rep!r}")
            if result == "ok" and msg["cmd"] == "offer":
                self.offer_taken(seat, msg, rep)
            if result == "ok" and msg["cmd"] == "offer" and msg["num_cards"] > 0:
                self.serve_pick(conn, msg["num_cards"])
            return result, conn

    # ---- draw phase ----------------------------------------------------------

    def draw_turn(self):
        rep = self.table_request({"cmd": "draw"})
        result = rep.get("result")
        if result == "error":
            message = str(rep.get("message", ""))
            if not message.startswith("the deck is empty"):
                raise PeerError(f"draw refused: {message}")
            with self.lock:
                self.phase = "offer"
                if not self.hand:
                    self.go_out()
            if self.is_out and self.leave_out:
                self.leave()
            return
        if result not in ("ok", "last_card"):
            raise PeerError(f"draw answered {rep!r}")
        card = canon_card(rep.get("card"))
        if result == "last_card":
            with self.lock:
                self.phase = "offer"
            self.take_card(card)
            self.holding_turn()
        else:
            self.take_card(card)
            self.pass_draw_turn()

    def pass_draw_turn(self):
        for seat in self.left_seats():
            result, _ = self.ask(seat, {"cmd": "your_turn"})
            if result == "ok":
                return
        raise PeerError("everyone else is out during the draw phase")

    # ---- offer phase ---------------------------------------------------------

    def holding_turn(self):
        """We hold the turn (the last draw, a pick, or an empty offer)."""
        if self.is_out and self.leave_holding:
            self.leave(holding_turn=True)
        self.hold_turn()
        if self.is_out and self.leave_out:
            self.leave()

    def hold_turn(self):
        with self.lock:
            n = 0 if self.is_out else len(self.hand)  # a kept pair is never offered
        for seat in self.left_seats():
            result, _ = self.ask(seat, {"cmd": "offer", "num_cards": n})
            if result == "ok":
                if n == 0:
                    self.stats["passed_turn"] += 1
                return
        with self.lock:
            if not self.is_out:
                self.lost = True

    def serve_pick(self, conn, n):
        deadline = time.monotonic() + REPLY_TIMEOUT
        while True:
            try:
                msg = conn.recv(deadline)
            except BadInput as e:
                conn.send({"result": "error", "message": str(e)})
                continue
            except ReplyTimeout:
                raise PeerError(f"{conn.name}: no pick within {REPLY_TIMEOUT:g} s") from None
            if "result" in msg:
                raise PeerError(f"{conn.name}: expected a pick, got reply {msg!r}")
            if msg.get("cmd") != "pick":
                conn.send(
                    {"result": "error", "message": f"expected a pick, not {msg.get('cmd')!r}"}
                )
                continue
            with self.lock:
                card = pop_picked(self.hand, msg.get("card_num"), self.pick_inclusive)
                if card is None:
                    conn.send(
                        {
                            "result": "error",
                            "message": f"card_num {msg.get('card_num')!r} is not a card "
                            f"of the {n} offered",
                        }
                    )
                    continue
                self.send_card(conn, card, msg.get("card_num"))
                if not self.hand:
                    self.go_out()
            if self.is_out and self.leave_out:
                self.leave()  # the picker holds the turn now, not us
            return

    def pick_message(self, k):
        """The pick of card ``k`` (a verified client signs it)."""
        return {"cmd": "pick", "card_num": k}

    def pick_from(self, conn, num):
        """Pick from an accepted offer of num > 0 cards; the card we got."""
        for _ in range(MAX_BAD_PICKS):
            k = self.rng.randint(0, num) if self.pick_inclusive else self.rng.randrange(num)
            self.stats["picks_total"] += 1
            if k == num:
                self.stats["picks_at_n"] += 1
            conn.send(self.pick_message(k))
            try:
                rep = conn.recv_reply(time.monotonic() + REPLY_TIMEOUT)
            except ReplyTimeout:
                raise PeerError(f"{conn.name}: no card within {REPLY_TIMEOUT:g} s") from None
            except ConnClosed:
                raise PeerError(f"{conn.name}: closed before sending the card") from None
            if rep.get("result") == "ok":
                self.last_pick = (k, rep)
                return canon_card(rep.get("card"))
            if rep.get("result") != "error":
                raise PeerError(f"{conn.name}: pick answered {rep!r}")
            self.stats["refused_picks"] += 1
        raise PeerError(f"{conn.name}: {MAX_BAD_PICKS} picks refused in a row")

    def on_offer(self, conn, msg):
        num = msg.get("num_cards")
        if not isinstance(num, int) or isinstance(num, bool) or not 0 <= num <= 53:
            conn.send({"result": "error", "message": "num_cards must be an integer 0-53"})
            return
        with self.lock:
            self.phase = "offer"
            if not self.is_out and not self.hand:
                self.go_out()
            if self.is_out:
                self.answer(conn, msg, "out")
                answered_out = True
            else:
                self.answer(conn, msg, "ok")
                answered_out = False
        if answered_out:
            if self.leave_out:
                self.leave()
            return
        if num > 0:
            if self.one_recv:
                time.sleep(PICK_PAUSE)  # the 2013 clients' pause between ok and pick
            self.take_card(self.pick_from(conn, num))
        self.holding_turn()

    def on_your_turn(self, conn, msg=None):
        with self.lock:
            if self.is_out:
                self.answer(conn, msg, "out")
                return
            self.answer(conn, msg, "ok")
        self.draw_turn()

    def answer(self, conn, msg, result):
        """Answer a turn request (your_turn or offer) ok or out."""
        conn.send({"result": result})

    def offer_taken(self, seat, msg, rep):
        """Our offer ``msg`` to ``seat`` was answered ok with ``rep`` (a hook)."""

    def send_card(self, conn, card, card_num):
        """Answer a pick with the card it got."""
        conn.send({"result": "ok", "card": list(card)})

    # ---- inbound connections ---------------------------------------------------

    def accept_loop(self, listener):
        while not self.done.is_set():
            if self.deaf_when_out and self.is_out:
                return  # the listener stays open: dials still complete, into the backlog
            try:
                sock, addr = listener.accept()
            except TimeoutError:
                continue
            except OSError as e:
                if not self.done.is_set():
                    self.fail(PeerError(f"listener failed: {e}"))
                return
            if self.mute_when_out and self.is_out:
                self.stats["mute_conns"] += 1
                with self.lock:
                    self.inbound.append(Conn(sock, f"mute to {addr[0]}:{addr[1]}"))
                continue  # held open, never read
            conn = self.conn(sock, f"inbound from {addr[0]}:{addr[1]}")
            with self.lock:
                self.inbound.append(conn)
            threading.Thread(target=self.serve_inbound, args=(conn,), daemon=True).start()

    def serve_inbound(self, conn):
        try:
            while not self.done.is_set():
                try:
                    msg = conn.recv(time.monotonic() + 0.25)
                except ReplyTimeout:
                    continue
                except ConnClosed:
                    return  # the other side hung up between requests
                except BadInput as e:
                    conn.send({"result": "error", "message": str(e)})
                    continue
                # A request may beat our own join reply: read that first.
                while not self.started.wait(0.25):
                    if self.done.is_set():
                        return
                if "result" in msg:
                    return  # a reply nobody asked for: the sender is broken
                cmd = msg.get("cmd")
                if cmd == "your_turn":
                    self.on_your_turn(conn, msg)
                elif cmd == "offer":
                    self.on_offer(conn, msg)
                elif cmd == "game_over":
                    continue
                elif cmd == "pick":
                    conn.send({"result": "error", "message": "pick without an accepted offer"})
                elif isinstance(cmd, str):
                    conn.send({"result": "error", "message": f"unknown cmd {cmd!r}"})
                else:
                    conn.send(
                        {
                            "result": "error",
                            "message": 'a message needs "cmd" (a request) or "result" (a reply)',
                        }
                    )
        except PeerError as e:
            if not self.done.is_set() or isinstance(e, TwoInOneRead):
                self.fail(e)
        except Exception as e:  # keep the one-line error contract
            if not self.done.is_set():
                self.fail(PeerError(f"{type(e).__name__}: {e}"))
        finally:
            conn.close()

    def bind(self, host, port):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            listener.bind((host, port))
        except OSError as e:
            listener.close()
            raise PeerError(f"cannot listen on {host}:{port}: {e}") from None
        return listener

    def listen(self, listener):
        host, port = listener.getsockname()[:2]
        try:
            listener.listen(16)
        except OSError as e:
            listener.close()
            raise PeerError(f"cannot listen on {host}:{port}: {e}") from None
        listener.settimeout(0.25)
        self.listener = listener
        threading.Thread(target=self.accept_loop, args=(listener,), daemon=True).start()
        return listener.getsockname()[1]

    # ---- main ------------------------------------------------------------------

    def run(self, deadline):
        host, _, port = self.table_addr.rpartition(":")
        try:
            port = int(port)
        except ValueError:
            raise PeerError(f"bad --table {self.table_addr!r}") from None
        try:
            tsock = socket.create_connection((host or "127.0.0.1", port), timeout=REPLY_TIMEOUT)
        except OSError as e:
            raise PeerError(f"cannot reach the table at {self.table_addr}: {e}") from None
        self.table = self.conn(tsock, "table")
        local_ip = tsock.getsockname()[0]

        bound = self.bind(local_ip, 0)
        # Listen before joining, or (listen late) only after the join reply.
        my_port = self.listen(bound) if self.listen_late is None else bound.getsockname()[1]

        self.table.send(self.join_message(my_port))
        while True:
            try:
                rep = self.table.recv_reply(min(deadline, time.monotonic() + 0.25))
                break
            except ReplyTimeout:
                if self.failed.is_set():
                    raise PeerError(self.error) from None
                if time.monotonic() >= deadline:
                    raise PeerError("timed out waiting for the game to start") from None
            except ConnClosed:
                raise PeerError("the table closed the connection") from None
        if rep.get("result") != "ok":
            raise PeerError(f"join refused: {rep.get('message')}")
        self.joined(rep)
        try:
            for (phost, pport), pnick in rep.get("players"):
                phost = str(phost)
                if phost.startswith("::ffff:"):
                    phost = phost[len("::ffff:") :]
                self.players.append((phost, int(pport), str(pnick)))
        except (TypeError, ValueError):
            raise PeerError(f"bad join reply {rep!r}") from None
        nicks = [p[2] for p in self.players]
        if self.nick not in nicks:
            raise PeerError("the join reply does not list us")
        self.seat = nicks.index(self.nick)
        self.started.set()

        if self.listen_late is not None:
            time.sleep(self.listen_late)
            self.listen(bound)
            self.stats["listened_late"] = True

        self.reach(self.left_seats()[0], check_gone=False)  # dial the left neighbour
        if self.seat == 0:
            self.draw_turn()  # player1 draws first

        status = self.poll_until_over(deadline)
        return self.finish(status)

    def join_message(self, port):
        return {"cmd": "join", "nick": self.nick, "port": port}

    def joined(self, rep):
        """The join reply came (a hook for clients that read more of it)."""

    def poll_until_over(self, deadline):
        while True:
            if time.monotonic() >= deadline:
                raise PeerError("timed out waiting for the end of the game")
            status = self.status()
            if status.get("game_over"):
                return status
            if self.failed.wait(POLL_INTERVAL):
                # Failing once the game is over is no error: players stop answering.
                status = self.status()
                if status.get("game_over"):
                    return status
                raise PeerError(self.error)

    def finish(self, status):
        loser = status.get("loser")
        out = status.get("out") or []
        if loser == self.nick:
            line = "lost: holds the Old Maid"
        elif self.nick in out:
            if self.lost:
                raise PeerError(f"we found no one else in, but the table says {loser} lost")
            line = f"out {ordinal(out.index(self.nick) + 1)} of {len(self.players)}"
            self.failed.wait(LINGER)  # keep answering "out" a moment
        else:
            raise PeerError(f"the game is over but we are neither out nor the loser: {status!r}")
        return line


def _backlog(listener):
    """How many connections wait unaccepted: accept them now, without a word, to count."""
    count = 0
    with contextlib.suppress(OSError):
        listener.settimeout(0)
        while True:
            listener.accept()[0].close()
            count += 1
    return count


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"student_peer: {message}\n")
        sys.exit(1)


def parse_args(argv=None):
    ap = OneLineParser(description="Old Maid peer behaving like the 2013 student clients")
    ap.add_argument("--nick", required=True)
    ap.add_argument("--table", required=True, help="HOST:PORT")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--report", default=None, help="write a JSON object of counters here")
    ap.add_argument("--listen-late", type=float, default=None, metavar="SECONDS")
    ap.add_argument("--one-recv", action="store_true")
    ap.add_argument("--pick-inclusive", action="store_true")
    ap.add_argument("--leave-when-out", action="store_true")
    ap.add_argument("--keep-last-pair", action="store_true")
    ap.add_argument("--leave-holding-turn", action="store_true")
    ap.add_argument("--deaf-when-out", action="store_true")
    ap.add_argument("--mute-when-out", action="store_true")
    ap.add_argument("--recv-size", type=int, default=ONE_RECV_SIZE, metavar="BYTES")
    ap.add_argument("--chatty", action="store_true")
    ap.add_argument("--all", action="store_true", help="the first six habits and --chatty")
    ap.add_argument("--all-deaf", action="store_true", help="--all, deaf once out, not leaving")
    ap.add_argument("--all-mute", action="store_true", help="--all, mute once out, not leaving")
    args = ap.parse_args(argv)
    if args.all or args.all_deaf or args.all_mute:
        if args.listen_late is None:
            args.listen_late = DEFAULT_LISTEN_LATE
        args.one_recv = args.pick_inclusive = args.keep_last_pair = args.chatty = True
        args.leave_when_out = args.leave_holding_turn = args.all
        args.deaf_when_out = args.deaf_when_out or args.all_deaf
        args.mute_when_out = args.mute_when_out or args.all_mute
    if args.listen_late is not None and args.listen_late < 0:
        ap.error("--listen-late must be >= 0")
    if args.recv_size < 1:
        ap.error("--recv-size must be >= 1")
    if (args.deaf_when_out or args.mute_when_out) and args.leave_when_out:
        ap.error("--deaf-when-out and --mute-when-out stay in the game: not with leaving")
    return args


def main():
    args = parse_args()
    play(Peer(args), args)


def play(peer, args):
    """Play one game to its end under a watchdog, and exit: every way out is one line."""

    def give_up():
        peer.die(f"gave up after {args.timeout:g} seconds", wait=2.0)

    watchdog = threading.Timer(args.timeout, give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        line = peer.run(time.monotonic() + args.timeout)
    except TwoInOneRead as e:
        peer.stats["two_in_one_read"] = True
        peer.die(str(e))
    except PeerError as e:
        peer.die(str(e))
    except Exception as e:  # no tracebacks, ever
        peer.die(f"{type(e).__name__}: {e}")
    peer.exit_lock.acquire()
    peer.close_all()
    peer.terminate(0, out=line, locked=True)


if __name__ == "__main__":
    main()
