"""Whether a mutant that ``ring check`` let through still plays as before: seeded games.

For ``scenarios.bench.check_mutants``. A survivor is played, and so is the unmutated
client, in the same seeded games through our real server (``ring serve --GAME 0
--seed S``, a fresh one a game, so that every game is that seed's first) against
the same seeded opponents. Every client reaches the server through a relay of
ours on loopback that records the bytes it sends; the relay passes each
direction's end on as a half-close, so a client's last words (a goodbye after the
result) are recorded as they were sent. Our client's bytes, and the others'
(which show what it told them: an Old Maid neighbour's reports), are compared
game by game: the same in every game is "equivalent", else a "gap" with the
first difference. A difference is confirmed by playing the unmutated client
again in that seed: if it differs from itself the game is not deterministic and
the verdict is "unsure".

Every process runs from a copy of the packages (``PYTHONPATH``, and its folder as
the working directory, since ``python -m`` puts that first on ``sys.path``): the
mutant's for our client, the unmutated snapshot for the server and the others.
"""

from __future__ import annotations

import contextlib
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from scenarios.programs import Program, RunningProgram

START_TIMEOUT = 20.0  # for ring serve to say where it listens
GAME_TIMEOUT = 30.0  # the unmutated clients finish a game in 1-3 s
SETTLE = 0.3  # after a client's first bytes, before the next starts: join order fixed


def ring(tree: Path, *arguments: str) -> Program:
    """``ring ARGUMENTS`` as the copy of the packages in ``tree`` has it, and nothing else."""
    argv = ("env", f"PYTHONPATH={tree}", sys.executable, "-m", "ring", *arguments)
    return Program(argv, cwd=tree)


@dataclass(frozen=True)
class Table:
    """How one seeded game of a service is played: the server, our client, the others."""

    service: str
    ours: Callable[[int], tuple[str, ...]]  # ring arguments for a seed; {address}: the relay
    others: Callable[[int], list[tuple[str, ...]]] = lambda seed: []
    serve: tuple[str, ...] = ()  # more ring serve options
    normalize: Callable[[bytes], bytes] = lambda data: data  # what differs run to run


def old_maid(data: bytes) -> bytes:
    """What an Old Maid player sent its table, without what depends on the clock or the
    system: its join's listening port (any free one) as 0, and no ``status``, a question
    whose asking depends on time (the stall watch's, an idle neighbour's)."""
    data = re.sub(rb'"port"\s*:\s*\d+', b'"port":0', data)
    return b"".join(line for line in data.splitlines(keepends=True)
                    if not re.fullmatch(rb'\{"cmd"\s*:\s*"status"\}\s*', line))  # fmt: skip


@dataclass
class Played:
    """What every client sent in one game (ours first), and how ours ended."""

    sent: list[bytes]
    finished: bool  # our client exited within GAME_TIMEOUT
    exit_code: int | None

    def same_as(self, other: Played) -> bool:
        return self.sent == other.sent and self.finished == other.finished


