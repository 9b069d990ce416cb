#!/usr/bin/env python3
"""An Old Maid peer with one bug, for the ring check tests: ``student_peer.py`` bent once.

``tests/interop/student_peer.py`` is a 2013 student's client (blocking
sockets, a thread per connection, status polled to learn the end); with no
flags it plays by the rules. ``--bug NAME`` bends it in one place, the way
students' peers really went wrong, so that one staged case catches it:

``dial-once``        dials its left neighbour once; a refused dial is the end
``no-skip``          offers only to its left neighbour: ``out`` there means no one is in
``gone-fatal``       a neighbour whose connection closed is an error, never looked up
``out-untold``       with an empty hand when the offers begin, answers ``out`` without
                     telling the table (``out_of_cards``)
``picks-from-none``  an offer of ``num_cards`` 0 is picked from, as if it held a card
``one-based``        reads ``card_num`` from 1: refuses a pick of 0, and gives card_num - 1
``waits-for-out``    believes its game ends only once it is out: holding the Old Maid,
                     it waits for ever
``ignores-abort``    an aborted game is not an end, and a closed table is no reason to
                     stop: it waits for ever
``hang-on-close``    a table connection that closes is not the end: it waits for ever
``stream-one-recv``  says ``stream: true`` in its offers, yet reads each message with one
                     ``recv`` (``--one-recv``): an ok and a pick in one segment kill it
``slow``             thinks SLOW seconds (1.5, past the tests' 1 s move limit) before each
                     turn it hands on

Usage: python broken_oldmaid.py --nick NICK --table HOST:PORT [--bug NAME] [student_peer flags]
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "interop"))

import student_peer
from student_peer import POLL_INTERVAL, PeerError

BUGS = (
    "dial-once",
    "no-skip",
    "gone-fatal",
    "out-untold",
    "picks-from-none",
    "one-based",
    "waits-for-out",
    "ignores-abort",
    "hang-on-close",
    "stream-one-recv",
    "slow",
)
SLOW = 1.5


class BrokenPeer(student_peer.Peer):
    def __init__(self, args, bug):
        super().__init__(args)
        self.bug = bug

    def reach(self, seat, check_gone=True):
        if self.bug != "dial-once" or seat in self.outs:
            return super().reach(seat, check_gone)
        host, port, nick = self.players[seat]
        try:
            sock = student_peer.socket.create_connection((host, port), timeout=1.0)
        except OSError as e:
            raise PeerError(f"cannot dial {nick} at {host}:{port}: {e}") from None
        conn = self.conn(sock, f"{self.nick}>{nick}")
        self.outs[seat] = conn
        return conn

    def pass_draw_turn(self):
        if self.bug == "slow":
            time.sleep(SLOW)
        super().pass_draw_turn()

    def hold_turn(self):
        if self.bug == "slow":
            time.sleep(SLOW)
        super().hold_turn()

    def ask(self, seat, msg):
        if self.bug == "stream-one-recv" and msg.get("cmd") == "offer":
            msg = {**msg, "stream": True}
        return super().ask(seat, msg)

    def left_seats(self):
        seats = super().left_seats()
        return seats[:1] if self.bug == "no-skip" else seats

    def seat_gone(self, seat):
        return False if self.bug == "gone-fatal" else super().seat_gone(seat)

    def on_offer(self, conn, msg):
        if self.bug == "out-untold" and not self.hand and not self.is_out:
            with self.lock:
                self.phase = "offer"
            self.answer(conn, msg, "out")
            return
        if self.bug == "picks-from-none" and msg.get("num_cards") == 0:
            msg = {**msg, "num_cards": 1}
        super().on_offer(conn, msg)

    def poll_until_over(self, deadline):
        if self.bug == "waits-for-out":
            while not self.is_out:  # holding the Old Maid, it never is
                time.sleep(POLL_INTERVAL)
        if self.bug == "ignores-abort":
            while True:
                try:
                    status = self.status()
                except PeerError:
                    status = {}  # the table closed: wait for our turn all the same
                if status.get("game_over") and not status.get("aborted"):
                    return status
                time.sleep(POLL_INTERVAL)
        if self.bug == "hang-on-close":
            while True:
                try:
                    return super().poll_until_over(deadline)
                except PeerError as e:
                    if "closed the connection" not in str(e):
                        raise
                    time.sleep(POLL_INTERVAL)  # the table will be back, surely
        return super().poll_until_over(deadline)


def one_based_pop(hand, card_num, one_based):
    """The picked card, counting from 1 (a card_num of 0 is refused)."""
    if not isinstance(card_num, int) or not 1 <= card_num <= len(hand):
        return None
    return hand.pop(card_num - 1)


def main():
    argv = sys.argv[1:]
    bug = None
    if "--bug" in argv:  # without it: student_peer.py itself, a correct peer
        at = argv.index("--bug")
        if at + 1 >= len(argv) or argv[at + 1] not in BUGS:
            sys.stderr.write(f"broken_oldmaid: --bug takes one of {', '.join(BUGS)}\n")
            sys.exit(2)
        bug = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :]
    args = student_peer.parse_args(argv)
    if bug == "stream-one-recv":
        args.one_recv = True
    if bug == "one-based":
        student_peer.pop_picked = one_based_pop
    student_peer.play(BrokenPeer(args, bug), args)


if __name__ == "__main__":
    main()
