#!/usr/bin/env python3
# inf-3701 2013, exercise one: Old Maid ring peer.
#
#   python3 oldmaid_recv1.py --nick NICK --table HOST:PORT
#
# Blocking sockets and threads: one thread reads the table connection, one
# thread accepts our right neighbour (and anybody further right), one thread
# per accepted connection, and the main thread plays the turns.
#
# Every message is read with ONE recv(4096) and json.loads, like the course
# examples: one recv is one message.  We never say "stream": true.
# Everything we send is one json.dumps(...) + "\n" in one sendall.

import argparse
import json
import queue
import random
import select
import socket
import sys
import threading
import time

PEER_TIMEOUT = 10.0   # how long we wait for a neighbour's answer
GRACE = 0.2           # a seat silent this long: ask the table if it is out
IDLE_TIMEOUT = 120.0  # nothing at all happens for this long: give up

PARTNER_SUIT = {"spades": "clubs", "clubs": "spades",
                "diamonds": "hearts", "hearts": "diamonds"}


def log(*args):
    print("[%s %.3f]" % (NICK, time.time() % 1000), *args, flush=True)


def send_msg(sock, msg):
    sock.sendall((json.dumps(msg) + "\n").encode())


def recv_msg(sock):
    """One recv = one message.  Returns None when the other side closed."""
    data = sock.recv(4096)
    if not data:
        return None
    return json.loads(data.decode())


def nodelay(sock):
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


class GameOver(Exception):
    pass


class GiveUp(Exception):
    def __init__(self, reason, blame=None):
        Exception.__init__(self, reason)
        self.reason = reason
        self.blame = blame


# ---------------------------------------------------------------- state

NICK = "?"
table_sock = None
table_lock = threading.Lock()          # one request at a time on the table
table_replies = queue.Queue()
table_closed = threading.Event()
game_over = threading.Event()
game_over_msg = {}

events = queue.Queue()                  # ("draw",) / ("turn",) for the main thread

hand_lock = threading.RLock()
hand = []
offer_phase = False

out_lock = threading.Lock()
out_sent = False
out_acked = threading.Event()

players = []      # [(host, port, nick)] in seat order
my_seat = -1
known_out = set()  # seats that are out for sure
conns = {}         # seat -> socket we dialled (used by the main thread only)
last_activity = time.time()


# ---------------------------------------------------------------- table

def table_reader():
    global last_activity
    while True:
        try:
            msg = recv_msg(table_sock)
        except ValueError as e:
            log("ERROR: could not parse a message from the table:", e)
            log("giving up")
            table_closed.set()
            table_replies.put(None)
            return
        except OSError as e:
            log("table connection error:", e)
            msg = None
        if msg is None:
            log("the table closed the connection")
            table_closed.set()
            table_replies.put(None)
            return
        log("table ->", msg)
        last_activity = time.time()
        if "cmd" in msg:
            if msg["cmd"] == "game_over":
                game_over_msg.update(msg)
                game_over.set()
                events.put(("game_over",))
            else:
                log("ignoring notice", msg)
        else:
            table_replies.put(msg)


def table_request(msg, timeout=PEER_TIMEOUT):
    with table_lock:
        if table_closed.is_set():
            raise GiveUp("the table closed the connection")
        log("-> table", msg)
        send_msg(table_sock, msg)
        start = time.time()
        while True:
            try:
                reply = table_replies.get(timeout=0.5)
            except queue.Empty:
                if timeout is not None and time.time() - start > timeout:
                    raise GiveUp("the table did not answer %s" % msg["cmd"])
                continue
            if reply is None:
                raise GiveUp("the table closed the connection")
            return reply


def table_status():
    r = table_request({"cmd": "status"})
    if r.get("game_over") or r.get("aborted"):
        if not game_over.is_set():
            game_over_msg.update(r)
            if r.get("aborted"):
                game_over_msg["aborted"] = True
            game_over.set()
            events.put(("game_over",))
    return r


def check_out_by_status(seat):
    """Ask the table; mark every seat it lists as out.  True if seat is out."""
    r = table_status()
    outs = r.get("out", [])
    for s, p in enumerate(players):
        if p[2] in outs and s != my_seat:
            known_out.add(s)
    return players[seat][2] in outs


