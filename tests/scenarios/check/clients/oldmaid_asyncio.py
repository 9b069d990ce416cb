#!/usr/bin/env python3
"""Old Maid peer for the inf-3701 ring exercise (asyncio streams, stdlib only).

Usage: python3 oldmaid_peer.py --nick NAME --table HOST:PORT

Written from docs/protocols/oldmaid.md sections 1-13 (no verification, 14 is
skipped: this is an "older client").  Debug lines go to stdout; the one line
saying why we failed goes to stderr.
"""
import argparse
import asyncio
import json
import os
import random
import socket
import sys
import time

PEER_TIMEOUT = 10.0      # section 8: longest wait for any single reply / dial
GRACE = 0.2              # 7.7 step 6: ask the table for status this often
IDLE_TIMEOUT = 120.0     # section 8: give up after this long hearing nothing
LINGER = 0.2             # 7.8: keep answering "out" this long after the end
LOSER_WAIT = 10.0        # 7.9: how long the loser waits for game_over
PICK_PAUSE = 0.05        # 6.2 / 13.2: pause between ok and pick w/o "stream"

VALUES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = ["spades", "clubs", "diamonds", "hearts"]
JOKER = ["joker", "maid"]

T0 = time.monotonic()
NICK = "?"


QUIET = False


def dbg(*args):
    if QUIET:
        return
    print(f"[{time.monotonic() - T0:8.3f}] {NICK}:", *args, flush=True)


def norm_card(c):
    """Canonical spelling of a card, or None if it is not a card (section 4)."""
    if not (isinstance(c, list) and len(c) == 2
            and all(isinstance(x, str) for x in c)):
        return None
    v, s = c[0].strip(), c[1].strip().lower()
    if v.lower() == "joker" and s == "maid":
        return list(JOKER)
    v = v.upper()
    if v in VALUES and s in SUITS:
        return [v, s]
    return None


def colour(suit):
    return "black" if suit in ("spades", "clubs") else "red"


def is_pair(a, b):
    if a == JOKER or b == JOKER or a == b:
        return False
    return a[0] == b[0] and colour(a[1]) == colour(b[1])


def find_pair(hand):
    for i in range(len(hand)):
        for j in range(i + 1, len(hand)):
            if is_pair(hand[i], hand[j]):
                return hand[i], hand[j]
    return None


