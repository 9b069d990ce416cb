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
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from scenarios.bench.attacks import ENDINGS, Attack, AttackResult
from scenarios.bench.fuzz import TARGETS, Round, play_round
from services.fishnet.protocol import BadLine, Role, parse_line

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "4"))
SEEDS = (3, 4)

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
# A message over each protocol's limit (4 KiB a line, 64 KiB of JSON), unfinished.
_OVER_JSON = b'{"cmd":"status","padding":"' + b"x" * 70_000
OVERSIZE = {
    "fishnet": b"x" * 5000, "reversi": b"x" * 5000, "notipping": b"x" * 5000,
    "oldmaid": _OVER_JSON, "peer": _OVER_JSON,
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


_baselines: dict[int, Round] = {}


def baseline(seed: int) -> Round:
    if seed not in _baselines:
        _baselines[seed] = trio.run(play_round, [], seed)
    return _baselines[seed]


# -- what a server may send, per protocol: every line must be one of these ---------------

_REVERSI_LINE = re.compile(rb"U[01]|B[0-2]{64}|W[012]|G")
_NOTIPPING_MESSAGE = re.compile(
    rb"\s*(GRANTED|DENIED|INVALID|WIN|LOSE|BEGIN(:-?\d+)*|ROUND(:-?\d+)*(\s*\|?\s*[-\d:,|]*)?)\s*"
)


def complete_lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


def check_server_bytes(result: AttackResult) -> None:
    target, data = result.attack.target, result.received
    if target == "fishnet":
        for line in complete_lines(data):
            try:
                parse_line(line, Role.CLIENT)
            except BadLine as exc:  # pragma: no cover - reported by the assertion
                raise AssertionError(f"fishnet sent {line!r}: {exc}") from None
    elif target == "reversi":
        for line in complete_lines(data):
            assert _REVERSI_LINE.fullmatch(line), line
    elif target == "notipping":
        for message in data.split(b";")[:-1]:
            assert _NOTIPPING_MESSAGE.fullmatch(message), message
    else:  # the Old Maid table and peer: one JSON object a line, a reply or a notice
        for line in complete_lines(data):
            message = json.loads(line)
            assert message.get("result") in ("ok", "error", "out") or "cmd" in message, message


def check_answer_to_oversize(result: AttackResult) -> None:
    """A message over the limit as the first thing sent gets the protocol's answer, then a close."""
    attack = result.attack
    sent = b"".join(attack.chunks)
    if attack.ending != "close" or not sent.startswith(OVERSIZE[attack.target]) or result.refused:
        return
    target = attack.target
    assert result.closed_by_server, result
    if target == "fishnet":
        assert result.received.rstrip(b"\n").split(b"\n")[-1] == b"error line_too_long"
    elif target == "notipping":
        assert result.received.strip() == b"DENIED;"
    elif target in ("oldmaid", "peer"):
        [line] = complete_lines(result.received)
        assert json.loads(line)["result"] == "error" and "limit" in json.loads(line)["message"]
    else:
        assert result.received == b""  # Reversi has no error message: it closes


def _without_status(transcripts: dict[str, Any]) -> dict[str, Any]:
    """The transcripts less the Old Maid players' status exchanges, each player's apart.

    A peer asks the table's status when a neighbour is slow to answer an offer
    (it may be out and silent, docs/protocols/oldmaid.md 13.7); a busy round
    makes that happen by chance. And the two reports of each exchange of a
    verified game (protocol 14.6) come from two players at once, so which one
    the table reads first is chance too. So the Old Maid records are compared
    player by player (each player's messages and the referee's decisions about
    it, in order), and the game's own records apart: every draw, discard, out
    and report must still be identical. A player's game-over notice is kept
    apart too: the table sends it when the last report comes, whoever's, so
    whether it comes before or after the table's answer to a report of the
    player's own that crossed it is chance as well (reports are batched,
    ``ring.oldmaid.table_client``).
    """

    def kept(record: Any) -> bool:
        message = record.get("msg") if isinstance(record, dict) else None
        if not isinstance(message, dict) or record.get("nick") is None:
            return True
        return message.get("cmd") != "status" and "state" not in message

    def by_player(records: list[Any]) -> dict[str, list[Any]]:
        players: dict[str, list[Any]] = {}
        for record in records:
            if kept(record):
                nick = record.get("nick") if isinstance(record, dict) else None
                message = record.get("msg") if isinstance(record, dict) else None
                over = isinstance(message, dict) and message.get("cmd") == "game_over"
                players.setdefault(f"{nick} game over" if over else str(nick), []).append(record)
        return players

    return {
        service: by_player(records) if service == "oldmaid" else records
        for service, records in transcripts.items()
    }


def check_round(round_: Round, seed: int) -> None:
    alone = baseline(seed)
    assert "Traceback" not in round_.stderr, round_.stderr
    assert round_.outcomes() == alone.outcomes()
    assert _without_status(round_.transcripts) == _without_status(alone.transcripts)
    assert round_.tasks_after == round_.tasks_before, (round_.tasks_before, round_.tasks_after)
    assert round_.fds_after == round_.fds_before, (round_.fds_before, round_.fds_after)
    for result in round_.attacks:
        check_server_bytes(result)
        check_answer_to_oversize(result)


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
