"""The Old Maid peer's turns, sans-IO: the hand, the phase, and what each turn decides.

A ``Turns`` holds what one peer knows of its game (its seat among the
players, its hand, its phase, whether it is out or has lost, which seats are
gone) and makes the decisions of docs/protocols/oldmaid.md section 7: what a
draw leads to, which pairs to discard and with which flag, what to offer,
whom to ask next and what a seat's answer means, how to answer a turn handed
to us, and which card a pick gets.

No sockets, no clock, no Trio: the peer (``ring.oldmaid.peer``) asks the
table and the neighbours, feeds in their answers and sends what comes out,
as the Trio layer drives a ``Link`` (``ring.oldmaid.protocol``) for one
connection. So a ring of these plays whole games against the pure referee in
the tests. Cards go into the hand, and picks are chosen, by one seeded
``random.Random``: a peer's game replays from its seed.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from ring.oldmaid.cards import JOKER, Card
from ring.oldmaid.hand import Hand, seats_after
from ring.oldmaid.messages import Discard, GameOver, Offer, Pick, Reply, YourTurn, error, ok

# A picker gives up after this many refused picks in a row, and an offerer
# after this many bad picks.
MAX_BAD_PICKS = 8

Players = list[tuple[tuple[str, int], str]]  # ((host, port), nick) in seat order
TurnRequest = YourTurn | Offer

# What asking a seat yields when it is skipped without saying "out" itself:
# it cannot be reached (or closed its link) and the table lists it as out, so
# it went out and left (7.7 step 5) ...
GONE = Reply(result="out", message="left the game")
# ... or the table lists it as out and it did not answer within a grace (7.7 step 6).
SILENT = Reply(result="out", message="out, and did not answer")


class PeerError(Exception):
    """Why this peer cannot go on, in one line for the user.

    ``culprit`` is the player at fault where this peer can tell (a neighbour
    that fell silent or broke the protocol towards it), and ``clause`` what
    it did, as words that follow its nick: both go to the table in a
    ``give_up`` report, so the abort names the culprit, not this peer. With
    a ``rule``, it is something only a cheat or a bug explains, and goes to
    the table as an ``accuse`` with its ``evidence`` (protocol 5.9).
    """

    def __init__(
        self,
        message: str,
        *,
        culprit: str | None = None,
        clause: str = "",
        rule: str | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.culprit = culprit
        self.clause = clause
        self.rule = rule
        self.evidence = evidence or {}
        self.reported = False  # the table has been told (give_up or accuse)


def fault(nick: str, clause: str) -> PeerError:
    """The error for a player that broke the game for us: "NICK CLAUSE", naming it."""
    return PeerError(f"{nick} {clause}", culprit=nick, clause=clause)


def accusation(nick: str | None, rule: str, clause: str, **evidence: Any) -> PeerError:
    """The error for what only a cheat or a bug explains: ``rule`` broken by ``nick``
    (None when this peer cannot tell who sent it), reported with ``accuse``."""
    message = f"{nick} {clause}" if nick else clause
    return PeerError(
        message, culprit=nick, clause=clause, rule=rule, evidence={"what": message, **evidence}
    )


def wire(card: Card) -> list[str]:
    """A card as the wire and the event log write it: ``[value, suit]``."""
    return [card.value, card.suit]


@dataclass(frozen=True)
class Outcome:
    players: int
    place: int | None  # 1 = first out (the winner); None for the loser

    @property
    def line(self) -> str:
        if self.place is None:
            return "lost: holds the Old Maid"
        return f"out {ordinal(self.place)} of {self.players}"


def ordinal(number: int) -> str:
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"


class Phase(enum.Enum):
    DRAW = "draw"
    OFFER = "offer"


class AfterDraw(enum.Enum):
    """What the peer does once the table has answered its draw and its pairs are discarded."""

    HAND_ON = "hand on"  # the deck goes on: your_turn to the next player who is in (7.3)
    OFFER = "offer"  # it drew the last card, so it holds the first offer turn (7.3 step 5)
    WAIT = "wait"  # the deck was already empty: the turn is someone else's (7.4)


class Turns:
    """One peer's side of one game, from its seat to its place."""

    def __init__(
        self, nick: str, rng: random.Random, *, choose_pick: Callable[[int], int] | None = None
    ) -> None:
        self.nick = nick
        self.hand = Hand(rng)
        self._choose_pick = choose_pick  # None: at random
        self.phase = Phase.DRAW
        self.out = False  # the table has acknowledged that this hand is empty
        self.lost = False  # holding the turn, this peer found no other player in
        self.players: Players = []
        self.seat = -1
        # Seats skipped from now on, and why: "left" (out by the table, and
        # could not be reached or closed its link) or "silent" (out by the
        # table, and did not answer).
        self.gone: dict[int, str] = {}
        # Seats that answered us "out": being out is final (7.7), so they are skipped
        # from then on without a word sent (a round trip less at every later handoff).
        self.said_out: set[int] = set()
        self.thrown: set[Card] = set()  # the cards this peer discarded
        self.passes = 0  # offers of num_cards 0 this peer took the turn from

    # -- the seats ---------------------------------------------------------------

    def take_seat(self, players: Players) -> None:
        """The players of the join reply, in seat order; ``PeerError`` if we are not among them."""
        nicks = [nick for _, nick in players]
        if self.nick not in nicks:
            raise PeerError(f"the table's player list does not include {self.nick}")
        self.players = list(players)
        self.seat = nicks.index(self.nick)

    @property
    def nicks(self) -> list[str]:
        return [nick for _, nick in self.players]

    def nick_of(self, seat: int) -> str:
        return self.players[seat][1]

    @property
    def left_seat(self) -> int:
        """The left neighbour, dialled as soon as the game starts (7.2)."""
        return (self.seat + 1) % len(self.players)

    def seats_to_ask(self) -> list[int]:
        """Whom to ask for the next player who is in, in order (7.7): left, wrapping, never us.

        Gone seats stay in the list: asking one yields ``GONE`` without a
        word sent, and the peer logs that it skipped it.
        """
        return seats_after(self.seat, len(self.players))

    def drop(self, seat: int, why: str) -> None:
        """Skip ``seat`` from now on: out by the table, and ``why`` ("left" or "silent")."""
        self.gone[seat] = why

    # -- drawing and discarding ------------------------------------------------

    def drawn(self, reply: Reply) -> AfterDraw:
        """Take the table's answer to our draw: the card goes into the hand (7.3, 7.4).

        The last card, or a draw refused because the deck is empty, starts
        the offer phase. ``PeerError`` if the table refused the draw otherwise.
        """
        if reply.result == "error":
            if "empty" in (reply.message or ""):
                self.enter_offer_phase()
                return AfterDraw.WAIT
            raise PeerError(f"the table refused a draw: {reply.message}")
        assert reply.card is not None
        self.hand.receive(reply.card)
        if reply.result == "last_card":
            self.enter_offer_phase()
            return AfterDraw.OFFER
        return AfterDraw.HAND_ON

    def pairs_to_discard(self) -> list[tuple[Card, Card]]:
        """Every pair the hand holds, taken out of it: each goes to the table now."""
        return self.hand.remove_pairs()

    def discard(self, pair: tuple[Card, Card]) -> Discard:
        """The request for one pair; ``last_cards`` is true when it leaves us out (7.8).

        An empty hand makes a player out only once the deck is empty, so in
        the draw phase the flag is false (7.3 step 2).
        """
        empties = not self.hand and self.phase is Phase.OFFER
        return Discard(cards=[*pair], last_cards="true" if empties else "false")

    def discarded(self, discard: Discard) -> bool:
        """The table took ``discard``; whether that made this peer out."""
        self.thrown.update(discard.cards)
        if discard.declares_out:
            self.out = True
        return discard.declares_out

    # -- the offer phase and going out -------------------------------------------

    def enter_offer_phase(self) -> None:
        """The draw phase is over for us: our last draw, any offer, or an empty deck (7.4)."""
        self.phase = Phase.OFFER

    @property
    def out_of_cards(self) -> bool:
        """The hand is empty in the offer phase: we are out once the table knows (7.8).

        The peer then sends ``out_of_cards`` unless it has already had its
        ``ok`` (``out``), and answers ``out`` only after that ``ok``.
        """
        return not self.hand and self.phase is Phase.OFFER

    def went_out(self) -> None:
        """The table acknowledged ``out_of_cards``: from now on we answer ``out``."""
        self.out = True

    # -- handing the turn on -----------------------------------------------------

    def your_turn(self) -> YourTurn:
        return YourTurn(sender=self.nick)

    def offer(self) -> Offer:
        """This turn's offer (7.5): the whole hand, or none to pass the turn on.

        ``stream``: we read a stream of messages, so the picker need not
        pause between its ``ok`` and its ``pick`` (protocol 6.2).
        """
        return Offer(num_cards=len(self.hand), sender=self.nick, stream=True)

    def took(self, seat: int, request: TurnRequest, reply: Reply) -> bool:
        """Whether ``seat`` took the turn (``ok``), or is to be skipped (``out``, gone, silent).

        Any other answer breaks the game: ``PeerError`` naming the seat.
        """
        if reply.result == "ok":
            return True
        if reply.result == "out":
            return False
        if isinstance(request, YourTurn):
            raise fault(self.nick_of(seat), f"refused your_turn: {reply.message}")
        raise fault(self.nick_of(seat), f"refused {self.nick}'s offer: {reply.message}")

    def no_one_took(self, request: TurnRequest) -> None:
        """Every other seat is out: with cards to offer, we hold the Old Maid (7.5 step 4).

        Anything else cannot happen in a game played by the rules: ``PeerError``.
        """
        if isinstance(request, YourTurn):
            raise PeerError("no other player would take the draw turn")
        if request.num_cards == 0:
            raise PeerError("no other player is in, yet this peer holds no cards")
        self.lost = True

    def give(self, pick: Pick, offered: int) -> Reply:
        """The answer to a pick from the ``offered`` cards: the card, or an error (6.3).

        docs/protocols/oldmaid.md 13.3: the handout's "between 0 and
        number_of_cards_left" was read inclusively by real clients, so
        ``card_num`` == ``offered`` is the last card.
        """
        index = offered - 1 if pick.card_num == offered else pick.card_num
        try:
            card = self.hand.give(index)
        except IndexError as exc:
            return error(str(exc))
        return ok(card=card)

    # -- a turn handed to us -------------------------------------------------------

    def answer(self) -> Reply:
        """The reply to a ``your_turn`` or an ``offer``: ``out`` once out, else ``ok`` (6.1, 7.6).

        An ``ok`` to ``your_turn`` means we draw next; to an offer of cards,
        that we pick; to an offer of none, that we hold the turn.
        """
        return Reply(result="out") if self.out else ok()

    def choose_pick(self, offered: int) -> int:
        """Which of the ``offered`` cards to pick, at random (6.3) unless told otherwise."""
        if self._choose_pick is not None:
            return self._choose_pick(offered)
        return self.hand.choose_pick(offered)

    def foreign(self, card: Card) -> tuple[str, str] | None:
        """Why ``card``, given to us by a pick, cannot be a card of the game: the rule and
        the words, or None. Each card exists once, so one we hold or have discarded was
        given by a cheat or a bug (protocol 14)."""
        if card in self.hand.cards:
            if card == JOKER:
                return "second_joker", "a second Old Maid, and this peer already holds one"
            return "duplicate_card", f"{card}, which this peer already holds"
        if card in self.thrown:
            return "duplicate_card", f"{card}, which this peer has discarded"
        return None

    def out_run_to_the_right(self, out: Collection[str]) -> int:
        """How many players right next to us on our right are out: a pass can come only
        from one of them (each passes once), so we take at most that many passes."""
        count = len(self.players)
        run = 0
        for step in range(1, count):
            if self.nick_of((self.seat - step) % count) not in out:
                break
            run += 1
        return run

    def picked(self, card: Card) -> None:
        """The offerer gave us ``card``: we hold the turn once its pairs are discarded (7.6)."""
        self.hand.receive(card)

    # -- the end -------------------------------------------------------------------

    def outcome(self, notice: GameOver) -> Outcome:
        """How we finished, by the table's notice; ``PeerError`` where it contradicts us."""
        out = notice.out or []
        if self.lost and notice.loser != self.nick:
            raise PeerError(f"no one else answered, yet the table says {notice.loser} lost")
        if notice.loser == self.nick:
            if JOKER not in self.hand.cards:
                # Only a player that went out holding it makes this happen (protocol 14).
                raise PeerError(
                    f"the table says {self.nick} lost, but {self.nick} does not hold the Old "
                    "Maid: a player went out holding it"
                )
            return Outcome(len(self.players), None)
        if self.nick not in out:
            raise PeerError(f"the game ended but {self.nick} is neither out nor the loser")
        return Outcome(len(self.players), out.index(self.nick) + 1)
