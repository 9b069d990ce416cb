"""Slow and hostile clients through real sockets, beside an honest game in every service.

Issue 15, part 4. Each round is one of ``scenarios.bench.fuzz``: the four services
of ``ring serve`` in this process, an honest game in each, and, from
127.0.0.2 once those games have formed, one kind of hostile client against
every service at once:

- one that never reads while it sends, again and again, a message the server
  answers, so that its receive window fills and the server's write must give up;
- one that sends a valid join a byte at a time, slower than the idle timeout
  allows;
- one address that opens 300 connections to each service.

A peer's listener meets the first two in the rounds as well; since the honest
peers finish before a timeout of theirs could act, one more test floods a
peer that waits for its game.

Each test checks that the hostile client ends, closed by the server, with what
its protocol says there (docs/protocols/*.md: FishNet and No Tipping answer,
the Old Maid table answers only requests, Reversi has no error message and
closes); that the honest games end exactly as they do alone (outcomes and
transcripts, as ``test_fuzz.py`` checks them); and that no descriptor or task
is left behind. How long a hostile client delays the others is the
benchmark's to measure: nothing here is timed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import trio

import services.fishnet.server as fishnet_server
import services.notipping.server as notipping_server
import services.oldmaid.table.server as oldmaid_table
import services.reversi.server as reversi_server
from ring.cli.serve import raise_file_limit
from ring.games.events import read_events
from ring.oldmaid.peer import Peer, PeerConfig, PeerError
from ring.wire.net import MAX_REFUSING
from ring.wire.sansio import NEED_DATA
from scenarios.bench.attacks import IDLE_TIMEOUT, Attack, AttackResult, attack_alone
from scenarios.bench.fuzz import SERVICES, play_round
from scenarios.bench.fuzz import Round as FuzzRound
from services.notipping.protocol import Begin, ClientConnection, Granted, Round
from services.notipping.server import MAX_JOIN_REQUESTS
from services.oldmaid.table.server import TableConfig, serve_table
from services.reversi.rules import Position
from tests.helpers.burst_lines import crowd_lines
from tests.helpers.fuzz import SEEDS, check_round, check_server_bytes, complete_lines

SEED = SEEDS[0]  # so that test_fuzz.py's round alone, if it ran first, serves here too
# Every service's write timeout in these rounds. It is 10 s in ring serve, and
# not one of its options: a round that waited for it would take 10 s.
WRITE_TIMEOUT = IDLE_TIMEOUT
# Two bytes within the round's 1 s idle timeout. Well clear of Reversi's 200 ms
# of name silence (docs/protocols/reversi.md 6, "The name"), so that a pause never ends a
# name by luck.
TRICKLE_PACE = 0.5
CAP = 2  # connections from one address, per service, in the round of many
CONNECTIONS = 300
HOLDERS_WAIT = 60.0  # seconds the Old Maid holders' joins may wait, in the round of many


def lines(result: AttackResult) -> list[str]:
    return [line.decode() for line in complete_lines(result.received)]


def of(round_: FuzzRound, target: str) -> list[AttackResult]:
    return [result for result in round_.attacks if result.attack.target == target]


def notipping_messages(data: bytes) -> list[object]:
    """The server's messages in ``data``, read as a No Tipping client reads them."""
    reader = ClientConnection("reader", 0)
    reader.receive_data(data)
    messages = []
    while (message := reader.next_event()) is not NEED_DATA:
        messages.append(message)
    return messages


def game_reports(stdout: str, service: str) -> list[str]:
    """How each game but the honest first one ended, as the service told its operator."""
    return [
        line
        for line in stdout.splitlines()
        if line.startswith(f"{service}: game ") and not line.startswith(f"{service}: game 1:")
    ]


# -- a client that never reads ----------------------------------------------------------

_CONFIGS = (
    (fishnet_server, "ServerConfig"),
    (reversi_server, "ReversiConfig"),
    (notipping_server, "NoTippingConfig"),
    (oldmaid_table, "TableConfig"),
)


