#!/usr/bin/env python3
"""Play rings mixing verified_peer.py with `ring peer`s at a `ring table`.

    python run_rings.py [--sizes 2,3,5] [--seeds 1-6] [--mine 1,2|all]
                        [--modes verified,verify-mixed,no-verify] [--keep DIR]
                        [--witness-after S] [--no-witness] [--ring-no-witness]
                        [--drop-your-turn P] [--no-ok-to-your-turn P]
                        [--no-ok-how silent|error|close] [--late-your-turn P]
                        [--garble-offer P] [--fake-check P] [--timeout S]

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

The draw turn (14.6, witnessed games): --drop-your-turn P and
--no-ok-to-your-turn P are passed to each of our clients (each seeded by its
--seed): with probability P it does not send the your_turn due after a draw
(the table must hand the turn on with a draw_turn notice), or draws on a
your_turn without answering ok (the sender must not give up; --no-ok-how
error or close answers error or closes the connection instead of ok);
--late-your-turn P sends it 2.5 s late, after the table's notice (the
receiver's draw for it is refused, and dropped as the late turn's). Each game's
line then also shows, summed over our clients: drop= your_turns not sent (or sent late),
nook= your_turns drawn on without ok, dt= draw_turn notices that handed one
of ours the turn / of them acted on (it drew that card because of it),
ho= your_turns of ours that got no ok (the turn taken as handed on),
late= draws refused as a late your_turn's; tdt= the cards whose draw turn the
table handed on (draw_turn notices in its transcript). The summary adds them up.
--timeout S bounds each process (default 60 s; a dropped your_turn costs 2 s).

Checking an offer (14.6, witnessed games): our clients check every offer with
the table (check_offer) before they answer it ok. --garble-offer P makes ours
send an offer directly with its mac garbled, with probability P (the
receiver's check fails, it answers error, and ours offer through the table);
--fake-check P (2-player rings) makes ours, before offering, check a made-up
offer of the other player's next exchange (the table sends that player an
`offer` notice before it has offered it, and its offer must then go through
the table). Each game's line then shows, summed over our clients: chk= checks
passed, cref= checks refused (offers answered error, not taken), err= our
offers answered error, om= our offers sent through the table (offer move or
witness), pend= offer notices for exchanges of ours not offered yet, garb=
offers garbled, fake= made-up checks.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
RING = os.path.join(ROOT, ".venv", "bin", "ring")
PEER = os.path.join(HERE, "verified_peer.py")
TIMEOUT = 60
COUNTS = ("drop", "nook", "dt_to", "dt_acted", "dt_from", "dt_ignored", "ho", "late", "tdt")
CHECKS = ("chk", "cref", "err", "om", "pend", "garb", "fake")


def parse_range(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def play(size, mine, seed, mode, keep, witness_args=(), ring_args=(), fault_args=()):
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
            args.extend(fault_args)
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
        counts = {
            "drop": sum("fault: dropped our your_turn" in l or "fault: delaying our your_turn" in l
                        for l in lines),
            "nook": sum("fault: not answering the your_turn" in l for l in lines),
            "dt_to": sum("draw_turn notice:" in l and '"to": "%s"' % nick in l for l in lines),
            "dt_from": sum("draw_turn notice:" in l and '"from": "%s"' % nick in l for l in lines),
            "dt_acted": sum(" drew " in l and "(draw turn from the table's notice)" in l
                            for l in lines),
            "dt_ignored": sum("draw_turn ignored" in l for l in lines),
            "ho": sum("handed_on: our your_turn" in l for l in lines),
            "late": sum("late_your_turn:" in l for l in lines),
            "tdt": 0,
            # 14.6 "Checking an offer"
            "chk": sum("check_offer: exchange" in l for l in lines),
            "cref": sum("offer_refused:" in l for l in lines),
            "err": sum("was answered error by" in l for l in lines),
            "om": sum("through the table (offer move)" in l
                      or "through the table (witness)" in l for l in lines),
            "pend": sum("which we have not offered yet" in l for l in lines),
            "garb": sum("fault: garbled the mac" in l for l in lines),
            "fake": sum("fault: made-up check" in l for l in lines),
        }
        results.append((nick, code, lines[-1] if lines else "", elines + warn,
                        len(asked), len(noticed - asked), counts))
    try:
        tout, terr = table.communicate(timeout=TIMEOUT if all(r[1] == 0 for r in results) else 15)
    except subprocess.TimeoutExpired:
        table.kill()
        tout, terr = table.communicate()
    tlines = [l for l in (first + "\n" + tout).splitlines() if l.strip()]
    # the table's side: the cards whose draw turn it handed on (draw_turn notices sent)
    handed = set()
    try:
        with open(transcript) as f:
            for l in f:
                if '"draw_turn"' in l:
                    msg = json.loads(l).get("msg") or {}
                    if msg.get("cmd") == "draw_turn" and l.find('"dir":"out"') >= 0:
                        handed.add(msg.get("draw"))
    except (OSError, ValueError):
        pass
    results.append(("table", 0, "", [], 0, 0,
                    dict(dict.fromkeys(COUNTS + CHECKS, 0), tdt=len(handed))))
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
    ap.add_argument("--drop-your-turn", type=float, default=0.0, metavar="P",
                    help="passed to our clients: do not send a your_turn, with probability P")
    ap.add_argument("--no-ok-to-your-turn", type=float, default=0.0, metavar="P",
                    help="passed to our clients: draw on a your_turn without ok, probability P")
    ap.add_argument("--no-ok-how", choices=("silent", "error", "close"), default="silent",
                    help="passed to our clients: instead of ok, nothing, error or a close")
    ap.add_argument("--late-your-turn", type=float, default=0.0, metavar="P",
                    help="passed to our clients: send a your_turn 2.5 s late, probability P")
    ap.add_argument("--garble-offer", type=float, default=0.0, metavar="P",
                    help="passed to our clients: garble a direct offer's mac, probability P")
    ap.add_argument("--fake-check", type=float, default=0.0, metavar="P",
                    help="passed to our clients (2-player rings): check a made-up offer of "
                         "the other player's next exchange, probability P")
    ap.add_argument("--timeout", type=float, default=60.0, metavar="S",
                    help="bound on each process (default 60 s)")
    args = ap.parse_args()
    global TIMEOUT
    TIMEOUT = int(args.timeout)
    fault_args = []
    if args.drop_your_turn:
        fault_args += ["--drop-your-turn", str(args.drop_your_turn)]
    if args.no_ok_to_your_turn:
        fault_args += ["--no-ok-to-your-turn", str(args.no_ok_to_your_turn)]
    if args.no_ok_how != "silent":
        fault_args += ["--no-ok-how", args.no_ok_how]
    if args.late_your_turn:
        fault_args += ["--late-your-turn", str(args.late_your_turn)]
    check_faults = []
    if args.garble_offer:
        check_faults += ["--garble-offer", str(args.garble_offer)]
    if args.fake_check:
        check_faults += ["--fake-check", str(args.fake_check)]
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
    totals = dict.fromkeys(COUNTS + CHECKS, 0)
    for mode in args.modes.split(","):
        for size in parse_range(args.sizes):
            # --mine all: a ring of only our clients
            for mine in ([size] if args.mine == "all" else parse_range(args.mine)):
                if mine > size or (mode == "mixed" and mine < 2):
                    continue
                for seed in parse_range(args.seeds):
                    t0 = time.monotonic()
                    tag, line, results = play(size, mine, seed, mode, args.keep,
                                              witness_args, ring_args,
                                              fault_args + check_faults)
                    total += 1
                    ok = (line.startswith("game over")
                          and all(r[1] == 0 and not r[3] for r in results))
                    if not ok:
                        bad += 1
                    asked = sum(r[4] for r in results)
                    brought = sum(r[5] for r in results)
                    game = dict.fromkeys(COUNTS + CHECKS, 0)
                    for r in results:
                        for k in COUNTS + CHECKS:
                            game[k] += r[6][k]
                            totals[k] += r[6][k]
                    draw = ""
                    if fault_args or any(game[k] for k in COUNTS):
                        draw = ("drop=%d nook=%d dt=%d/%d tdt=%d ho=%d late=%d "
                                % (game["drop"], game["nook"], game["dt_to"], game["dt_acted"],
                                   game["tdt"], game["ho"], game["late"]))
                    checks = ""
                    if check_faults or any(game[k] for k in CHECKS):
                        checks = ("chk=%d cref=%d err=%d om=%d pend=%d garb=%d fake=%d "
                                  % tuple(game[k] for k in CHECKS))
                    print("%-4s %-28s %5.1fs  w=%-3d t=%-3d %s%s%s"
                          % ("ok" if ok else "BAD", tag, time.monotonic() - t0, asked,
                             brought, draw, checks, line), flush=True)
                    for nick, code, last, elines, _, _, _ in results:
                        if code != 0 or elines:
                            print("       %s exit %s: %s %s" % (nick, code, last, elines[-3:]))
    print("%d games, %d not normal" % (total, bad))
    if any(totals[k] for k in CHECKS):
        print("checking an offer: %d checks passed, %d refused (offer answered error, not "
              "taken); %d offers of ours answered error, %d sent through the table; %d offer "
              "notices before we offered; %d offers garbled, %d made-up checks"
              % tuple(totals[k] for k in CHECKS))
    if fault_args or any(totals[k] for k in COUNTS):
        print("draw turn: %d your_turns dropped, %d drawn on without ok; %d draw_turn notices "
              "handed one of ours the turn, %d acted on (drew), %d ignored; %d notices named "
              "one of ours as from; %d your_turns of ours got no ok (handed_on); %d late "
              "your_turn draws dropped; the table handed on %d draw turns (transcripts)"
              % (totals["drop"], totals["nook"], totals["dt_to"], totals["dt_acted"],
                 totals["dt_ignored"], totals["dt_from"], totals["ho"], totals["late"],
                 totals["tdt"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
