#!/usr/bin/env python3
"""An Old Maid ring peer written from docs/protocols/oldmaid.md alone.

It plays the part of an "old client" of the course table, on purpose:

* blocking sockets and one thread per connection (no asyncio);
* every message is bare ``json.dumps`` output, no trailing newline, one
  message per ``sendall``;
* incoming bytes are cut into objects by counting braces outside strings, so
  messages may come with or without newlines, several per read or split;
* ``join`` carries ``port`` but neither ``host`` nor ``watch``: the table uses
  our source address and never pushes ``game_over``, so we poll ``status``;
* the discard flag is sent as the JSON boolean ``"last_card"``.

Usage: python handout_peer.py --nick NICK --table HOST:PORT [--seed S] [--timeout SECONDS]

Prints ``out 2nd of 4`` or ``lost: holds the Old Maid`` and exits 0; on any
error prints one line on stderr and exits 1.
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

REPLY_TIMEOUT = 10.0  # any single reply, any dial, the pick after an offer
POLL_INTERVAL = 0.05  # status polling while idle
LINGER = 0.2  # keep answering "out" this long after the end
MAX_MESSAGE = 65536  # bytes per JSON object
MAX_BAD_PICKS = 8

WS = b" \t\r\n"
OPEN, CLOSE, QUOTE, BACKSLASH, NEWLINE = 0x7B, 0x7D, 0x22, 0x5C, 0x0A


class PeerError(Exception):
    """Anything that ends the game for us with an error line."""


class ConnClosed(PeerError):
    pass


class ReplyTimeout(PeerError):
    pass


class BadInput(Exception):
    """Bytes that are not a JSON object (the connection stays usable)."""


def canon_card(obj):
    """Validate a card from the wire; return it as a canonical tuple."""
    if not (isinstance(obj, list) and len(obj) == 2 and all(isinstance(x, str) for x in obj)):
        raise PeerError(f"not a card: {obj!r}")
    value, suit = obj[0].lower(), obj[1].lower()
    if (value, suit) == JOKER:
        return JOKER
    if value.upper() in VALUES and suit in SUITS:
        return (value.upper(), suit)
    raise PeerError(f"unknown card {obj!r}")


def pairs_with(a, b):
    if JOKER in (a, b) or a == b:
        return False
    return a[0] == b[0] and COLOUR[a[1]] == COLOUR[b[1]]


def ordinal(n):
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class Conn:
    """One TCP connection: bare-JSON writes, brace-counting reads."""

    def __init__(self, sock, name):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.name = name
        self.buf = b""
        self.skip_line = False  # dropping junk up to the next newline
        self.lock = threading.Lock()  # one exchange at a time (dialled conns)

    def send(self, msg):
        data = json.dumps(msg).encode("utf-8")  # no newline, on purpose
        self.sock.settimeout(REPLY_TIMEOUT)
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise ReplyTimeout(f"{self.name}: send timed out") from None
        except OSError as e:
            raise ConnClosed(f"{self.name}: send failed: {e}") from None

    def _extract(self):
        """Take one complete object out of the buffer, or return None."""
        buf = self.buf
        if self.skip_line:
            nl = buf.find(b"\n")
            if nl < 0:
                self.buf = b""
                return None
            buf = buf[nl + 1 :]
            self.skip_line = False
        i = 0
        while i < len(buf) and buf[i] in WS:
            i += 1
        buf = buf[i:]
        self.buf = buf
        if not buf:
            return None
        if buf[0] != OPEN:
            self.skip_line = True
            raise BadInput("not a JSON object")
        depth, in_str, esc = 0, False, False
        for j, c in enumerate(buf):
            if in_str:
                if esc:
                    esc = False
                elif c == BACKSLASH:
                    esc = True
                elif c == QUOTE:
                    in_str = False
            elif c == QUOTE:
                in_str = True
            elif c == OPEN:
                depth += 1
            elif c == CLOSE:
                depth -= 1
                if depth == 0:
                    raw, self.buf = buf[: j + 1], buf[j + 1 :]
                    if len(raw) > MAX_MESSAGE:
                        raise PeerError(f"{self.name}: message over {MAX_MESSAGE} bytes")
                    try:
                        return json.loads(raw.decode("utf-8"))
                    except (ValueError, UnicodeDecodeError) as e:
                        raise BadInput(f"invalid JSON: {e}") from None
            if j >= MAX_MESSAGE:
                raise PeerError(f"{self.name}: message over {MAX_MESSAGE} bytes")
        return None

    def recv(self, deadline):
        """Next object; ReplyTimeout at the deadline; ConnClosed on EOF."""
        while True:
            obj = self._extract()
            if obj is not None:
                return obj
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReplyTimeout(f"{self.name}: no answer in time")
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                raise ReplyTimeout(f"{self.name}: no answer in time") from None
            except OSError as e:
                raise ConnClosed(f"{self.name}: {e}") from None
            if not data:
                raise ConnClosed(f"{self.name}: connection closed")
            self.buf += data

    def recv_reply(self, deadline):
        """Next reply (an object with "result") on a connection we asked on."""
        while True:
            try:
                obj = self.recv(deadline)
            except BadInput as e:
                raise PeerError(f"{self.name}: garbage instead of a reply ({e})") from None
            if "result" in obj:
                return obj
            if obj.get("cmd") == "game_over":
                continue  # a notice, never a reply (we do not watch, though)
            raise PeerError(f"{self.name}: expected a reply, got {obj!r}")

    def request(self, msg, timeout=REPLY_TIMEOUT):
        self.send(msg)
        return self.recv_reply(time.monotonic() + timeout)

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.close()


class Peer:
    def __init__(self, nick, table_addr, seed):
        self.nick = nick
        self.table_addr = table_addr
        self.rng = random.Random(seed)
        self.lock = threading.RLock()  # hand, phase, out flag
        self.table_lock = threading.Lock()  # one table request at a time
        self.dial_lock = threading.Lock()
        self.hand = []
        self.phase = "draw"
        self.is_out = False  # the table acknowledged it
        self.lost = False  # we found no one else in
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

    # ---- helpers -------------------------------------------------------

    def fail(self, msg):
        with self.lock:
            if self.error is None:
                self.error = str(msg)
        self.failed.set()

    def table_request(self, msg):
        with self.table_lock:
            return self.table.request(msg)

    def left_seats(self):
        n = len(self.players)
        return [(self.seat + k) % n for k in range(1, n)]

    def out_conn(self, seat):
        with self.dial_lock:
            conn = self.outs.get(seat)
            if conn is None:
                host, port, nick = self.players[seat]
                try:
                    sock = socket.create_connection((host, port), timeout=REPLY_TIMEOUT)
                except OSError as e:
                    raise PeerError(f"cannot dial {nick} at {host}:{port}: {e}") from None
                conn = Conn(sock, f"{self.nick}>{nick}")
                self.outs[seat] = conn
            return conn

    def go_out(self):
        """Tell the table our hand is empty; only then are we out."""
        with self.lock:
            if self.is_out:
                return
            rep = self.table_request({"cmd": "out_of_cards"})
            if rep.get("result") != "ok":
                raise PeerError(f"out_of_cards refused: {rep.get('message')}")
            self.is_out = True

    def take_card(self, card):
        """Put a card at a random place; discard the pair it makes, if any."""
        with self.lock:
            self.hand.insert(self.rng.randrange(len(self.hand) + 1), card)
            for old in self.hand:
                if pairs_with(old, card):
                    break
            else:
                return
            last = self.phase == "offer" and len(self.hand) == 2
            rep = self.table_request(
                {"cmd": "discard", "cards": [list(old), list(card)], "last_card": last}
            )
            if rep.get("result") != "ok":
                raise PeerError(f"discard of {old} and {card} refused: {rep.get('message')}")
            self.hand.remove(old)
            self.hand.remove(card)
            if last:
                self.is_out = True

    # ---- draw phase ----------------------------------------------------

    def draw_turn(self):
        rep = self.table_request({"cmd": "draw"})
        result = rep.get("result")
        if result == "error":
            message = str(rep.get("message", ""))
            if message.startswith("the deck is empty"):
                with self.lock:
                    self.phase = "offer"
                    if not self.hand:
                        self.go_out()
                return
            raise PeerError(f"draw refused: {message}")
        if result not in ("ok", "last_card"):
            raise PeerError(f"draw answered {rep!r}")
        card = canon_card(rep.get("card"))
        if result == "last_card":
            with self.lock:
                self.phase = "offer"
            self.take_card(card)
            self.hold_turn()
        else:
            self.take_card(card)
            self.pass_draw_turn()

    def pass_draw_turn(self):
        for seat in self.left_seats():
            conn = self.out_conn(seat)
            with conn.lock:
                rep = conn.request({"cmd": "your_turn"})
            result = rep.get("result")
            if result == "ok":
                return
            if result != "out":
                raise PeerError(f"{self.players[seat][2]} answered your_turn with {rep!r}")
        raise PeerError("everyone else is out during the draw phase")

    # ---- offer phase ---------------------------------------------------

    def hold_turn(self):
        with self.lock:
            n = len(self.hand)
        for seat in self.left_seats():
            conn = self.out_conn(seat)
            with conn.lock:
                rep = conn.request({"cmd": "offer", "num_cards": n})
                result = rep.get("result")
                if result == "out":
                    continue
                if result != "ok":
                    raise PeerError(f"{self.players[seat][2]} answered offer with {rep!r}")
                if n > 0:
                    self.serve_pick(conn, n)
                return
        with self.lock:
            self.lost = True

    def serve_pick(self, conn, n):
        deadline = time.monotonic() + REPLY_TIMEOUT
        while True:
            try:
                msg = conn.recv(deadline)
            except BadInput as e:
                conn.send({"result": "error", "message": str(e)})
                continue
            if "result" in msg:
                raise PeerError(f"{conn.name}: expected a pick, got reply {msg!r}")
            if msg.get("cmd") != "pick":
                conn.send(
                    {"result": "error", "message": f"expected a pick, not {msg.get('cmd')!r}"}
                )
                continue
            idx = msg.get("card_num")
            if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < n:
                conn.send(
                    {"result": "error", "message": f"card_num {idx} is not between 0 and {n - 1}"}
                )
                continue
            with self.lock:
                card = self.hand.pop(idx)
                conn.send({"result": "ok", "card": list(card)})
                empty = not self.hand
                if empty:
                    self.go_out()
            return

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
                conn.send({"result": "out"})
                return
            conn.send({"result": "ok"})
        if num > 0:
            for _ in range(MAX_BAD_PICKS):
                conn.send({"cmd": "pick", "card_num": self.rng.randrange(num)})
                rep = conn.recv_reply(time.monotonic() + REPLY_TIMEOUT)
                if rep.get("result") == "ok":
                    card = canon_card(rep.get("card"))
                    break
                if rep.get("result") != "error":
                    raise PeerError(f"{conn.name}: pick answered {rep!r}")
            else:
                raise PeerError(f"{conn.name}: {MAX_BAD_PICKS} picks refused")
            self.take_card(card)
        self.hold_turn()

    def on_your_turn(self, conn):
        with self.lock:
            if self.is_out:
                conn.send({"result": "out"})
                return
            conn.send({"result": "ok"})
        self.draw_turn()

    # ---- inbound connections -------------------------------------------

    def accept_loop(self):
        while not self.done.is_set():
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError as e:
                if not self.done.is_set():
                    self.fail(f"listener failed: {e}")
                return
            try:
                peer_host, peer_port = sock.getpeername()[:2]
                conn = Conn(sock, f"inbound from {peer_host}:{peer_port}")
            except OSError:
                sock.close()  # it hung up already
                continue
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
                    return  # the other side hung up; nothing was pending
                except BadInput as e:
                    conn.send({"result": "error", "message": str(e)})
                    continue
                # A request may beat our own join reply: wait for it first.
                while not self.started.wait(0.25):
                    if self.done.is_set():
                        return
                if "result" in msg:
                    return  # a reply nobody asked for: the sender is broken
                cmd = msg.get("cmd")
                if cmd == "your_turn":
                    self.on_your_turn(conn)
                elif cmd == "offer":
                    self.on_offer(conn, msg)
                elif cmd == "game_over":
                    continue  # a notice: never answered
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
            if not self.done.is_set():
                self.fail(e)
        except Exception as e:  # keep the one-line error contract
            if not self.done.is_set():
                self.fail(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    # ---- main ----------------------------------------------------------

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
        self.table = Conn(tsock, "table")

        # Listen (on the interface facing the table) before joining.
        local_ip = tsock.getsockname()[0]
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind((local_ip, 0))
        self.listener.listen(16)
        self.listener.settimeout(0.25)
        threading.Thread(target=self.accept_loop, daemon=True).start()

        # join: port only, no host, no watch.
        self.table.send({"cmd": "join", "nick": self.nick, "port": self.listener.getsockname()[1]})
        while True:
            try:
                rep = self.table.recv_reply(min(deadline, time.monotonic() + 0.25))
                break
            except ReplyTimeout:
                if self.failed.is_set():
                    raise PeerError(self.error) from None
                if time.monotonic() >= deadline:
                    raise PeerError("timed out waiting for the game to start") from None
        if rep.get("result") != "ok":
            raise PeerError(f"join refused: {rep.get('message')}")
        players = rep.get("players")
        try:
            for (phost, pport), pnick in players:
                if phost.startswith("::ffff:"):
                    phost = phost[len("::ffff:") :]
                self.players.append((str(phost), int(pport), str(pnick)))
        except (TypeError, ValueError):
            raise PeerError(f"bad join reply {rep!r}") from None
        nicks = [p[2] for p in self.players]
        if self.nick not in nicks:
            raise PeerError("the join reply does not list us")
        self.seat = nicks.index(self.nick)
        self.started.set()

        self.out_conn(self.left_seats()[0])  # dial the left neighbour at once
        if self.seat == 0:
            self.draw_turn()  # player1 draws first

        status = self.poll_until_over(deadline)
        return self.finish(status)

    def poll_until_over(self, deadline):
        while True:
            if time.monotonic() >= deadline:
                raise PeerError("timed out waiting for the end of the game")
            status = self.table_request({"cmd": "status"})
            if status.get("result") != "ok":
                raise PeerError(f"status refused: {status.get('message')}")
            if status.get("aborted") or status.get("state") == "aborted":
                raise PeerError(f"game aborted: {status.get('reason')}")
            if status.get("game_over"):
                return status
            if self.failed.wait(POLL_INTERVAL):
                # A failure once the game is already over is not an error:
                # players may stop answering after the end.
                status = self.table_request({"cmd": "status"})
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
        self.done.set()
        for conn in list(self.outs.values()) + list(self.inbound) + [self.table]:
            conn.close()
        self.listener.close()
        return line


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"handout_peer: {message}\n")
        sys.exit(1)


def main():
    ap = OneLineParser(description="Old Maid ring peer (handout style)")
    ap.add_argument("--nick", required=True)
    ap.add_argument("--table", required=True, help="HOST:PORT")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()

    def give_up():
        sys.stderr.write(f"{args.nick}: gave up after {args.timeout:g} seconds\n")
        sys.stderr.flush()
        os._exit(1)

    watchdog = threading.Timer(args.timeout, give_up)
    watchdog.daemon = True
    watchdog.start()
    peer = Peer(args.nick, args.table, args.seed)
    try:
        line = peer.run(time.monotonic() + args.timeout)
    except PeerError as e:
        sys.stderr.write(f"{args.nick}: {e}\n")
        sys.stderr.flush()
        os._exit(1)
    except Exception as e:  # no tracebacks, ever
        sys.stderr.write(f"{args.nick}: {type(e).__name__}: {e}\n")
        sys.stderr.flush()
        os._exit(1)
    watchdog.cancel()
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
