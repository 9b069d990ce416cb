"""The Old Maid peer: one Trio nursery, three kinds of connection.

- the table: join, draw, discard, out_of_cards (``TableClient``);
- left: the peer dials the next seat, and further seats when the players
  between are out; it sends ``your_turn`` and ``offer`` there and answers
  the ``pick`` that follows an accepted offer;
- right: the peer listens; whoever holds the turn to its right dials in,
  sends ``your_turn`` or ``offer``, and after an accepted offer gets a pick.

Exactly one turn travels round the ring, so the task that serves an inbound
connection and the task that hands the turn on never touch the hand at the
same time: the inbound side receives the turn and passes it, through a
channel, to the one task that acts on it.
"""

from __future__ import annotations

import argparse
import collections
import enum
import ipaddress
import itertools
import math
import random
import sys
import time
from dataclasses import dataclass
from typing import Any, NoReturn

import trio

from ring.events import EventLog
from ring.net import DEFAULT_MAX_PER_ADDRESS, dial, mark_established, serve
from ring.oldmaid.cards import Card
from ring.oldmaid.hand import Hand, seats_after
from ring.oldmaid.messages import (
    Discard,
    Draw,
    GameOver,
    GiveUp,
    Join,
    LeftWithTurn,
    Offer,
    OutOfCards,
    Pick,
    Reply,
    Status,
    YourTurn,
    error,
    ok,
)
from ring.oldmaid.protocol import (
    Answered,
    Closed,
    Farewell,
    Invalid,
    Link,
    LinkError,
    RemoteProtocolError,
    Role,
    request_name,
)
from ring.oldmaid.table_client import TableClient, TableError
from ring.transport import Connection, plain_ip

MAX_BAD_PICKS = 8
# Dialling a seat that refuses: the first retry after this long, each next
# one after twice as long, up to DIAL_RETRY_MAX, until the peer timeout.
DIAL_RETRY_FIRST = 0.01
DIAL_RETRY_MAX = 0.2
# After a neighbour fails, how long to wait for the table to abort the game
# before blaming the neighbour ourselves (see _game_is_over).
TABLE_GRACE = 0.5
# A seat that has not answered a turn request within this long is looked up
# in the table's status (and again every OUT_GRACE after): if the table lists
# it as out, it is skipped as if it had answered "out". Some older clients,
# once out, keep their listener open but never accept another connection, or
# accept and never answer; the kernel completes the handshake for them, so
# only silence tells. A seat still in keeps the whole peer timeout. Our own
# peers answer within milliseconds, so a healthy ring never waits this long.
OUT_GRACE = 0.2
# The pause between ok and pick for an offerer that reads one message a recv
# grows with how slowly such offerers answer our picks (a loaded machine
# wakes their threads late): PICK_PAUSE_FACTOR times the slowest of the last
# PICK_SAMPLES answers, between the configured pause and PICK_PAUSE_MAX.
PICK_PAUSE_FACTOR = 3.0
PICK_PAUSE_MAX = 0.5
PICK_SAMPLES = 16
# How long the table may take to answer a give_up report before we leave anyway.
GIVE_UP_WAIT = 2.0
# Failures of one connection or wait; each becomes one line for the user.
NETWORK_ERRORS = (
    LinkError,
    TableError,
    OSError,
    trio.TooSlowError,
    trio.BrokenResourceError,
    trio.ClosedResourceError,
)


class PeerError(Exception):
    """Why this peer cannot go on, in one line for the user.

    ``culprit`` is the player at fault where this peer can tell (a neighbour
    that fell silent or broke the protocol towards it), and ``clause`` what
    it did, as words that follow its nick: both go to the table in a
    ``give_up`` report, so the abort names the culprit, not this peer.
    """

    def __init__(self, message: str, *, culprit: str | None = None, clause: str = "") -> None:
        super().__init__(message)
        self.culprit = culprit
        self.clause = clause


def fault(nick: str, clause: str) -> PeerError:
    """The error for a player that broke the game for us: "NICK CLAUSE", naming it."""
    return PeerError(f"{nick} {clause}", culprit=nick, clause=clause)


class Phase(enum.Enum):
    DRAW = "draw"
    OFFER = "offer"


class Turn(enum.Enum):
    DRAW = "draw"
    OFFER = "offer"


