"""Where a server's games get their seeds: a published seed, or a secret one.

Two ways to seed ``ring serve`` (and each server on its own):

- **A published seed** (``--seed N``). Each service derives its games' seeds
  from N in plain view, as it always has (FishNet ``N:<names>:<n>``, Reversi
  ``N:<n>``, the Old Maid table N itself for its first game), so the same N
  replays every game exactly. So can anyone else who knows N: a seed read
  off a screen, or guessed, deals every game before it is played.
- **A secret** (the default). ``new_secret()`` draws 128 random bits that are
  never printed. Each service gets a key of its own, ``keyed_seed(secret,
  <service>)``, and each game its seed, ``keyed_seed(key, <service>, <what
  names the game>)``: HMAC-SHA256, a keyed hash, so the names, the game's
  number and any number of other games' seeds tell nothing of a key or of
  another game's deal. Each game's record (its transcript's ``start``)
  keeps that game's seed, which replays that game alone.

A keyed seed is a 128-bit integer; a game that names its seed in text writes
it as 32 hexadecimal digits.
"""

from __future__ import annotations

import hmac
import json
import secrets

SECRET_BITS = 128


def new_secret() -> int:
    """A fresh secret: SECRET_BITS random bits from the operating system."""
    return secrets.randbits(SECRET_BITS)


def server_seed(seed: int | None, keyed: bool) -> tuple[int, bool]:
    """The seed a server runs with, and whether it is secret: a fresh secret without one."""
    return (seed, keyed) if seed is not None else (new_secret(), True)


def keyed_seed(key: int, *parts: object) -> int:
    """A SECRET_BITS-bit seed: HMAC-SHA256 under ``key`` of ``parts`` (each as text)."""
    message = json.dumps([str(part) for part in parts]).encode()
    digest = hmac.digest(_key_bytes(key), message, "sha256")
    return int.from_bytes(digest[: SECRET_BITS // 8], "big")


def keyed_text(key: int, *parts: object) -> str:
    """``keyed_seed`` as 32 hexadecimal digits."""
    return f"{keyed_seed(key, *parts):0{SECRET_BITS // 4}x}"


def _key_bytes(key: int) -> bytes:
    if key < 0:
        raise ValueError("a key is a non-negative integer")
    return key.to_bytes(max(1, (key.bit_length() + 7) // 8), "big")
