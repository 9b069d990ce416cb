#!/usr/bin/env python3
"""A cheating student's Reversi program: a (bounded) fork bomb, then play.

Usage: fork_bomb.py HOST PORT NAME  (a tournament gives `{host} {port} {name}`)

Every process forks until a fork fails or its share of the budget is spent:
at most 400 processes in all, each process forks at most 20 times, the tree
is at most 3 deep. Every child sleeps 20 s and exits. The first process
counts the successful forks (each process tells it over a pipe), prints the
total and the first error, and then, without waiting for its children,
replaces itself with the built-in random bot.

DO NOT RUN THIS OUTSIDE A SANDBOX.
"""
import argparse
import os
import select
import sys
import time

TOTAL = 400         # processes made in all
PER_PROCESS = 20    # forks by one process
MAX_DEPTH = 3       # the first process is depth 0
CHILD_SLEEP = 20    # seconds
COUNT_WAIT = 5.0    # seconds the first process waits for the counts


# --- helpers (each attacker has its own copy) --------------------------------

def report(what, result):
    print(f"ATTACK {what}: {result}", flush=True)


def failed(exc):
    return f"failed: {type(exc).__name__}: {exc}"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host", nargs="?", default=os.environ.get("CARDRING_HOST", "127.0.0.1"))
    parser.add_argument("port", nargs="?", default=os.environ.get("CARDRING_PORT", "5410"))
    parser.add_argument("name", nargs="?", default=os.environ.get("CARDRING_NAME", "forker"))
    args, _unknown = parser.parse_known_args()
    return args


def bot_command(host, port, name, seed=1):
    return [
        sys.executable, "-m", "ring", "bot", "reversi",
        "--server", f"{host}:{port}", "--name", name,
        "--level", "random", "--seed", str(seed),
    ]


def play(host, port, name):
    """Replace this process with the built-in random bot."""
    command = bot_command(host, port, name)
    print("PLAY: " + " ".join(command), flush=True)
    sys.stderr.flush()
    try:
        os.execv(sys.executable, command)
    except OSError as exc:
        print(f"PLAY: {failed(exc)}", flush=True)
        os._exit(1)


# --- the attack --------------------------------------------------------------

def spread(budget, depth, write_end, read_end):
    """Fork up to min(PER_PROCESS, budget) children, sharing the rest of the
    budget among them; tell the first process over the pipe how it went.

    Returns in the first process only; every child ends in os._exit.
    """
    made = 0
    error = ""
    if depth < MAX_DEPTH:
        wanted = min(PER_PROCESS, budget)
        rest = budget - wanted
        for i in range(wanted):
            share = rest // wanted + (1 if i < rest % wanted else 0)
            try:
                pid = os.fork()
            except OSError as exc:
                error = f"{type(exc).__name__}: {exc}"
                break
            if pid == 0:
                child(share, depth + 1, write_end, read_end)  # never returns
            made += 1
    line = f"{made} {error}".strip().replace("\n", " ")[:300] + "\n"
    try:
        os.write(write_end, line.encode())
    except OSError:
        pass
    return made, error


def child(budget, depth, write_end, read_end):
    try:
        try:
            os.close(read_end)
        except OSError:
            pass
        spread(budget, depth, write_end, read_end)
        try:
            os.close(write_end)
        except OSError:
            pass
        time.sleep(CHILD_SLEEP)
    except BaseException:
        pass
    finally:
        os._exit(0)


def collect(read_end, deadline):
    """The reports of every process until all have closed the pipe (or the deadline)."""
    reports = []
    buffer = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([read_end], [], [], left)
        if not ready:
            break
        data = os.read(read_end, 65536)
        if not data:
            break
        buffer += data
    for line in buffer.decode(errors="replace").splitlines():
        count, _, error = line.partition(" ")
        if count.isdigit():
            reports.append((int(count), error))
    return reports


def bomb():
    read_end, write_end = os.pipe()
    start = time.monotonic()
    made, first_error = spread(TOTAL, 0, write_end, read_end)
    os.close(write_end)
    report("fork first process", f"{made} forks" + (f", then {first_error}" if first_error else ""))
    reports = collect(read_end, start + COUNT_WAIT)
    os.close(read_end)
    total = sum(count for count, _ in reports)
    errors = [error for _, error in reports if error]
    if not first_error and errors:
        first_error = errors[0]
    report(
        "fork",
        f"{total} forks succeeded (of {TOTAL}) in {time.monotonic() - start:.1f} s, "
        f"{len(reports)} processes reported, {len(errors)} hit an error; "
        f"first error: {first_error or 'none'}",
    )


def main():
    args = parse_args()
    try:
        bomb()
    except Exception as exc:
        report("fork", failed(exc))
    play(args.host, args.port, args.name)


if __name__ == "__main__":
    main()
