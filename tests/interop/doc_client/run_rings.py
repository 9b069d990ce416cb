#!/usr/bin/env python3
"""Play rings mixing verified_peer.py with `ring peer`s at a `ring table`.

    python run_rings.py [--sizes 2,3,5] [--seeds 1-6] [--mine 1,2]
                        [--modes verified,verify-mixed,no-verify] [--keep DIR]

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


def play(size, mine, seed, mode, keep):
    tag = "n%d-m%d-s%d-%s" % (size, mine, seed, mode)
    transcript = os.path.join(keep, tag + ".jsonl")
    cmd = ["timeout", str(TIMEOUT + 10), RING, "table", "--players", str(size),
           "--port", "0", "--seed", str(seed), "--transcript", transcript]
    if mode == "verified":
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
        else:
            nick = "peer%d" % (i + 1)
            args = ["timeout", str(TIMEOUT), RING, "peer", "--name", nick, "--server", addr,
                    "--host", "127.0.0.1", "--port", "0", "--seed", str(seed * 10 + i)]
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
        results.append((nick, code, lines[-1] if lines else "", elines + warn))
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
    args = ap.parse_args()
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
                    tag, line, results = play(size, mine, seed, mode, args.keep)
                    total += 1
                    ok = (line.startswith("game over")
                          and all(r[1] == 0 and not r[3] for r in results))
                    if not ok:
                        bad += 1
                    print("%-4s %-28s %5.1fs  %s" % ("ok" if ok else "BAD", tag,
                                                     time.monotonic() - t0, line), flush=True)
                    for nick, code, last, elines in results:
                        if code != 0 or elines:
                            print("       %s exit %s: %s %s" % (nick, code, last, elines[-3:]))
    print("%d games, %d not normal" % (total, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
