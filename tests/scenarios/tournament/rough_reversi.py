"""A student's Reversi program as a tournament meets it, with one way to lose (``--fault``).

It is the checker's student client (``broken_reversi.py``: a blocking
socket, ``recv(1024)``, prints, a first-legal-move player) for the play, and
each fault is what such programs do in a contest:

- ``exits``: exits with status 3 at once (a missing argument, a bad path);
- ``never-connects``: runs, but dials nothing (a hard-coded address);
- ``crashes``: raises after its third move (a traceback, status 1);
- ``leaves``: closes its connection after its first move and keeps running;
- ``silent``: connects, names itself, then never answers (times out);
- ``garbage``: answers every board with a line that is not a move;
- ``daemon``: before playing, starts a daemon that sleeps (fork, setsid, fork)
  and prints its pid; then plays a correct game;
- none: a correct game.
"""

import argparse
import os
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "check"))
from broken_reversi import legal_moves, messages


def start_daemon():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            print(f"daemon {os.getpid()}", flush=True)
            time.sleep(600)
        os._exit(0)
    os.waitpid(pid, 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("name")
    parser.add_argument("--fault", default="")
    args = parser.parse_args()
    if args.fault == "exits":
        print("usage: client HOST PORT NAME --level 3", file=sys.stderr)
        sys.exit(3)
    if args.fault == "never-connects":
        time.sleep(600)
    if args.fault == "daemon":
        start_daemon()
    sock = socket.create_connection((args.host, args.port))
    sock.sendall(f"N{args.name}\n".encode())
    me, moves_made = None, 0
    for message in messages(sock, ""):
        if message is None:
            break
        print("got", message)
        if message.startswith("U"):
            me = 2 if message == "U1" else 1
        elif message.startswith("B"):
            if args.fault == "silent":
                continue
            if args.fault == "garbage":
                sock.sendall(b"hello?\n")
                continue
            if args.fault == "crashes" and moves_made == 3:
                raise RuntimeError("index out of range (a student's bug)")
            board = [int(c) for c in message[1:65]]
            x, y = legal_moves(board, me)[0]
            sock.sendall(f"M{x}{y}\n".encode())
            moves_made += 1
            if args.fault == "leaves":
                sock.close()
                time.sleep(600)
        elif message == "G":
            break
    sock.close()


if __name__ == "__main__":
    main()