@dataclass
class PeerConfig:
    nick: str
    table: tuple[str, int] | None  # None: find a waiting table over mDNS
    host: str | None = None
    port: int = 0
    seed: int | None = None
    events: str | None = None
    timeout: float = 10.0
    join_timeout: float = 600.0
    idle_timeout: float = 120.0
    linger: float = 0.2
    # A picker pauses this long between ``ok`` and ``pick`` for an offerer
    # that has not said it reads a stream (older clients read one message a
    # recv). After a handoff to a player who then goes out and leaves, the
    # turn must show up again within stall_timeout, or the game is stalled.
    pick_pause: float = 0.05
    stall_timeout: float = 3.0
    # Inbound connections: at most this many open at once (ring.net.serve
    # evicts the oldest that has not yet sent a valid message), and one that
    # sends nothing valid within first_message_timeout is closed.
    max_connections: int = 64
    # From one address, loopback excepted. A newcomer refused at a cap is closed
    # without a word: the dialler asks once more on a fresh connection (_ask).
    max_per_address: int | None = DEFAULT_MAX_PER_ADDRESS
    exempt_loopback: bool = True  # tests turn it off to meet the cap from 127.0.0.1
    first_message_timeout: float = 10.0
    # mDNS, used only when table is None.
    table_name: str | None = None  # the instance name, or the part before its id
    mdns_interface: str | None = None  # None: all interfaces
    discover_timeout: float = 10.0


# What asking a seat yields when it cannot be reached and the table lists it
# as out: it left after going out, so it is skipped as if it answered "out".
_GONE = Reply(result="out", message="left the game")
# ... and when it is out by the table and did not answer within OUT_GRACE.
_SILENT = Reply(result="out", message="out, and did not answer")


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


def _wire(card: Card) -> list[str]:
    return [card.value, card.suit]


