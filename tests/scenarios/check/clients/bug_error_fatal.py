#!/usr/bin/env python3
# FishNet (Go Fish) client - level 1
# usage: python3 bug_error_fatal.py HOST PORT NAME OPPONENT
#
# keeps track of the hand from the server messages and always asks for
# the rank it has the most of.

import socket
import sys


def main():
    if len(sys.argv) != 5:
        print("usage: bug_error_fatal.py HOST PORT NAME OPPONENT")
        sys.exit(2)
    host, port, name, opp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

    sock = socket.create_connection((host, port))
    f = sock.makefile("r")
    sock.sendall(("play %s %s\n" % (name, opp)).encode())

    hand = [0] * 13
    my_books = 0
    opp_books = 0

    def got(rank, n):
        nonlocal my_books
        hand[rank] += n
        if hand[rank] == 4:
            print("  book of", rank)
            hand[rank] = 0
            my_books += 1

    while True:
        line = f.readline()
        if line == "":
            print("connection closed by server")
            break
        words = line.split()
        if not words:
            continue
        cmd = words[0]

        if cmd == "fish":
            r = int(words[1])
            print("got a", r)
            got(r, 1)
        elif cmd == "oppgives":
            n, r = int(words[1]), int(words[2])
            print("opponent gave me", n, "x", r)
            got(r, n)
        elif cmd == "request":
            r = int(words[1])
            print("opponent asks for", r, "- I give", hand[r])
            hand[r] = 0
        elif cmd == "oppmakes":
            opp_books += 1
            print("opponent made a book of", words[1])
        elif cmd == "youmake":
            r = int(words[1])
            if hand[r] > 0:
                hand[r] = 0
                my_books += 1
        elif cmd == "pass":
            print("opponent passed")
        elif cmd == "yourturn":
            best = max(range(13), key=lambda i: hand[i])
            print("hand:", hand, "-> request", best)
            sock.sendall(("request %d\n" % best).encode())
        elif cmd == "error":
            print("ERROR from server:", " ".join(words[1:]))
            sys.exit(1)
        elif cmd in ("youwin", "youlose", "tiegame"):
            print(cmd, "- books me", my_books, "them", opp_books)
            break
        else:
            print("??", line.strip())

    sock.close()


if __name__ == "__main__":
    main()
