"""``ring scenario lan``: one Old Maid game over a LAN of network namespaces, found by mDNS.

A ``netns.Lan`` gives three hosts on one bridged /24: the table runs on host
a (``ring table --host 0.0.0.0``, which advertises itself over mDNS), and the
peers are spread over hosts b and c. No peer is told where the table is: each
runs ``ring peer`` without ``--server`` (nor ``--host``), so it must browse
for the table and listen on its own host's address, the one facing the table.

The game is played and verified by ``scenarios.oldmaid.game`` and
``scenarios.oldmaid.verifier.verify`` exactly as ``ring scenario 8-players`` is, with two more
checks: every peer joined from its own host's address and announced it (so
the ring really crossed the bridge), and nothing of the LAN is left once it
is torn down. Teardown happens however the run ends (see ``scenarios.oldmaid.netns``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scenarios import processes
from scenarios.oldmaid import game as oldmaid_game
from scenarios.oldmaid import netns
from scenarios.oldmaid.verifier.verify import Finding, table_events

# Chosen so that the game shows skips over players who are out, as the
# 8-player default does; tests/scenarios/oldmaid/test_lan.py asserts that it still does.
DEFAULT_SEED = 2013
PLAYERS = 5
TABLE_HOST = "a"
PEER_HOSTS = ("b", "c")
# The game itself takes a few seconds; this bounds a run that hangs (say,
# peers that never find the table) so the whole scenario stays under ~30 s.
DEFAULT_TIMEOUT = 25.0

PLACEMENT = "lan addresses"
TEARDOWN = "teardown"


@dataclass
class Join:
    nick: str
    source: str  # the address the table saw the join come from
    announced: str  # HOST:PORT the peer told the table to reach it on
    after: float | None  # seconds from starting the process to the table reading its join


@dataclass
class LanResult:
    seed: int
    game: oldmaid_game.ScenarioResult | None = None
    subnet: str = ""
    bridge_netns: str = ""
    hosts: dict[str, netns.Host] = field(default_factory=dict)  # by process name
    joins: dict[str, Join] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)  # placement and teardown
    setup_time: float | None = None
    teardown_time: float | None = None
    stale_removed: list[str] = field(default_factory=list)
    error: str | None = None  # the LAN itself could not be built

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and self.game is not None
            and self.game.ok
            and bool(self.findings)
            and all(c.ok for c in self.findings)
        )

    @property
    def all_findings(self) -> list[Finding]:
        return [*(self.game.findings if self.game else []), *self.findings]


def placement(nicks: Sequence[str]) -> dict[str, str]:
    """Which host each process runs on: the table on a, the peers dealt out over b and c."""
    where = {oldmaid_game.TABLE: TABLE_HOST}
    for index, nick in enumerate(nicks):
        where[nick] = PEER_HOSTS[index % len(PEER_HOSTS)]
    return where


def read_joins(game: oldmaid_game.ScenarioResult) -> dict[str, Join]:
    """Each player's successful-looking join as the table's transcript recorded it."""
    joins: dict[str, Join] = {}
    if game.records is None:
        return joins
    for record in game.records.transcript:
        msg = record.get("msg")
        if record.get("dir") != "in" or not isinstance(msg, dict) or msg.get("cmd") != "join":
            continue
        nick = str(msg.get("nick"))
        process = game.processes.get(nick)
        started = process.started if process else None
        after = record["t"] - started if started is not None and "t" in record else None
        source = str(record.get("peer", "")).rpartition(":")[0]
        joins[nick] = Join(nick, source, f"{msg.get('host')}:{msg.get('port')}", after)
    return joins


def check_placement(result: LanResult, nicks: Sequence[str]) -> Finding:
    """Every peer joined from, announced and was seated at its own host's address."""
    problems = []
    game = result.game
    started = table_events(game.records, "started") if game and game.records else []
    seated = {}
    if started:
        for nick, address in zip(
            started[-1].get("players", []), started[-1].get("addresses", []), strict=False
        ):
            seated[nick] = address[0] if isinstance(address, list) and address else None
    for nick in nicks:
        host = result.hosts[nick]
        join = result.joins.get(nick)
        if join is None:
            problems.append(f"{nick} ({host.role}) never joined")
            continue
        if join.source != host.address:
            problems.append(f"{nick} joined from {join.source}, not its host {host.address}")
        if join.announced.rpartition(":")[0] != host.address:
            problems.append(f"{nick} announced {join.announced}, not its host {host.address}")
        if started and seated.get(nick) != host.address:
            problems.append(f"{nick} was seated at {seated.get(nick)}, not {host.address}")
    if problems:
        return Finding(PLACEMENT, False, "; ".join(problems))
    roles = sorted({result.hosts[nick].role for nick in nicks})
    return Finding(
        PLACEMENT,
        True,
        f"{len(nicks)} peers on hosts {', '.join(roles)} each joined from and listened on "
        f"its own host's address, the table on {result.hosts[oldmaid_game.TABLE].address}",
    )


