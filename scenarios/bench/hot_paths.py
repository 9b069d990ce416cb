"""``make bench-hot``: micro-benchmarks of the hot paths, with pyperf (issue 46).

What every message costs in Python before and after the socket: splitting a verified Old
Maid offer from the stream (``ring.wire.framing``), decoding it (``ring.oldmaid.messages``),
encoding a FishNet server line and parsing a client's (``services.fishnet.messages``).
pyperf runs each in worker processes, calibrates the loops, and writes the values with
their spread to a JSON file; its ``compare_to`` says whether two files differ beyond the
noise, which is how two commits are compared:

    make bench-hot OUT=build/hot-before.json      # on the older checkout
    make bench-hot OUT=build/hot-after.json       # on this one
    .venv/bin/python -m pyperf compare_to build/hot-before.json build/hot-after.json

(pyperf, not a timing loop of ours: it isolates each benchmark in fresh processes, warms
up, and reports whether a difference is significant.)
"""

from __future__ import annotations

import pyperf

from ring.oldmaid.messages import Offer, decode, encode
from ring.wire.framing import JsonObjectSplitter
from services.fishnet.messages import Role, YourTurn, parse_line
from services.fishnet.messages import encode as encode_fishnet

# A verified offer of two cards (the worked example of docs/protocols/oldmaid.md 14.6).
OFFER = encode(
    Offer(
        num_cards=2,
        sender="bob",
        proof="9f46fa86d2bc467c80721493f5341cd5",
        seq=7,
        hashes=["364d108dc9163bdde122c3e745ca078e", "839456ea4f297778c2b57885251c8de4"],
        mac="acafbee413319dc1724a3e53317a3b34",
    )
)
BURST = OFFER * 32  # a stream holding many messages at once


def split_burst() -> int:
    splitter = JsonObjectSplitter()
    splitter.feed(BURST)
    count = 0
    while splitter.next_frame() is not None:
        count += 1
    return count


def main() -> None:
    runner = pyperf.Runner()
    runner.metadata["description"] = "cardring's per-message Python work"
    runner.bench_func("oldmaid split 32 offers from one read", split_burst)
    runner.bench_func("oldmaid decode an offer", decode, OFFER.rstrip(b"\n"))
    runner.bench_func("fishnet encode yourturn", encode_fishnet, YourTurn())
    runner.bench_func("fishnet parse a request", parse_line, b"request 7", Role.SERVER)


if __name__ == "__main__":
    main()
