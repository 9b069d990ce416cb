#!/usr/bin/env python3
"""nick_thief.py: a cheating student's Old Maid program.

    python nick_thief.py {table} {nick} --victim OTHERNICK

Before playing, it tries to take another entrant's seat: it dials the table
and sends a `join` for OTHERNICK (docs/protocols/oldmaid.md 5.1), with a
listening socket of its own as the address, three times, 0.2 s apart, and
prints what the table answered each time:

    ATTACK join-as OTHERNICK: <the table's reply, at most 200 chars>
    ATTACK join-as OTHERNICK: failed: <Type>: <message>

A join that the table took (an `ok` reply, or no reply within 3 s: a join's
reply only comes when the game starts, so a join still waiting holds the
nick) keeps its connection open in a thread, so that the real OTHERNICK
finds its nick taken. Then it plays honestly under its own nick as the
built-in peer (`python -m ring peer`, by os.execv, or in a subprocess while a
stolen join must stay open), after printing `PLAY: <command>`.

Missing arguments fall back to CARDRING_TABLE and CARDRING_NICK. Run it with
a Python that can import `ring` (the peer is started with sys.executable).
"""

import argparse
import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time

REPLY_TIMEOUT = 3.0
TRIES = 3
PAUSE = 0.2

held = []  # (table connection, listening socket) of every join the table took


def say(line):
    print(line, flush=True)


def short(text, n=200):
    text = text.strip()
    return text if len(text) <= n else text[:n]


def split_address(address):
    host, _, port = address.rpartition(":")
    if not host or not port:
        raise ValueError("not HOST:PORT: %r" % address)
    return host.strip("[]"), int(port)


def facing_address(table_host, table_port):
    # The local address a connection to the table would come from (no packet
    # is sent: a UDP connect only picks the route).
    try:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.connect((table_host, table_port))
            return u.getsockname()[0]
        finally:
            u.close()
    except OSError:
        return "127.0.0.1"


def read_line(sock, timeout):
    """One message (up to its newline) or None if nothing came in time."""
    sock.settimeout(timeout)
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return None if not data else data.decode("utf-8", "replace")
        sock.settimeout(left)
        try:
            chunk = sock.recv(4096)
        except socket.timeout:
            return None if not data else data.decode("utf-8", "replace")
        if not chunk:
            if data:
                return data.decode("utf-8", "replace")
            return ""  # closed
        data += chunk
    return data.split(b"\n", 1)[0].decode("utf-8", "replace")


def keep_open(victim, conn, listener):
    # Sit on the stolen seat: read (and print) whatever the table sends on it,
    # answer nothing, until the table closes it or we close it at the end.
    buf = b""
    try:
        conn.settimeout(None)
        while True:
            chunk = conn.recv(4096)
            if not chunk:
                say("ATTACK join-as %s: held connection closed by the table" % victim)
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.strip():
                    say("ATTACK join-as %s: held connection got: %s"
                        % (victim, short(line.decode("utf-8", "replace"))))
    except Exception as e:  # closed by us at the end, or reset
        say("ATTACK join-as %s: held connection ended: %s: %s"
            % (victim, type(e).__name__, e))


def try_join(table, victim):
    thost, tport = split_address(table)
    myhost = facing_address(thost, tport)

    # The join's address must already be listening (oldmaid.md 5.1).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((myhost, 0))
    listener.listen(16)
    myport = listener.getsockname()[1]

    conn = socket.create_connection((thost, tport), timeout=REPLY_TIMEOUT)
    try:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        join = {"cmd": "join", "nick": victim, "port": myport,
                "host": myhost, "watch": True}
        conn.sendall((json.dumps(join) + "\n").encode())
        reply = read_line(conn, REPLY_TIMEOUT)
    except BaseException:
        conn.close()
        listener.close()
        raise

    if reply is None:
        # No answer yet: the table answers a join when the game starts, so
        # this join is waiting in the game with the victim's nick. Keep it.
        taken = True
        text = "(no reply within %g s: join pending, nick held, connection kept open)" % REPLY_TIMEOUT
    elif reply == "":
        taken = False
        text = "(connection closed by the table without a reply)"
    else:
        text = short(reply)
        try:
            taken = json.loads(reply).get("result") == "ok"
        except ValueError:
            taken = False
        if taken:
            text += "  [accepted: connection kept open]"

    if taken:
        held.append((conn, listener))
        t = threading.Thread(target=keep_open, args=(victim, conn, listener),
                             daemon=True)
        t.start()
    else:
        conn.close()
        listener.close()
    return text


def attack(table, victim):
    for i in range(TRIES):
        if i:
            time.sleep(PAUSE)
        try:
            say("ATTACK join-as %s: %s" % (victim, try_join(table, victim)))
        except Exception as e:
            say("ATTACK join-as %s: failed: %s: %s" % (victim, type(e).__name__, e))


def close_held():
    for conn, listener in held:
        for s in (conn, listener):
            try:
                s.close()
            except Exception:
                pass


def main():
    ap = argparse.ArgumentParser(description="Old Maid program that tries to join as another entrant")
    ap.add_argument("table", nargs="?", default=os.environ.get("CARDRING_TABLE"))
    ap.add_argument("nick", nargs="?", default=os.environ.get("CARDRING_NICK"))
    ap.add_argument("--victim", required=True)
    args = ap.parse_args()
    if not args.table or not args.nick:
        ap.error("need TABLE and NICK (or CARDRING_TABLE, CARDRING_NICK)")

    try:
        attack(args.table, args.victim)
    except Exception as e:
        say("ATTACK join-as %s: failed: %s: %s" % (args.victim, type(e).__name__, e))

    cmd = [sys.executable, "-m", "ring", "peer",
           "--name", args.nick, "--server", args.table,
           "--host", "127.0.0.1", "--port", "0"]
    say("PLAY: " + " ".join(shlex.quote(a) for a in cmd))

    if not held:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(sys.executable, cmd)
        except Exception as e:
            say("PLAY: failed: %s: %s" % (type(e).__name__, e))
            sys.exit(1)

    # A stolen join must stay open while we play: run the peer beside it.
    try:
        rc = subprocess.call(cmd)
    except Exception as e:
        say("PLAY: failed: %s: %s" % (type(e).__name__, e))
        rc = 1
    close_held()
    if rc < 0:
        rc = 128 - rc  # killed by signal -rc
    sys.exit(rc)


if __name__ == "__main__":
    main()
