"""A No Tipping client as a student writes one, with the bug ``--bug`` names (or none).

Blocking socket, ``recv(1024)``, prints to stdout, a player that takes the
first move that does not tip the board. Without ``--bug`` it is correct, and
every case of ``ring check notipping`` passes it. Each bug is caught by one
case of the checker:

- ``one-recv``: takes each ``recv`` as exactly one message (notipping.framing.*);
- ``by-line``: reads a message a line (notipping.framing.layout);
- ``swap-add``: sends ``ADD:<position>:<weight>`` (notipping.game.*);
- ``hang-denied``: waits for ever after ``DENIED;`` (notipping.denied);
- ``add-only``: answers every ROUND with an ADD, by its round number (notipping.remove);
- ``win-waits``: after ``WIN;`` waits for more (notipping.end.win);
- ``ignore-invalid``: takes ``INVALID;`` for noise and waits for a ROUND (notipping.end.invalid);
- ``hang-on-close``: loops when the server closes without an end (notipping.end.server-closes);
- ``slow``: thinks 1.5 s over its third move (notipping.time, with a 1 s budget).
"""

import argparse
import socket
import sys
import time

POSITIONS = list(range(-10, 11))


def tips(weights):
    """Whether the board (21 weights, positions -10..10, plus its own 3 kg at 0) tips."""
    left = right = 0
    for i, weight in enumerate(weights):
        position = POSITIONS[i]
        left += (position + 3) * weight
        right += (position + 1) * weight
    left += 3 * 3
    right += 1 * 3
    return left < 0 or right > 0


def choose(fields, add_only):
    """The answer to a ROUND's fields (after ROUND and r.p)."""
    if fields[0] == "ADD" or add_only:
        mine = [int(w) for w in fields[1].split()] if fields[0] == "ADD" else [1]
        state = [int(w) for w in fields[-1].split()]
        for weight in mine:
            for i, position in enumerate(POSITIONS):
                if state[i] == 0:
                    after = state[:]
                    after[i] = weight
                    if not tips(after):
                        return ("ADD", weight, position)
        return ("ADD", mine[0], POSITIONS[state.index(0)])
    state = [int(w) for w in fields[1].split()]
    for i, position in enumerate(POSITIONS):
        if state[i]:
            after = state[:]
            after[i] = 0
            if not tips(after):
                return ("REMOVE", position)
    return ("REMOVE", POSITIONS[next(i for i, w in enumerate(state) if w)])


def messages(sock, bug):
    buffer = ""
    while True:
        data = sock.recv(1024)
        if not data:
            if bug == "hang-on-close":
                while True:
                    time.sleep(0.05)
            return
        text = data.decode()
        if bug == "one-recv":
            yield text.strip().rstrip(";")
            continue
        if bug == "by-line":
            for line in text.splitlines():
                if line.strip():
                    yield line.strip().rstrip(";")
            continue
        buffer += text
        while ";" in buffer:
            message, buffer = buffer.split(";", 1)
            yield ":".join(field.strip() for field in message.split(":"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("name")
    parser.add_argument("seat")
    parser.add_argument("--bug", default="")
    args = parser.parse_args()
    sock = socket.create_connection((args.host, args.port))
    seat = args.seat
    sock.sendall(f"JOINREQUEST:{args.name}:{seat};\n".encode())
    moves = 0
    for message in messages(sock, args.bug):
        print("got", message)
        fields = message.split(":")
        if fields[0] == "DENIED":
            if args.bug == "hang-denied":
                continue  # "GRANTED will come"
            seat = "1" if seat == "0" else "0"
            sock.sendall(f"JOINREQUEST:{args.name}:{seat};\n".encode())
        elif fields[0] == "ROUND":
            if args.bug == "slow" and moves == 2:
                time.sleep(1.5)
            answer = choose(fields[2:], args.bug == "add-only")
            if answer[0] == "ADD":
                weight, position = answer[1], answer[2]
                if args.bug == "swap-add":
                    weight, position = position, weight
                sock.sendall(f"ADD:{weight}:{position};\n".encode())
            else:
                sock.sendall(f"REMOVE:{answer[1]};\n".encode())
            moves += 1
        elif fields[0] == "INVALID":
            if args.bug == "ignore-invalid":
                while True:  # "a ROUND will come again"
                    time.sleep(0.05)
            print("our move was refused")
        elif fields[0] in ("WIN", "LOSE"):
            if fields[0] == "WIN" and args.bug == "win-waits":
                continue  # "the server will tell us more"
            print("we won" if fields[0] == "WIN" else "we lost")
            break
    sock.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