class _Relay:
    """A loopback listener that passes every connection on to ``target``, recording what the
    client sends (all its connections, one after the other)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.sent = bytearray()
        self.spoke = trio.Event()

    async def run(self, listener: trio.SocketListener) -> None:
        async with trio.open_nursery() as nursery:
            while True:
                client = await listener.accept()
                nursery.start_soon(self._relay, client)

    async def _relay(self, client: trio.SocketStream) -> None:
        try:
            server = await trio.open_tcp_stream(*self.target)
        except OSError:
            await client.aclose()
            return
        async with client, server, trio.open_nursery() as nursery:
            nursery.start_soon(self._pump, client, server, True)
            nursery.start_soon(self._pump, server, client, False)

    async def _pump(self, source: trio.SocketStream, sink: trio.SocketStream, ours: bool) -> None:
        gone = (trio.BrokenResourceError, trio.ClosedResourceError)
        sink_open = True
        while True:
            try:
                data = await source.receive_some(65536)
            except gone:
                data = b""
            if not data:
                break
            if ours:
                self.sent += data
                self.spoke.set()
            if sink_open:
                try:
                    await sink.send_all(data)
                except gone:
                    sink_open = False  # keep reading: what it sends still counts
        with contextlib.suppress(*gone):
            await sink.send_eof()


async def _listening(running: RunningProgram, service: str) -> tuple[str, int]:
    prefix = f"{service} listening on "
    with trio.fail_after(START_TIMEOUT):
        while True:
            for line in running.stdout_path.read_text(errors="replace").splitlines():
                if line.startswith(prefix):
                    host, _, port = line.removeprefix(prefix).rpartition(":")
                    return host, int(port)
            if running.exited:
                raise RuntimeError(f"ring serve --{service} exited: {running.output()[1][-3:]}")
            await trio.sleep(0.05)


async def play(table: Table, seed: int, ours: Path, base: Path, logs: Path) -> Played:
    """One seeded game: our client from ``ours``, the server and the others from ``base``."""
    programs = [ring(ours, *table.ours(seed))] + [ring(base, *a) for a in table.others(seed)]
    server = await ring(base, "serve", f"--{table.service}", "0", "--seed", str(seed),
                        *table.serve).start({}, logs, "server")  # fmt: skip
    running: list[RunningProgram] = []
    relays: list[_Relay] = []
    try:
        address = await _listening(server, table.service)
        async with trio.open_nursery() as nursery:
            for number, program in enumerate(programs):
                relay = _Relay(address)
                listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
                nursery.start_soon(relay.run, listener)
                relays.append(relay)
                port = listener.socket.getsockname()[1]
                values = {"address": f"127.0.0.1:{port}"}
                running.append(await program.start(values, logs, f"client{number}"))
                with trio.move_on_after(START_TIMEOUT):
                    await relay.spoke.wait()
                await trio.sleep(SETTLE)
            finished = await running[0].wait(GAME_TIMEOUT)
            for other in running[1:]:
                await other.wait(GAME_TIMEOUT if finished else 1.0)
            nursery.cancel_scope.cancel()
        code = running[0].process.returncode
        return Played([table.normalize(bytes(r.sent)) for r in relays], finished, code)
    finally:
        with trio.CancelScope(shield=True):
            for process in [*running, server]:
                await process.stop()


def first_difference(before: Played, after: Played) -> str:
    """Where the mutant's game first went another way, in messages (one a line)."""
    if before.sent == after.sent:
        return f"it sent the same, but did not finish the game within {GAME_TIMEOUT:g} s"
    for number, (old, new) in enumerate(zip(before.sent, after.sent, strict=True)):
        if old == new:
            continue
        who = "it" if number == 0 else f"player {number + 1} (what it was told)"
        old_lines, new_lines = _lines(old), _lines(new)
        for index, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
            if a != b:
                return (f"{who}, message {index + 1}: the original sent {_show(a)}, "
                        f"the mutant {_show(b)}")  # fmt: skip
        common = min(len(old_lines), len(new_lines))
        if len(new_lines) < len(old_lines):
            return f"{who} stopped after message {common}: the original went on with " + _show(
                old_lines[common]
            )
        return f"{who} sent more after message {common}: " + _show(new_lines[common])
    return "the same bytes"


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines and not lines[-1] else lines


def _show(line: bytes, width: int = 70) -> str:
    text = repr(line)
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class Equivalence:
    """A survivor's games against the unmutated client's."""

    verdict: str  # "equivalent", "gap" or "unsure"
    games: int  # seeded games played
    difference: str = ""  # the first, for a gap (or why unsure)
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.verdict == "equivalent":
            return f"equivalent (plays as before in {self.games} seeded games)"
        return f"{self.verdict}: seed {self.seed}: {self.difference}"


class References:
    """The unmutated client's game for each seed, played once and kept."""

    def __init__(self, table: Table, base: Path) -> None:
        self.table = table
        self.base = base
        self._games: dict[int, Played] = {}

    async def get(self, seed: int, logs: Path) -> Played:
        if seed not in self._games:
            self._games[seed] = await play(self.table, seed, self.base, self.base, logs)
        return self._games[seed]


async def compare(references: References, tree: Path, seeds: list[int]) -> Equivalence:
    """Play the mutant in ``tree`` in each seed until a game differs from the reference."""
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ring-mutant-game-") as scratch:
        logs = Path(scratch)
        for seed in seeds:
            before = await references.get(seed, logs / f"reference-{seed}")
            after = await play(references.table, seed, tree, references.base, logs / f"m-{seed}")
            if after.exit_code != before.exit_code and after.finished:
                notes.append(f"exit status {before.exit_code} → {after.exit_code} (seed {seed})")
            if before.same_as(after):
                continue
            again = await play(references.table, seed, references.base, references.base,
                               logs / f"again-{seed}")  # fmt: skip
            if not again.same_as(before):
                return Equivalence("unsure", len(seeds), "the unmutated client itself played "
                                   "this seed two ways", seed, notes)  # fmt: skip
            return Equivalence("gap", seeds.index(seed) + 1, first_difference(before, after),
                               seed, notes)  # fmt: skip
    return Equivalence("equivalent", len(seeds), notes=notes)
