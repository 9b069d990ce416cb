"""``make bench-hot``'s workloads do the work they are named for (their timing is pyperf's)."""

from __future__ import annotations

from ring.oldmaid.messages import Offer, decode
from scenarios.bench.hot_paths import OFFER, split_burst
from services.fishnet.messages import Request, Role, YourTurn, encode, parse_line


def test_each_workload_does_what_it_is_named_for() -> None:
    assert split_burst() == 32
    assert isinstance(decode(OFFER.rstrip(b"\n")), Offer)
    assert encode(YourTurn()) == b"yourturn\n"
    assert parse_line(b"request 7", Role.SERVER) == Request(rank=7)
