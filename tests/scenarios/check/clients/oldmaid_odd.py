#!/usr/bin/env python3
"""odd_peer.py - an Old Maid ring peer with unusual but allowed habits.

Standard library only; blocking sockets and one thread per connection.

    python3 odd_peer.py --nick NAME --table HOST:PORT [habit flags] [--all]

Every habit is off by default (then it plays like a plain, by-the-book peer).
See --help for the list; --all turns on every habit that can be combined,
--all-stay the same set with the opposite choice for the two pairs of
habits that exclude each other (leave once out / stay; no optional fields /
every optional field).
"""
import argparse
import errno
import json
import os
import queue
import random
import select
import socket
import sys
import threading
import time

VALUES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = ["spades", "clubs", "diamonds", "hearts"]
PARTNER = {"spades": "clubs", "clubs": "spades",
           "diamonds": "hearts", "hearts": "diamonds"}

PEER_TIMEOUT = 10.0      # section 8: a single reply / pick / dial
GRACE = 0.2              # 7.7 step 6


def canon(card):
    v, s = str(card[0]), str(card[1])
    if v.lower() == "joker":
        return ("joker", "maid")
    return (v.upper(), s.lower())


def partner_of(card):
    v, s = card
    if v == "joker":
        return None
    return (v, PARTNER[s])


# ---------------------------------------------------------------- framing
class Framer:
    """Splits a byte stream into JSON objects by counting braces outside
    strings (section 2). Yields ("obj", dict) or ("err", message)."""

    def __init__(self):
        self.buf = bytearray()
        self.i = 0
        self.start = None
        self.depth = 0
        self.instr = False
        self.esc = False
        self.skip_line = False

    def feed(self, data):
        out = []
        self.buf += data
        buf = self.buf
        i = self.i
        n = len(buf)
        while i < n:
            c = buf[i]
            if self.skip_line:
                if c == 10:
                    self.skip_line = False
                i += 1
                continue
            if self.start is None:
                if c in (32, 9, 13, 10):
                    i += 1
                    continue
                if c == 123:
                    self.start = i
                    self.depth = 1
                    self.instr = False
                    self.esc = False
                    i += 1
                    continue
                out.append(("err", "not a JSON object"))
                self.skip_line = True
                i += 1
                continue
            if self.instr:
                if self.esc:
                    self.esc = False
                elif c == 92:
                    self.esc = True
                elif c == 34:
                    self.instr = False
                elif c == 10:
                    out.append(("err", "incomplete JSON object before end of line"))
                    self.start = None
            else:
                if c == 34:
                    self.instr = True
                elif c == 123:
                    self.depth += 1
                elif c == 125:
                    self.depth -= 1
                    if self.depth == 0:
                        raw = bytes(buf[self.start:i + 1])
                        self.start = None
                        try:
                            obj = json.loads(raw.decode("utf-8"))
                        except Exception as e:  # noqa
                            out.append(("err", "invalid JSON: %s" % e))
                        else:
                            if isinstance(obj, dict):
                                out.append(("obj", obj))
                            else:
                                out.append(("err", "not a JSON object"))
                elif c == 10:
                    out.append(("err", "incomplete JSON object before end of line"))
                    self.start = None
            i += 1
        if self.start is None:
            del buf[:i]
            self.i = 0
        else:
            del buf[:self.start]
            self.i = i - self.start
            self.start = 0
        return out


class Closed(Exception):
    pass