@pytest.fixture
def short_write_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every service of the round gives up a write after WRITE_TIMEOUT.

    Each service builds its config from its config class when it starts, so
    the class is wrapped for the length of the test.
    """
    for module, name in _CONFIGS:
        config = functools.partial(getattr(module, name), send_timeout=WRITE_TIMEOUT)
        monkeypatch.setattr(module, name, config)


FLOODS = (
    # Before its play: every line gets an error while the connection waits for one.
    Attack("fishnet", (), "flood", flood=b"hello\n"),
    # In a game against spot: the game and the line reader both write to it.
    Attack("fishnet", (b"play flood spot\n",), "flood", flood=b"hello\n"),
    # Two that pair with each other; a move is answered only in a game, so each
    # waits for its colour first. Black's bad moves get the board again; white's
    # wait unread, as the opponent moves.
    *[Attack("reversi", (b"Nflood\n",), "flood", expect=b"U", flood=b"M00\n")] * 2,
    Attack("notipping", (), "flood", flood=b"JOINREQUEST:flood:7;"),  # no seat 7
    Attack("oldmaid", (), "flood", flood=b'{"cmd":"status"}\n'),
    Attack("peer", (), "flood", flood=b"nonsense\n"),
)


@pytest.mark.usefixtures("short_write_timeouts")
def test_a_client_that_never_reads_is_dropped_and_disturbs_no_game(
    capsys: pytest.CaptureFixture[str],
) -> None:
    round_ = trio.run(play_round, FLOODS, SEED)
    check_round(round_, SEED)
    for result in round_.attacks:
        assert result.closed_by_server and not result.flood_stuck, result.attack
    stdout = capsys.readouterr().out

    # FishNet: an error a line, until a write waits past the timeout, or the
    # idle deadline from connect passes first (its error is then the last line,
    # if the kernel still takes it); then the close.
    before_play, in_game = sorted(of(round_, "fishnet"), key=lambda r: r.attack.chunks)
    told = lines(before_play)
    assert told[0] == "error unknown_command" and set(told[1:-1]) <= {"error unknown_command"}
    assert told[-1] in ("error unknown_command", "error idle_timeout")
    dealt = lines(in_game)
    assert dealt[0].startswith("fish ") and "error unknown_command" in dealt
    # A client the server cannot write to counts as leaving (docs/protocols/fishnet.md);
    # its move clock runs out in the same second (the round's 1 s timeouts), and on
    # a loaded machine that may come first. Either way the flood loses, named.
    [report] = game_reports(stdout, "fishnet")
    ending = r"\(flood (left|timed out)\)"
    assert re.fullmatch(rf"fishnet: game 2: flood \d+ - \d+ spot: spot wins {ending}", report)

    # Reversi: the board again for each bad move, until the 100th in a row loses.
    # What black was told last may not reach it: the server closes a connection
    # with the flood still unread, and TCP then resets it, dropping what black's
    # full window had not taken. So the server's own report says how it ended.
    answers = sorted(lines(result) for result in of(round_, "reversi"))
    white, black = answers  # "U0" sorts first
    assert white == ["U0", "W1", "G"]
    board = "B" + Position.start().digits()
    assert black[:2] == ["U1", board] and set(black[2:]) <= {board, "W0", "G"}
    [report] = game_reports(stdout, "reversi")
    assert report.endswith("flood made 100 illegal moves in a row")

    # No Tipping answers a bad join with DENIED; only so often, then closes.
    [joins] = of(round_, "notipping")
    assert joins.received == b"DENIED;\n" * MAX_JOIN_REQUESTS

    # The table answers every status, an honest peer every bad line with an error.
    [status] = of(round_, "oldmaid")
    forming = {"result": "ok", "in": [], "out": [], "state": "waiting"}
    assert all(json.loads(line) == forming for line in lines(status))
    [peer] = of(round_, "peer")
    bad_line = {"result": "error", "message": "not a JSON object"}
    assert lines(peer) and all(json.loads(line) == bad_line for line in lines(peer))


async def test_a_peer_gives_up_writing_to_a_stranger_that_never_reads(tmp_path: Path) -> None:
    # In a round the honest peers finish their game before any timeout of
    # theirs could close a stranger; here a peer waits for players meanwhile.
    events = tmp_path / "ann.jsonl"
    table = TableConfig(players=2, port=0, seed=1, linger=0.1)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            _, table_port = await nursery.start(serve_table, table)
            peer = Peer(
                PeerConfig(
                    nick="ann", table=("127.0.0.1", table_port), seed=1, events=str(events),
                    timeout=WRITE_TIMEOUT, first_message_timeout=IDLE_TIMEOUT,
                )
            )  # fmt: skip

            async def play(task_status: trio.TaskStatus[int]) -> None:
                with contextlib.suppress(PeerError):
                    await peer.play(task_status=task_status)

            port = await nursery.start(play)
            flood = Attack("peer", (), "flood", flood=b"nonsense\n")
            result = await attack_alone(flood, ("127.0.0.1", port))
            nursery.cancel_scope.cancel()
    peer.log.close()
    assert result.closed_by_server and not result.flood_stuck
    assert {json.loads(line)["message"] for line in lines(result)} == {"not a JSON object"}
    # Dropped by its write timeout, not the first-message one (which closes silently).
    errors = [r["error"] for r in read_events(events) if r["event"] == "inbound_error"]
    assert errors == ["TooSlowError"]


# -- a client that sends a byte at a time -----------------------------------------------

TRICKLES = (
    Attack("fishnet", (b"play trickle spot\n",), pace=TRICKLE_PACE),
    Attack("reversi", (b"Ntrickle\n",), pace=TRICKLE_PACE),
    Attack("notipping", (b"JOINREQUEST:trickle:0;",), pace=TRICKLE_PACE),
    Attack("oldmaid", (b'{"cmd":"join","nick":"trickle"}\n',), pace=TRICKLE_PACE),
    Attack("peer", (b'{"cmd":"your_turn"}\n',), pace=TRICKLE_PACE),
)


def test_a_join_sent_a_byte_at_a_time_is_dropped_before_it_completes() -> None:
    round_ = trio.run(play_round, TRICKLES, SEED)
    check_round(round_, SEED)
    assert all(result.closed_by_server for result in round_.attacks)
    # The idle deadline counts from connect, and bytes that do not complete a
    # join do not move it. Only FishNet has words for it; the table and a peer
    # answer only requests, No Tipping only a complete JOINREQUEST.
    told = {result.attack.target: result.received for result in round_.attacks}
    assert told == {
        "fishnet": b"error idle_timeout\n",
        "reversi": b"",
        "notipping": b"",
        "oldmaid": b"",
        "peer": b"",
    }
    logged = round_.stderr.splitlines()
    # Reversi ends a name at 200 ms of silence: "N" alone names no one.
    assert any(
        re.fullmatch(r"reversi: 127\.0\.0\.2:\d+: name refused, closing: empty name.*", line)
        for line in logged
    ), logged
    no_join = rf"notipping: 127\.0\.0\.2:\d+: no JOINREQUEST within {IDLE_TIMEOUT:g} s; closing"
    assert any(re.fullmatch(no_join, line) for line in logged), logged


# -- hundreds of connections from one address -------------------------------------------

# Two connections that prove themselves at each service (its connection caps:
# docs/protocols/oldmaid.md 8, fishnet.md "Limits and timeouts", reversi.md 7,
# notipping.md 7), and what each then hears first: proof that the server took it.
HOLDERS = (
    *[Attack("fishnet", (b"play hold%d spot\n" % i,), "hold", expect=b"fish ") for i in (0, 1)],
    *[Attack("reversi", (b"Nhold\n",), "hold", expect=b"U")] * 2,  # paired with each other
    *[
        # BEGIN, not GRANTED: a seat counts as proved only once its GRANTED is written.
        Attack("notipping", (b"JOINREQUEST:hold:%d;" % i,), "hold", expect=b"BEGIN")
        for i in (0, 1)
    ],
    *[
        # A join has no reply until its game starts; a status after it is answered at once.
        Attack(
            "oldmaid",
            (b'{"cmd":"join","nick":"hold%d"}\n' % i, b'{"cmd":"status"}\n'),
            "hold",
            expect=b"wait for the reply to join",
        )
        for i in (0, 1)
    ],
)
JOINS = {
    "fishnet": b"play many spot\n",
    "reversi": b"Nmany\n",
    "notipping": b"JOINREQUEST:many:0;",
    "oldmaid": b'{"cmd":"join","nick":"many"}\n',
}
# What a newcomer refused at the per-address cap hears (each service's
# "refused at a cap" test); Reversi has no error message: it closes, and logs.
REFUSALS = {
    "fishnet": b"error too_many_connections_from_your_address\n",
    "notipping": b"DENIED;\n",
    "oldmaid": json.dumps(
        {
            "result": "error",
            "message": f"too many connections from your address (at most {CAP}); "
            "close one and try again",
        },
        separators=(",", ":"),
    ).encode()
    + b"\n",
    "reversi": b"",
}


def test_hundreds_of_connections_from_one_address_are_refused_beyond_its_cap() -> None:
    # Both ends of every connection are in this process.
    short = raise_file_limit(2 * len(SERVICES) * CONNECTIONS + 256)
    if short is not None:
        pytest.skip(short)
    newcomers = [
        Attack(target, (join,), wave=1)
        for target, join in JOINS.items()
        for _ in range(CONNECTIONS - CAP)
    ]
    # The Old Maid holders' joins wait for a game that never fills: under a loaded test
    # run this round outlasted the fuzz rounds' 3 s wait, which then freed their places.
    options = ("--max-per-address", str(CAP), "--wait-timeout", str(HOLDERS_WAIT))
    round_ = trio.run(play_round, [*HOLDERS, *newcomers], SEED, options)
    held = [result for result in round_.attacks if result.attack.ending == "hold"]
    rest = [result for result in round_.attacks if result.attack.ending != "hold"]
    # The fuzz's No Tipping check (tests/helpers/fuzz.py) knows no full ROUND (no attacker
    # of its own gets a seat): the held seats are read with the protocol's own client below.
    check_round(dataclasses.replace(round_, attacks=rest), SEED)

    # The first CAP of each service hold their places all through: never evicted.
    assert len(held) == len(HOLDERS)
    for result in held:
        assert result.attack.expect in result.received, result
        assert not result.closed_by_server, result
        if result.attack.target == "notipping":
            granted, begin, *rounds = notipping_messages(result.received)
            assert (granted, begin) == (Granted(), Begin(2, 7))  # game 1 is the honest one
            assert all(isinstance(message, Round) for message in rounds)
        else:
            check_server_bytes(result)

    # Every later one is refused, in its protocol's words, and closed. Past the
    # MAX_REFUSING refusals under way at once, ring.wire.net closes a newcomer
    # unanswered, so that a flood cannot hold a descriptor for each.
    for target in JOINS:
        refused = [result for result in of(round_, target) if result.attack.wave == 1]
        assert len(refused) == CONNECTIONS - CAP
        assert all(result.closed_by_server for result in refused), target
        told = Counter(result.received for result in refused)
        assert set(told) <= {REFUSALS[target], b""}, (target, told)
        if REFUSALS[target]:
            assert told[REFUSALS[target]] >= MAX_REFUSING, (target, told)
    # Reversi's refusals only show in its log: the first of each second with its
    # address, the others counted (ring.wire.burst_log).
    words = "refused, closing: too many connections from your address"
    addressed, counted = crowd_lines(round_.stderr, "reversi", words, address="127.0.0.2")
    assert addressed + sum(counted) == CONNECTIONS - CAP