# ---------------------------------------------------------------- hand

def partner(card):
    v, s = card
    if v == "joker":
        return None
    return [v, PARTNER_SUIT[s]]


def add_card(card):
    with hand_lock:
        card = [str(card[0]), str(card[1])]
        # the table and our peers send canonical spelling; be safe anyway
        v = card[0].upper() if card[0].lower() in ("a", "j", "q", "k") else card[0].lower()
        card = [v, card[1].lower()]
        hand.insert(random.randint(0, len(hand)), card)
        log("got", card, "hand now", len(hand), "cards")


def discard_pairs():
    """Discard every pair in the hand, one discard each."""
    global out_sent
    while True:
        with hand_lock:
            pair = None
            for c in hand:
                p = partner(c)
                if p is not None and p in hand:
                    pair = [c, p]
                    break
            if pair is None:
                return
            rest = len(hand) - 2
            last = offer_phase and rest == 0
        r = table_request({"cmd": "discard", "cards": pair,
                           "last_cards": "true" if last else "false"})
        if r.get("result") != "ok":
            log("discard refused:", r)
            raise GiveUp("the table refused my discard: %s" % r.get("message"))
        with hand_lock:
            hand.remove(pair[0])
            hand.remove(pair[1])
            log("discarded", pair, "hand now", hand)
        if last:
            with out_lock:
                out_sent = True
                out_acked.set()
            log("I am OUT (discarded my last pair)")


def go_out():
    """Hand empty in the offer phase: tell the table, wait for its ok."""
    global out_sent
    with out_lock:
        if out_sent:
            return
        r = table_request({"cmd": "out_of_cards"})
        log("out_of_cards ->", r)
        out_sent = True
        out_acked.set()
    log("I am OUT")


def i_am_out():
    return out_acked.is_set()


# ---------------------------------------------------------------- inbound

def listener_thread(lsock):
    while True:
        try:
            conn, addr = lsock.accept()
        except OSError:
            return
        nodelay(conn)
        log("accepted a connection from", addr)
        t = threading.Thread(target=serve_inbound, args=(conn, addr), daemon=True)
        t.start()


def serve_inbound(conn, addr):
    global offer_phase, last_activity
    while True:
        try:
            data = conn.recv(4096)
        except OSError as e:
            log("inbound connection", addr, "error", e)
            break
        if not data:
            log("inbound connection", addr, "closed")
            break
        last_activity = time.time()
        try:
            msg = json.loads(data.decode())
        except ValueError as e:
            log("ERROR: bad message from", addr, repr(data), e)
            try:
                send_msg(conn, {"result": "error", "message": "invalid JSON: %s" % e})
            except OSError:
                break
            continue
        log(addr, "->", msg)
        if not isinstance(msg, dict) or "cmd" not in msg:
            # a reply where we expect a request: never answer a reply
            log("not a request, ignoring")
            continue
        cmd = msg["cmd"]
        try:
            if cmd == "your_turn":
                if i_am_out():
                    send_msg(conn, {"result": "out"})
                else:
                    send_msg(conn, {"result": "ok"})
                    events.put(("draw",))
            elif cmd == "offer":
                handle_offer(conn, msg)
            elif cmd == "pick":
                send_msg(conn, {"result": "error", "message": "pick without an accepted offer"})
            else:
                send_msg(conn, {"result": "error", "message": "unknown cmd '%s'" % cmd})
        except GiveUp as e:
            events.put(("giveup", e))
            break
        except OSError as e:
            log("inbound connection", addr, "error", e)
            break
    try:
        conn.close()
    except OSError:
        pass


