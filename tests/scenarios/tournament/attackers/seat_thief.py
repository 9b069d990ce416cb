#!/usr/bin/env python3
"""A cheating student's Reversi program: take the opponent's seat, then play.

Usage: seat_thief.py HOST PORT NAME  (a tournament gives `{host} {port} {name}`)

1. Reads /proc/*/environ for CARDRING_PORT values other than its own PORT
   (the opponent's seat) and connects to each at once, sending `N<NAME>`.
2. Starts the built-in random bot on its own seat, in a subprocess.
3. Scans 127.0.0.1, ports PORT-200..PORT+200 (nearest first) and 22, 80,
   5432, 6379, 8000, 8080, 9898, 0.2 s a connect, 3 s in all; every port it
   can connect to (not its own) is kept and sent `N<NAME>` too.
4. Holds every stolen connection ~5 s in a thread and prints what each answered.
5. Exits when the bot exits, with its status.
"""
import argparse
import os
import selectors
import socket
import subprocess
import sys
import threading
import time

COMMON_PORTS = (22, 80, 5432, 6379, 8000, 8080, 9898)
SCAN_SPAN = 200
CONNECT_TIMEOUT = 0.2
SCAN_SECONDS = 3.0
HOLD_SECONDS = 5.0


# --- helpers (each attacker has its own copy) --------------------------------

def report(what, result):
    print(f"ATTACK {what}: {result}", flush=True)


def failed(exc):
    return f"failed: {type(exc).__name__}: {exc}"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host", nargs="?", default=os.environ.get("CARDRING_HOST", "127.0.0.1"))
    parser.add_argument("port", nargs="?", default=os.environ.get("CARDRING_PORT", "5410"))
    parser.add_argument("name", nargs="?", default=os.environ.get("CARDRING_NAME", "thief"))
    args, _unknown = parser.parse_known_args()
    return args


def bot_command(host, port, name, seed=1):
    return [
        sys.executable, "-m", "ring", "bot", "reversi",
        "--server", f"{host}:{port}", "--name", name,
        "--level", "random", "--seed", str(seed),
    ]


# --- the attack --------------------------------------------------------------

def ports_from_environ(own_port):
    found = set()
    read = refused = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                raw = f.read()
            read += 1
        except OSError:
            refused += 1
            continue
        for item in raw.split(b"\0"):
            if item.startswith(b"CARDRING_PORT="):
                value = item[len(b"CARDRING_PORT="):].decode(errors="replace")
                if value.isdigit() and int(value) != own_port:
                    found.add(int(value))
    report("environ", f"read {read} environments ({refused} refused); other CARDRING_PORT values: {sorted(found)}")
    return found


def connect(host, port, timeout=CONNECT_TIMEOUT):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def introduce(sock, port, name):
    try:
        sock.sendall(b"N" + name.encode() + b"\n")
        report(f"intro {port}", f"sent N{name}")
    except OSError as exc:
        report(f"intro {port}", failed(exc))


def steal(host, port, name, stolen):
    """Connect to port, keep it, introduce ourselves as NAME."""
    if port in stolen:
        return
    try:
        sock = connect(host, port)
    except OSError as exc:
        report(f"connect {host}:{port}", failed(exc))
        return
    report(f"connect {host}:{port}", "connected")
    stolen[port] = sock
    introduce(sock, port, name)


def scan(own_port, name, stolen):
    candidates = []
    for distance in range(1, SCAN_SPAN + 1):
        for port in (own_port - distance, own_port + distance):
            if 0 < port < 65536:
                candidates.append(port)
    candidates += [p for p in COMMON_PORTS if p not in candidates]
    start = time.monotonic()
    tried = 0
    open_ports = []
    for port in candidates:
        if time.monotonic() - start > SCAN_SECONDS:
            break
        if port == own_port:
            continue
        tried += 1
        if port in stolen:
            open_ports.append(port)
            continue
        try:
            sock = connect("127.0.0.1", port)
        except OSError:
            continue
        open_ports.append(port)
        report(f"scan 127.0.0.1:{port}", "open")
        stolen[port] = sock
        introduce(sock, port, name)
    elapsed = time.monotonic() - start
    report("scan", f"tried {tried} of {len(candidates)} ports in {elapsed:.1f} s; open: {open_ports}")


def hold(stolen, answers):
    """Read every stolen connection for HOLD_SECONDS, keeping what came."""
    selector = selectors.DefaultSelector()
    for port, sock in stolen.items():
        answers[port] = [b"", None]
        try:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, port)
        except (OSError, ValueError) as exc:
            answers[port][1] = failed(exc)
    start = time.monotonic()
    while selector.get_map():
        left = HOLD_SECONDS - (time.monotonic() - start)
        if left <= 0:
            break
        for key, _ in selector.select(timeout=left):
            port = key.data
            try:
                data = key.fileobj.recv(4096)
            except BlockingIOError:
                continue
            except OSError as exc:
                data = None
                answers[port][1] = failed(exc)
            if not data:
                if answers[port][1] is None:
                    answers[port][1] = f"closed by the other end after {time.monotonic() - start:.1f} s"
                selector.unregister(key.fileobj)
                continue
            answers[port][0] = (answers[port][0] + data)[:4096]
    for sock in stolen.values():
        try:
            sock.close()
        except OSError:
            pass


def main():
    args = parse_args()
    try:
        own_port = int(args.port)
    except ValueError:
        own_port = 0
    stolen = {}
    answers = {}
    try:
        for port in sorted(ports_from_environ(own_port)):
            steal(args.host, port, args.name, stolen)
    except Exception as exc:
        report("environ", failed(exc))

    bot = None
    command = bot_command(args.host, args.port, args.name)
    print("PLAY: " + " ".join(command), flush=True)
    try:
        bot = subprocess.Popen(command)
    except OSError as exc:
        print(f"PLAY: {failed(exc)}", flush=True)

    try:
        scan(own_port, args.name, stolen)
    except Exception as exc:
        report("scan", failed(exc))

    holder = threading.Thread(target=hold, args=(stolen, answers), daemon=True)
    try:
        holder.start()
        holder.join(HOLD_SECONDS + 2)
    except Exception as exc:
        report("hold", failed(exc))
    for port in sorted(answers):
        data, how = answers[port]
        said = repr(data[:300]) if data else "nothing"
        report(f"answer {port}", f"said {said}" + (f"; {how}" if how else "; still open, closed by us"))
    if not stolen:
        report("hold", "no connection to hold")

    if bot is None:
        sys.exit(1)
    status = bot.wait()
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
