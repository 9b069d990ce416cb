#!/usr/bin/env python3
# CS541 Reversi client - lab 2
# usage: python3 bug_draw_crash.py HOST PORT NAME
#
# plays greedy (most flips, corners first). reads the server as a stream
# because one recv can have several messages in it (U1 + board etc).

import socket
import sys

DIRS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
CORNERS = [(0, 0), (0, 7), (7, 0), (7, 7)]

# what the W message means
RESULT = {"W1": "we WON :)", "W0": "we lost :("}


def flips(board, x, y, me):
    """how many discs (x,y) flips for me. board[8*x+y] is a char '0' '1' '2'"""
    if board[8 * x + y] != "0":
        return 0
    them = "1" if me == "2" else "2"
    total = 0
    for dx, dy in DIRS:
        cx, cy = x + dx, y + dy
        n = 0
        while 0 <= cx < 8 and 0 <= cy < 8 and board[8 * cx + cy] == them:
            cx += dx
            cy += dy
            n += 1
        if n > 0 and 0 <= cx < 8 and 0 <= cy < 8 and board[8 * cx + cy] == me:
            total += n
    return total


def pick_move(board, me):
    best = None
    best_score = -1
    for x in range(8):
        for y in range(8):
            f = flips(board, x, y, me)
            if f == 0:
                continue
            score = f
            if (x, y) in CORNERS:
                score += 100
            if score > best_score:
                best_score = score
                best = (x, y)
    return best


def main():
    if len(sys.argv) != 4:
        print("usage: bug_draw_crash.py HOST PORT NAME")
        sys.exit(2)
    host = sys.argv[1]
    port = int(sys.argv[2])
    name = sys.argv[3]

    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect((host, port))
    s.sendall(("N" + name + "\n").encode())
    print("connected, sent name", name)

    buf = ""
    me = None
    moves = 0
    while True:
        # take out whole messages
        buf = buf.lstrip()
        if buf == "" or (buf[0] == "B" and len(buf) < 65) or (buf[0] in "UW" and len(buf) < 2):
            data = s.recv(1024)
            if not data:
                print("server closed the connection")
                break
            buf += data.decode()
            continue

        c = buf[0]
        if c == "U":
            msg = buf[:2]
            buf = buf[2:]
            if msg == "U1":
                me = "2"
                print("we are black")
            else:
                me = "1"
                print("we are white")
        elif c == "B":
            board = buf[1:65]
            buf = buf[65:]
            mv = pick_move(board, me)
            if mv is None:
                print("no legal move?? sending M00")
                mv = (0, 0)
            moves += 1
            print("move %d: M%d%d" % (moves, mv[0], mv[1]))
            s.sendall(("M%d%d\n" % mv).encode())
        elif c == "W":
            msg = buf[:2]
            buf = buf[2:]
            print("game over,", RESULT[msg])
        elif c == "G":
            print("G - bye")
            break
        else:
            print("junk from server:", repr(buf[0]))
            buf = buf[1:]

    s.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
