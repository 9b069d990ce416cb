"""What a peer checks of what reaches it: things only a cheat or a bug explains.

Each check either passes or returns the ``PeerError`` the peer raises, which
goes to the table as an ``accuse`` (protocol 5.9) before the peer leaves:

- a player that answers ``out`` while the table counts it in (``false_out``):
  before the turn is handed past it, once a seat (out is final): a liar
  skipped for good would keep its cards, and the game would never end (the
  status that settles it also tells which further seats are out: the table's
  word, so the peer skips those without asking, ``listed_out``);
- a turn from a player that cannot hold it (``not_neighbour``): in the draw
  phase only the player to our right hands us the turn;
- a pass (an offer of ``num_cards`` 0) that no player could send
  (``pass_while_in``): only a player that went out holding the turn passes,
  each once, and only to the next player in, so we take at most as many as
  there are players out right next to us on our right;
- a card given to us by a pick that we already hold or have discarded
  (``duplicate_card``, ``second_joker``): every card exists once.

A turn's ``from`` is the sender's word (older clients send none), so these
accusations name it only as "from X, as we were told"; the table names no one
for them (``services.oldmaid.referee.accusations``). The checks that ask the table
do so only off the common path: a turn from our right neighbour, a card we
did not hold, cost nothing, and a player once seen out by the table is not
asked about again (being out is final).
"""

from __future__ import annotations

from collections.abc import Iterable

from ring.oldmaid.cards import Card
from ring.oldmaid.messages import Offer, Status, YourTurn, error
from ring.oldmaid.table_side import NETWORK_ERRORS, TableSide
from ring.oldmaid.turns import PeerError, Phase, Turns, accusation, wire
from ring.wire.transport import Connection


