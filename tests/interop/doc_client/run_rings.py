#!/usr/bin/env python3
"""Play rings mixing verified_peer.py with `ring peer`s at a `ring table`.

    python run_rings.py [--sizes 2,3,5] [--seeds 1-6] [--mine 1,2]
                        [--modes verified,verify-mixed,no-verify] [--keep DIR]
                        [--witness-after S] [--no-witness] [--ring-no-witness]

Only runs the project's commands (ring table, ring peer); everything on
127.0.0.1, every process bounded by a timeout. Prints one line per game and
a summary; exits 1 if any game did not end normally, or named one of ours.

Modes:
  verified      every player verifies; the table runs with --verified
                (our clients report every exchange, 14.6)
  verify-open   our clients verify, the table does not require it (all
                ring peers verify too, so the game still reports: 14.6)
  no-verify     our clients join as older clients (--no-verify): the game
                is not verified, the ring peers still prove themselves (14.5)
  mixed         one of ours verifies, one does not (needs --mine 2)

The table as witness (14.6): every verifying player joins with "witness"
by default, so verified games are witnessed. --witness-after S makes our
clients ask the table about an exchange after S seconds of waiting (0:
every exchange of theirs goes through the table; "0,10": the first of ours
at once, the others after 10 s, so that the others learn of exchanges only
from the table's notices); --no-witness makes ours,
--ring-no-witness the ring peers, join without it (the game is then not
witnessed). Each game's line ends with w=N: the exchanges the table took to
witness at our clients' request, and t=N: those it brought to our clients
(the other player asked).
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
RING = os.path.join(ROOT, ".venv", "bin", "ring")
PEER = os.path.join(HERE, "verified_peer.py")
TIMEOUT = 60


def parse_range(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def play(size, mine, seed, mode, keep, witness_args=(), ring_args=()):
    tag = "n%d-m%d-s%d-%s" % (size, mine, seed, mode)
    transcript = os.path.join(keep, tag + ".jsonl")
    cmd = ["timeout", str(TIMEOUT + 10), RING, "table", "--players", str(size),
           "--port", "0", "--seed", str(seed), "--transcript", transcript]
    without_witness = "--no-witness" in ring_args or any("--no-witness" in a for a in witness_args)
    if mode == "verified" and not without_witness:
        # (--verified seats only players that also witness: without witness, every player
        # still verifies, and the game is verified, not witnessed.)
        cmd.append("--verified")
    table = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = table.stdout.readline().strip()
    if not first.startswith("table listening on"):
        table.kill()
        return tag, "table did not start: %r" % first, []
    addr = first.split()[3]  # "table listening on HOST:PORT [(verified ...)]"
    procs = []
    for i in range(size):
        if i < mine:
            nick = "doc%d" % (i + 1)
            args = ["timeout", str(TIMEOUT), sys.executable, PEER, "--nick", nick,
                    "--table", addr, "--host", "127.0.0.1", "--seed", str(seed * 10 + i)]
            if mode == "no-verify" or (mode == "mixed" and i == 1):
                args.append("--no-verify")
            args.extend(witness_args[min(i, len(witness_args) - 1)] if witness_args else [])
        else:
            nick = "peer%d" % (i + 1)
            args = ["timeout", str(TIMEOUT), RING, "peer", "--name", nick, "--server", addr,
                    "--host", "127.0.0.1", "--port", "0", "--seed", str(seed * 10 + i)]
            args.extend(ring_args)
        out = open(os.path.join(keep, "%s.%s.out" % (tag, nick)), "w")
        err = open(os.path.join(keep, "%s.%s.err" % (tag, nick)), "w")
        procs.append((nick, subprocess.Popen(args, stdout=out, stderr=err), out, err))
    results = []
    for nick, p, out, err in procs:
        try:
            code = p.wait(TIMEOUT + 5)
        except subprocess.TimeoutExpired:
            p.kill()
            code = "killed"
        out.close()
        err.close()
        with open(os.path.join(keep, "%s.%s.out" % (tag, nick))) as f:
            lines = [l.rstrip() for l in f if l.strip()]
        with open(os.path.join(keep, "%s.%s.err" % (tag, nick))) as f:
            elines = [l.rstrip() for l in f if l.strip()]
        # our own client's warnings count against the game
        warn = [l for l in lines if "!!" in l or "internal error" in l or "ignoring" in l]
        asked = {l.split("took exchange ")[1].split()[0] for l in lines
                 if "witness: the table took exchange " in l}
        noticed = {l.split('"seq": ')[1].split(",")[0] for l in lines
                   if '"cmd": "witnessed"' in l}
        results.append((nick, code, lines[-1] if lines else "", elines + warn,
                        len(asked), len(noticed - asked)))
    try:
        tout, terr = table.communicate(timeout=TIMEOUT if all(r[1] == 0 for r in results) else 15)
    except subprocess.TimeoutExpired:
        table.kill()
        tout, terr = table.communicate()
    tlines = [l for l in (first + "\n" + tout).splitlines() if l.strip()]
    return tag, tlines[-1] if tlines else "(no table output)", results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2,3,5")
    ap.add_argument("--seeds", default="1-4")
    ap.add_argument("--mine", default="1,2")
    ap.add_argument("--modes", default="verified,verify-open,no-verify,mixed")
    ap.add_argument("--keep", default="/tmp/doc_client_runs")
    ap.add_argument("--witness-after", default=None, metavar="S[,S...]",
                    help="passed to our clients: ask the table after S s of waiting "
                         "(one value for each of ours, the last for the rest)")
    ap.add_argument("--no-witness", action="store_true", help="our clients join without witness")
    ap.add_argument("--ring-no-witness", action="store_true",
                    help="the ring peers join without witness")
    args = ap.parse_args()
    afters = args.witness_after.split(",") if args.witness_after else [None]
    witness_args = []   # one list of options for each of our clients
    for after in afters:
        one = ["--witness-after", str(float(after))] if after else []
        if args.no_witness:
            one.append("--no-witness")
        witness_args.append(one)
    ring_args = ["--no-witness"] if args.ring_no_witness else []
    os.makedirs(args.keep, exist_ok=True)
    bad = 0
    total = 0
    for mode in args.modes.split(","):
        for size in parse_range(args.sizes):
            for mine in parse_range(args.mine):
                if mine > size or (mode == "mixed" and mine < 2):
                    continue
                for seed in parse_range(args.seeds):
                    t0 = time.monotonic()
                    tag, line, results = play(size, mine, seed, mode, args.keep,
                                              witness_args, ring_args)
                    total += 1
                    ok = (line.startswith("game over")
                          and all(r[1] == 0 and not r[3] for r in results))
                    if not ok:
                        bad += 1
                    asked = sum(r[4] for r in results)
                    brought = sum(r[5] for r in results)
                    print("%-4s %-28s %5.1fs  w=%-3d t=%-3d %s"
                          % ("ok" if ok else "BAD", tag, time.monotonic() - t0, asked,
                             brought, line), flush=True)
                    for nick, code, last, elines, _, _ in results:
                        if code != 0 or elines:
                            print("       %s exit %s: %s %s" % (nick, code, last, elines[-3:]))
    print("%d games, %d not normal" % (total, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
