"""The fuzz rounds' checks (``scenarios.bench.fuzz``): what an honest game must still do
beside hostile connections, and what a server may send back to them.

Used by the fuzzer (``tests/scenarios/bench/test_fuzz.py``) and by the slow and hostile
clients (``tests/scenarios/bench/test_hostile_clients.py``). A seed's round alone, the
baseline, is played once for both: whichever runs first.
"""

from __future__ import annotations

import json
import re
from typing import Any

import trio

from scenarios.bench.attacks import AttackResult
from scenarios.bench.fuzz import Round, play_round
from services.fishnet.protocol import BadLine, Role, parse_line

SEEDS = (3, 4)
# A message over each protocol's limit (4 KiB a line, 64 KiB of JSON), unfinished.
_OVER_JSON = b'{"cmd":"status","padding":"' + b"x" * 70_000
OVERSIZE = {
    "fishnet": b"x" * 5000, "reversi": b"x" * 5000, "notipping": b"x" * 5000,
    "oldmaid": _OVER_JSON, "peer": _OVER_JSON,
}  # fmt: skip


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
    ``ring.oldmaid.table_client``). A receiver's check of each offer (14.6, "Checking an
    offer") goes ahead of its queued reports, so where it falls among them is chance: the
    checks, and the bare ``ok`` replies (a check's, or a report's, alike), are left out.
    """

    def kept(record: Any) -> bool:
        message = record.get("msg") if isinstance(record, dict) else None
        if not isinstance(message, dict) or record.get("nick") is None:
            return True
        if message.get("cmd") == "check_offer" or message == {"result": "ok"}:
            return False
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
