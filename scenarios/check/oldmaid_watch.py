"""What ``ring check oldmaid`` sees of the program: its messages, and our peers' view of it.

The table records every message the program sends and gets
(``RingWatch.table_record``, a record hub subscriber), and our peers log
every exchange they have with it (``RingWatch.peer_event``, their event
logs' sink). From them the watch keeps the last lines for a FAIL's report,
the failures our peers saw (a pick outside an offer, a good pick refused:
6.3; in a verified game, a pick without the program's mac: 14.6), the habits
they put up with (listening late, 13.1; a pick of ``num_cards``, 13.3), and
who holds the turn, so that a program sitting on it is named at once
(``time_moves``).
"""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from ring.games.record import GameKey
from ring.oldmaid import exchanges, proofs
from scenarios.check import obligations as rules
from scenarios.check.obligations import Rule

PROGRAM = "checker"  # the program's {nick}
TRANSCRIPT_LINES = 16  # what a FAIL shows of the program's last messages


@dataclass
class RingWatch:
    """What our table and our peers saw the program do: evidence, failures and warnings."""

    ours: frozenset[str]
    lines: collections.deque[str] = field(
        default_factory=lambda: collections.deque(maxlen=TRANSCRIPT_LINES)
    )
    failures: list[str] = field(default_factory=list)
    # What the program did against the verified game's extension (14.6): its own list, as
    # a verified game's rule (oldmaid.verified-play) is not the one of plain picks.
    unsigned: list[str] = field(default_factory=list)
    secret: str | None = None  # the program's game secret, once the table's game has a seed
    warnings: list[tuple[str, Rule]] = field(default_factory=list)  # and the rule each is of
    # Who holds the turn as far as our peers know, the event that handed it there and
    # when (time.monotonic()), and how long the program held each turn it was handed.
    holder: str | None = None
    game_ended: bool = False  # the table said over or aborted
    streams: bool = False  # one of the program's offers said stream: true (6.2)
    handed: str = ""
    handed_at: float = 0.0
    move_times: list[float] = field(default_factory=list)
    changed: trio.Event = field(default_factory=trio.Event)  # the holder changed
    left_line: str | None = None  # the table's abort for the program's leaving, if it left

    def table_record(self, _key: GameKey, record: dict[str, Any]) -> None:
        if record.get("event") == "listening" and isinstance(record.get("seed"), int):
            # The table derives every secret from its game's seed (14.5): so can we.
            self.secret = proofs.secret_for(proofs.game_key(record["seed"]), PROGRAM)
        if record.get("nick") == PROGRAM and "dir" in record:
            arrow = "<-" if record["dir"] == "in" else "->"  # the report's: "->" is ours
            self.lines.append(f"table {arrow} {_short(record.get('msg'))}")
        elif record.get("event") in ("aborted", "over", "out"):
            line = f"table: {record['event']} {_short(_without_t(record))}"
            self.lines.append(line)
            if record.get("culprit") == PROGRAM and record.get("rule") == "left":
                self.left_line = line  # the table saw it leave: after its exit, not before
        if record.get("event") in ("aborted", "over"):
            self.game_ended = True
            self.changed.set()
            self.changed = trio.Event()

    def peer_event(self, record: dict[str, Any]) -> None:
        event, ours = record.get("event"), record.get("nick")
        self._follow_turn(event, ours, record)
        about = {record.get(key) for key in ("to", "by", "from", "over", "nick")}
        # The offerer's nick is the one it sent ("from" is optional): not ours, the program's.
        if event == "pick" and record.get("from") not in self.ours:
            about.add(PROGRAM)
        if event == "ok_and_pick" and record.get("from") not in self.ours:
            about.add(PROGRAM)
        if event == "pick_refused" and record.get("by") not in self.ours:
            about.add(PROGRAM)
        if PROGRAM not in about or event is None:
            return
        self.lines.append(f"{ours}: {event} {_short(_without_t(record, 'nick', 'event'))}")
        card_num, num_cards = record.get("card_num"), record.get("num_cards")
        if event == "dialled" and record.get("to") == PROGRAM:
            self._warn(
                f"it listens only after its join reply: {ours}'s dial was refused "
                f"{record['attempts'] - 1} times (13.1; dial your left neighbour at once, 7.2)",
                rules.OLDMAID_LISTEN,
            )
        elif event in ("pick", "ok_and_pick") and record.get("stream"):
            self.streams = True
        elif event == "gave" and card_num == num_cards:
            self._warn(
                f"it picked card_num {card_num} from an offer of {num_cards} cards, taken as "
                "the last card (13.3; card_num counts from 0, 6.3)",
                rules.OLDMAID_COUNT,
            )
        if event == "gave" and "seq" in record and self.secret is not None:
            self._check_pick_mac(ours, record)
        if event == "bad_pick":
            self._fail(
                f"it picked card_num {card_num} from an offer of {num_cards} cards "
                "(6.3: 0 <= card_num < num_cards)"
            )
        elif event == "pick_refused" and 0 <= card_num < num_cards:
            self._fail(
                f"it refused {ours}'s pick of card_num {card_num} from its offer of "
                f"{num_cards} cards ({record.get('message')!r}; 6.3: any 0 <= card_num < "
                "num_cards is a card)"
            )

    def _follow_turn(self, event: object, ours: object, record: dict[str, Any]) -> None:
        """The turn reaches the program when one of ours hands it over, and leaves it when
        one of ours acts on a turn of its own (a move's time so includes that one's own
        draw or pick, a few milliseconds)."""
        before = self.holder
        if event in ("offer", "pass", "your_turn") and record.get("to") == PROGRAM:
            self.holder = PROGRAM
            self.handed = f"{ours}'s {event} {_short(_without_t(record, 'nick', 'event'))}"
            self.handed_at = time.monotonic()
        elif event in ("draw", "offer", "pass", "your_turn", "pick", "turn"):
            self.holder = str(ours)
            if before == PROGRAM:
                self.move_times.append(time.monotonic() - self.handed_at)
        if self.holder != before:
            self.changed.set()
            self.changed = trio.Event()

    async def time_moves(self, limit: float, strict: bool, exited: Callable[[], bool]) -> str:
        """Returns (a FAIL's reason) once the program holds the turn longer than ``limit``
        before the game ends; ``strict``: the move limit itself, else the limit of a stall.
        A program that has exited is no longer timed: the table names who left holding
        the turn (``left_with_turn``), more precisely than a stall could."""
        while True:
            changed = self.changed
            if self.game_ended:
                await trio.sleep_forever()  # the loser keeps its turn: that is the end
            if self.holder == PROGRAM:
                held = time.monotonic() - self.handed_at
                with trio.move_on_after(max(limit - held, 0.0)):
                    await changed.wait()
                if changed.is_set():
                    continue
                if exited():
                    await trio.sleep_forever()
                if strict:
                    return (
                        f"it held the turn for more than {limit:g} s ({self.handed}): "
                        "past the time a neighbour waits for an answer (section 8)"
                    )
                return (
                    f"it was handed the turn ({self.handed}) and had not passed it on "
                    f"{limit:g} s later (7.5, 7.7)"
                )
            await changed.wait()

    def _warn(self, message: str, rule: Rule) -> None:
        if all(message != said for said, _ in self.warnings):
            self.warnings.append((message, rule))

    def _check_pick_mac(self, ours: object, record: dict[str, Any]) -> None:
        """A pick our peer served, in a verified game: its mac must be the program's."""
        assert self.secret is not None
        seq, card_num, mac = record["seq"], record.get("card_num"), record.get("mac")
        if not isinstance(card_num, int):
            return
        text = f"pick|{PROGRAM}|{ours}|{seq}|{card_num}"
        expected = exchanges.pick_mac(
            self.secret, picker=PROGRAM, offerer=str(ours), seq=seq, card_num=card_num
        )
        if not isinstance(mac, str) or not exchanges.same(mac, expected):
            self.unsigned.append(
                f"its pick of card_num {card_num} from {ours}'s offer (exchange {seq}) carried "
                + ("no mac" if mac is None else f"the mac {mac!r}")
                + f", not its own {expected!r}: the mac of {text!r} keyed with its secret "
                "(14.6)"
            )

    def _fail(self, message: str) -> None:
        self.failures.append(message)

    def last_seen(self) -> str | None:
        """The last line seen but the table's record of the program's own leaving (which
        follows its exit: a crash came after what was seen before it)."""
        return next((line for line in reversed(self.lines) if line != self.left_line), None)

    def failure(self) -> str | None:
        """The first failure, and how many more came (a bug repeats itself)."""
        if not self.failures:
            return None
        more = len(self.failures) - 1
        return self.failures[0] + (f" (and {more} more like it)" if more else "")


def _without_t(record: dict[str, Any], *drop: str) -> dict[str, Any]:
    """A record without its times (``t``, ``t_start``, ...) and the keys in ``drop``."""
    return {
        key: value
        for key, value in record.items()
        if key != "t" and not key.startswith("t_") and key not in drop
    }


def _short(value: object) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 160 else text[:157] + "..."