def ordinal(n):
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def set_nodelay(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


def encode(msg):
    return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


async def send(writer, msg):
    # one message, one write (section 2)
    writer.write(encode(msg))
    await writer.drain()


class Conn:
    """A connection we dialled to another seat (we send requests on it)."""

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.answered = False   # has it ever given us a reply?


class GiveUp(Exception):
    pass


class Peer:
    def __init__(self, nick, table_host, table_port):
        self.nick = nick
        self.table_host = table_host
        self.table_port = table_port
        self.loop = asyncio.get_running_loop()

        self.hand = []
        self.phase = "draw"          # "draw" or "offer"
        self.out = False             # True once the table acked us out
        self.out_task = None         # pending out_of_cards
        self.players = []            # [(host, port, nick)] in seat order
        self.me = None               # my seat index
        self.known_out = set()       # nicks known to be out
        self.conns = {}              # seat -> Conn (dialled by us)
        self.dials = {}              # seat -> dialling task

        self.table_lock = asyncio.Lock()
        self.pending = []            # futures waiting for table replies
        self.joined = asyncio.Event()
        self.done = self.loop.create_future()
        self.game_over = False
        self.lost = False
        self.last_heard = time.monotonic()
        self.tasks = set()
        self.inbound = set()
        self.server = None

    # ------------------------------------------------------------------
    # bookkeeping
    # ------------------------------------------------------------------
    def finish(self, code, line):
        if not self.done.done():
            self.done.set_result((code, line))

    def fail(self, why):
        dbg("FAIL:", why)
        self.finish(1, f"{self.nick}: {why}")

    def spawn(self, coro, what):
        t = asyncio.ensure_future(self._guard(coro, what))
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)
        return t

    async def _guard(self, coro, what):
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except GiveUp as e:
            self.fail(str(e))
        except (ConnectionError, OSError) as e:
            if not self.game_over:
                self.fail(f"{what}: connection error: {e}")
        except Exception as e:  # a bug of mine: say so in one line
            self.fail(f"internal error in {what}: {e!r}")

    def seat_nick(self, seat):
        return self.players[seat][2]

    # ------------------------------------------------------------------
    # the table connection
    # ------------------------------------------------------------------
    async def table_reader(self):
        while True:
            try:
                line = await self.treader.readline()
            except (ConnectionError, ValueError) as e:
                line = b""
                dbg("table read error:", e)
            if not line:
                if self.game_over:
                    dbg("table closed the connection (game is over)")
                else:
                    self.fail("the table closed the connection")
                return
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                self.fail(f"garbage from the table: {line[:80]!r}")
                return
            if not isinstance(msg, dict):
                self.fail(f"not a JSON object from the table: {line[:80]!r}")
                return
            if "cmd" in msg:            # a notice, never answered (3)
                if msg["cmd"] == "game_over":
                    dbg("table notice:", msg)
                    self.on_game_over(msg)
                else:
                    dbg("ignoring table notice", msg)
                continue
            if "result" not in msg:
                dbg("table sent something that is neither reply nor notice:", msg)
                continue
            # a reply: goes to the oldest request still waiting
            while self.pending:
                fut = self.pending.pop(0)
                if not fut.done():
                    fut.set_result(msg)
                    break
            else:
                self.fail(f"a reply from the table that answers nothing: {msg}")
                return

    async def table_request(self, msg):
        async with self.table_lock:          # one request at a time (3)
            fut = self.loop.create_future()
            self.pending.append(fut)
            await send(self.twriter, msg)
            return await fut

    async def status(self):
        r = await self.table_request({"cmd": "status"})
        for n in r.get("out") or []:
            if n != self.nick and n not in self.known_out:
                dbg(f"status says {n} is out")
                self.known_out.add(n)
        state = r.get("state")
        if state == "over" or r.get("game_over"):
            self.on_game_over({"cmd": "game_over", "loser": r.get("loser"),
                               "out": r.get("out", [])})
        elif state == "aborted" or r.get("aborted"):
            self.on_game_over({"cmd": "game_over", "aborted": True,
                               "reason": r.get("reason")})
        return r

    def on_game_over(self, msg):
        if msg.get("aborted"):
            self.fail(f"game aborted: {msg.get('reason')}")
            return
        if self.game_over:
            return
        self.game_over = True
        loser = msg.get("loser")
        outs = list(msg.get("out") or [])
        n = len(self.players)
        if loser == self.nick:
            line = "lost: holds the Old Maid"
        elif self.nick in outs:
            line = f"out {ordinal(outs.index(self.nick) + 1)} of {n}"
        else:
            line = f"game over: loser {loser}; out: {', '.join(outs)}"
        dbg(f"GAME OVER: loser {loser}, out order {outs}")
        self.spawn(self._linger(line), "linger")

    async def _linger(self, line):
        # keep answering "out" a moment, so the loser's last round finds us
        await asyncio.sleep(LINGER)
        self.finish(0, line)

    async def give_up(self, blame, reason):
        """5.8: tell the table why we leave before we leave, then stop."""
        msg = {"cmd": "give_up", "reason": reason}
        if blame:
            msg["nick"] = blame
        dbg("giving up:", msg)
        try:
            await asyncio.wait_for(self.table_request(msg), 2.0)
            # give the table a moment to push the aborted notice
            await asyncio.sleep(0.3)
        except (asyncio.TimeoutError, ConnectionError, OSError):
            pass
        what = f"{blame} {reason}" if blame else reason
        raise GiveUp(what)

    # ------------------------------------------------------------------
    # hand
    # ------------------------------------------------------------------
    def add_card(self, card):
        # random position, so the position says nothing (section 4)
        pos = random.randint(0, len(self.hand))
        self.hand.insert(pos, card)
        dbg(f"got {card}, hand now {len(self.hand)} cards")

    async def discard_pairs(self):
        while True:
            pair = find_pair(self.hand)
            if pair is None:
                return
            a, b = pair
            self.hand.remove(a)
            self.hand.remove(b)
            last = not self.hand and self.phase == "offer"
            dbg(f"discarding {a} {b} (last_cards={last})")
            r = await self.table_request({"cmd": "discard", "cards": [a, b],
                                          "last_cards": "true" if last else "false"})
            if r.get("result") != "ok":
                dbg("table refused the discard:", r.get("message"))
                if not self.game_over:
                    # the table aborts the game if it matters; check now
                    await self.status()
            elif last:
                self.out = True
                dbg("I am OUT (table acked my last pair)")

    async def go_out(self):
        """Empty hand in the offer phase: out_of_cards, wait for the ok (7.4, 7.8)."""
        if self.out:
            return
        if self.out_task is None:
            self.out_task = asyncio.ensure_future(self._send_out())
        await asyncio.shield(self.out_task)

    async def _send_out(self):
        dbg("hand empty in offer phase: out_of_cards")
        r = await self.table_request({"cmd": "out_of_cards"})
        if r.get("result") == "ok":
            self.out = True
            dbg("I am OUT (table acked out_of_cards)")
        else:
            dbg("table refused out_of_cards:", r)
            await self.status()

    def enter_offer_phase(self, why):
        if self.phase != "offer":
            self.phase = "offer"
            dbg(f"offer phase now ({why}); hand {len(self.hand)} cards")

    # ------------------------------------------------------------------
    # dialling other seats
    # ------------------------------------------------------------------
    async def get_conn(self, seat):
        """Connection to a seat, or None if the seat is out and gone (7.7 step 5)."""
        if seat in self.conns:
            return self.conns[seat]
        if seat not in self.dials:
            self.dials[seat] = asyncio.ensure_future(self._dial(seat))
        task = self.dials[seat]
        try:
            conn = await asyncio.shield(task)
        finally:
            if task.done():
                self.dials.pop(seat, None)
        return conn

    async def _dial(self, seat):
        host, port, nick = self.players[seat]
        deadline = time.monotonic() + PEER_TIMEOUT
        delay = 0.01
        tries = 0
        while True:
            tries += 1
            try:
                r, w = await asyncio.open_connection(host, port)
                set_nodelay(w)
                conn = Conn(r, w)
                self.conns[seat] = conn
                dbg(f"dialled seat {seat + 1} ({nick}) at {host}:{port}")
                return conn
            except OSError as e:
                dbg(f"dial {nick} at {host}:{port} failed: {e}")
                if nick in self.known_out:
                    return None
                if not self.game_over:
                    await self.status()
                if nick in self.known_out:
                    dbg(f"{nick} is out and gone: skipping")
                    return None
                if time.monotonic() > deadline:
                    await self.give_up(nick, f"could not be reached at {host}:{port} "
                                       f"within {PEER_TIMEOUT:.0f} s ({tries} attempts)")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.2)

    def drop_conn(self, seat):
        c = self.conns.pop(seat, None)
        if c is not None:
            c.writer.close()

    async def read_reply(self, seat, conn, what):
        """Wait for one message from a seat we asked, polling status (7.7 step 6).

        Returns ("msg", obj), ("gone", None) if the table lists it as out,
        or ("closed", None)."""
        nick = self.seat_nick(seat)
        start = time.monotonic()
        while True:
            try:
                line = await asyncio.wait_for(conn.reader.readline(), GRACE)
            except asyncio.TimeoutError:
                if nick in self.known_out and what != "pick":
                    return "gone", None
                if time.monotonic() - start > PEER_TIMEOUT:
                    await self.give_up(nick, f"did not answer {what} within "
                                       f"{PEER_TIMEOUT:.0f} s")
                dbg(f"{nick} has not answered {what} yet; asking the table")
                await self.status()
                if nick in self.known_out and what != "pick":
                    dbg(f"{nick} is silent and out: skipping")
                    return "gone", None
                continue
            except (ConnectionError, ValueError) as e:
                dbg(f"reading from {nick}: {e}")
                return "closed", None
            if not line:
                return "closed", None
            self.last_heard = time.monotonic()
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if not isinstance(msg, dict):
                await self.give_up(nick, f"sent garbage instead of a reply to {what}: "
                                   f"{line[:60]!r}")
            return "msg", msg

    async def neighbour_closed(self, seat, what):
        """A seat closed its connection instead of answering (7.7 step 5, 7.10)."""
        nick = self.seat_nick(seat)
        self.drop_conn(seat)
        await self.status()
        if nick in self.known_out:
            dbg(f"{nick} closed, but it is out: skipping")
            return
        # let the table name the player who died, not us (7.10)
        dbg(f"{nick} closed its connection during {what}; waiting for the table")
        await asyncio.sleep(0.5)
        await self.status()
        if self.done.done() or self.game_over:
            raise asyncio.CancelledError()
        await self.give_up(nick, f"closed its connection during {what}")

    async def ask_next(self, req):
        """Send req to the next player who is in (7.7).

        Returns (seat, conn) of the seat that said ok, or None if all are out."""
        n = len(self.players)
        seat = (self.me + 1) % n
        while seat != self.me:
            nick = self.seat_nick(seat)
            if self.game_over:
                return None
            if nick in self.known_out:
                dbg(f"skipping {nick} (known out)")
                seat = (seat + 1) % n
                continue
            conn = await self.get_conn(seat)
            if conn is None:
                seat = (seat + 1) % n
                continue
            dbg(f"-> {nick}: {req}")
            try:
                await send(conn.writer, req)
                kind, msg = await self.read_reply(seat, conn, req["cmd"])
            except (ConnectionError, OSError) as e:
                dbg(f"writing to {nick}: {e}")
                kind, msg = "closed", None
            if kind == "closed" and not conn.answered:
                # 8: a connection not used yet may have been closed before
                # our request was read; dial again and resend once
                dbg(f"{nick} closed a fresh connection; dialling again")
                self.drop_conn(seat)
                conn = await self.get_conn(seat)
                if conn is None:
                    seat = (seat + 1) % n
                    continue
                try:
                    await send(conn.writer, req)
                    kind, msg = await self.read_reply(seat, conn, req["cmd"])
                except (ConnectionError, OSError):
                    kind, msg = "closed", None
            if kind == "closed":
                await self.neighbour_closed(seat, req["cmd"])
                seat = (seat + 1) % n
                continue
            if kind == "gone":
                self.known_out.add(nick)
                seat = (seat + 1) % n
                continue
            conn.answered = True
            res = msg.get("result")
            dbg(f"<- {nick}: {msg}")
            if res == "ok":
                return seat, conn
            if res == "out":
                self.known_out.add(nick)
                seat = (seat + 1) % n
                continue
            await self.give_up(nick, f"answered {req['cmd']} with {msg}")
        return None

    # ------------------------------------------------------------------
    # holding the turn
    # ------------------------------------------------------------------
    async def draw_turn(self):
        r = await self.table_request({"cmd": "draw"})
        res = r.get("result")
        if res in ("ok", "last_card"):
            card = norm_card(r.get("card"))
            if card is None:
                raise GiveUp(f"the table dealt something that is not a card: {r}")
            self.add_card(card)
            if res == "last_card":
                self.enter_offer_phase("I drew the last card")
            await self.discard_pairs()
            if res == "ok":
                got = await self.ask_next({"cmd": "your_turn"})
                if got is None:
                    dbg("nobody to hand the draw turn to?!")
            else:
                await self.offer_turn()
            return
        message = str(r.get("message", ""))
        if message.startswith("the deck is empty"):
            # 7.4: not our turn; just switch phase (and go out if empty)
            self.enter_offer_phase("draw refused: deck is empty")
            if not self.hand:
                await self.go_out()
        else:
            dbg("draw refused:", message)
            await self.status()

    async def offer_turn(self):
        await self.discard_pairs()
        if self.game_over:
            return
        if not self.hand:
            # 7.5 step 3: out while holding the turn: pass it on
            if not self.out:
                await self.go_out()
            got = await self.ask_next({"cmd": "offer", "num_cards": 0, "stream": True})
            if got is None:
                dbg("passed to nobody: everyone else is out")
            else:
                dbg(f"passed the turn to {self.seat_nick(got[0])}")
            return
        num = len(self.hand)
        got = await self.ask_next({"cmd": "offer", "num_cards": num, "stream": True})
        if got is None:
            # 7.5 step 4: no one else is in, I hold the Old Maid
            self.lost = True
            dbg(f"nobody else is in: I LOST, holding {self.hand}")
            await self.wait_for_end()
            return
        seat, conn = got
        await self.serve_picks(seat, conn, num)

    async def serve_picks(self, seat, conn, num):
        nick = self.seat_nick(seat)
        bad = 0
        while True:
            kind, msg = await self.read_reply(seat, conn, "pick")
            if kind == "closed":
                await self.neighbour_closed(seat, "pick")
                return
            if msg.get("cmd") != "pick":
                dbg(f"expected pick from {nick}, got {msg}")
                if "cmd" in msg:
                    await send(conn.writer, {"result": "error",
                                             "message": f"expected pick, not {msg.get('cmd')}"})
                    continue
                await self.give_up(nick, f"sent {msg} instead of a pick")
            k = msg.get("card_num")
            if isinstance(k, int) and not isinstance(k, bool) and k == num:
                k = num - 1      # 13.3: taken as the last card
            if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < num:
                bad += 1
                await send(conn.writer, {"result": "error",
                                         "message": f"card_num {k} is not between 0 and {num - 1}"})
                if bad >= 8:
                    await self.give_up(nick, f"picked outside the offer {bad} times in a row")
                continue
            card = self.hand.pop(k)
            await send(conn.writer, {"result": "ok", "card": card})
            dbg(f"{nick} picked #{k}: gave {card}, {len(self.hand)} left")
            break
        if not self.hand:
            await self.go_out()     # "right after answering the pick" (7.5)

    async def wait_for_end(self):
        """The loser waits for the table's word (7.9), polling status too."""
        deadline = time.monotonic() + LOSER_WAIT
        while not self.game_over and time.monotonic() < deadline:
            await self.status()
            if self.game_over:
                break
            await asyncio.sleep(0.3)
        if not self.game_over:
            await self.give_up(None, f"holding the Old Maid, but the table did not "
                               f"end the game within {LOSER_WAIT:.0f} s")

    # ------------------------------------------------------------------
    # inbound connections (from the right)
    # ------------------------------------------------------------------
    async def handle_inbound(self, reader, writer):
        self.inbound.add(writer)
        set_nodelay(writer)
        peer = writer.get_extra_info("peername")
        dbg("inbound connection from", peer)
        try:
            await self._serve_inbound(reader, writer)
        except asyncio.CancelledError:
            raise
        except GiveUp as e:
            self.fail(str(e))
        except (ConnectionError, OSError) as e:
            dbg(f"inbound {peer}: {e}")
        except Exception as e:
            self.fail(f"internal error serving {peer}: {e!r}")
        finally:
            self.inbound.discard(writer)
            writer.close()

    async def _serve_inbound(self, reader, writer):
        while True:
            try:
                line = await reader.readline()
            except ValueError:   # line over the StreamReader limit
                await send(writer, {"result": "error", "message":
                                    "message exceeds the 65536-byte limit; closing the connection"})
                return
            if not line:
                return
            self.last_heard = time.monotonic()
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError as e:
                if not line.startswith(b"{"):
                    err = "not a JSON object"
                else:
                    err = f"invalid JSON: {e}"
                await send(writer, {"result": "error", "message": err})
                continue
            if not isinstance(msg, dict):
                await send(writer, {"result": "error", "message": "not a JSON object"})
                continue
            cmd = msg.get("cmd")
            if cmd is None:
                if "result" in msg:
                    dbg("a reply on an inbound connection, no request out: closing", msg)
                    return      # never answer a reply (3)
                await send(writer, {"result": "error", "message":
                                    'a message needs "cmd" (a request) or "result" (a reply)'})
                continue
            # 7.2: a turn may arrive before our own join reply; read that first
            await self.joined.wait()
            dbg(f"<= {msg}")
            if cmd == "your_turn":
                await self.on_your_turn(writer)
            elif cmd == "offer":
                await self.on_offer(reader, writer, msg)
            elif cmd == "pick":
                await send(writer, {"result": "error", "message": "pick without an accepted offer"})
            else:
                await send(writer, {"result": "error", "message": f"unknown cmd {cmd!r}"})

    async def on_your_turn(self, writer):
        if self.out:
            await send(writer, {"result": "out"})
            return
        if self.phase == "offer" and not self.hand:
            await self.go_out()
            await send(writer, {"result": "out"})
            return
        await send(writer, {"result": "ok"})     # reply first, then draw
        self.spawn(self.draw_turn(), "draw turn")

    async def on_offer(self, reader, writer, msg):
        n = msg.get("num_cards")
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 53:
            await send(writer, {"result": "error",
                                "message": f"num_cards must be an integer 0-53, not {n!r}"})
            return
        self.enter_offer_phase("got an offer")
        if self.out:
            await send(writer, {"result": "out"})
            return
        if not self.hand:
            await self.go_out()
            await send(writer, {"result": "out"})
            return
        await send(writer, {"result": "ok"})
        if n == 0:
            dbg("got the turn passed (num_cards 0)")
            self.spawn(self.offer_turn(), "offer turn")
            return
        if not msg.get("stream"):
            await asyncio.sleep(PICK_PAUSE)     # 13.2: old one-recv readers
        card = await self.pick_from(reader, writer, n)
        if card is None:
            return
        self.add_card(card)
        self.spawn(self.offer_turn(), "offer turn")

    async def pick_from(self, reader, writer, n):
        tries = 0
        while True:
            k = random.randrange(n)
            await send(writer, {"cmd": "pick", "card_num": k})
            try:
                line = await asyncio.wait_for(reader.readline(), PEER_TIMEOUT)
            except asyncio.TimeoutError:
                await self.give_up(None, f"no card came within {PEER_TIMEOUT:.0f} s "
                                   f"for my pick of an offer")
            if not line:
                await self.status()
                await asyncio.sleep(0.5)
                await self.status()
                if self.done.done():
                    return None
                await self.give_up(None, "the offerer closed the connection before giving "
                                   "me the card I picked")
            self.last_heard = time.monotonic()
            try:
                r = json.loads(line)
            except ValueError:
                r = None
            if not isinstance(r, dict):
                await self.give_up(None, f"garbage instead of a card: {line[:60]!r}")
            if r.get("result") == "ok":
                card = norm_card(r.get("card"))
                if card is None:
                    await self.give_up(None, f"the offerer gave me a non-card {r.get('card')!r}")
                dbg(f"picked #{k} of {n}: {card}")
                return card
            tries += 1
            dbg(f"pick #{k} refused: {r}")
            if tries >= 8:
                await self.give_up(None, "the offerer refused 8 picks in a row")

    # ------------------------------------------------------------------
    async def idle_watch(self):
        while True:
            await asyncio.sleep(1.0)
            if self.game_over or self.lost:
                return
            if time.monotonic() - self.last_heard > IDLE_TIMEOUT:
                await self.give_up(None, f"heard nothing for {IDLE_TIMEOUT:.0f} s")

    async def run(self):
        # 7.1: connect to the table, listen, then join
        self.treader, self.twriter = await asyncio.wait_for(
            asyncio.open_connection(self.table_host, self.table_port), PEER_TIMEOUT)
        set_nodelay(self.twriter)
        my_host = self.twriter.get_extra_info("sockname")[0]
        if my_host.startswith("::ffff:"):
            my_host = my_host[7:]
        if ":" in my_host:          # reached the table over IPv6 loopback
            my_host = "127.0.0.1"
        self.server = await asyncio.start_server(self.handle_inbound, my_host, 0)
        my_port = self.server.sockets[0].getsockname()[1]
        dbg(f"listening on {my_host}:{my_port}")
        join = {"cmd": "join", "nick": self.nick, "host": my_host, "port": my_port,
                "watch": True, "stream": True}
        await send(self.twriter, join)
        dbg("joined, waiting for the game to start")
        while True:
            line = await self.treader.readline()
            if not line:
                raise GiveUp("the table closed the connection before the game started")
            line = line.strip()
            if line:
                break
        reply = json.loads(line)
        if reply.get("result") != "ok":
            raise GiveUp(f"the table refused the join: {reply.get('message')}")
        for entry in reply["players"]:
            (host, port), nick = entry
            if isinstance(host, str) and host.startswith("::ffff:"):
                host = host[7:]
            self.players.append((host, int(port), nick))
        names = [p[2] for p in self.players]
        self.me = names.index(self.nick)
        dbg(f"game started: seats {names}; I am player{self.me + 1}")
        self.last_heard = time.monotonic()
        self.spawn(self.table_reader(), "table reader")
        self.joined.set()
        self.spawn(self.idle_watch(), "idle watch")
        # 7.2: dial the left neighbour at once (retrying in the background)
        left = (self.me + 1) % len(self.players)
        self.spawn(self.get_conn(left), "dial left")
        if self.me == 0:
            self.spawn(self.draw_turn(), "first draw")