def handle_offer(conn, msg):
    global offer_phase
    n = msg.get("num_cards")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0 or n > 53:
        send_msg(conn, {"result": "error", "message": "bad num_cards"})
        return
    offer_phase = True
    if i_am_out():
        send_msg(conn, {"result": "out"})
        return
    with hand_lock:
        empty = len(hand) == 0
    if empty:
        # the draws are over and I have nothing: I am out, tell the table first
        go_out()
        send_msg(conn, {"result": "out"})
        return
    send_msg(conn, {"result": "ok"})
    if n == 0:
        log("passed the turn (num_cards 0): my turn")
        events.put(("turn",))
        return
    if not msg.get("stream"):
        time.sleep(0.05)   # older offerers read one message per recv
    tries = 0
    while True:
        idx = random.randrange(n)
        send_msg(conn, {"cmd": "pick", "card_num": idx})
        conn.settimeout(PEER_TIMEOUT)
        try:
            reply = recv_msg(conn)
        except socket.timeout:
            raise GiveUp("did not answer my pick within %d s" % PEER_TIMEOUT,
                         blame=sender_nick(msg))
        except ValueError as e:
            raise GiveUp("sent an answer to my pick I could not read (%s)" % e,
                         blame=sender_nick(msg))
        finally:
            try:
                conn.settimeout(None)
            except OSError:
                pass
        log("pick", idx, "->", reply)
        if reply is None:
            raise GiveUp("closed the connection instead of answering my pick",
                         blame=sender_nick(msg))
        if reply.get("result") == "ok" and "card" in reply:
            add_card(reply["card"])
            events.put(("turn",))
            return
        tries += 1
        if tries >= 8:
            raise GiveUp("refused 8 picks in a row", blame=sender_nick(msg))


def sender_nick(msg):
    f = msg.get("from")
    if isinstance(f, str) and any(p[2] == f for p in players):
        return f
    return None


# ---------------------------------------------------------------- outbound

def check_flags():
    if game_over.is_set():
        raise GameOver()
    if table_closed.is_set():
        raise GiveUp("the table closed the connection")


def dial(seat, deadline):
    """Connect to a seat, retrying refused dials.  None if the seat is out."""
    host, port, nick = players[seat]
    asked = False
    while True:
        check_flags()
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        nodelay(s)
        try:
            s.settimeout(2.0)
            s.connect((host, port))
            s.settimeout(None)
            log("dialled", nick, "at", host, port)
            return s
        except OSError as e:
            s.close()
            log("dial", nick, "failed:", e)
            if not asked and my_seat >= 0 and offer_phase:
                asked = True
                if check_out_by_status(seat):
                    return None
            if time.time() > deadline:
                if check_out_by_status(seat):
                    return None
                raise GiveUp("could not be reached at %s:%d within %d s" %
                             (host, port, PEER_TIMEOUT), blame=nick)
            time.sleep(0.1)


def wait_readable(sock, seat, deadline, what):
    """Wait for a message on sock; after GRACE ask the table whether the
    seat is out.  Returns False if the seat turned out to be out."""
    waited = 0.0
    while True:
        check_flags()
        r, _, _ = select.select([sock], [], [], GRACE)
        if r:
            return True
        waited += GRACE
        if check_out_by_status(seat):
            log(players[seat][2], "is silent and listed as out: skip it")
            return False
        if time.time() > deadline:
            raise GiveUp("did not answer %s within %d s" % (what, PEER_TIMEOUT),
                         blame=players[seat][2])


def ask(seat, msg):
    """Send a your_turn or an offer to a seat.  'ok', 'out' or 'gone'."""
    nick = players[seat][2]
    deadline = time.time() + PEER_TIMEOUT
    resent = False
    while True:
        s = conns.get(seat)
        if s is None:
            s = dial(seat, deadline)
            if s is None:
                return "gone"
            conns[seat] = s
        log("->", nick, msg)
        try:
            send_msg(s, msg)
            ok = wait_readable(s, seat, deadline, msg["cmd"])
            if not ok:
                drop_conn(seat)
                return "gone"
            reply = recv_msg(s)
        except (ConnectionResetError, BrokenPipeError) as e:
            log("connection to", nick, "broke:", e)
            reply = None
        except ValueError as e:
            raise GiveUp("answered %s with something I could not read (%s)"
                         % (msg["cmd"], e), blame=nick)
        if reply is None:
            drop_conn(seat)
            if check_out_by_status(seat):
                return "gone"
            if resent or time.time() > deadline:
                raise GiveUp("closed the connection instead of answering %s" % msg["cmd"],
                             blame=nick)
            resent = True
            time.sleep(0.1)
            continue
        log(nick, "->", reply)
        res = reply.get("result")
        if res in ("ok", "out"):
            return res
        raise GiveUp("answered %s with %s" % (msg["cmd"], reply), blame=nick)


