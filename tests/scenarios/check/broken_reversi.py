"""A Reversi client as a student writes one, with the bug ``--bug`` names (or none).

Blocking socket, ``recv(1024)``, prints to stdout, a first-legal-move player:
what a 2013 lab client looks like. Without ``--bug`` it is correct, and every
case of ``ring check reversi`` passes it. Each bug is one that costs students
a lab, and one case of the checker is there to catch it:

- ``one-recv``: takes each ``recv`` as exactly one message (reversi.framing.*);
- ``needs-newline``: reads messages by newline only (reversi.framing.bare);
- ``swap-xy``: sends ``M<y><x>`` (reversi.game.*);
- ``repeat``: plays an illegal move first, and sends the same move again when
  the board comes again (no case of its own since the board again is answered in
  every case: the 100th attempt FAILs reversi.game.*);
- ``no-pass``: takes a board right after its own move for an echo of it, and
  waits for the next (reversi.pass);
- ``expects-full``: believes a game ends only on a full board, and waits on
  after ``W`` otherwise (reversi.end.empty);
- ``no-draw``: knows only ``W0`` and ``W1`` as ends (reversi.end.draw);
- ``hang-on-close``: loops for ever when the server closes without ``G``
  (reversi.end.server-closes);
- ``slow``: thinks 1.5 s over its third move (reversi.time, with --move-time 1);
- ``no-exit``: never exits after ``G`` (every game case).
"""

import argparse
import socket
import sys
import time


def legal_moves(board, me):
    """Squares (x, y) where ``me`` (1 white, 2 black) flips something; square i is (i//8, i%8)."""
    other = 3 - me
    moves = []
    for x in range(8):
        for y in range(8):
            if board[x * 8 + y] != 0:
                continue
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    if dx == 0 and dy == 0:
                        continue
                    i, j, seen = x + dx, y + dy, 0
                    while 0 <= i < 8 and 0 <= j < 8 and board[i * 8 + j] == other:
                        i, j, seen = i + dx, j + dy, seen + 1
                    flanked = seen and 0 <= i < 8 and 0 <= j < 8 and board[i * 8 + j] == me
                    if flanked and (x, y) not in moves:
                        moves.append((x, y))
    return moves


def messages(sock, bug):
    """Yield the server's messages: U?, B+64, W?, G; None when the connection closes."""
    buffer = ""
    while True:
        data = sock.recv(1024)
        if not data:
            if bug == "hang-on-close":
                while True:  # "the server will send G": it never does
                    time.sleep(0.05)
            yield None
            return
        text = data.decode()
        if bug == "one-recv":
            yield text.strip()
            continue
        buffer += text
        if bug == "needs-newline":
            while "\n" in buffer:
                line, buffer = buffer.split("\n", 1)
                if line.strip():
                    yield line.strip()
            continue
        buffer = buffer.lstrip()
        while buffer:
            size = {"U": 2, "B": 65, "W": 2, "G": 1}.get(buffer[0], 1)
            if len(buffer) < size:
                break
            yield buffer[:size]
            buffer = buffer[size:].lstrip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("name")
    parser.add_argument("--bug", default="")
    args = parser.parse_args()
    sock = socket.create_connection((args.host, args.port))
    sock.sendall(f"N{args.name}\n".encode())
    me = None
    moves_made = 0
    last_sent = None
    discs_after_mine = None
    board = None
    ignoring_end = False
    for message in messages(sock, args.bug):
        if message is None:
            print("server closed the connection")
            break
        print("got", message)
        if message.startswith("U"):
            me = 2 if message == "U1" else 1
        elif message.startswith("B"):
            board = [int(c) for c in message[1:65]]
            if args.bug == "no-pass" and sum(1 for v in board if v) == discs_after_mine:
                continue  # "the opponent has not moved yet": it passed, and we wait for ever
            moves = legal_moves(board, me)
            if args.bug == "repeat" and last_sent is not None and moves_made == 0:
                move = last_sent  # the board came again: send the same, it must have been lost
            elif args.bug == "repeat" and moves_made == 0:
                taken = next(i for i, v in enumerate(board) if v != 0)
                move = (taken // 8, taken % 8)  # an occupied square: illegal
            else:
                move = moves[0]
            if args.bug == "slow" and moves_made == 2:
                time.sleep(1.5)
            x, y = move
            if args.bug == "swap-xy":
                x, y = y, x
            sock.sendall(f"M{x}{y}\n".encode())
            last_sent = move
            if move in moves:
                moves_made += 1
                discs_after_mine = sum(1 for v in board if v) + 1
        elif message.startswith("W"):
            full = board is not None and all(board)
            if args.bug == "expects-full" and not full:
                ignoring_end = True  # "the game is not over yet"
            if args.bug == "no-draw" and message == "W2":
                ignoring_end = True  # "not a result we know": wait for one
            if ignoring_end:
                continue
            print({"W1": "we won", "W0": "we lost", "W2": "a draw"}.get(message, message))
        elif message == "G":
            if ignoring_end:
                continue
            break
    sock.close()
    if args.bug == "no-exit":
        while True:
            time.sleep(0.05)
    sys.exit(0)


if __name__ == "__main__":
    main()
