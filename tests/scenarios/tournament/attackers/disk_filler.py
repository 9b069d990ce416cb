#!/usr/bin/env python3
"""A cheating student's Reversi program: fill the disk, then play.

Usage: disk_filler.py HOST PORT NAME [--max-mib N] [--seconds S] [--keep]
       (a tournament gives `{host} {port} {name}`)

In each of the temporary folder (tempfile.gettempdir()), the working folder
and the script's folder: writes 1 MiB blocks to a file until a write fails,
then to a second file, until a write fails again or --max-mib (4096) were
written in that folder; prints the MiB written and the error of each file
(ENOSPC, EFBIG: SIGXFSZ is ignored so that a file-size limit shows as an
error, EDQUOT, a read-only file system...). All the writing stops after
--seconds (8; a third for each folder) so that the bot still connects
within the tournament's 10 s.
The files are removed afterwards unless --keep. Then the built-in random bot
plays.

DO NOT RUN THIS OUTSIDE A SANDBOX.
"""
import argparse
import os
import signal
import sys
import tempfile
import time

MIB = 1024 * 1024


# --- helpers (each attacker has its own copy) --------------------------------

def report(what, result):
    print(f"ATTACK {what}: {result}", flush=True)


def failed(exc):
    return f"failed: {type(exc).__name__}: {exc}"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host", nargs="?", default=os.environ.get("CARDRING_HOST", "127.0.0.1"))
    parser.add_argument("port", nargs="?", default=os.environ.get("CARDRING_PORT", "5410"))
    parser.add_argument("name", nargs="?", default=os.environ.get("CARDRING_NAME", "filler"))
    parser.add_argument("--max-mib", type=int, default=4096, help="most MiB written in each folder (4096)")
    parser.add_argument("--seconds", type=float, default=8.0, help="most seconds of writing in all, shared by the folders (8)")
    parser.add_argument("--keep", action="store_true", help="leave the files behind")
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

def fill_file(path, limit_bytes, deadline):
    """Write 1 MiB blocks to path until a write fails, limit_bytes were
    written or the deadline passed. Returns (bytes written, why it stopped,
    whether it stopped on an error)."""
    block = memoryview(b"\xa5" * MIB)
    written = 0
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as exc:
        return 0, f"cannot create: {type(exc).__name__}: {exc}", True
    try:
        while written < limit_bytes:
            if time.monotonic() > deadline:
                return written, "stopped: out of time", False
            view = block[: min(MIB, limit_bytes - written)]
            while view:
                try:
                    n = os.write(fd, view)
                except OSError as exc:
                    return written, f"{type(exc).__name__}: {exc}", True
                if n <= 0:
                    return written, f"write returned {n}", True
                written += n
                view = view[n:]
        return written, "stopped: the limit was reached", False
    finally:
        try:
            os.close(fd)
        except OSError as exc:
            report(f"close {path}", failed(exc))


def fill_folder(label, folder, limit_bytes, deadline, keep):
    total = 0
    paths = []
    for index in (1, 2):
        path = os.path.join(folder, f"filler-{os.getpid()}-{index}.bin")
        paths.append(path)
        written, why, _error = fill_file(path, limit_bytes - total, deadline)
        total += written
        report(f"fill {label} {path}", f"wrote {written / MIB:.1f} MiB; {why}")
        if total >= limit_bytes or time.monotonic() > deadline:
            break
    report(f"fill {label}", f"wrote {total / MIB:.1f} MiB in all in {folder}")
    if not keep:
        for path in paths:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                report(f"remove {path}", failed(exc))
    return total


def main():
    args = parse_args()
    try:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        report("SIGXFSZ", "ignored")
    except Exception as exc:
        report("SIGXFSZ", failed(exc))
    limit = args.max_mib * MIB
    folders = []
    for label, find in (
        ("tmp", tempfile.gettempdir),
        ("cwd", os.getcwd),
        ("script folder", lambda: os.path.dirname(os.path.abspath(__file__))),
    ):
        try:
            folders.append((label, find()))
        except Exception as exc:
            report(f"fill {label}", failed(exc))
    grand_total = 0
    for label, folder in folders:
        # Each folder gets its share of the time, so each is tried.
        deadline = time.monotonic() + args.seconds / max(1, len(folders))
        try:
            grand_total += fill_folder(label, folder, limit, deadline, args.keep)
        except Exception as exc:
            report(f"fill {label}", failed(exc))
    report("fill", f"wrote {grand_total / MIB:.1f} MiB in all")
    play(args.host, args.port, args.name)


if __name__ == "__main__":
    main()
