"""Hostile byte streams against every service at once, beside honest games.

One round runs the four services of ``ring serve`` in this process on
loopback, with short timeouts so that a stalled connection is dropped within
the round, and plays one honest game in each: FishNet (alice against the
server's spot), Reversi (two random players), No Tipping (two random players)
and Old Maid (three ring peers). Once every honest game has formed, so that no
attacker can take an honest player's seat, the round opens its attack
connections, against the services and against one honest peer's listening
port, all at once. Each attack sends its chunks and then closes, aborts
(closes without reading) or stalls (holds the connection open, unread, until
the honest games are over).

An attack (``scenarios.bench.attacks``) is one hostile connection. The slow
and hostile clients of ``tests/scenarios/bench/test_hostile_clients.py`` use more
of one: it may trickle its bytes one at a time (``pace``),
wait for an answer before going on (``expect``), flood one message without
ever reading until the server drops it (ending "flood"), or hold its place
until the others have ended (ending "hold"); and attacks come in waves, each
once the one before has its answers. ``options`` gives a round more ``ring
serve`` options (a per-address cap, say).

The round reports what each attack got back and how it ended, how each honest
game ended and its transcript, and the open file descriptors and Trio tasks
before and after. ``tests/scenarios/bench/test_fuzz.py`` checks a round against the
same round without attacks; ``make fuzz`` runs many rounds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ring.cli.app import build_parser
from ring.cli.registry import declared_services
from ring.cli.serve import chosen_services, serve_all, settings_for
from ring.oldmaid.peer import Peer, PeerConfig, PeerError
from ring.wire.client import ClientError
from scenarios.bench.attacks import IDLE_TIMEOUT, Attack, AttackResult, run_attack
from services.fishnet import conversation as fishnet_conversation
from services.fishnet.bots import make_player as fishnet_player
from services.fishnet.client import BotAgent as FishNetAgent
from services.fishnet.conversation import ClientError as FishNetClientError
from services.notipping import conversation as notipping_conversation
from services.notipping.client import BotAgent as NoTippingAgent
from services.reversi import conversation as reversi_conversation
from services.reversi.client import BotAgent as ReversiAgent

SERVICES = ("fishnet", "reversi", "notipping", "oldmaid")
TARGETS = (*SERVICES, "peer")  # what the fuzzer's attacks aim at
OLDMAID_PLAYERS = 3

WAIT_TIMEOUT = 3.0
MOVE_TIME = 5.0
ROUND_TIMEOUT = 60.0
SETTLE_TIMEOUT = 5.0


@dataclass
class Round:
    """What one round saw."""

    games: dict[str, object] = field(default_factory=dict)  # honest game: its result
    transcripts: dict[str, list[dict]] = field(default_factory=dict)
    attacks: list[AttackResult] = field(default_factory=list)
    fds_before: int = 0
    fds_after: int = 0
    tasks_before: int = 0
    tasks_after: int = 0
    stderr: str = ""  # what the services wrote there: a traceback is a crash

    def outcomes(self) -> dict[str, object]:
        """How each honest game ended, the same for two runs of the same round.

        The two Reversi players share a name and a seed (see _honest_games), so
        which of them got which colour is left out: only the pair of results.
        """
        found: dict[str, object] = {
            name: repr(result)
            for name, result in sorted(self.games.items())
            if not name.startswith("reversi")
        }
        found["reversi"] = sorted(
            repr(result) for name, result in self.games.items() if name.startswith("reversi")
        )
        return found


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def count_tasks() -> int:
    """Every task of this Trio run."""
    count, stack = 0, [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        count += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return count


def serve_arguments(seed: int, transcripts: Path, options: Sequence[str] = ()) -> list[str]:
    return [
        "serve", "--host", "127.0.0.1", "--seed", str(seed), "--transcripts", str(transcripts),
        *(arg for name in SERVICES for arg in (f"--{name}", "0")),
        "--idle-timeout", str(IDLE_TIMEOUT), "--wait-timeout", str(WAIT_TIMEOUT),
        "--move-time", str(MOVE_TIME),
        "--time-budget", str(4 * MOVE_TIME), "--players", str(OLDMAID_PLAYERS),
        "--linger", "0.5", "--bot-moves", "first", *options,
    ]  # fmt: skip


class _Formed:
    """Set once both seats of an honest game have been told it began."""

    def __init__(self) -> None:
        self.event = trio.Event()
        self._seen = 0

    def one(self) -> None:
        self._seen += 1
        if self._seen == 2:
            self.event.set()


class _ReversiAgent(ReversiAgent):
    def __init__(self, seed: int, formed: _Formed) -> None:
        super().__init__(ReversiAgent.of_level("random", seed, None).player, None)
        self.formed = formed

    async def started(self, colour: int) -> None:
        self.formed.one()


class _NoTippingAgent(NoTippingAgent):
    def __init__(self, seed: int, formed: _Formed) -> None:
        super().__init__(NoTippingAgent.of_level("random", seed).player)
        self.formed = formed

    async def begin(self, game_number: int, max_weight: int, player: int) -> None:
        self.formed.one()


async def _honest_games(
    addresses: dict[str, tuple[str, int]],
    seed: int,
    out: Round,
    done: trio.Event,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Play the four honest games; started, with one peer's listener, once all have formed.

    ``done`` is set when every honest game is over.
    """
    reversi, notipping = _Formed(), _Formed()
    peers = [
        Peer(PeerConfig(
            nick=f"honest{i}", table=addresses["oldmaid"], seed=seed * 10 + i, timeout=5.0,
            first_message_timeout=IDLE_TIMEOUT,
        ))
        for i in range(OLDMAID_PLAYERS)
    ]  # fmt: skip

    async def record(name: str, game: Awaitable[object]) -> None:
        try:
            out.games[name] = await game
        except (ClientError, FishNetClientError) as exc:
            out.games[name] = f"failed: {exc}"

    async def peer_game(peer: Peer, *, task_status: trio.TaskStatus[int]) -> None:
        try:
            out.games[f"oldmaid:{peer.nick}"] = await peer.play(task_status=task_status)
        except PeerError as exc:
            out.games[f"oldmaid:{peer.nick}"] = f"failed: {exc}"

    try:
        async with trio.open_nursery() as nursery:
            agent = FishNetAgent(fishnet_player("alice", seed))
            fishnet = fishnet_conversation.play_one_game(
                addresses["fishnet"], "honest", "spot", agent, timeout=ROUND_TIMEOUT
            )
            nursery.start_soon(record, "fishnet", fishnet)
            for i in range(2):
                # One name and one seed for both: the server pairs them in the order
                # they arrive, which may vary, and then the game is the same either way.
                agent = _ReversiAgent(seed, reversi)
                game = reversi_conversation.play_one_game(
                    addresses["reversi"], "honest", agent, timeout=ROUND_TIMEOUT
                )
                nursery.start_soon(record, f"reversi{i}", game)
                agent = _NoTippingAgent(seed + i, notipping)
                game = notipping_conversation.play_one_game(
                    addresses["notipping"], f"honest{i}", i, agent, timeout=ROUND_TIMEOUT
                )
                nursery.start_soon(record, f"notipping{i}", game)
            ports = [await nursery.start(peer_game, peer) for peer in peers]
            await reversi.event.wait()
            await notipping.event.wait()
            for peer in peers:
                await peer.seated.wait()
            task_status.started(("127.0.0.1", ports[0]))
    finally:
        done.set()
        for peer in peers:
            peer.log.close()