def drop_conn(seat):
    s = conns.pop(seat, None)
    if s is not None:
        try:
            s.close()
        except OSError:
            pass


def hand_on(msg):
    """Find the next player who is in and give it msg.  Returns the seat
    that said ok, or None if every other seat is out."""
    n = len(players)
    for step in range(1, n):
        seat = (my_seat + step) % n
        if seat in known_out:
            log("skip", players[seat][2], "(known to be out)")
            continue
        res = ask(seat, msg)
        if res == "ok":
            return seat
        log(players[seat][2], "is out (%s)" % res)
        known_out.add(seat)
    return None


# ---------------------------------------------------------------- turns

def do_draw():
    global offer_phase
    if offer_phase:
        log("got your_turn in the offer phase; drawing anyway")
    r = table_request({"cmd": "draw"})
    res = r.get("result")
    if res in ("ok", "last_card"):
        add_card(r["card"])
        if res == "last_card":
            log("I drew the LAST card: offer phase, my turn")
            offer_phase = True
            take_turn()
            return
        discard_pairs()
        seat = hand_on({"cmd": "your_turn"})
        if seat is None:
            raise GiveUp("no one took the draw turn")
        log("draw turn handed to", players[seat][2])
    else:
        msg = r.get("message", "")
        log("draw refused:", msg)
        if msg.startswith("the deck is empty"):
            offer_phase = True
            with hand_lock:
                empty = len(hand) == 0
            if empty:
                go_out()
        else:
            raise GiveUp("the table refused my draw: %s" % msg)


def take_turn():
    discard_pairs()
    with hand_lock:
        n = len(hand)
    if n == 0:
        go_out()
        log("I am out holding the turn: pass it with num_cards 0")
        seat = hand_on({"cmd": "offer", "num_cards": 0})
        if seat is None:
            log("no one else is in; waiting for the end")
        else:
            log("turn passed to", players[seat][2])
        return
    seat = hand_on({"cmd": "offer", "num_cards": n})
    if seat is None:
        log("no one else is in: I hold the Old Maid, I LOST.  hand:", hand)
        wait_for_end(10.0)
        return
    # wait for the pick on the same connection
    s = conns[seat]
    nick = players[seat][2]
    bad = 0
    deadline = time.time() + PEER_TIMEOUT
    while True:
        check_flags()
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            if time.time() > deadline:
                raise GiveUp("did not pick within %d s of accepting my offer" % PEER_TIMEOUT,
                             blame=nick)
            continue
        try:
            msg = recv_msg(s)
        except ValueError as e:
            raise GiveUp("sent something I could not read instead of a pick (%s)" % e,
                         blame=nick)
        except OSError as e:
            msg = None
        if msg is None:
            drop_conn(seat)
            raise GiveUp("closed the connection instead of picking", blame=nick)
        log(nick, "->", msg)
        if msg.get("cmd") != "pick":
            send_msg(s, {"result": "error", "message": "expected a pick"})
            continue
        k = msg.get("card_num")
        with hand_lock:
            if isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= len(hand):
                if k == len(hand):
                    k = len(hand) - 1   # handout: "between 0 and number_of_cards_left"
                card = hand.pop(k)
                left = len(hand)
            else:
                card = None
        if card is None:
            bad += 1
            send_msg(s, {"result": "error",
                         "message": "card_num %r is not between 0 and %d" % (k, n - 1)})
            if bad >= 8:
                raise GiveUp("made 8 bad picks in a row", blame=nick)
            continue
        send_msg(s, {"result": "ok", "card": card})
        log("gave", card, "to", nick, "; I have", left, "cards left")
        if left == 0:
            go_out()
        return


def wait_for_end(limit):
    end = time.time() + limit
    while time.time() < end:
        if game_over.is_set() or table_closed.is_set():
            return
        time.sleep(0.05)
    # no notice: ask
    try:
        table_status()
    except GiveUp:
        pass