class Suspicion:
    """One peer's checks, over its turn machine and its table connection."""

    def __init__(self, turns: Turns, table: TableSide) -> None:
        self._turns = turns
        self._table = table
        # Players the table has counted out: being out is final, so once seen
        # out a player need not be asked about again.
        self._known_out: set[str] = set()
        self._checked: set[int] = set()  # seats whose "out" is (being) checked
        self._out_acks: dict[str, str] = {}  # a verified player's ack of its "out" (14.6)

    async def _out(self, needed: Iterable[str] = ()) -> set[str]:
        """The players out by the table's word; asks only if one of ``needed`` is not known
        to be (an empty ``needed`` always asks)."""
        needed = list(needed)
        if not needed or not set(needed) <= self._known_out:
            # A status changes nothing at the table: it need not wait behind our reports.
            reply = await self._table.request(Status(), ahead_of_reports=True)
            if reply.ok:
                self._known_out.update(reply.out or [])
        return self._known_out

    def listed_out(self, nick: str) -> bool:
        """Whether a status reply this peer has had lists ``nick`` as out (final, 7.7)."""
        return nick in self._known_out

    def _sender(self, request: YourTurn | Offer) -> str | None:
        """Who the request says sent it, if that is another player of this game."""
        turns = self._turns
        sender = request.sender
        return sender if sender in turns.nicks and sender != turns.nick else None

    async def turn(self, request: YourTurn | Offer, known: str | None = None) -> PeerError | None:
        """Whether a turn handed to us can be (before we answer it ``ok``).

        ``known``: who sent it, where its proof makes that certain (protocol
        14.5): the accusation then says so (``proved``), and the table may name it.
        """
        turns = self._turns
        me = turns.nick
        right = turns.nick_of((turns.seat - 1) % len(turns.players))
        sender = known or self._sender(request)
        proved = {"proved": True} if known else {}
        if isinstance(request, YourTurn):
            if turns.phase is Phase.DRAW and sender is not None and sender != right:
                return accusation(
                    sender,
                    "not_neighbour",
                    f"handed {me} the draw turn, but in the draw phase only {right}, the player "
                    f"to {me}'s right, does",
                    sent_by=sender,
                    **proved,
                    # In a verified game its mac tells the table who wrote it (14.6).
                    **({"from": request.sender, "mac": request.mac} if request.mac else {}),
                )
            return None
        if request.num_cards == 0:
            run = turns.out_run_to_the_right(self._known_out)
            if turns.passes >= run:
                run = turns.out_run_to_the_right(await self._out())
            if turns.passes >= run:
                return accusation(
                    sender,
                    "pass_while_in",
                    f"passed {me} the turn (an offer of num_cards 0), which only a player that "
                    f"went out holding the turn does, once, to the next player in: {me} has "
                    f"taken {turns.passes} and has {run} players out right next to it",
                    sent_by=sender,
                    passes=turns.passes,
                    out_to_the_right=run,
                    **proved,
                )
        return None

    async def refuse_turn(
        self, link: Connection, request: YourTurn | Offer, known: str | None = None
    ) -> None:
        """Raise, after an ``error`` reply on ``link``, if the turn handed to us cannot be."""
        problem = await self.turn(request, known)
        if problem is not None:
            await link.send_or_close(error(f"refused: {problem}"))
            raise problem

    async def said_out(self, seat: int, *, ack: str | None = None) -> None:
        """``seat`` answered us ``out``: make sure the table counts it out (once a seat).

        A liar skipped for good would keep its cards, and the game would never
        end. Checked before the turn goes further: the same status lists every
        player out, and late in a game the seats after this one often are too,
        so the peer skips them without a dial and an ask each (``listed_out``).
        A lie ends the game: the accusation goes to the table and the error is
        raised.
        """
        if seat in self._checked:
            return
        self._checked.add(seat)
        if ack is not None:
            self._out_acks[self._turns.nick_of(seat)] = ack
        await self._check_out(seat)

    async def _check_out(self, seat: int) -> None:
        try:
            problem = await self.outs([seat])
        except NETWORK_ERRORS:
            return  # the table is gone: the turn loop hears it
        if problem is not None and not await self._table.game_is_over():
            await self._table.give_up(problem, seated=True)

    def card(self, card: Card, offer: Offer) -> PeerError | None:
        """Whether the card a pick got can be a card of the game (before it joins the hand)."""
        problem = self._turns.foreign(card)
        if problem is None:
            return None
        rule, words = problem
        sender = self._sender(offer)
        return accusation(
            sender,
            rule,
            f"gave {self._turns.nick} {words}",
            card=wire(card),
            sent_by=sender,
        )

    async def report_out(self, seat: int, ack: str) -> None:
        """``seat`` answered us ``out``, with an ack, while the table counts it in: tell the
        table, which names it if the ack is its own (``false_out``), and play on."""
        nick = self._turns.nick_of(seat)
        await self._table.report_refused(
            accusation(
                nick,
                "false_out",
                f"answered out to {self._turns.nick} while the table counts it in",
                ack=ack,
            )
        )

    async def counted_in(self, seat: int) -> bool:
        """Whether the table still counts ``seat`` in (a status, if no reply listed it out)."""
        nick = self._turns.nick_of(seat)
        if nick in self._known_out:
            return False
        try:
            return nick not in await self._out([nick])
        except NETWORK_ERRORS:
            return False  # the table is gone: the turn loop hears it

    async def outs(self, seats: Iterable[int]) -> PeerError | None:
        """Whether the seats that answered us ``out`` are out by the table's word.

        A player answers ``out`` only once the table has acknowledged it (7.8),
        so one the table still counts in lied, on a connection we dialled to
        its own listener: we know who it is.
        """
        nicks = [self._turns.nick_of(seat) for seat in seats]
        if not nicks:
            return None
        out = await self._out(nicks)
        for nick in nicks:
            if nick not in out:
                ack = self._out_acks.get(nick)
                return accusation(
                    nick,
                    "false_out",
                    f"answered out to {self._turns.nick} while the table counts it in",
                    **({"ack": ack} if ack is not None else {}),
                )
        return None
