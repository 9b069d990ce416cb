#!/usr/bin/env python3
"""Reversi client for the course server (CS541 Reversi protocol).

Usage: python3 reversi_recv1024.py HOST PORT NAME

Reads with sock.recv(1024), keeps what it got in a buffer, and takes out
one line at a time: the server ends every message with a newline (U1, a
board, W1, G each on a line of its own). A line that is not complete yet
stays in the buffer until the rest arrives; several lines in one recv are
all handled.

Board: digit i of the 64 is square (x, y) with x = i // 8, y = i % 8,
(0,0) lower-left. 0 empty, 1 White, 2 Black. U1 = I am Black (digit 2),
U0 = I am White (digit 1). Move: "Mxy".
"""

import random
import socket
import sys

EMPTY, WHITE, BLACK = 0, 1, 2
DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
CORNERS = [(0, 0), (0, 7), (7, 0), (7, 7)]


def legal_moves(board, me):
    """{(x, y): number of discs flipped} for every legal move of colour me."""
    other = WHITE if me == BLACK else BLACK
    moves = {}
    for x in range(8):
        for y in range(8):
            if board[x][y] != EMPTY:
                continue
            total = 0
            for dx, dy in DIRECTIONS:
                n = 0
                cx, cy = x + dx, y + dy
                while 0 <= cx < 8 and 0 <= cy < 8 and board[cx][cy] == other:
                    n += 1
                    cx += dx
                    cy += dy
                if n > 0 and 0 <= cx < 8 and 0 <= cy < 8 and board[cx][cy] == me:
                    total += n
            if total > 0:
                moves[(x, y)] = total
    return moves


def choose_move(board, me):
    moves = legal_moves(board, me)
    if not moves:
        return None
    corners = [m for m in moves if m in CORNERS]
    if corners:
        return random.choice(corners)
    most = max(moves.values())
    return random.choice([m for m, n in moves.items() if n == most])  # greedy


def main():
    if len(sys.argv) != 4:
        print("usage: python3 reversi_recv1024.py HOST PORT NAME", file=sys.stderr)
        return 2
    host, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.connect((host, port))
    sock.sendall(("N" + name + "\n").encode())

    me = None
    buffer = ""
    done = False
    try:
        while not done:
            data = sock.recv(1024).decode()
            if not data:
                print("server closed the connection")
                break
            buffer += data
            # everything before the last newline is complete lines;
            # whatever comes after it is a partial message, keep it
            lines = buffer.split("\n")
            buffer = lines.pop()
            for line in lines:
                line = line.strip()
                if not line:
                    continue
                if line[0] == "U":
                    me = BLACK if line == "U1" else WHITE
                    print("I am", "Black" if me == BLACK else "White")
                elif line[0] == "B" and len(line) == 65:
                    board = [[int(line[1 + 8 * x + y]) for y in range(8)] for x in range(8)]
                    move = choose_move(board, me if me is not None else BLACK)
                    if move is None:
                        print("no legal move on this board?", line)
                        move = (0, 0)
                    sock.sendall(("M%d%d\n" % move).encode())
                elif line[0] == "W":
                    print({"W1": "I won", "W0": "I lost", "W2": "draw"}.get(line, line))
                elif line == "G":
                    print("game over")
                    done = True
                    break
                else:
                    print("unknown message:", line)
    except OSError as e:
        print("connection error:", e)
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
