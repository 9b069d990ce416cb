"""What a fault scenario found: that every end after the fault was clean, a finding each.

``FaultResult`` is one run of ``scenarios.oldmaid.faults``: the fault, when each
process exited, what each said, the table's last status reply. The checks
read it with the game's files (``fault_game.FaultGame``): everyone still
running exits non-zero within a bound with one line on stderr and no
traceback, the table's transcript, last line and ``status`` name the culprit,
and the watchers are told. Each check is a ``Finding``, as the
verifier's are, so ``ring scenario`` prints them alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from scenarios.oldmaid.fault_game import FaultGame, LogTail, Record
from scenarios.oldmaid.game import TABLE
from scenarios.oldmaid.verifier.finding import Finding
from scenarios.processes import ChildProcess, ProcessResult
from services.oldmaid.table.outcome import EVERY_EXCHANGE_REPORTED


@dataclass
class FaultResult:
    name: str
    players: int
    seed: int
    workdir: Path
    fault: str = ""  # what was done, for the summary
    victim: str | None = None
    fault_at: float | None = None  # time.monotonic() of the signal
    exit_at: dict[str, float] = field(default_factory=dict)  # process name -> its exit
    processes: dict[str, ProcessResult] = field(default_factory=dict)
    status: Record | None = None  # the last status reply seen after the fault
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.findings) and all(c.ok for c in self.findings)

    def after_fault(self, name: str) -> float | None:
        """Seconds from the fault to this process's exit; None if it did not exit."""
        if self.fault_at is None or name not in self.exit_at:
            return None
        return self.exit_at[name] - self.fault_at


# -- checks --------------------------------------------------------------------------


def seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.3f} s"


def _after(result: FaultResult, name: str) -> float:
    after = result.after_fault(name)
    return math.inf if after is None else after


def _code(result: FaultResult, name: str) -> str:
    process = result.processes.get(name)
    return "?" if process is None or process.returncode is None else str(process.returncode)


def exit_findings(
    result: FaultResult, survivors: list[ChildProcess], bound: float
) -> list[Finding]:
    late = [p.name for p in survivors if _after(result, p.name) >= bound]
    times = ", ".join(f"{p.name} {seconds(result.after_fault(p.name))}" for p in survivors)
    zero = [p.name for p in survivors if p.popen.returncode in (0, None)]
    lines = [
        p.name
        for p in survivors
        if len(p.stderr) != 1 or any("Traceback" in line for line in p.stderr)
    ]
    return [
        Finding(f"exit within {bound:g} s", not late, times),
        Finding(
            "non-zero exits",
            not zero,
            "every survivor exited non-zero" if not zero else f"exited 0 or not: {zero}",
        ),
        Finding(
            "one line on stderr",
            not lines,
            "one line each, no traceback"
            if not lines
            else "; ".join(f"{p.name}: {p.stderr!r}" for p in survivors if p.name in lines),
        ),
    ]


VERIFIED_GAME = EVERY_EXCHANGE_REPORTED  # the table's end-line suffix (protocol 14.6)


def table_abort_findings(
    game: FaultGame, result: FaultResult, culprit: str, *, on_word_of: str | None = None
) -> list[Finding]:
    """The table aborted once, naming ``culprit``.

    ``on_word_of``: the abort rests on that peer's word alone (a neighbour that
    went silent). A game with older clients names the silent one on it; a
    verified game names only on what the reports prove (protocol 14.6), so it
    names no one and says whom ``on_word_of`` accused.
    """
    aborted = [r for r in game.transcript_records() if r.get("event") == "aborted"]
    reasons = [str(r.get("reason")) for r in aborted]
    table = game.processes[TABLE]
    last = table.stdout[-1] if table.stdout else ""
    named = [r.get("culprit") for r in aborted]
    verified = last.endswith(VERIFIED_GAME)
    if on_word_of is not None and verified:
        said = f"{on_word_of} gave up, saying {culprit} "
        recorded = named == [None] and reasons[0].startswith(said) if aborted else False
        printed = last.startswith(f"game aborted: {said}") and "blames no one" in last
    else:
        recorded = named == [culprit] and reasons[0].startswith(f"{culprit} ") if aborted else False
        printed = last.startswith(f"game aborted: {culprit} ")
    return [
        Finding(
            "transcript aborted",
            len(aborted) == 1 and recorded,
            f"aborted records: {reasons}, naming {named}",
        ),
        Finding(
            "table line",
            printed and table.popen.returncode == 1,
            f"table exit {table.popen.returncode}: {last!r}",
        ),
    ]


def status_finding(result: FaultResult, victim: str) -> Finding:
    status = result.status or {}
    return Finding(
        "status says aborted",
        status.get("aborted") is True and victim in str(status.get("reason")),
        f"last status reply: {status or 'none'}",
    )


def watcher_finding(
    game: FaultGame, result: FaultResult, survivors: list[ChildProcess], victim: str
) -> Finding:
    told = []
    for process in survivors:
        tail = LogTail(game.event_logs[process.name])
        tail.read()
        if any(
            r.get("event") == "game_over" and r.get("aborted") and victim in str(r.get("reason"))
            for r in tail.records
        ):
            told.append(process.name)
    return Finding(
        "watchers told",
        bool(told),
        f"game_over aborted naming {victim} reached {', '.join(told) or 'no one'}",
    )


def stop_peer_findings(
    game: FaultGame,
    result: FaultResult,
    survivors: list[ChildProcess],
    *,
    waiter: str,
    named_within: float,
    exit_bound: float,
) -> list[Finding]:
    """fault-stop-peer's end, in a witnessed game (every ``ring peer`` joins with verify
    and witness, protocol 14.6 "The draw turn"): ``waiter`` does not give up on the
    stopped ``result.victim``; the table hands the victim the draw turn, names it
    (``no_answer``) within ``named_within`` of the game's start, everyone else exits
    within ``exit_bound`` of that, and once resumed the victim and the table end too."""
    victim = result.victim
    assert victim is not None
    checks = exit_findings(result, survivors, named_within + exit_bound)
    tail = LogTail(game.event_logs[waiter])
    tail.read()
    handed = [r for r in tail.records if r.get("event") == "handed_on" and r.get("to") == victim]
    checks.append(
        Finding(
            "the waiting peer lets the table hand the turn on",
            bool(handed) and "did not draw" in "".join(result.processes[waiter].stderr),
            f"{waiter} logged {len(handed)} handed_on to {victim}; said "
            f"{result.processes[waiter].stderr!r}",
        )
    )
    records = game.transcript_records()
    started = next((r["t"] for r in records if r.get("event") == "started"), None)
    aborted = next((r for r in records if r.get("event") == "aborted"), None)
    took = None if started is None or aborted is None else aborted["t"] - started
    checks.append(
        Finding(
            "named for the draw it owed",
            aborted is not None and aborted.get("rule") == "no_answer"
            and took is not None and took < named_within,
            f"the table named {aborted and aborted.get('culprit')} "
            f"({aborted and aborted.get('rule')}) {seconds(took)} after the start",
        )
    )  # fmt: skip
    checks += table_abort_findings(game, result, victim)
    checks.append(
        Finding(
            "resumed, all end",
            victim in result.exit_at and TABLE in result.exit_at,
            f"after SIGCONT: {victim} exit {_code(result, victim)}, "
            f"table exit {_code(result, TABLE)}",
        )
    )
    return checks
