#!/usr/bin/env python3
"""Send forged turns to verified_peer.py in a running game (14.5 "Checking").

    python forge_test.py [--seed N] [--no-verified-table]

Starts `ring table --players 3` (with --verified unless told), one
verified_peer.py and two `ring peer`s on 127.0.0.1. Once our client is
seated, a stranger dials its listener and sends, each on a new connection:

  1. a your_turn claiming to be a ring peer, with a wrong proof;
  2. an offer claiming to be a ring peer, with no proof;
  3. a your_turn with neither from nor proof (every other player proves itself);
  4. on one connection: a good-looking proof is impossible for the stranger,
     so it sends a turn with no proof and a from naming a player that proves
     itself.

Each must be answered `error` "refused: ...", and reported with `accuse`
rule `impersonation`; the game must still end normally with nobody named.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
RING = os.path.join(ROOT, ".venv", "bin", "ring")
PEER = os.path.join(HERE, "verified_peer.py")


def ask(port, msg):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall((json.dumps(msg, separators=(",", ":")) + "\n").encode())
    buf = b""
    while b"\n" not in buf:
        data = s.recv(4096)
        if not data:
            break
        buf += data
    s.close()
    return json.loads(buf.split(b"\n")[0]) if buf else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--no-verified-table", action="store_true")
    args = ap.parse_args()
    transcript = "/tmp/doc_client_forge_%d.jsonl" % args.seed
    cmd = ["timeout", "60", RING, "table", "--players", "3", "--port", "0",
           "--seed", str(args.seed), "--transcript", transcript]
    if not args.no_verified_table:
        cmd.append("--verified")
    table = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addr = table.stdout.readline().split()[3]
    # our client joins last, so that the game starts the moment it is seated
    peers = []
    for i in (2, 3):
        peers.append(subprocess.Popen(
            ["timeout", "60", RING, "peer", "--name", "peer%d" % i, "--server", addr,
             "--host", "127.0.0.1", "--port", "0", "--seed", str(i)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(0.5)
    doc = subprocess.Popen(["timeout", "60", sys.executable, PEER, "--nick", "doc1",
                            "--table", addr, "--host", "127.0.0.1", "--seed", "5"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = None
    log = []
    while True:
        line = doc.stdout.readline()
        if not line:
            break
        log.append(line)
        if "listening on" in line:
            port = int(line.split("listening on ")[1].split(";")[0].rsplit(":", 1)[1])
            break
    forged = [
        {"cmd": "your_turn", "from": "peer2", "proof": "0" * 32},
        {"cmd": "offer", "num_cards": 3, "from": "peer3", "seq": 5,
         "hashes": ["1" * 32] * 3, "mac": "2" * 32},
        {"cmd": "your_turn"},
        {"cmd": "offer", "num_cards": 0, "from": "peer2"},
    ]
    answers = [ask(port, m) for m in forged]
    out, err = doc.communicate(timeout=60)
    log.extend(out.splitlines(True))
    for p in peers:
        p.wait(60)
    tout, _ = table.communicate(timeout=60)
    last = [l for l in tout.splitlines() if l.strip()][-1]
    ok = True
    for m, a in zip(forged, answers):
        good = (a is not None and a.get("result") == "error"
                and str(a.get("message", "")).startswith("refused: "))
        ok &= good
        print("%-4s %s -> %s" % ("ok" if good else "BAD", json.dumps(m), json.dumps(a)))
    accused = []
    with open(transcript) as f:
        for line in f:
            r = json.loads(line)
            if r.get("event") == "accused":
                accused.append(r)
    for r in accused:
        print("     table: accused %s rule %s verdict %s: %s"
              % (r.get("accused"), r.get("rule"), r.get("verdict"), r.get("message", "")[:150]))
    ok &= len(accused) == len(forged) and all(r.get("rule") == "impersonation" for r in accused)
    ok &= last.startswith("game over") and doc.returncode == 0
    print("table:", last)
    print("doc1 exit", doc.returncode, err.strip())
    print("forge test:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