# ---------------------------------------------------------------- the peer
class Peer:
    def __init__(self, a):
        self.a = a
        self.nick = a.nick
        th, tp = a.table.rsplit(":", 1)
        self.table_addr = (th.strip("[]"), int(tp))
        self.rng = random.Random()
        self.hand = []
        self.hand_lock = threading.RLock()
        self.phase = "draw"
        self.out = False
        self.out_sent = False
        self.out_lock = threading.Lock()
        self.out_event = threading.Event()
        self.turnq = queue.Queue()
        self.seated = threading.Event()
        self.end = threading.Event()
        self.end_info = None
        self.players = None
        self.me = None
        self.known_out = set()
        self.gone = set()
        self.kept = {}          # seat -> Link we dialled and keep
        self.links = []         # every socket we hold, to close at the end
        self.links_lock = threading.Lock()
        self.tlock = threading.Lock()
        self.table = None
        self.log_lock = threading.Lock()
        self.seq = 0
        self.leaving = False
        self.lost = False
        self.holding = False
        self.last_event = time.time()

    # ------------------------------------------------------------ output
    def log(self, *parts):
        if not self.a.chatty:
            return
        with self.log_lock:
            try:
                sys.stderr.write("[%s %.3f] %s\n" % (
                    self.nick, time.time() % 1000, " ".join(str(p) for p in parts)))
                sys.stderr.flush()
            except Exception:  # noqa
                pass

    def encode(self, obj):
        obj = dict(obj)
        if self.a.extra_fields:
            self.seq += 1
            obj["x_client"] = "odd_peer/1.0"
            obj["x_note"] = "unknown fields are ignored (protocol 3)"
            obj["x_count"] = self.seq
        if self.a.odd_json:
            keys = list(obj.keys())
            self.rng.shuffle(keys)
            # put cmd/result last when it is not already, as some
            # dict-ordering languages do
            for k in ("cmd", "result"):
                if k in keys:
                    keys.remove(k)
                    keys.append(k)
            obj = {k: obj[k] for k in keys}
            text = json.dumps(obj, separators=(", ", ": "))
        else:
            text = json.dumps(obj, separators=(",", ":"))
        return (text + "\n").encode("utf-8")

    def sock_opts(self, s):
        if not self.a.nagle:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def track(self, s):
        with self.links_lock:
            self.links.append(s)

    # ------------------------------------------------------------ table
    def table_req(self, obj, timeout=30.0):
        with self.tlock:
            self.table.send(obj)
            while True:
                m = self.table.recv(timeout)
                if m is None:
                    raise Closed("table")
                return m

    def on_table_notice(self, m):
        if m.get("cmd") == "game_over":
            self.log("notice", json.dumps(m))
            self.set_end(m)

    def on_table_closed(self):
        if not self.end.is_set() and not self.leaving:
            self.set_end({"closed": True})

    def set_end(self, info):
        if self.end_info is None:
            self.end_info = info
        self.end.set()
        self.turnq.put("end")

    def status(self):
        try:
            r = self.table_req({"cmd": "status"})
        except (Closed, OSError, queue.Empty):
            return None
        if r.get("state") in ("over", "aborted") or r.get("game_over") or r.get("aborted"):
            self.set_end(r)
        return r

    def poller(self):
        period = self.a.poll_status
        while not self.end.is_set() and not self.leaving:
            time.sleep(period)
            if self.end.is_set() or self.leaving:
                break
            self.status()

    def listed_out(self, seat):
        r = self.status()
        if not r:
            return False
        nick = self.players[seat][1]
        outs = r.get("out") or []
        return nick in outs

    # ------------------------------------------------------------ hand
    def add_card(self, card):
        card = canon(card)
        with self.hand_lock:
            if self.a.shuffle:
                self.hand.append(card)
                self.rng.shuffle(self.hand)
            else:
                self.hand.insert(self.rng.randint(0, len(self.hand)), card)

    def discard_pairs(self):
        """Discard every pair held (section 4: before anything else)."""
        while True:
            with self.hand_lock:
                pair = None
                for c in self.hand:
                    p = partner_of(c)
                    if p is not None and p in self.hand:
                        pair = (c, p)
                        break
                if pair is None:
                    break
                self.hand.remove(pair[0])
                self.hand.remove(pair[1])
                empty_now = not self.hand
            last = empty_now and self.phase == "offer"
            cards = [list(pair[0]), list(pair[1])]
            if self.a.odd_json:
                self.rng.shuffle(cards)
            req = {"cmd": "discard", "cards": cards}
            if self.a.no_optional:
                pass                       # flag left out: it means false (5.3)
            elif self.a.every_optional:
                # 5.3: a JSON boolean, or the other spelling, any letter case
                if self.rng.random() < 0.5:
                    req["last_cards"] = bool(last)
                else:
                    req["last_card"] = "TRUE" if last else "False"
            else:
                req["last_cards"] = "true" if last else "false"
            r = self.table_req(req)
            self.log("discard", cards, "->", json.dumps(r))
            if last and r.get("result") == "ok" and not self.a.no_optional:
                with self.out_lock:
                    self.out = True
                    self.out_sent = True
                    self.out_event.set()
                if self.a.eager_out or self.a.leave_when_out:
                    # 7.8: sending out_of_cards as well does no harm
                    self.table_req({"cmd": "out_of_cards"})
        with self.hand_lock:
            empty = not self.hand
        if empty:
            if self.phase == "offer":
                self.ensure_out()
            elif self.a.eager_out:
                # 5.4: before the deck is empty it is answered ok and
                # changes nothing
                r = self.table_req({"cmd": "out_of_cards"})
                self.log("early out_of_cards ->", json.dumps(r))

    def ensure_out(self):
        with self.out_lock:
            if self.out:
                return
            mine = not self.out_sent
            self.out_sent = True
        if mine:
            r = self.table_req({"cmd": "out_of_cards"})
            self.log("out_of_cards ->", json.dumps(r))
            if self.a.eager_out:
                r2 = self.table_req({"cmd": "out_of_cards"})   # again: harmless
                self.log("out_of_cards again ->", json.dumps(r2))
            with self.out_lock:
                self.out = True
            self.out_event.set()
        else:
            self.out_event.wait(30)

    # ------------------------------------------------------------ dialling
    def dial(self, seat, deadline):
        """Returns a Link, or "gone" (listed out), or None (timeout)."""
        (host, port), nick = self.players[seat]
        if host.startswith("::ffff:"):
            host = host[7:]
        delay = 0.01
        asked = False
        while True:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                if self.a.odd_address:
                    s.bind((self.a.odd_address, 0))
                self.sock_opts(s)
                s.settimeout(max(0.5, deadline - time.time()))
                s.connect((host, int(port)))
                s.settimeout(None)
                link = Link(self, s, "to %s" % nick)
                self.track(s)
                self.log("dialled", nick, "at %s:%s" % (host, port))
                return link
            except OSError as e:
                s.close()
                self.log("dial", nick, "failed:", e)
                if not asked:
                    asked = True
                    if self.listed_out(seat):
                        return "gone"
                if self.end.is_set():
                    return None
                if time.time() + delay > deadline:
                    if self.listed_out(seat):
                        return "gone"
                    return None
                time.sleep(delay)
                delay = min(0.2, delay * 2)

    def ask_seat(self, seat, req):
        """Send req (your_turn / offer) to seat; returns (answer, link)."""
        nick = self.players[seat][1]
        deadline = time.time() + PEER_TIMEOUT
        resent = False
        while True:
            if self.end.is_set():
                return ("end", None)
            link = None
            if not self.a.conn_per_turn:
                link = self.kept.get(seat)
                if link is not None and link.dead:
                    self.kept.pop(seat, None)
                    link = None
            if link is None:
                link = self.dial(seat, deadline)
                if link == "gone":
                    return ("gone", None)
                if link is None:
                    return ("fail", "cannot reach %s within %d s" % (nick, PEER_TIMEOUT))
                if not self.a.conn_per_turn:
                    self.kept[seat] = link
            fresh = not link.used
            try:
                link.send(req)
            except OSError:
                link.close()
                self.kept.pop(seat, None)
                if self.listed_out(seat):
                    return ("gone", None)
                time.sleep(0.05)
                continue
            self.log(">", nick, json.dumps(req))
            # wait: 0.2 s grace, then the table's status every 0.2 s (7.7 step 6)
            reply = "wait"
            t0 = time.time()
            while True:
                try:
                    reply = link.recv(GRACE)
                    break
                except queue.Empty:
                    pass
                if self.end.is_set():
                    link.close()
                    return ("end", None)
                if self.listed_out(seat):
                    link.close()
                    self.kept.pop(seat, None)
                    return ("gone", None)
                if time.time() - t0 > PEER_TIMEOUT:
                    link.close()
                    return ("fail", "%s did not answer %s within %d s" % (nick, req["cmd"], PEER_TIMEOUT))
            if reply is None:
                # closed instead of answering (7.7 step 5)
                link.close()
                self.kept.pop(seat, None)
                if fresh and not resent:
                    resent = True          # 8: a connection not used yet: dial again once
                    continue
                if self.listed_out(seat):
                    return ("gone", None)
                if time.time() > deadline:
                    return ("fail", "%s closed the connection" % nick)
                time.sleep(0.1)
                continue
            self.log("<", nick, json.dumps(reply))
            link.used = True
            res = reply.get("result")
            if res == "ok":
                return ("ok", link)
            if res == "out":
                if self.a.conn_per_turn:
                    link.close()
                return ("out", None)
            link.close()
            self.kept.pop(seat, None)
            return ("fail", "%s answered %s with %s" % (nick, req["cmd"], json.dumps(reply)))

    def next_in(self, req):
        """7.7: ask seat by seat, going left. Returns (seat, link) or None."""
        n = len(self.players)
        for k in range(1, n):
            seat = (self.me + k) % n
            if seat in self.gone:
                continue
            if seat in self.known_out and not self.a.ask_out_again:
                continue
            ans, link = self.ask_seat(seat, dict(req))
            if ans == "ok":
                return (seat, link)
            if ans == "out":
                self.known_out.add(seat)
                continue
            if ans == "gone":
                self.known_out.add(seat)
                self.gone.add(seat)
                continue
            if ans == "end":
                return "end"
            # a neighbour that is in and does not answer: an error (7.7)
            self.fatal(link)
        return None

    def turn_req(self, cmd, **kw):
        req = {"cmd": cmd}
        req.update(kw)
        if self.a.every_optional:
            req["from"] = self.nick
            if cmd == "offer":
                req["stream"] = True
        return req

    # ------------------------------------------------------------ turns
    def pause(self):
        if self.a.pause > 0:
            time.sleep(self.rng.uniform(0, self.a.pause))

    def do_draw(self):
        self.pause()
        if self.end.is_set():
            return
        r = self.table_req({"cmd": "draw"})
        self.log("draw ->", json.dumps(r))
        res = r.get("result")
        if res in ("ok", "last_card"):
            self.add_card(r["card"])
            if res == "last_card":
                self.phase = "offer"
            self.discard_pairs()
            if res == "ok":
                got = self.next_in(self.turn_req("your_turn"))
                if isinstance(got, tuple) and self.a.conn_per_turn:
                    got[1].close()
            else:
                self.do_offer_turn()
        else:
            msg = str(r.get("message", ""))
            if msg.startswith("the deck is empty"):
                self.phase = "offer"
                with self.hand_lock:
                    empty = not self.hand
                if empty:
                    self.ensure_out()
            # any other refusal: not our turn; nothing to hand on

    def do_offer_turn(self):
        self.holding = True
        try:
            self.discard_pairs()
            self.pause()
            if self.end.is_set():
                return
            if self.a.status_before_offer:
                self.status()
                if self.end.is_set():
                    return
            with self.hand_lock:
                n = len(self.hand)
            got = self.next_in(self.turn_req("offer", num_cards=n))
            if got == "end":
                return
            if got is None:
                # no one else in: we hold the Old Maid (7.5 step 4)
                self.lost = True
                self.log("no one else is in: I hold the Old Maid")
                return
            seat, link = got
            if n > 0:
                self.serve_picks(seat, link, n)
            if self.a.conn_per_turn:
                link.close()
        finally:
            self.holding = False
        with self.hand_lock:
            empty = not self.hand
        if empty and self.phase == "offer":
            self.ensure_out()
        self.turnq.put("check")

    def serve_picks(self, seat, link, n):
        nick = self.players[seat][1]
        t0 = time.time()
        while True:
            try:
                m = link.recv(max(0.1, PEER_TIMEOUT - (time.time() - t0)))
            except queue.Empty:
                self.fatal("%s did not pick within %d s" % (nick, PEER_TIMEOUT))
            if m is None:
                self.fatal("%s closed the connection before picking" % nick)
            self.log("<", nick, json.dumps(m))
            if m.get("cmd") != "pick":
                if "cmd" in m:
                    link.send({"result": "error", "message": "expected a pick"})
                continue
            idx = m.get("card_num")
            if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0 or idx > n:
                link.send({"result": "error",
                           "message": "card_num %r is not between 0 and %d" % (idx, n - 1)})
                continue
            if idx == n:
                idx = n - 1             # 13.3: num_cards taken as the last card
            with self.hand_lock:
                card = self.hand.pop(idx)
            rep = {"result": "ok", "card": list(card)}
            link.send(rep)
            self.log(">", nick, json.dumps(rep))
            return

    # ------------------------------------------------------------ inbound
    def acceptor(self):
        while not self.end.is_set():
            try:
                s, addr = self.listener.accept()
            except OSError:
                return
            self.sock_opts(s)
            self.track(s)
            threading.Thread(target=self.guard, args=(self.inbound, s, addr),
                             daemon=True).start()

    def reply(self, s, obj):
        s.sendall(self.encode(obj))
        self.log("reply", json.dumps(obj))

    def read_one(self, s, fr, pending, timeout):
        t_end = time.time() + timeout
        while not pending:
            left = t_end - time.time()
            if left <= 0:
                return "timeout"
            r, _, _ = select.select([s], [], [], left)
            if not r:
                continue
            data = s.recv(65536)
            if not data:
                return None
            pending.extend(fr.feed(data))
        return pending.pop(0)

    def inbound(self, s, addr):
        fr = Framer()
        pending = []
        self.seated.wait(660)
        while True:
            item = self.read_one(s, fr, pending, 3600)
            if item is None or item == "timeout":
                s.close()
                return
            kind, m = item
            if kind == "err":
                self.reply(s, {"result": "error", "message": m})
                continue
            self.last_event = time.time()
            self.log("in <", json.dumps(m))
            if "cmd" not in m:
                if "result" in m:
                    s.close()          # never answer a reply (3)
                    return
                self.reply(s, {"result": "error",
                               "message": 'a message needs "cmd" (a request) or "result" (a reply)'})
                continue
            cmd = m["cmd"]
            if cmd == "your_turn":
                if self.out:
                    self.reply(s, {"result": "out"})
                    continue
                self.reply(s, {"result": "ok"})
                self.turnq.put("draw")
                if self.a.close_inbound:
                    s.close()
                    return
            elif cmd == "offer":
                nc = m.get("num_cards")
                if isinstance(nc, bool) or not isinstance(nc, int) or not 0 <= nc <= 53:
                    self.reply(s, {"result": "error",
                                   "message": "Expected `int` between 0 and 53 - at `$.num_cards`"})
                    continue
                self.phase = "offer"
                if self.out:
                    self.reply(s, {"result": "out"})
                    continue
                with self.hand_lock:
                    empty = not self.hand
                if empty:
                    self.ensure_out()
                    self.reply(s, {"result": "out"})
                    self.turnq.put("check")
                    continue
                self.reply(s, {"result": "ok"})
                if nc == 0:
                    self.turnq.put("offer")
                    continue
                stream = m.get("stream") is True
                if self.a.pick_pause or not stream:
                    time.sleep(0.05)
                got = self.picks(s, fr, pending, nc)
                if got is None:
                    return
                self.add_card(got)
                self.discard_pairs()
                self.turnq.put("offer")
                if self.a.close_inbound:
                    s.close()
                    return
            elif cmd == "pick":
                self.reply(s, {"result": "error", "message": "pick without an accepted offer"})
            else:
                self.reply(s, {"result": "error", "message": "unknown cmd %r" % (cmd,)})

    def picks(self, s, fr, pending, nc):
        for _ in range(8):
            req = {"cmd": "pick", "card_num": self.rng.randrange(nc)}
            s.sendall(self.encode(req))
            self.log("pick >", json.dumps(req))
            while True:
                item = self.read_one(s, fr, pending, PEER_TIMEOUT)
                if item is None or item == "timeout":
                    self.fatal("the offerer did not give the picked card")
                kind, m = item
                if kind == "obj" and "result" in m:
                    break
            self.log("pick <", json.dumps(m))
            if m.get("result") == "ok" and isinstance(m.get("card"), list):
                return m["card"]
        self.fatal("my picks were refused 8 times")

    # ------------------------------------------------------------ run
    def guard(self, fn, *args):
        try:
            fn(*args)
        except SystemExit:
            raise
        except Closed:
            if not self.end.is_set() and not self.leaving:
                self.set_end({"closed": True})
        except Exception as e:  # noqa
            if self.end.is_set() or self.leaving:
                return
            self.log("thread stopped:", type(e).__name__, e)

    def fatal(self, why):
        if isinstance(why, str):
            msg = why
        else:
            msg = "a neighbour failed"
        sys.stderr.write("%s: %s\n" % (self.nick, msg))
        sys.stderr.flush()
        self.close_all()
        os._exit(1)

    def close_all(self):
        try:
            self.listener.close()
        except Exception:  # noqa
            pass
        with self.links_lock:
            for s in self.links:
                try:
                    s.close()
                except Exception:  # noqa
                    pass

    def make_listener(self):
        bind_host = self.a.odd_address or self.a.listen_host
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ts = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if self.a.no_optional:
            # 5.1: without `port` the table takes the join's source port, so
            # listen on the very port our table connection comes from.
            for so in (ls, ts):
                so.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                so.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            ts.bind((bind_host, 0))
            port = ts.getsockname()[1]
            ls.bind((bind_host, port))
        else:
            if self.a.odd_address:
                ts.bind((bind_host, 0))
            if self.a.odd_port:
                while True:
                    port = self.rng.randint(20000, 60000)
                    try:
                        ls.bind((bind_host, port))
                        break
                    except OSError:
                        continue
            else:
                ls.bind((bind_host, 0))
        ls.listen(64)
        self.listener = ls
        self.listen_port = ls.getsockname()[1]
        self.listen_host = bind_host
        return ts

    def run(self):
        a = self.a
        if a.slow_start:
            time.sleep(a.slow_start)
        ts = self.make_listener()
        threading.Thread(target=self.acceptor, daemon=True).start()
        self.sock_opts(ts)
        ts.settimeout(10)
        ts.connect(self.table_addr)
        ts.settimeout(None)
        self.track(ts)
        self.table = Link(self, ts, "table", notice=self.on_table_notice,
                          on_close=self.on_table_closed)
        self.log("listening on %s:%d" % (self.listen_host, self.listen_port))
        obs = None
        if a.observer:
            obs = socket.create_connection(self.table_addr, timeout=10) \
                if not a.odd_address else self._odd_conn(self.table_addr)
            obs.settimeout(None)
            self.sock_opts(obs)
            self.track(obs)
            obs = Link(self, obs, "observer")
        if a.status_first:
            r = self.table_req({"cmd": "status"})
            self.log("status before join ->", json.dumps(r))
        if obs is not None:
            obs.send({"cmd": "status"})
            self.log("observer status ->", json.dumps(obs.recv(10)))
        if a.slow_start:
            time.sleep(a.slow_start)
        join = {"cmd": "join", "nick": self.nick}
        if not a.no_optional:
            join["host"] = self.listen_host
            join["port"] = self.listen_port
            join["watch"] = not a.no_watch
            if a.every_optional:
                join["stream"] = True
                join["verify"] = False
                join["witness"] = False
        self.log("join >", json.dumps(join))
        # poll the forming game on the observer while the join waits (5.5)
        stop_obs = threading.Event()
        if obs is not None:
            threading.Thread(target=self.guard, args=(self.observe, obs, stop_obs),
                             daemon=True).start()
        r = self.table_req(join, timeout=700)
        stop_obs.set()
        self.log("join <", json.dumps(r))
        if r.get("result") != "ok":
            sys.stderr.write("%s: the table refused the join: %s\n" % (self.nick, r.get("message")))
            self.close_all()
            os._exit(1)
        self.players = r["players"]
        for i, p in enumerate(self.players):
            if p[1] == self.nick:
                self.me = i
        if self.me is None:
            sys.stderr.write("%s: my nick is not in the join reply\n" % self.nick)
            self.close_all()
            os._exit(1)
        self.seated.set()
        watching = join.get("watch") is True
        if a.poll_status <= 0 and not watching:
            a.poll_status = 0.2          # 5.6: no watch, so poll
        if a.poll_status > 0:
            threading.Thread(target=self.guard, args=(self.poller,), daemon=True).start()
        n = len(self.players)
        if not a.lazy_dial:
            left = (self.me + 1) % n
            link = self.dial(left, time.time() + PEER_TIMEOUT)
            if isinstance(link, Link):
                self.kept[left] = link
        if self.me == 0:
            self.turnq.put("draw")
        self.main_loop()

    def _odd_conn(self, addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((self.a.odd_address, 0))
        s.settimeout(10)
        s.connect(addr)
        return s

    def observe(self, obs, stop):
        while not stop.is_set():
            try:
                obs.send({"cmd": "status"})
                r = obs.recv(10)
            except Exception:  # noqa
                return
            self.log("observer status ->", json.dumps(r))
            stop.wait(0.5)
        obs.close()

    def main_loop(self):
        while True:
            try:
                item = self.turnq.get(timeout=0.5)
            except queue.Empty:
                item = None
            if self.end.is_set():
                self.finish()
            if item == "draw":
                self.do_draw()
            elif item == "offer":
                self.do_offer_turn()
            if self.end.is_set():
                self.finish()
            if (self.a.leave_when_out and self.out and not self.holding
                    and self.turnq.empty()):
                self.leave()
            if time.time() - self.last_event > 900:
                self.fatal("nothing happened for 900 s")

    def place(self, outs):
        if self.nick in outs:
            k = outs.index(self.nick) + 1
            suf = {1: "st", 2: "nd", 3: "rd"}.get(k if k < 20 else k % 10, "th")
            return "out %d%s of %d" % (k, suf, len(self.players))
        return None

    def leave(self):
        # 7.8 / 13.4: a player that is out may leave (turn already passed)
        r = self.status()
        self.leaving = True
        outs = (r or {}).get("out") or []
        self.log("out, and leaving before the end (protocol 7.8, 13.4)")
        self.close_all()
        print(self.place(outs) or "out")
        sys.stdout.flush()
        os._exit(0)

    def finish(self):
        info = self.end_info or {}
        if info.get("closed"):
            sys.stderr.write("%s: the table closed the connection\n" % self.nick)
            self.close_all()
            os._exit(1)
        if info.get("aborted") or info.get("state") == "aborted":
            sys.stderr.write("%s: game aborted: %s\n" % (self.nick, info.get("reason")))
            self.close_all()
            os._exit(1)
        outs = info.get("out") or []
        loser = info.get("loser")
        if self.out and self.a.linger > 0:
            time.sleep(self.a.linger)      # keep answering `out` a moment (7.8)
        self.log("game over:", json.dumps(info))
        self.close_all()
        if loser == self.nick:
            print("lost: holds the Old Maid")
        else:
            print(self.place(outs) or "game over: loser %s" % loser)
        sys.stdout.flush()
        os._exit(0)


class Link:
    """A connection we dialled (to the table or to a seat): a reader thread
    hands whole messages to a queue, so waiting never loses half a line."""

    def __init__(self, peer, sock, name, notice=None, on_close=None):
        self.peer = peer
        self.sock = sock
        self.name = name
        self.q = queue.Queue()
        self.dead = False
        self.used = False
        self.notice = notice
        self.on_close = on_close
        self.wlock = threading.Lock()
        threading.Thread(target=self.reader, daemon=True).start()

    def reader(self):
        fr = Framer()
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                for kind, m in fr.feed(data):
                    if kind != "obj":
                        self.peer.log(self.name, "sent junk:", m)
                        continue
                    if self.notice is not None and "cmd" in m:
                        self.notice(m)
                    else:
                        self.q.put(m)
        except OSError:
            pass
        self.dead = True
        self.q.put(None)
        if self.on_close is not None:
            self.on_close()

    def send(self, obj):
        data = self.peer.encode(obj)
        with self.wlock:
            self.sock.sendall(data)

    def recv(self, timeout):
        return self.q.get(timeout=timeout)

    def close(self):
        self.dead = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


HABITS = {
    # flag: (help, value under --all, value under --all-stay)
    "conn_per_turn": ("dial a new connection for every turn handed on and close it after the exchange", True, True),
    "lazy_dial": ("never dial at the start: dial a seat only when a turn is to be handed to it", True, True),
    "no_optional": ("send no optional field: join without host, port (listen on the join's source port instead), watch, stream; discards without last_cards (then out_of_cards)", True, False),
    "every_optional": ("send every optional field: host, port, watch, stream, verify:false, witness:false in join; from and stream in turns; last_cards as a JSON boolean or spelt last_card in any case", False, True),
    "no_watch": ("join without watch: learn the end by polling status", True, False),
    "odd_json": ("spaces after , and :, keys shuffled, cmd/result last", True, True),
    "extra_fields": ("unknown extra fields in every request and reply", True, True),
    "observer": ("a second table connection that polls status while the join waits", True, True),
    "status_first": ("send status on the table connection before join", True, True),
    "status_before_offer": ("ask the table for status before every offer", True, True),
    "pick_pause": ("pause 50 ms between ok and pick even to a streaming offerer", True, True),
    "ask_out_again": ("ask seats known to be out again every time instead of skipping them", True, True),
    "eager_out": ("send out_of_cards whenever the hand is empty, also in the draw phase, and once more after it counted", True, True),
    "leave_when_out": ("leave (close everything, exit 0) once out and the turn passed", True, False),
    "shuffle": ("shuffle the whole hand on every card received instead of inserting at a random place", True, True),
    "nagle": ("do not set TCP_NODELAY", True, True),
    "chatty": ("log every message on stderr", True, True),
    "close_inbound": ("PROBE, not claimed allowed (7.2 step 3): close an inbound connection after each exchange answered on it", False, False),
    "odd_port": ("listen on a random high port chosen by the program, not port 0", False, True),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nick", required=True)
    ap.add_argument("--table", required=True, help="HOST:PORT")
    ap.add_argument("--all", action="store_true", help="every habit that combines (leave once out, no optional fields)")
    ap.add_argument("--all-stay", action="store_true", help="every habit, but stay to the end and send every optional field")
    for k, (h, _, _) in HABITS.items():
        ap.add_argument("--" + k.replace("_", "-"), action="store_true", default=None, help=h)
    ap.add_argument("--poll-status", type=float, default=None, metavar="S",
                    help="poll status on the table connection every S seconds")
    ap.add_argument("--pause", type=float, default=None, metavar="S",
                    help="pause a random 0..S seconds before each draw and each offer")
    ap.add_argument("--slow-start", type=float, default=None, metavar="S",
                    help="wait S seconds before connecting, and S more before join")
    ap.add_argument("--linger", type=float, default=None, metavar="S",
                    help="after the end, once out, keep answering this long (default 0.2)")
    ap.add_argument("--odd-address", nargs="?", const="127.0.1.1", default=None, metavar="ADDR",
                    help="listen on, announce and dial from this loopback address (default 127.0.1.1, "
                         "what gethostbyname(gethostname()) gives on Debian)")
    ap.add_argument("--listen-host", default="127.0.0.1")
    a = ap.parse_args()
    col = 1 if a.all else 2 if a.all_stay else None
    for k, v in HABITS.items():
        if getattr(a, k) is None:
            setattr(a, k, v[col] if col else False)
    if a.no_optional and a.every_optional:
        ap.error("--no-optional and --every-optional exclude each other")
    if a.no_optional:
        a.no_watch = True
    defaults = {"poll_status": (0.0, 0.05, 0.05), "pause": (0.0, 0.3, 0.3),
                "slow_start": (0.0, 1.0, 1.0), "linger": (0.2, 0.2, 1.5)}
    for k, v in defaults.items():
        if getattr(a, k) is None:
            setattr(a, k, v[col or 0])
    if a.odd_address is None and col:
        a.odd_address = "127.0.1.1"
    p = Peer(a)
    threading.excepthook = lambda args: p.log("thread ended:", args.exc_type.__name__, args.exc_value)
    try:
        p.run()
    except Exception as e:  # noqa
        if p.end.is_set():
            p.finish()
        sys.stderr.write("%s: stopped: %s %s\n" % (a.nick, type(e).__name__, e))
        os._exit(1)


if __name__ == "__main__":
    main()
