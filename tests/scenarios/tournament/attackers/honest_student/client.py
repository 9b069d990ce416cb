#!/usr/bin/env python3
"""An honest student's Reversi program: it plays the built-in random bot.

Usage: client.py HOST PORT NAME  (a tournament gives `{host} {port} {name}`)
"""
import os
import sys


def main():
    args = sys.argv[1:]
    host = args[0] if len(args) > 0 else os.environ.get("CARDRING_HOST", "127.0.0.1")
    port = args[1] if len(args) > 1 else os.environ.get("CARDRING_PORT", "5410")
    name = args[2] if len(args) > 2 else os.environ.get("CARDRING_NAME", "honest")
    command = [
        sys.executable, "-m", "ring", "bot", "reversi",
        "--server", f"{host}:{port}", "--name", name,
        "--level", "random", "--seed", "2",
    ]
    print("PLAY: " + " ".join(command), flush=True)
    sys.stderr.flush()
    os.execv(sys.executable, command)


if __name__ == "__main__":
    main()