def run_lan(
    seed: int = DEFAULT_SEED,
    *,
    workdir: Path,
    timeout: float = DEFAULT_TIMEOUT,
    players: int = PLAYERS,
    extra_peers: list[list[str]] | None = None,
) -> LanResult:
    """Build the LAN, play one verified game on it by discovery, tear it down.

    ``extra_peers`` are passed to ``oldmaid_game.run_scenario`` (processes x1,
    x2, ... on the peer hosts); the tests use them to make a run fail.
    Signals: Ctrl-C raises KeyboardInterrupt and SIGTERM/SIGHUP SystemExit
    out of here, after the LAN is torn down.
    """
    result = LanResult(seed=seed)
    extra_peers = extra_peers or []
    nicks = [f"p{i}" for i in range(1, players - len(extra_peers) + 1)]
    where = placement([*nicks, *(f"x{i}" for i in range(1, len(extra_peers) + 1))])
    lan = netns.Lan([TABLE_HOST, *PEER_HOSTS])
    result.subnet = f"{lan.subnet}.0/24"
    result.bridge_netns = lan.bridge_netns
    result.hosts = {name: lan.hosts[role] for name, role in where.items()}
    with netns.terminate_as_exception():
        try:
            lan.up()
        except netns.NetnsError as exc:
            result.error = f"cannot build the LAN: {exc}"
            result.stale_removed = lan.stale_removed
            return result
        try:
            result.setup_time = lan.setup_time
            result.stale_removed = lan.stale_removed
            result.game = oldmaid_game.run_scenario(
                players,
                seed,
                workdir=workdir,
                timeout=timeout,
                extra_peers=extra_peers,
                prefix=lambda name: result.hosts[name].exec_prefix(),
                table_host="0.0.0.0",
                discovery=True,
            )
        finally:
            tearing = time.monotonic()
            lan.down()
            result.teardown_time = time.monotonic() - tearing
    result.joins = read_joins(result.game)
    result.findings.append(check_placement(result, nicks))
    left = lan.check_gone()
    if left or lan.teardown_errors:
        detail = "; ".join([*(f"{name} still exists" for name in left), *lan.teardown_errors])
        result.findings.append(Finding(TEARDOWN, False, detail))
    else:
        result.findings.append(
            Finding(
                TEARDOWN,
                True,
                f"{len(lan.namespaces)} namespaces (bridge, veths with them) deleted",
            )
        )
    return result


def format_result(result: LanResult) -> str:
    """The summary ``ring scenario 8-players`` prints, plus where each process ran."""
    lines = [f"scenario lan, seed {result.seed}"]
    if result.subnet:
        lines.append(f"  lan       {result.subnet}, bridge in namespace {result.bridge_netns}")
    for name, host in result.hosts.items():
        where = f"{name:<9} host {host.role}  {host.address:<15} {host.netns}"
        join = result.joins.get(name)
        process = result.game.processes.get(name) if result.game else None
        if name == oldmaid_game.TABLE and process is not None and process.stdout:
            where += f"  ({process.stdout[0].strip()})"
        elif join is not None:
            after = "" if join.after is None else f", joined {join.after:.2f} s after start"
            where += f"  (listens on {join.announced}{after})"
        lines.append(f"  {where}")
    if result.game is not None:
        game = oldmaid_game.format_result(result.game).splitlines()
        lines += [line for line in game[1:] if not line.startswith(("PASS", "FAIL"))]
    for label, seconds in (("setup", result.setup_time), ("teardown", result.teardown_time)):
        if seconds is not None:
            lines.append(f"  {label:<9} {seconds:.3f} s")
    if result.stale_removed:
        lines.append(f"  removed stale namespaces: {', '.join(result.stale_removed)}")
    if result.error:
        lines.append(f"ERROR {result.error}")
    lines += [f"{'PASS' if c.ok else 'FAIL'}  {c.name}: {c.detail}" for c in result.all_findings]
    if not result.ok:
        failed = [c.name for c in result.all_findings if not c.ok]
        lines.append(f"FAILED: {', '.join(failed) or result.error or 'the game'}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """``ring scenario lan [--seed S] [--timeout T] [--keep DIR]``."""
    reason = netns.namespaces_unavailable()
    if reason is not None:
        print(f"ring scenario lan: {reason} (needs root and iproute2)", file=sys.stderr)
        return 2
    seed = DEFAULT_SEED if args.seed is None else args.seed
    # --timeout defaults to 60 s for every scenario; the LAN one stays under ~30 s.
    timeout = min(args.timeout, DEFAULT_TIMEOUT)
    keep = Path(args.keep) if args.keep else None
    workdir = keep or Path(tempfile.mkdtemp(prefix="ring-scenario-lan-"))
    try:
        result = run_lan(seed, workdir=workdir, timeout=timeout)
    except KeyboardInterrupt:
        print("ring scenario lan: interrupted; the LAN is torn down", file=sys.stderr)
        print(f"logs kept in {workdir}", file=sys.stderr)
        return 130
    except SystemExit as exc:
        print("ring scenario lan: terminated; the LAN is torn down", file=sys.stderr)
        print(f"logs kept in {workdir}", file=sys.stderr)
        return exc.code if isinstance(exc.code, int) else 1
    return processes.finish(format_result(result), result.ok, workdir, keep)
