#!/usr/bin/env python3
"""Reversi client for the course server (CS541 Reversi protocol).

Usage: python3 reversi_bytewise.py HOST PORT NAME

Reads the server one byte at a time (sock.recv(1)) and finds where each
message ends from its format in the handout:

    U + 1 digit     your colour (U1 = Black, moves first; U0 = White)
    B + 64 digits   the board, your turn
    W + 1 digit     W1 won, W0 lost, W2 draw
    G               game over, the server closes the connection

Whitespace (newlines included) between messages is skipped, so it works
whether or not the server ends its messages with a newline.

Board: digit i is square (x, y) with x = i // 8 and y = i % 8, (0,0) the
lower-left corner. 0 empty, 1 White, 2 Black. A move is "Mxy".
"""

import socket
import sys

EMPTY, WHITE, BLACK = 0, 1, 2
DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
# bytes after the letter, from the handout's message formats
LENGTH = {"U": 1, "B": 64, "W": 1, "G": 0}

# a simple square weight table: corners good, squares next to corners bad
WEIGHTS = [
    [100, -20, 10, 5, 5, 10, -20, 100],
    [-20, -50, -2, -2, -2, -2, -50, -20],
    [10, -2, 1, 1, 1, 1, -2, 10],
    [5, -2, 1, 0, 0, 1, -2, 5],
    [5, -2, 1, 0, 0, 1, -2, 5],
    [10, -2, 1, 1, 1, 1, -2, 10],
    [-20, -50, -2, -2, -2, -2, -50, -20],
    [100, -20, 10, 5, 5, 10, -20, 100],
]


class Closed(Exception):
    """The server closed the connection."""


def read_byte(sock):
    b = sock.recv(1)
    if not b:
        raise Closed()
    return b.decode("ascii", errors="replace")


def read_message(sock):
    """Return the next message as a string, e.g. 'U1', 'B000...', 'W0', 'G'."""
    while True:
        c = read_byte(sock)
        if c.isspace():
            continue  # newline (or other whitespace) between messages
        if c not in LENGTH:
            print("reversi: ignoring unexpected byte %r from the server" % c, file=sys.stderr)
            continue
        msg = c
        while len(msg) < 1 + LENGTH[c]:
            msg += read_byte(sock)
        return msg


def parse_board(msg):
    """board[x][y] from 'B' + 64 digits; digit i is (i // 8, i % 8)."""
    digits = msg[1:]
    board = [[EMPTY] * 8 for _ in range(8)]
    for i in range(64):
        board[i // 8][i % 8] = int(digits[i])
    return board


def flips(board, x, y, me):
    """Squares flipped by my disc on (x, y); empty list if the move is illegal."""
    if board[x][y] != EMPTY:
        return []
    other = WHITE if me == BLACK else BLACK
    result = []
    for dx, dy in DIRECTIONS:
        line = []
        cx, cy = x + dx, y + dy
        while 0 <= cx < 8 and 0 <= cy < 8 and board[cx][cy] == other:
            line.append((cx, cy))
            cx += dx
            cy += dy
        if line and 0 <= cx < 8 and 0 <= cy < 8 and board[cx][cy] == me:
            result.extend(line)
    return result


def choose_move(board, me):
    best = None
    best_score = None
    for x in range(8):
        for y in range(8):
            f = flips(board, x, y, me)
            if not f:
                continue
            score = WEIGHTS[x][y] * 10 + len(f)
            if best_score is None or score > best_score:
                best, best_score = (x, y), score
    return best


def main():
    if len(sys.argv) != 4:
        print("usage: python3 reversi_bytewise.py HOST PORT NAME", file=sys.stderr)
        return 2
    host, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]

    sock = socket.create_connection((host, port))
    sock.sendall(("N" + name + "\n").encode("ascii"))

    me = None
    result = None
    try:
        while True:
            msg = read_message(sock)
            kind = msg[0]
            if kind == "U":
                me = BLACK if msg == "U1" else WHITE
                print("I am", "Black" if me == BLACK else "White")
            elif kind == "B":
                board = parse_board(msg)
                if me is None:
                    # no U came (should not happen); guess Black
                    me = BLACK
                move = choose_move(board, me)
                if move is None:
                    # the server only sends a board when we have a move;
                    # answer something so we stay in step
                    print("no legal move found on", msg, file=sys.stderr)
                    move = (0, 0)
                sock.sendall(("M%d%d\n" % move).encode("ascii"))
            elif kind == "W":
                result = {"W1": "won", "W0": "lost", "W2": "draw"}.get(msg, msg)
                print("result:", result)
            elif kind == "G":
                print("game over")
                break
    except Closed:
        print("the server closed the connection" + ("" if result else " before the result"))
    except OSError as e:
        print("connection error:", e, file=sys.stderr)
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