def _transcripts(folder: Path) -> dict[str, list[dict]]:
    """The first game's transcript of each service: the honest game, formed before any attack."""
    found = {}
    for service in SERVICES:
        path = folder / service / "game-000001.jsonl"
        if path.exists():
            lines = path.read_text().splitlines()
            records = [_timeless(json.loads(line)) for line in lines if line.strip()]
            found[service] = [r for r in records if not _is_seat_request(service, r)]
    return found


# What differs between two runs of the same seeded game: times, the client's
# ephemeral ports and connection numbers (which the kernel and arrival order pick).
_RUN_SPECIFIC = frozenset({"t", "peer", "conn", "port"})


def _is_seat_request(service: str, record: object) -> bool:
    # Two honest No Tipping players ask for their seats at the same moment, in
    # either order; which seat each gets does not depend on it.
    line = record.get("line", "") if isinstance(record, dict) else ""
    return service == "notipping" and line.startswith(("JOINREQUEST", "GRANTED"))


def _timeless(record: object) -> object:
    """A transcript record without what differs from run to run of the same game."""
    if isinstance(record, dict):
        return {k: _timeless(v) for k, v in record.items() if k not in _RUN_SPECIFIC}
    if isinstance(record, list):
        if len(record) == 2 and isinstance(record[0], str) and isinstance(record[1], int):
            return [record[0], "port"]  # an Old Maid address: [host, port]
        return [_timeless(item) for item in record]
    return record


async def play_round(attacks: Sequence[Attack], seed: int, options: Sequence[str] = ()) -> Round:
    """One round: the four services, their honest games, and ``attacks`` once those formed.

    ``options``: more ``ring serve`` options for this round.
    """
    out = Round()
    stderr = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp, contextlib.redirect_stderr(stderr):
        transcripts = Path(tmp)
        args = build_parser().parse_args(serve_arguments(seed, transcripts, options))
        services = declared_services()
        chosen = [(s, settings_for(args, s, seed)) for s in chosen_services(args, services)]
        out.fds_before = open_fds()
        with trio.fail_after(ROUND_TIMEOUT):
            async with trio.open_nursery() as servers:
                addresses = await servers.start(serve_all, chosen)
                out.tasks_before = count_tasks()
                done = trio.Event()
                async with trio.open_nursery() as nursery:
                    peer = await nursery.start(_honest_games, addresses, seed, out, done)
                    targets = {**addresses, "peer": peer}
                    released = trio.Event()
                    unheld = sum(attack.ending != "hold" for attack in attacks)

                    async def one(attack: Attack, placed: trio.Event) -> None:
                        nonlocal unheld
                        address = targets[attack.target]
                        out.attacks.append(
                            await run_attack(attack, address, done, placed, released)
                        )
                        if attack.ending != "hold":
                            unheld -= 1
                            if unheld == 0:
                                released.set()

                    if unheld == 0:
                        released.set()
                    for wave in sorted({attack.wave for attack in attacks}):
                        placed: list[trio.Event] = []
                        for attack in attacks:
                            if attack.wave == wave:
                                placed.append(trio.Event())
                                nursery.start_soon(one, attack, placed[-1])
                        for event in placed:
                            await event.wait()
                out.tasks_after = await _settled_tasks(out.tasks_before)
                servers.cancel_scope.cancel()
        out.fds_after = open_fds()
        out.transcripts = _transcripts(transcripts)
    out.stderr = stderr.getvalue()
    return out


async def _settled_tasks(expected: int) -> int:
    """The task count once the servers have seen every connection close, or after a bound.

    A close reaches a server's task through the kernel, and nothing here is told
    when it has: so count again after each short pause, within SETTLE_TIMEOUT.
    """
    with trio.move_on_after(SETTLE_TIMEOUT):
        while count_tasks() != expected:
            await trio.sleep(0.01)
    return count_tasks()