def give_up(e):
    log("GIVING UP:", e.reason, "(blaming %s)" % e.blame if e.blame else "")
    if not table_closed.is_set() and not game_over.is_set():
        msg = {"cmd": "give_up", "reason": e.reason[:500]}
        if e.blame and e.blame != NICK:
            msg["nick"] = e.blame
        try:
            table_request(msg, timeout=2)
        except Exception as ex:
            log("give_up failed:", ex)
    finish(1)


def finish(code):
    if game_over.is_set():
        m = game_over_msg
        if m.get("aborted"):
            log("game aborted:", m.get("reason"))
            print("game aborted: %s" % m.get("reason"), flush=True)
            code = 1
        else:
            loser = m.get("loser")
            if loser == NICK:
                print("lost: holds the Old Maid", flush=True)
            else:
                outs = m.get("out", [])
                if NICK in outs:
                    print("out %d of %d" % (outs.index(NICK) + 1, len(players)), flush=True)
                else:
                    print("game over, loser %s" % loser, flush=True)
            # keep answering "out" a moment, so the loser's last round finds us
            time.sleep(0.2)
            code = 0
    try:
        table_sock.close()
    except Exception:
        pass
    for s in list(conns.values()):
        try:
            s.close()
        except Exception:
            pass
    log("exit", code)
    sys.exit(code)


# ---------------------------------------------------------------- main

def main():
    global NICK, table_sock, players, my_seat, last_activity
    ap = argparse.ArgumentParser()
    ap.add_argument("--nick", required=True)
    ap.add_argument("--table", required=True, help="HOST:PORT")
    args = ap.parse_args()
    NICK = args.nick
    host, port = args.table.rsplit(":", 1)
    port = int(port)

    # 1. connect to the table
    table_sock = socket.create_connection((host, port), timeout=10)
    table_sock.settimeout(None)
    nodelay(table_sock)
    myaddr = table_sock.getsockname()[0]
    if myaddr.startswith("::ffff:"):
        myaddr = myaddr[7:]
    log("connected to the table", host, port, "from", myaddr)

    # 2. listen before we join
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((myaddr, 0))
    lsock.listen(16)
    myport = lsock.getsockname()[1]
    log("listening on", myaddr, myport)
    threading.Thread(target=listener_thread, args=(lsock,), daemon=True).start()

    # 3. join
    threading.Thread(target=table_reader, daemon=True).start()
    try:
        r = table_request({"cmd": "join", "nick": NICK, "host": myaddr,
                           "port": myport, "watch": True}, timeout=None)
    except GiveUp as e:
        log("join failed:", e.reason)
        sys.exit(1)
    if r.get("result") != "ok":
        log("join refused:", r)
        sys.exit(1)
    players = [(p[0][0].replace("::ffff:", ""), int(p[0][1]), p[1]) for p in r["players"]]
    for i, p in enumerate(players):
        if p[2] == NICK:
            my_seat = i
    log("players:", players, "I am seat", my_seat + 1)
    if my_seat < 0:
        log("I am not in the player list?!")
        sys.exit(1)

    try:
        # 4. dial the left neighbour at once
        left = (my_seat + 1) % len(players)
        conns[left] = dial(left, time.time() + PEER_TIMEOUT)
        if my_seat == 0:
            events.put(("draw",))
        last_activity = time.time()
        while True:
            if game_over.is_set():
                finish(0)
            if table_closed.is_set():
                log("the table closed the connection")
                finish(1)
            try:
                ev = events.get(timeout=0.2)
            except queue.Empty:
                if time.time() - last_activity > IDLE_TIMEOUT:
                    raise GiveUp("heard nothing for %d s" % IDLE_TIMEOUT)
                continue
            last_activity = time.time()
            log("event", ev[0])
            if ev[0] == "draw":
                do_draw()
            elif ev[0] == "turn":
                take_turn()
            elif ev[0] == "giveup":
                raise ev[1]
    except GameOver:
        finish(0)
    except GiveUp as e:
        if game_over.is_set():
            finish(0)
        give_up(e)


if __name__ == "__main__":
    main()
