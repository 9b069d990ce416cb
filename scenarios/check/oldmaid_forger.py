"""A stranger that sends the program a forged turn, for ``ring check oldmaid.verify.forged-turn``.

Once the game starts, it dials the program's listener (the address the table
seated it at) and sends a ``your_turn`` as the program's right neighbour with
a proof that is not that player's. A verifying peer must refuse it (an
``error`` beginning ``refused:``) and report it to the table (``accuse``, rule
``impersonation``), then play on (docs/protocols/oldmaid.md 14.5, 5.9). The
forger learns the address from the table's ``started`` record and sees the
report in its ``accused`` record: both through the record hub.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import trio

from ring.games.record import GameKey
from scenarios.check.oldmaid_watch import PROGRAM

WRONG_PROOF = "0" * 32
REPLY_LIMIT = 4096  # a reply is one short line


@dataclass
class Forger:
    """One forged turn to the program, and what came of it."""

    started: trio.Event = field(default_factory=trio.Event)
    address: tuple[str, int] | None = None
    claimed: str = ""  # the player the forged turn says it is from: the program's right
    reply: str | None = None  # the program's answer, as it came (None: none in time)
    reported: bool = False  # the table recorded the program's impersonation accusation

    def table_record(self, _key: GameKey, record: dict[str, Any]) -> None:
        event = record.get("event")
        if event == "started" and PROGRAM in record.get("players", []):
            players, addresses = record["players"], record["addresses"]
            seat = players.index(PROGRAM)
            self.address = tuple(addresses[seat])  # type: ignore[assignment]
            self.claimed = players[seat - 1]
            self.started.set()
        elif event == "accused" and record.get("accuser") == PROGRAM:
            self.reported = self.reported or record.get("rule") == "impersonation"

    async def forge(self, limit: float) -> None:
        """Send the forged turn once the game has started; keep the answer (``limit`` s)."""
        await self.started.wait()
        assert self.address is not None
        turn = {"cmd": "your_turn", "from": self.claimed, "proof": WRONG_PROOF}
        with trio.move_on_after(limit):
            stream = await trio.open_tcp_stream(*self.address)
            async with stream:
                await stream.send_all(json.dumps(turn).encode() + b"\n")
                received = b""
                while b"\n" not in received and len(received) < REPLY_LIMIT:
                    chunk = await stream.receive_some(REPLY_LIMIT)
                    if not chunk:
                        break
                    received += chunk
                self.reply = received.decode(errors="replace").strip()

    def failure(self) -> str | None:
        """What the program did wrong with the forged turn, or None if it refused and
        reported it."""
        turn = f"a your_turn as {self.claimed} with a proof that is not {self.claimed}'s"
        if self.reply is None:
            return f"it did not answer {turn} (14.5: refuse it with an error)"
        try:
            answer = json.loads(self.reply.splitlines()[0])
        except (ValueError, IndexError):
            answer = None
        refused = isinstance(answer, dict) and answer.get("result") == "error"
        if not refused or not str(answer.get("message", "")).startswith("refused"):
            return (
                f"it answered {turn} with {self.reply[:200]!r} (14.5: refuse it, error "
                "refused: ...)"
            )
        if not self.reported:
            return (
                f"it refused {turn} but never reported it to the table (14.5: accuse, rule "
                "impersonation)"
            )
        return None