class Peer:
    def __init__(self, config: PeerConfig) -> None:
        self.config = config
        self.nick = config.nick
        self.seed = config.seed if config.seed is not None else random.randrange(2**32)
        self.hand = Hand(random.Random(self.seed))
        self.log = EventLog(config.events, nick=self.nick)
        self.phase = Phase.DRAW
        self.out = False
        self.lost = False
        self.players: list[tuple[tuple[str, int], str]] = []
        self.seat = -1
        self.seated = trio.Event()
        self.table: TableClient | None = None
        self._out_lock = trio.Lock()
        self._links: dict[int, Connection] = {}
        self._answered: set[int] = set()  # seats whose link has carried a reply
        self._last_heard = 0.0  # trio.current_time() of the last message heard
        # Seats skipped from now on, and why: "left" (went out and left, see
        # _left_the_game) or "silent" (out by the table and not answering).
        self._gone: dict[int, str] = {}
        # Set (and replaced) whenever the ring shows it moves: a request
        # reaches our listener, or the game ends.
        self._progress = trio.Event()
        # Each handoff this peer makes: the seat that took the turn, and the
        # progress event of that moment (see _watch_handoffs).
        self._handoffs_in, self._handoffs_out = trio.open_memory_channel[tuple[int, trio.Event]](
            math.inf
        )
        # How long older offerers took to answer our picks (see PICK_PAUSE_FACTOR).
        self._slow_answers: collections.deque[float] = collections.deque(maxlen=PICK_SAMPLES)
        # None marks the end of the game, after any turn already queued.
        self._turns_in, self._turns_out = trio.open_memory_channel[Turn | None](math.inf)

    # -- the whole game ------------------------------------------------------

    async def play(
        self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
    ) -> Outcome:
        """Join, play, and return how this peer finished; ``PeerError`` otherwise.

        ``task_status`` reports the port this peer listens on, before it joins.
        """
        try:
            async with trio.open_nursery() as nursery:
                outcome = await self._play(nursery, task_status)
                nursery.cancel_scope.cancel()
                return outcome
        except BaseExceptionGroup as group:
            raise _first_error(group) from None
        except NETWORK_ERRORS as exc:
            raise _as_peer_error(exc) from None
        finally:
            for link in self._links.values():
                await link.aclose()
            if self.table is not None:
                await self.table.connection.aclose()

    async def _play(self, nursery: trio.Nursery, task_status: trio.TaskStatus[int]) -> Outcome:
        config = self.config
        self._last_heard = trio.current_time()
        table_host, table_port = config.table or await self._find_table()
        try:
            stream = await dial(table_host, table_port, timeout=config.timeout)
        except (OSError, trio.TooSlowError) as exc:
            raise PeerError(f"cannot reach the table at {table_host}:{table_port}: {exc}") from None
        self.table = TableClient(Connection(stream, Link(Role.TABLE_CLIENT)))
        host = config.host or plain_ip(stream.socket.getsockname()[0])
        _, port = await nursery.start(self._listen, host, config.port)
        task_status.started(port)
        await nursery.start(self.table.run)
        nursery.start_soon(self._announce_game_over)

        reply = await self.table.request(
            Join(nick=self.nick, port=port, host=host, watch=True), timeout=config.join_timeout
        )
        if not reply.ok:
            raise PeerError(f"the table refused the join: {reply.message}")
        assert reply.players is not None
        self._take_seat(reply.players)
        nursery.start_soon(self._watch_handoffs)
        await self._link_to(self._left_seat())  # dial the left neighbour at once
        if self.seat == 0:
            self._turns_in.send_nowait(Turn.DRAW)

        await self._take_turns()
        if not self.lost:
            # Keep the ring going a moment after the table's notice: out
            # players go on answering "out", and a turn already on its way
            # still reaches the loser, whose last round then finds no one in.
            with trio.move_on_after(config.linger):
                await self._take_turns()
        if self.lost:
            # The table has seen every other player go out before they
            # answered "out", so game over is at most one message away.
            await self._wait_game_over(config.timeout)
        notice = self.table.notice
        assert notice is not None
        if notice.aborted:
            raise PeerError(f"game aborted: {notice.reason}")
        return self._outcome(notice)

    async def _find_table(self) -> tuple[str, int]:
        # Imported here: a peer given --table never loads zeroconf.
        from ring.discovery import DiscoveryError, find_table, interfaces_for

        config = self.config
        try:
            found = await find_table(
                "oldmaid",
                interfaces=interfaces_for(config.mdns_interface),
                timeout=config.discover_timeout,
                name=config.table_name,
            )
        except DiscoveryError as exc:
            raise PeerError(str(exc)) from None
        return found.address

    def _take_seat(self, players: list[tuple[tuple[str, int], str]]) -> None:
        nicks = [nick for _, nick in players]
        if self.nick not in nicks:
            raise PeerError(f"the table's player list does not include {self.nick}")
        self.players = [((plain_ip(host), port), nick) for (host, port), nick in players]
        self.seat = nicks.index(self.nick)
        self.seated.set()
        self.log.write("start", seat=self.seat, players=nicks, seed=self.seed)
        self.log.write("phase", phase=self.phase.value)

    def _outcome(self, notice: GameOver) -> Outcome:
        out = notice.out or []
        if self.lost and notice.loser != self.nick:
            raise PeerError(f"no one else answered, yet the table says {notice.loser} lost")
        if notice.loser == self.nick:
            if not self.lost:
                self.log.write("lost", hand=[_wire(c) for c in self.hand.cards], how="table")
            return Outcome(len(self.players), None)
        if self.nick not in out:
            raise PeerError(f"the game ended but {self.nick} is neither out nor the loser")
        return Outcome(len(self.players), out.index(self.nick) + 1)

    async def _wait_game_over(self, timeout: float) -> None:
        assert self.table is not None
        with trio.move_on_after(timeout):
            await self.table.game_over.wait()
            return
        raise PeerError(f"the table did not announce the end within {timeout:g} s")

    async def _take_turns(self) -> None:
        """Act on each turn this peer gets, until it has lost or the game is over."""
        assert self.table is not None
        while not self.lost:
            turn = await self._next_turn()
            if turn is None:
                return
            try:
                if turn is Turn.DRAW:
                    await self._draw_turn()
                else:
                    await self._offer_turn()
            except (*NETWORK_ERRORS, PeerError) as exc:
                # After game over, out players close their listeners; a
                # failed handoff then is the end, not an error.
                if not await self._game_is_over():
                    await self._give_up(_as_peer_error(exc))
                return

    async def _game_is_over(self) -> bool:
        """Whether the table has ended the game, asking it if we have not heard.

        The table writes its game-over notice before the reply to any later
        request on the same connection, so a status reply settles it. If it
        says the game goes on, we wait a moment more: a neighbour that died
        dropped its table connection at the same instant, and the table may
        not have seen it yet. Then the game is aborted naming the player who
        died, not us for leaving first.
        """
        assert self.table is not None
        if not self.table.game_over.is_set():
            try:
                await self._table_request(Status())
            except NETWORK_ERRORS:
                return False
        with trio.move_on_after(TABLE_GRACE):
            await self.table.game_over.wait()
        return self.table.game_over.is_set()

    async def _give_up(self, exc: PeerError) -> NoReturn:
        """Tell the table why we leave, naming the culprit if we know it; then raise ``exc``.

        A player who is in and leaves aborts the game; without this word the
        table could only say that we left, blaming the player who waited
        rather than the one who fell silent (docs/protocols/oldmaid.md 5.8).
        """
        if self.table is not None and self.seated.is_set() and not self.table.game_over.is_set():
            report = GiveUp(nick=exc.culprit, reason=exc.clause if exc.culprit else str(exc))
            try:
                reply = await self.table.request(report, timeout=GIVE_UP_WAIT)
            except NETWORK_ERRORS:
                reply = None
            self.log.write(
                "give_up",
                nick=exc.culprit,
                reason=report.reason,
                accepted=reply is not None and reply.ok,
            )
        raise exc

    async def _next_turn(self) -> Turn | None:
        """The next turn, or None at game end; ``PeerError`` after too long a silence.

        Silence means no message from anyone: an out player in a long game
        still hears the turn holders probing it, so it does not give up.
        """
        while True:
            with trio.move_on_at(self._last_heard + self.config.idle_timeout):
                return await self._turns_out.receive()
            if trio.current_time() >= self._last_heard + self.config.idle_timeout:
                raise PeerError(f"heard nothing for {self.config.idle_timeout:g} s")

    async def _announce_game_over(self) -> None:
        assert self.table is not None
        await self.table.game_over.wait()
        notice = self.table.notice
        if notice is not None:  # docs/logs.md: the `game_over` event
            self.log.write(
                "game_over",
                loser=notice.loser,
                out=notice.out,
                aborted=notice.aborted,
                reason=notice.reason,
            )
        self._note_progress()
        self._turns_in.send_nowait(None)

    # -- the draw phase --------------------------------------------------------

    async def _draw_turn(self) -> None:
        reply = await self._table_request(Draw())
        if reply.result == "error":
            if "empty" in (reply.message or ""):
                self._enter_offer_phase()
                return
            raise PeerError(f"the table refused a draw: {reply.message}")
        assert reply.card is not None
        last = reply.result == "last_card"
        self.log.write("draw", card=_wire(reply.card), last=last)
        self.hand.receive(reply.card)
        if last:
            self._enter_offer_phase()
        await self._discard_pairs()
        if last:
            await self._offer_turn()
        else:
            await self._hand_on_draw()

    async def _hand_on_draw(self) -> None:
        for seat in seats_after(self.seat, len(self.players)):
            reply = await self._ask(seat, YourTurn(sender=self.nick))
            if reply.result == "ok":
                self.log.write("your_turn", to=self._nick(seat))
                self._handed_turn_to(seat)
                return
            if reply.result == "out":
                self._log_skip(seat, reply, "draw")
                continue
            raise fault(self._nick(seat), f"refused your_turn: {reply.message}")
        raise PeerError("no other player would take the draw turn")

    # -- the offer phase -------------------------------------------------------

    def _enter_offer_phase(self) -> None:
        if self.phase is not Phase.OFFER:
            self.phase = Phase.OFFER
            self.log.write("phase", phase=self.phase.value)

    async def _offer_turn(self) -> None:
        """Hand the turn to the next player who is in, or find that we lost."""
        t_start = time.monotonic()
        if not self.hand:
            await self._go_out()
        offered = len(self.hand)
        offer = Offer(num_cards=offered, sender=self.nick, stream=True)
        for seat in seats_after(self.seat, len(self.players)):
            t_offer = time.monotonic()
            reply = await self._ask(seat, offer)
            if reply.result == "out":
                self._log_skip(seat, reply, "offer")
                continue
            if reply.result != "ok":
                raise fault(self._nick(seat), f"refused {self.nick}'s offer: {reply.message}")
            if offered == 0:
                self.log.write("pass", to=self._nick(seat), t_start=t_start, t_offer=t_offer)
                self._handed_turn_to(seat)
                return
            self.log.write(
                "offer", to=self._nick(seat), num_cards=offered, t_start=t_start, t_offer=t_offer
            )
            await self._serve_pick(self._links[seat], seat, offered)
            self._handed_turn_to(seat)
            if not self.hand:
                await self._go_out()
            return
        if offered == 0:
            raise PeerError("no other player is in, yet this peer holds no cards")
        self.lost = True
        self.log.write("lost", hand=[_wire(c) for c in self.hand.cards], how="no one else in")

    async def _serve_pick(self, link: Connection, seat: int, offered: int) -> None:
        for _ in range(MAX_BAD_PICKS):
            try:
                event = await link.receive(timeout=self.config.timeout)
            except trio.TooSlowError:
                raise fault(
                    self._nick(seat), f"did not pick within {self.config.timeout:g} s"
                ) from None
            if isinstance(event, Pick):
                # WIRE.md: the handout's "between 0 and number_of_cards_left"
                # was read inclusively by real clients; n is the last card.
                index = offered - 1 if event.card_num == offered else event.card_num
                try:
                    card = self.hand.give(index)
                except IndexError as exc:
                    await link.send(error(str(exc)))
                    continue
                await link.send(ok(card=card))
                self.log.write(
                    "gave", to=self._nick(seat), card_num=event.card_num, card=_wire(card)
                )
                return
            if isinstance(event, Invalid):
                await link.send(error(event.reason))
                continue
            if isinstance(event, Closed):
                raise fault(self._nick(seat), "closed the connection instead of picking")
            raise fault(self._nick(seat), f"sent {event!r} instead of a pick")
        raise fault(self._nick(seat), f"made {MAX_BAD_PICKS} bad picks in a row")

    async def _go_out(self) -> None:
        """Tell the table this hand is empty, once; before answering anyone ``out``."""
        async with self._out_lock:
            if self.out:
                return
            reply = await self._table_request(OutOfCards())
            if not reply.ok:
                raise PeerError(f"the table refused out_of_cards: {reply.message}")
            self.out = True
            self.log.write("out", cards_left=0)

    async def _discard_pairs(self) -> None:
        for first, second in self.hand.remove_pairs():
            empties = not self.hand and self.phase is Phase.OFFER
            reply = await self._table_request(
                Discard(cards=[first, second], last_cards="true" if empties else "false")
            )
            if not reply.ok:
                # A game decided while pairs were missing may end before our
                # last pair arrives (WIRE.md); then there is nothing to refuse.
                if await self._game_is_over():
                    return
                raise PeerError(f"the table refused the pair {first}, {second}: {reply.message}")
            self.log.write("discard", cards=[_wire(first), _wire(second)])
            if empties:
                self.out = True
                self.log.write("out", cards_left=0)

    # -- the right side: connections dialled in to us --------------------------

    async def _listen(
        self, host: str, port: int, *, task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            await serve(
                self._serve_right,
                host,
                port,
                max_connections=self.config.max_connections,
                max_per_address=self.config.max_per_address,
                exempt_loopback=self.config.exempt_loopback,
                task_status=task_status,
            )
        except OSError as exc:
            raise PeerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None

    async def _serve_right(self, stream: trio.SocketStream) -> None:
        link = Connection(stream, Link(Role.PICKER), timeout=self.config.timeout)
        established = False
        # From connect: invalid messages do not buy a stray more time.
        first_deadline = trio.current_time() + self.config.first_message_timeout
        try:
            while True:
                # Until it has sent something valid, a connection may be a
                # stray or part of a flood: it gets a short wait, and
                # ring.net.serve may evict it to make room at the cap.
                wait = (
                    self.config.idle_timeout
                    if established
                    else max(0.0, first_deadline - trio.current_time())
                )
                try:
                    event = await link.receive(timeout=wait)
                except trio.TooSlowError:
                    if not established:
                        return  # closed without a word, as the table does
                    raise
                except RemoteProtocolError as exc:
                    await link.send(Farewell(f"{exc}; closing the connection"))
                    raise
                self._last_heard = trio.current_time()
                if isinstance(event, Closed):
                    return
                if isinstance(event, Invalid):
                    await link.send(error(event.reason))
                    continue
                if not established:
                    established = True
                    mark_established()
                with trio.fail_after(self.config.join_timeout):
                    await self.seated.wait()
                stranger = self._not_a_player(stream)
                if stranger is not None:
                    await link.send(error(stranger))
                    self.log.write("stranger", error=stranger)
                    return
                self._note_progress()
                if isinstance(event, YourTurn):
                    await self._answer_your_turn(link)
                elif isinstance(event, Offer):
                    try:
                        await self._answer_offer(link, event)
                    except PeerError as exc:
                        await self._give_up(exc)
        except NETWORK_ERRORS as exc:
            # One broken neighbour connection is not the end of the game: the
            # turn holder on the other end sees its own error.
            self.log.write("inbound_error", error=str(exc) or type(exc).__name__)

    def _not_a_player(self, stream: trio.SocketStream) -> str | None:
        """Why a turn from this connection cannot be a player's, or None if it may be.

        The protocol does not say who is speaking, but a turn can only come from
        a player, so from one of the addresses the table seated. Where a player
        gave a name rather than an address (or none we can compare), anything
        goes: a stranger then cannot be told from a player.
        """
        try:
            source = plain_ip(stream.socket.getpeername()[0])
        except OSError:
            return None
        hosts = {host for (host, _), _ in self.players}
        if not all(_is_specific_ip(host) for host in hosts) or source in hosts:
            return None
        return f"{source} is not the address of any player of this game; closing the connection"

    async def _answer_your_turn(self, link: Connection) -> None:
        if self.out:
            await link.send(Reply(result="out"))
            return
        await link.send(ok())
        self._turns_in.send_nowait(Turn.DRAW)

    async def _answer_offer(self, link: Connection, offer: Offer) -> None:
        self._enter_offer_phase()
        if not self.hand:
            await self._go_out()
        if self.out:
            await link.send(Reply(result="out"))
            return
        await link.send(ok())
        if offer.num_cards == 0:
            self.log.write("turn", **{"from": offer.sender})
            self._turns_in.send_nowait(Turn.OFFER)
            return
        card_num = self.hand.choose_pick(offer.num_cards)
        giver = offer.sender
        if not offer.stream:
            # It may read one message per recv: ok and pick must not arrive together.
            await trio.sleep(self._pick_pause())
        for _ in range(MAX_BAD_PICKS):
            # We accepted the offer, so the turn is ours once the card comes:
            # if it never does, nobody else will notice, so this is the end.
            try:
                await link.send(Pick(card_num=card_num))
                asked = trio.current_time()
                event = await link.receive()
                if not offer.stream:
                    self._slow_answers.append(trio.current_time() - asked)
            except trio.TooSlowError:
                raise await self._offerer_fault(
                    giver, f"did not answer {self.nick}'s pick within {self.config.timeout:g} s"
                ) from None
            if isinstance(event, Closed):
                if await self._game_is_over():
                    return  # the end: the turn loop hears it from the table
                raise await self._offerer_fault(
                    giver, "closed the connection instead of giving the picked card"
                )
            if not isinstance(event, Answered):
                raise await self._offerer_fault(giver, f"sent {event!r} instead of the picked card")
            if event.reply.ok:
                break
            card_num = self.hand.choose_pick(offer.num_cards)
        else:
            raise await self._offerer_fault(giver, f"refused {MAX_BAD_PICKS} picks in a row")
        card = event.reply.card
        assert card is not None
        self.log.write("pick", card_num=card_num, card=_wire(card), **{"from": offer.sender})
        self.hand.receive(card)
        await self._discard_pairs()
        self._turns_in.send_nowait(Turn.OFFER)

    def _pick_pause(self) -> float:
        """The pause between ``ok`` and ``pick`` for an offerer that reads one message a recv.

        The pause must outlast the moment its thread takes to wake up and read
        the ``ok``; on a loaded machine that moment grows, and so does the
        time it takes to answer a pick, which we can see. So the pause follows
        the slowest recent answer, never below the configured pause (the 2013
        clients' own 50 ms). Peers that say they read a stream get no pause.
        """
        slowest = max(self._slow_answers, default=0.0)
        return min(PICK_PAUSE_MAX, max(self.config.pick_pause, PICK_PAUSE_FACTOR * slowest))

    async def _offerer_fault(self, sender: str | None, clause: str) -> PeerError:
        """The error naming the player whose offer we took, from its ``from`` or the table.

        Older clients do not say who they are. The offer came from the nearest
        player to our right who held cards, so still in by the table's status
        (it had not given its card, so it could not have gone out since).
        """
        nick = sender if sender in self._nicks() else None
        if nick is None:
            try:
                status = await self._table_request(Status())
            except NETWORK_ERRORS:
                status = None
            out = set(status.out or []) if status is not None and status.ok else None
            if out is not None:
                count = len(self.players)
                right = ((self.seat - k) % count for k in range(1, count))
                nick = next((self._nick(s) for s in right if self._nick(s) not in out), None)
        if nick is None:
            return PeerError(f"the offering player {clause}")
        return fault(nick, clause)

    def _nicks(self) -> list[str]:
        return [nick for _, nick in self.players]

    # -- connections we dial ---------------------------------------------------

    def _left_seat(self) -> int:
        return (self.seat + 1) % len(self.players)

    def _nick(self, seat: int) -> str:
        return self.players[seat][1]

    async def _link_to(self, seat: int) -> Connection | None:
        """The open link to ``seat``, dialled if need be; None if the seat has left the game.

        Older clients start listening only after their join reply, so a
        refused dial is tried again, with a short backoff, until the peer
        timeout. A seat that cannot be reached but that the table lists as
        out has left after going out (allowed): it is skipped from then on.
        """
        if seat in self._gone:
            return None
        link = self._links.get(seat)
        if link is not None:
            return link
        (host, port), nick = self.players[seat]
        deadline = trio.current_time() + self.config.timeout
        delay = DIAL_RETRY_FIRST
        for attempt in itertools.count(1):
            try:
                remaining = max(deadline - trio.current_time(), 0.0)
                stream = await dial(host, port, timeout=remaining)
                break
            except (OSError, trio.TooSlowError) as exc:
                failure = exc
            if await self._left_the_game(seat):
                return None
            assert self.table is not None
            if self.table.game_over.is_set():  # e.g. aborted: that seat's player died
                raise PeerError(f"cannot reach {nick} at {host}:{port}, and the game has ended")
            if trio.current_time() + delay >= deadline:
                raise PeerError(
                    f"cannot reach {nick} at {host}:{port} within {self.config.timeout:g} s "
                    f"({attempt} attempts): {failure or 'timed out'}",
                    culprit=nick,
                    clause=f"could not be reached at {host}:{port} for {self.config.timeout:g} s "
                    f"({attempt} attempts)",
                ) from None
            await trio.sleep(delay)
            delay = min(2 * delay, DIAL_RETRY_MAX)
        if attempt > 1:
            self.log.write("dialled", to=nick, attempts=attempt)
        link = Connection(stream, Link(Role.OFFERER), timeout=self.config.timeout)
        self._links[seat] = link
        return link

    async def _left_the_game(self, seat: int) -> bool:
        """Whether ``seat``, which failed us, is out by the table's status: then it is gone."""
        reply = await self._table_request(Status())
        if not (reply.ok and reply.out is not None and self._nick(seat) in reply.out):
            return False
        await self._drop_seat(seat, "left")
        return True

    async def _listed_out(self, seat: int) -> bool:
        reply = await self._table_request(Status())
        return reply.ok and reply.out is not None and self._nick(seat) in reply.out

    async def _drop_seat(self, seat: int, why: str) -> None:
        """Skip ``seat`` from now on: it is out by the table and left (or fell silent)."""
        self._gone[seat] = why
        link = self._links.pop(seat, None)
        if link is not None:
            await link.aclose()
        self.log.write("gone", nick=self._nick(seat), why=why)

    def _log_skip(self, seat: int, reply: Reply, phase: str) -> None:
        if reply is _SILENT:
            self.log.write(
                "skip", over=self._nick(seat), phase=phase, silent=True, waited=OUT_GRACE
            )
        elif reply is _GONE:
            why = {"silent": {"silent": True}, "left": {"left": True}}[self._gone[seat]]
            self.log.write("skip", over=self._nick(seat), phase=phase, **why)
        else:
            self.log.write("skip", over=self._nick(seat), phase=phase)

    async def _ask(self, seat: int, request: YourTurn | Offer) -> Reply:
        """Send one request to ``seat``; its reply, ``_GONE``, or ``PeerError`` naming who failed.

        A link that closes instead of answering belongs to a player who left
        (skipped if the table lists it as out), or was closed unread by the
        listener (evicted at its connection cap while idle, or past its
        first-message timeout): a link that never carried a reply gets the
        request once more on a fresh connection.
        """
        for attempt in range(2):
            link = await self._link_to(seat)
            if link is None:
                return _GONE
            event = await self._exchange(link, request, seat)
            if event is _SILENT:
                await self._drop_seat(seat, "silent")
                return _SILENT
            if not isinstance(event, Closed):
                break
            self._links.pop(seat, None)
            await link.aclose()
            if await self._left_the_game(seat):
                return _GONE
            if attempt or seat in self._answered:
                raise fault(
                    self._nick(seat),
                    f"closed the connection instead of answering {request_name(request)}",
                )
        if isinstance(event, Answered):
            self._answered.add(seat)
            return event.reply
        raise fault(self._nick(seat), f"sent {event!r} instead of a reply")

    # -- a handoff to a player who leaves --------------------------------------

    def _note_progress(self) -> None:
        self._progress.set()
        self._progress = trio.Event()

    def _handed_turn_to(self, seat: int) -> None:
        self._handoffs_in.send_nowait((seat, self._progress))

    async def _watch_handoffs(self) -> None:
        """After each handoff, make sure the ring moves on; report a player who left with the turn.

        A player who goes out by taking the turn must pass it on (an offer of
        num_cards 0). Some older clients leave instead, and then nobody holds
        the turn. Only the player who handed it over knows who had it. In a
        ring that moves, that player hears a request within a round (the turn
        comes back, or a turn holder asks it and it answers out), so silence
        for ``stall_timeout`` after a handoff is the sign to ask the table: if
        the receiver is out, it is reported; the table aborts the game only
        if that player has left, and refuses the report otherwise. Waiting on
        an event costs the handoffs of a healthy ring nothing.
        """
        async for seat, progress in self._handoffs_out:
            while not progress.is_set():
                with trio.move_on_after(self.config.stall_timeout):
                    await progress.wait()
                    break
                try:
                    if await self._stalled_by(seat):
                        return
                except NETWORK_ERRORS as exc:
                    self.log.write("inbound_error", error=str(exc) or type(exc).__name__)
                    return

    async def _stalled_by(self, seat: int) -> bool:
        """Report ``seat`` if it is out, since it has had the turn with no sign of progress."""
        nick = self._nick(seat)
        status = await self._table_request(Status())
        if status.game_over or status.aborted or nick not in (status.out or []):
            return False  # over, or still in: holding the turn is its right
        self.log.write("left_with_turn", nick=nick, waited=self.config.stall_timeout)
        reply = await self._table_request(LeftWithTurn(nick=nick))
        if not reply.ok:
            self.log.write("report_refused", nick=nick, message=reply.message)
        return reply.ok

    async def _exchange(self, link: Connection, request: YourTurn | Offer, seat: int) -> Any:
        """The event that answers ``request``: a reply, ``Closed``, ``_SILENT``, or something odd.

        A seat still in has the whole peer timeout to answer; one that the
        table lists as out is skipped once it has been silent for OUT_GRACE.
        """
        timeout = self.config.timeout
        too_slow = fault(
            self._nick(seat), f"did not answer {request_name(request)} within {timeout:g} s"
        )
        deadline = trio.current_time() + timeout
        try:
            await link.send(request)
            while True:
                wait = min(OUT_GRACE, deadline - trio.current_time())
                try:
                    return await link.receive(timeout=max(wait, 0.0))
                except trio.TooSlowError:
                    if trio.current_time() >= deadline:
                        raise too_slow from None
                if await self._listed_out(seat):
                    return _SILENT
        except trio.TooSlowError:
            raise too_slow from None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return Closed()

    async def _table_request(self, request: Any) -> Reply:
        assert self.table is not None
        return await self.table.request(request, timeout=self.config.timeout)


def _is_specific_ip(host: str) -> bool:
    try:
        return not ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False  # a host name: we cannot compare it with a source address


def _as_peer_error(exc: BaseException) -> PeerError:
    if isinstance(exc, PeerError):
        return exc
    if isinstance(exc, trio.TooSlowError):
        return PeerError("a neighbour or the table did not answer in time")
    if isinstance(exc, OSError):
        return PeerError(f"network error: {exc.strerror or exc}")
    if isinstance(exc, (trio.BrokenResourceError, trio.ClosedResourceError)):
        return PeerError("a connection broke in the middle of the game")
    return PeerError(str(exc))


def _first_error(group: BaseExceptionGroup) -> BaseException:
    """The most telling error in a nursery's group, as a ``PeerError`` if we know it."""
    known = (PeerError, *NETWORK_ERRORS)
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            inner = _first_error(exc)
            if isinstance(inner, PeerError):
                return inner
        elif isinstance(exc, known):
            return _as_peer_error(exc)
    return group


def config_from_args(args: argparse.Namespace) -> PeerConfig:
    return PeerConfig(
        nick=args.nick,
        table=args.table,
        host=args.host,
        port=args.port,
        seed=args.seed,
        events=args.events,
        timeout=args.timeout,
        join_timeout=args.join_timeout,
        idle_timeout=args.idle_timeout,
        linger=args.linger,
        stall_timeout=getattr(args, "stall_timeout", 3.0),
        max_connections=getattr(args, "max_connections", 64),
        max_per_address=getattr(args, "max_per_address", DEFAULT_MAX_PER_ADDRESS),
        first_message_timeout=getattr(args, "first_message_timeout", 10.0),
        table_name=getattr(args, "table_name", None),
        mdns_interface=getattr(args, "mdns_interface", None),
        discover_timeout=getattr(args, "discover_timeout", 10.0),
    )


def run(args: argparse.Namespace) -> int:
    """``ring peer``: one result line and exit 0, or one error line and exit 1."""
    peer = Peer(config_from_args(args))
    try:
        outcome = trio.run(peer.play)
    except PeerError as exc:
        line = f"{peer.nick}: {exc}"
        peer.log.write("exit", code=1, line=line)
        peer.log.close()
        print(line, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        peer.log.close()
        print(f"{peer.nick}: interrupted", file=sys.stderr)
        return 130
    peer.log.write("exit", code=0, line=outcome.line)
    peer.log.close()
    print(outcome.line, flush=True)
    return 0