async def amain(nick, table):
    global NICK
    NICK = nick
    host, _, port = table.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    peer = Peer(nick, host, int(port))
    starter = peer.spawn(peer.run(), "start")
    code, line = await peer.done
    global QUIET
    QUIET = True        # nothing after the result line
    # tidy up: close everything we opened
    if peer.server is not None:
        peer.server.close()
    for c in list(peer.conns.values()):
        c.writer.close()
    for w in list(peer.inbound):
        w.close()
    if getattr(peer, "twriter", None) is not None:
        peer.twriter.close()
    await asyncio.sleep(0)
    if code == 0:
        print(line, flush=True)
    else:
        print(line, file=sys.stderr, flush=True)
    starter.cancel()
    return code


def main():
    ap = argparse.ArgumentParser(description="Old Maid ring peer (asyncio)")
    ap.add_argument("--nick", default=os.environ.get("CARDRING_NICK"))
    ap.add_argument("--table", default=os.environ.get("CARDRING_TABLE", "127.0.0.1:9898"))
    ap.add_argument("--seed", default=None)
    args = ap.parse_args()
    if not args.nick:
        print("oldmaid_peer: --nick is required", file=sys.stderr)
        return 1
    if args.seed is not None:
        random.seed(args.seed)
    try:
        return asyncio.run(amain(args.nick, args.table))
    except KeyboardInterrupt:
        print(f"{args.nick}: interrupted", file=sys.stderr)
        return 1
    except Exception as e:
        print(f"{args.nick}: {e!r}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
