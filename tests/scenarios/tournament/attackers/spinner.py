#!/usr/bin/env python3
"""A cheating student's Reversi program: take every CPU while it plays.

Usage: spinner.py HOST PORT NAME [--seconds S]
       (a tournament gives `{host} {port} {name}`)

Starts os.cpu_count() * 2 processes (fork) and as many threads, each busy
looping for at most --seconds (60), then runs the built-in random bot in a
subprocess while they spin. When the bot exits, it kills its spinners, prints
the CPU time they got, and exits with the bot's status.

DO NOT RUN THIS OUTSIDE A SANDBOX.
"""
import argparse
import os
import signal
import subprocess
import sys
import threading
import time


# --- helpers (each attacker has its own copy) --------------------------------

def report(what, result):
    print(f"ATTACK {what}: {result}", flush=True)


def failed(exc):
    return f"failed: {type(exc).__name__}: {exc}"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host", nargs="?", default=os.environ.get("CARDRING_HOST", "127.0.0.1"))
    parser.add_argument("port", nargs="?", default=os.environ.get("CARDRING_PORT", "5410"))
    parser.add_argument("name", nargs="?", default=os.environ.get("CARDRING_NAME", "spinner"))
    parser.add_argument("--seconds", type=float, default=60.0, help="most seconds a spinner spins (60)")
    args, _unknown = parser.parse_known_args()
    return args


def bot_command(host, port, name, seed=1):
    return [
        sys.executable, "-m", "ring", "bot", "reversi",
        "--server", f"{host}:{port}", "--name", name,
        "--level", "random", "--seed", str(seed),
    ]


# --- the attack --------------------------------------------------------------

def spin_process(seconds):
    """In a forked child: busy loop, then exit."""
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for _ in range(100000):
                pass
    except BaseException:
        pass
    finally:
        os._exit(0)


def spin_thread(stop, seconds):
    deadline = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < deadline:
        for _ in range(10000):
            pass


def start_processes(count, seconds):
    pids = []
    error = None
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError as exc:
            error = exc
            break
        if pid == 0:
            spin_process(seconds)  # never returns
        pids.append(pid)
    report("spin processes", f"started {len(pids)} of {count}" + (f"; then {failed(error)}" if error else ""))
    return pids


def start_threads(count, seconds, stop):
    threads = []
    error = None
    for _ in range(count):
        thread = threading.Thread(target=spin_thread, args=(stop, seconds), daemon=True)
        try:
            thread.start()
        except Exception as exc:
            error = exc
            break
        threads.append(thread)
    report("spin threads", f"started {len(threads)} of {count}" + (f"; then {failed(error)}" if error else ""))
    return threads


def stop_processes(pids):
    cpu = 0.0
    reaped = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in pids:
        try:
            _pid, _status, usage = os.wait4(pid, 0)
            cpu += usage.ru_utime + usage.ru_stime
            reaped += 1
        except OSError:
            pass
    return reaped, cpu


def main():
    args = parse_args()
    start = time.monotonic()
    count = (os.cpu_count() or 1) * 2
    stop = threading.Event()
    pids = []
    threads = []
    # Processes first: forking a process that already runs threads is asking for trouble.
    try:
        pids = start_processes(count, args.seconds)
    except Exception as exc:
        report("spin processes", failed(exc))
    try:
        threads = start_threads(count, args.seconds, stop)
    except Exception as exc:
        report("spin threads", failed(exc))

    command = bot_command(args.host, args.port, args.name)
    print("PLAY: " + " ".join(command), flush=True)
    status = 1
    try:
        bot = subprocess.Popen(command)
        status = bot.wait()
    except Exception as exc:
        print(f"PLAY: {failed(exc)}", flush=True)

    stop.set()
    try:
        reaped, cpu = stop_processes(pids)
        for thread in threads:
            thread.join(1)
        own_cpu = time.process_time()
        report(
            "spin",
            f"bot exited with status {status} after {time.monotonic() - start:.1f} s; "
            f"killed {reaped} spinning processes, which had {cpu:.1f} s of CPU; "
            f"the threads' process had {own_cpu:.1f} s of CPU",
        )
    except Exception as exc:
        report("spin", failed(exc))
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
