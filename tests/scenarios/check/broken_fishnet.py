"""A FishNet client as a student writes one, with the bug ``--bug`` names (or none).

Blocking socket, ``recv(1024)``, prints to stdout; it keeps its hand from the
server's lines and asks for the rank it holds most of. Without ``--bug`` it
is correct, and every case of ``ring check fishnet`` passes it. Each bug is
caught by one case of the checker:

- ``one-recv``: takes each ``recv`` as one line (fishnet.framing.*);
- ``asks-back``: asks for the rank the opponent just asked for, which it gave away
  or never held (fishnet.game.*);
- ``deal-book``: takes ``oppmakes`` before its first turn for a broken server (fishnet.deal-book);
- ``one-turn``: after fishing, waits for the opponent's move (fishnet.fished-the-rank);
- ``no-pass``: knows no ``pass`` line (fishnet.opponent-passes);
- ``no-tie``: knows only ``youwin`` and ``youlose`` as ends (fishnet.end.tie);
- ``hang-on-close``: loops when the server closes without a result (fishnet.end.server-closes);
- ``slow``: thinks 1.5 s over its third turn (fishnet.time, with --move-time 1).
"""

import argparse
import socket
import sys
import time


def lines(sock, bug):
    buffer = ""
    while True:
        data = sock.recv(1024)
        if not data:
            if bug == "hang-on-close":
                while True:
                    time.sleep(0.05)
            return
        if bug == "one-recv":
            yield data.decode().strip()
            continue
        buffer += data.decode()
        while "\n" in buffer:
            line, buffer = buffer.split("\n", 1)
            if line.strip():
                yield line.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("name")
    parser.add_argument("--bug", default="")
    args = parser.parse_args()
    sock = socket.create_connection((args.host, args.port))
    sock.sendall(f"play {args.name} spot\n".encode())
    hand = {}
    turns = 0
    asked = None
    their_last = None
    waiting_for_them = False
    started = False

    def add(rank, count=1):
        hand[rank] = hand.get(rank, 0) + count
        if hand[rank] == 4:
            del hand[rank]  # a book

    for line in lines(sock, args.bug):
        print("got", line)
        words = line.split()
        op = words[0]
        if op == "fish":
            rank = int(words[1])
            add(rank)
            if started and args.bug == "one-turn":
                waiting_for_them = True
        elif op == "oppgives":
            add(int(words[2]), int(words[1]))
        elif op == "request":
            waiting_for_them = False
            their_last = int(words[1])
            hand.pop(their_last, None)
        elif op == "pass":
            if args.bug == "no-pass":
                raise RuntimeError("unknown line: " + line)
            waiting_for_them = False
        elif op == "oppmakes":
            if not started and args.bug == "deal-book":
                raise RuntimeError("a book before the game began?")
        elif op == "yourturn":
            started = True
            if waiting_for_them:
                continue  # "it is their turn now": a second yourturn is a mistake
            if args.bug == "slow" and turns == 2:
                time.sleep(1.5)
            if args.bug == "asks-back" and their_last is not None:
                asked = their_last  # "they have some: ask them back"
                sock.sendall(f"request {asked}\n".encode())
            elif hand:
                asked = max(sorted(hand), key=lambda r: hand[r])
                sock.sendall(f"request {asked}\n".encode())
            else:
                sock.sendall(b"pass\n")
            turns += 1
        elif op in ("youwin", "youlose") or (op == "tiegame" and args.bug != "no-tie"):
            print(op)
            break
        elif op == "error":
            print("server says", line)
    sock.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
