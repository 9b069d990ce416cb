"""A whole Old Maid game simulated in one process, as its records: for the verifier's tests.

``simulate`` plays a game with a seeded RNG and writes what the table and the peers would
log (docs/logs.md), with a fake monotonic clock. Used by
``tests/scenarios/oldmaid/verifier/test_verify.py``, which plants faults in the records.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from ring.games.record import SCHEMA_VERSION
from ring.oldmaid.cards import Card, full_deck, split_pairs
from scenarios.oldmaid.verifier import verify
from scenarios.oldmaid.verifier.verify import GameRecords

Record = dict[str, Any]


def _ordinal(place: int) -> str:
    return f"{place}" + ({1: "st", 2: "nd", 3: "rd"}.get(place, "th"))


class _Game:
    """One game played out sequentially, logged as the real processes would log it."""

    def __init__(self, players: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.now = 5000.0
        self.seats = [f"p{i}" for i in range(1, players + 1)]
        self.rng.shuffle(self.seats)
        self.transcript: list[Record] = []
        self.events: dict[str, list[Record]] = {nick: [] for nick in self.seats}
        self.hands: dict[str, list[Card]] = {nick: [] for nick in self.seats}
        self.phase = dict.fromkeys(self.seats, "draw")
        self.out: list[str] = []
        self.pairs = 0
        self.over = False
        self.loser = ""
        self.told = False  # the loser heard it lost from the table, not by dialling

    def tick(self) -> float:
        # Irregular steps, like real scheduling, so no two records share a time.
        self.now += 1e-5 + self.rng.random() * 4e-5
        return self.now

    def table(self, event: str, **fields: Any) -> None:
        self.transcript.append({"t": self.tick(), "event": event, **fields})

    def message(self, nick: str, direction: str, msg: Record) -> None:
        conn = self.seats.index(nick) + 1
        self.transcript.append(
            {
                "t": self.tick(),
                "conn": conn,
                "peer": f"127.0.0.1:{40000 + conn}",
                "nick": nick,
                "dir": direction,
                "msg": msg,
            }
        )

    def log(self, nick: str, event: str, **fields: Any) -> None:
        self.events[nick].append({"t": self.tick(), "nick": nick, "event": event, **fields})

    def receive(self, nick: str, card: Card) -> None:
        hand = self.hands[nick]
        hand.insert(self.rng.randrange(len(hand) + 1), card)

    def enter_offer_phase(self, nick: str) -> None:
        if self.phase[nick] != "offer":
            self.phase[nick] = "offer"
            self.log(nick, "phase", phase="offer")

    def discard_pairs(self, nick: str) -> None:
        kept, pairs = split_pairs(self.hands[nick])
        self.hands[nick] = kept
        for first, second in pairs:
            empties = not kept and self.phase[nick] == "offer"
            cards = [list(first), list(second)]
            self.message(nick, "in", {"cmd": "discard", "cards": cards, "last_cards": str(empties)})
            self.table("discarded", nick=nick, cards=cards)
            self.pairs += 1
            if empties:
                self.count_out(nick)
            self.message(nick, "out", {"result": "ok", "message": "ok"})
            self.log(nick, "discard", cards=cards)
            if empties:
                self.log(nick, "out", cards_left=0)

    def go_out(self, nick: str) -> None:
        self.message(nick, "in", {"cmd": "out_of_cards"})
        self.count_out(nick)
        self.message(nick, "out", {"result": "ok"})
        self.log(nick, "out", cards_left=0)

    def count_out(self, nick: str) -> None:
        self.out.append(nick)
        self.table("out", nick=nick, place=len(self.out))
        if self.pairs == 26 and len(self.out) == len(self.seats) - 1:
            self.loser = next(p for p in self.seats if p not in self.out)
            self.table("over", loser=self.loser, out=list(self.out))
            self.over = True

    def deal(self) -> str:
        deck = full_deck()
        self.rng.shuffle(deck)
        seat = 0
        while True:
            nick = self.seats[seat]
            card = deck.pop()
            last = not deck
            self.message(nick, "in", {"cmd": "draw"})
            self.table("dealt", nick=nick, card=list(card), last=last)
            result = "last_card" if last else "ok"
            self.message(nick, "out", {"result": result, "card": list(card)})
            self.log(nick, "draw", card=list(card), last=last)
            self.receive(nick, card)
            if last:
                self.enter_offer_phase(nick)
                self.discard_pairs(nick)
                return nick
            self.discard_pairs(nick)
            seat = (seat + 1) % len(self.seats)
            self.log(nick, "your_turn", to=self.seats[seat])

    def take_turn(self, holder: str) -> str | None:
        """The holder hands the turn on; the next holder, or None when it lost."""
        if self.told:
            return None
        if self.over and holder != self.loser:
            # The table announces the end as soon as the last pair is gone;
            # real peers race that notice against the last pass. Play each
            # of the endings they produce.
            ending = self.rng.choice(["dial", "cut short", "told first"])
            if ending != "dial":
                self.told = True
                self.log(self.loser, "lost", hand=[["joker", "maid"]], how="table")
            if ending == "cut short":
                dialled = self.rng.randrange(len(self.seats) - 1)
                seat = self.seats.index(holder)
                for step in range(1, dialled + 1):
                    target = self.seats[(seat + step) % len(self.seats)]
                    if target == self.loser:
                        break
                    self.log(holder, "skip", over=target, phase="offer")
                return None
        t_start = self.tick()
        if not self.hands[holder] and holder not in self.out:
            self.go_out(holder)
        offered = len(self.hands[holder])
        seat = self.seats.index(holder)
        for step in range(1, len(self.seats)):
            target = self.seats[(seat + step) % len(self.seats)]
            t_offer = self.tick()
            self.enter_offer_phase(target)
            # A peer left empty by the draw learns the draw is over only now.
            if not self.hands[target] and target not in self.out:
                self.go_out(target)
            if target in self.out:
                self.log(holder, "skip", over=target, phase="offer")
                continue
            if offered == 0:
                # The receiver logs its turn before the ok reaches the giver.
                self.log(target, "turn", **{"from": holder})
                self.log(holder, "pass", to=target, t_start=t_start, t_offer=t_offer)
                return target
            self.log(
                holder, "offer", to=target, num_cards=offered, t_start=t_start, t_offer=t_offer
            )
            card_num = self.rng.randrange(offered)
            card = self.hands[holder].pop(card_num)
            self.log(holder, "gave", to=target, card_num=card_num, card=list(card))
            self.log(target, "pick", card_num=card_num, card=list(card), **{"from": holder})
            self.receive(target, card)
            self.discard_pairs(target)
            if not self.hands[holder]:
                self.go_out(holder)
            return target
        self.log(holder, "lost", hand=[list(c) for c in self.hands[holder]], how="no one else in")
        return None

    def play(self) -> GameRecords:
        players = len(self.seats)
        self.table("listening", host="127.0.0.1", port=9898, players=players, seed=self.seed)
        # The envelope (ring.games.record): start first, before the records the game
        # made while it formed (which keep their earlier t), and end last. Their
        # times draw nothing from the game's random stream.
        start = {
            "t": self.now + 1e-6,
            "event": "start",
            "version": SCHEMA_VERSION,
            "service": "oldmaid",
            "game": 1,
            "players": [{"name": nick, "seat": seat} for seat, nick in enumerate(self.seats)],
            "seed": self.seed,
            "options": {"players": players},
        }
        self.transcript.insert(0, start)
        addresses = [["127.0.0.1", 41000 + seat] for seat in range(players)]
        self.table("started", players=list(self.seats), addresses=addresses)
        for seat, nick in enumerate(self.seats):
            self.log(nick, "start", seat=seat, players=list(self.seats), seed=self.seed + seat)
            self.log(nick, "phase", phase="draw")
        holder: str | None = self.deal()
        for _ in range(100_000):
            assert holder is not None
            holder = self.take_turn(holder)
            if holder is None:
                break
        assert self.over
        over = next(r for r in self.transcript if r.get("event") == "over")
        lines = {"table": ["table listening on 127.0.0.1:9898"]}
        lines["table"].append(f"game over: loser {over['loser']}; out: {', '.join(over['out'])}")
        for nick in self.seats:
            self.log(nick, "game_over", loser=over["loser"], out=over["out"], aborted=False)
            if nick == over["loser"]:
                line = verify.LOST_LINE
            else:
                line = f"out {_ordinal(over['out'].index(nick) + 1)} of {players}"
            self.log(nick, "exit", code=0, line=line)
            lines[nick] = [line]
        end = {
            "t": self.now + 1e-6,
            "event": "end",
            "reason": f"{over['loser']} was left holding the Old Maid",
            "winners": over["out"],
            "losers": [over["loser"]],
            "draw": False,
            "culprit": None,
            "details": {"undiscarded": 0},
        }
        self.transcript.append(end)
        exits: dict[str, int | None] = {"table": 0, **dict.fromkeys(self.seats, 0)}
        return GameRecords(self.transcript, self.events, exits, lines)


def simulate(players: int, seed: int) -> GameRecords:
    return _Game(players, seed).play()


def without_logs(records: GameRecords, nicks: list[str]) -> GameRecords:
    """The game as seen when ``nicks`` are independent peers: no log, no ``from`` in offers."""
    records = copy.deepcopy(records)
    for nick in nicks:
        del records.events[nick]
        records.lines.pop(nick)
        records.exits[f"interop-{nick}"] = records.exits.pop(nick)
    for log in records.events.values():
        for event in log:
            if event["event"] in ("pick", "turn") and event["from"] in nicks:
                event["from"] = None
    return records


def failing(records: GameRecords) -> dict[str, str]:
    return {r.name: r.detail for r in verify.verify(records) if not r.ok}
