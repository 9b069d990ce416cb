"""Hostile byte streams through real sockets against every service, beside honest games.

Each example is one round of ``scenarios.bench.fuzz``: the four services in this
process, an honest game in each, and a Hypothesis-drawn set of attack
connections (random bytes, truncated, oversized and valid messages out of
order, split at random bytes, ending by close, abort or stall) against the
services and an honest peer's listening port. ``make test`` runs a few
derandomized examples; ``make fuzz`` many (``FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Iterator

import pytest
import trio
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from scenarios.bench.attacks import ENDINGS, Attack
from scenarios.bench.fuzz import TARGETS, play_round
from tests.helpers.fuzz import OVERSIZE, SEEDS, baseline, check_round

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "4"))

VALID = {
    "fishnet": [
        b"play fz spot\n", b"play fz smarx\n", b"play fz fz2\n", b"request 3\n", b"request 13\n",
        b"pass\n", b"quit\n", b"hello\n", b"play\n",
    ],
    "reversi": [b"Nfz\n", b"Nfz", b"M23\n", b"M99\n", b"N\n", b"Nname_too_long_by_far\n", b"B\n"],
    "notipping": [
        b"JOINREQUEST:fz:0;", b"JOINREQUEST:fz:1;", b"JOINREQUEST:fz:7;", b"ADD:3:-2;",
        b"REMOVE:-4;", b"BEGIN;", b"JOINREQUEST:fz;",
    ],
    "oldmaid": [
        b'{"cmd":"join","nick":"fz","port":1,"host":"127.0.0.1"}\n', b'{"cmd":"status"}\n',
        b'{"cmd":"draw"}\n', b'{"cmd":"discard","cards":[]}\n', b'{"cmd":"out_of_cards"}\n',
        b'{"cmd":"join","nick":"honest0","port":2}\n', b"[]\n", b"{}\n",
    ],
    "peer": [
        b'{"cmd":"your_turn"}\n', b'{"cmd":"offer","num_cards":3}\n',
        b'{"cmd":"pick","card_num":1}\n', b'{"cmd":"status"}\n', b'{"result":"ok"}\n',
        b'{"cmd":"offer","num_cards":"three"}\n',
    ],
}  # fmt: skip


def pieces(target: str) -> st.SearchStrategy[bytes]:
    valid = st.sampled_from(VALID[target])
    return st.one_of(
        valid,
        valid.flatmap(lambda m: st.integers(1, max(1, len(m) - 1)).map(lambda n: m[:n])),
        st.binary(max_size=48),
        st.sampled_from([b"\n", b"\r\n", b" ", b"\x00", b"\xff\xfe", b";", b"}"]),
        st.just(OVERSIZE[target]),
    )


@st.composite
def attacks(draw: st.DrawFn) -> Attack:
    target = draw(st.sampled_from(TARGETS))
    data = b"".join(draw(st.lists(pieces(target), min_size=1, max_size=6)))
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=4))))
    bounds = [0, *cuts, len(data)]
    chunks = tuple(data[a:b] for a, b in itertools.pairwise(bounds) if b > a)
    return Attack(target, chunks, draw(st.sampled_from(ENDINGS)))


COUNTS: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def print_counts() -> Iterator[None]:
    """The run's counts, for ``make fuzz`` (shown with ``-s``)."""
    yield
    if COUNTS:
        print("\nfuzz:", ", ".join(f"{value} {name}" for name, value in COUNTS.items()))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    # A round takes a second or more: shrinking a failure would take many minutes,
    # and the failing example is printed whole anyway.
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    derandomize="FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.sampled_from(SEEDS), st.lists(attacks(), min_size=1, max_size=12))
def test_hostile_connections_leave_honest_games_exact(seed: int, hostile: list[Attack]) -> None:
    round_ = trio.run(play_round, hostile, seed)
    check_round(round_, seed)
    COUNTS["rounds"] += 1
    COUNTS["connections"] += len(hostile)
    COUNTS["bytes"] += sum(len(c) for a in hostile for c in a.chunks)
    for result in round_.attacks:
        COUNTS[f"{result.attack.target} connections"] += 1
        COUNTS["closed by the server"] += result.closed_by_server
        COUNTS["refused at connect"] += result.refused


def test_a_stranger_cannot_hand_a_peer_the_turn() -> None:
    # Found by this fuzzer: a peer took your_turn and offer from any connection, so a
    # stranger's message wrecked the game and the table blamed the honest peer. A turn
    # can only come from a player, so from an address the table seated.
    seed = SEEDS[0]
    for message in (b'{"cmd":"your_turn"}\n', b'{"cmd":"offer","num_cards":3}\n'):
        round_ = trio.run(play_round, [Attack("peer", (message,), "close")], seed)
        assert round_.outcomes() == baseline(seed).outcomes()
        [result] = round_.attacks
        reply = json.loads(result.received)
        assert reply["result"] == "error" and "not the address of any player" in reply["message"]
        assert result.closed_by_server
