"""The Old Maid peer: one Trio nursery wiring its parts together.

- the turn machine (``Turns``, sans-IO): the hand, the phase, and every
  decision a turn takes;
- the links (``Links``): the listener that players to our right dial in to,
  one link per seat we dial, and the turn requests on them;
- the picks (``Picks``): the exchange after an accepted offer, on its link;
- the walk (``Walk``): finding the next player who is in, seat by seat;
- the stall watch (``StallWatch``): a player who left holding the turn;
- the suspicion checks (``Suspicion``): what reaches us that only a cheat or
  a bug explains, reported to the table (``accuse``) before we leave;
- the table (``TableSide``): join, draw, discard, out_of_cards, the end;
- the inbound side (``Taking``): each turn handed to us, answered and queued.

Exactly one turn travels round the ring, so the task that serves an inbound
connection and the task that hands the turn on never touch the hand at the
same time: the inbound side receives the turn and passes it, through a
channel, to the one task that acts on it (the turn loop here: holding the
turn, drawing, offering).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from typing import Any

import trio

from ring.games.events import EventLog
from ring.oldmaid.draw_turns import DrawTurns
from ring.oldmaid.hand import Hand
from ring.oldmaid.links import Links
from ring.oldmaid.messages import Draw, GameOver, Join, Offer
from ring.oldmaid.peer_config import PeerConfig as PeerConfig  # re-exported
from ring.oldmaid.peer_config import config_from_args
from ring.oldmaid.picks import PICK_PAUSE_FACTOR as PICK_PAUSE_FACTOR  # re-exported
from ring.oldmaid.picks import PICK_PAUSE_MAX as PICK_PAUSE_MAX  # re-exported
from ring.oldmaid.picks import Picks
from ring.oldmaid.suspicion import Suspicion
from ring.oldmaid.table_side import NETWORK_ERRORS, TableSide, as_peer_error
from ring.oldmaid.taking import Taking, Turn, log_phase_change
from ring.oldmaid.turns import (
    AfterDraw,
    Outcome,
    PeerError,
    Phase,
    Turns,
    accusation,
    wire,
)
from ring.oldmaid.turns import fault as fault  # re-exported
from ring.oldmaid.walk import Walk
from ring.oldmaid.watch import StallWatch
from ring.wire.net import IPV4_LOOPBACK, IPV6_LOOPBACK
from ring.wire.transport import Connection, plain_ip


class Peer:
    def __init__(self, config: PeerConfig) -> None:
        self.config = config
        self.nick = config.nick
        self.seed = config.seed if config.seed is not None else random.randrange(2**32)
        rng = random.Random(self.seed)
        self.turns = Turns(self.nick, rng, choose_pick=config.stand_ins.choose_pick)
        self.log = EventLog(config.events, nick=self.nick, sink=config.on_event)
        self.seated = trio.Event()
        self.table = TableSide(self.turns, self.log, config.timeout)
        self.links = Links(config, self.turns, self.table, self.log, seated=self.seated)
        self.picks = Picks(config, self.turns, self.table, self.log, self.links.reporting)
        self.watch = StallWatch(config.stall_timeout, self.turns, self.table, self.log)
        self.suspicion = Suspicion(self.turns, self.table)
        self.walk = Walk(self.turns, self.links, self.suspicion, self.log)
        # None marks the end of the game, after any turn already queued.
        self._turns_in, self._turns_out = trio.open_memory_channel[Turn | None](math.inf)
        self.taking = self._taking()
        self.taking.stand_ins = config.stand_ins

    def _taking(self) -> Taking:
        """The inbound side: the turns handed to us (a test's faulty peer bends it)."""
        return Taking(self.turns, self.links, self.picks, self.table, self.suspicion,
                      self.watch, self.log, seated=self.seated, queue=self._turns_in)  # fmt: skip

    @property
    def draw_turns(self) -> DrawTurns:
        return self.taking.draw_turns

    @property
    def hand(self) -> Hand:
        return self.turns.hand

    @property
    def out(self) -> bool:
        return self.turns.out

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
            raise as_peer_error(exc) from None
        finally:
            await self.links.aclose()
            await self.table.aclose()

    async def _play(self, nursery: trio.Nursery, task_status: trio.TaskStatus[int]) -> Outcome:
        config = self.config
        self.links.inbound.last_heard = trio.current_time()
        address = config.table or await self.table.find(
            config.table_name, config.mdns_interface, config.discover_timeout
        )
        stream = await self.table.connect(*address)
        host = config.host or plain_ip(stream.socket.getsockname()[0])
        if host == IPV6_LOOPBACK:
            # The table reached over ::1 (localhost, resolved IPv6 first): the join's host is
            # a dotted IPv4 address, and we listen on 127.0.0.1 (and ::1) all the same
            # (docs/protocols/oldmaid.md 5.1).
            host = IPV4_LOOPBACK
        _, port = await nursery.start(
            self.links.inbound.listen, host, config.port, self.taking.serve_right
        )
        task_status.started(port)
        await nursery.start(self.table.run)
        nursery.start_soon(self._announce_game_over)

        reply = await self.table.request(
            Join(
                nick=self.nick,
                port=port,
                host=host,
                watch=True,
                stream=True,
                verify=config.verify,
                witness=config.verify and config.witness,
            ),
            timeout=config.join_timeout,
        )
        if not reply.ok:
            raise PeerError(f"the table refused the join: {reply.message}")
        assert reply.players is not None
        nicks = [nick for _, nick in reply.players]
        self.links.identity.take(self.nick, nicks, reply.secret, reply.proofs)
        self.links.reporting.take(reply.secret, reply.report)
        self._witness(nursery, bool(reply.witness))
        self._take_seat(reply.players)
        try:
            return await self._play_seated(nursery)
        except PeerError as exc:
            # Whatever stops us once seated, the table hears why before we leave
            # (protocol 5.8): never just "left the table".
            if not exc.reported and not await self.table.game_is_over():
                await self.table.give_up(exc, seated=True)
            raise

    def _witness(self, nursery: trio.Nursery, on: bool) -> None:
        """Take part in exchanges the table witnesses (protocol 14.6), if the game is."""
        witnessing = self.links.witnessing
        witnessing.on = on
        if not on:
            return
        self.links.reporting.stand_ins = self.config.stand_ins  # its garbled offers
        witnessing.request = self.table.request
        witnessing.post = self.table.post
        witnessing.game_over = self.table.game_over
        witnessing.nursery = nursery

        async def take(link: Any, offer: Offer) -> None:
            await self.taking.take_request(link, offer, offer.sender)

        witnessing.take = take
        witnessing.draw_turn = self.taking.draw_turn_from_table
        self.table.on_witnessed(witnessing.noticed)

    async def _play_seated(self, nursery: trio.Nursery) -> Outcome:
        config = self.config
        nursery.start_soon(self.watch.run)
        await self.links.link_to(self.turns.left_seat)  # dial the left neighbour at once
        if self.turns.seat == 0 and self.draw_turns.by_your_turn():  # player1 draws first
            self._turns_in.send_nowait(Turn.DRAW)

        await self._take_turns()
        # The game is decided, or ours is: the table holds its end for the last
        # exchange's reports, so ours go now, not after the usual delay.
        await self.table.write_reports()
        if not self.turns.lost:
            # Keep the ring going a moment after the table's notice: out
            # players go on answering "out", and a turn already on its way
            # still reaches the loser, whose last round then finds no one in.
            with trio.move_on_after(config.linger):
                await self._take_turns()
        if self.turns.lost:
            # The table has seen every other player go out before they
            # answered "out", so game over is at most one message away.
            await self.table.wait_game_over(config.timeout)
        notice = self.table.notice
        assert notice is not None
        if notice.aborted:
            raise PeerError(f"game aborted: {notice.reason}")
        return self._outcome(notice)

    def _take_seat(self, players: list[tuple[tuple[str, int], str]]) -> None:
        self.turns.take_seat([((plain_ip(host), port), nick) for (host, port), nick in players])
        self.draw_turns.seated(self.turns.seat, len(players))
        self.seated.set()
        self.log.write("start", seat=self.turns.seat, players=self.turns.nicks, seed=self.seed)
        self.log.write("phase", phase=self.turns.phase.value)

    def _outcome(self, notice: GameOver) -> Outcome:
        outcome = self.turns.outcome(notice)
        if outcome.place is None and not self.turns.lost:
            self.log.write("lost", hand=self._hand_on_wire(), how="table")
        return outcome

    async def _take_turns(self) -> None:
        """Act on each turn this peer gets, until it has lost or the game is over."""
        while not self.turns.lost:
            try:
                turn = await self._next_turn()
                if turn is None:
                    return
                if turn is Turn.DRAW:
                    await self._draw_turn()
                else:
                    await self._offer_turn()
            except (*NETWORK_ERRORS, PeerError) as exc:
                # After game over, out players close their listeners; a
                # failed handoff then is the end, not an error.
                if not await self.table.game_is_over():
                    await self.table.give_up(as_peer_error(exc), seated=self.seated.is_set())
                return

    async def _next_turn(self) -> Turn | None:
        """The next turn, or None at game end; ``PeerError`` after too long a silence.

        Silence means no message from anyone: an out player in a long game
        still hears the turn holders probing it, so it does not give up.
        """
        idle_timeout = self.config.idle_timeout
        while True:
            with trio.move_on_at(self.links.inbound.last_heard + idle_timeout):
                return await self._turns_out.receive()
            if trio.current_time() >= self.links.inbound.last_heard + idle_timeout:
                raise PeerError(f"heard nothing for {idle_timeout:g} s")

    async def _announce_game_over(self) -> None:
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
        self.watch.note_progress()
        self._turns_in.send_nowait(None)

    # -- holding the turn ----------------------------------------------------------

    async def _draw_turn(self) -> None:
        reply = await self.table.request(Draw())
        self.draw_turns.answered(reply.result in ("ok", "last_card"))
        if reply.result == "error" and "turn to draw" in (reply.message or ""):
            if self.draw_turns.late() or self.links.witnessing.on:
                # A your_turn that came after the table had handed us that turn (14.6),
                # or one handed twice: in a witnessed game the table hands out the draw
                # turns, so a refused draw harms no one (and the mac of a your_turn,
                # which any copy carries, proves nothing about when it was sent).
                self.log.write("late_your_turn", message=reply.message)
                return
            handed = self.taking.last_draw_turn
            sender = handed.sender if handed is not None else None
            raise accusation(
                sender,
                "not_neighbour",
                f"handed {self.nick} a draw turn that was not its own: the table refused the "
                f"draw ({reply.message})",
                sent_by=sender,
                **(self.links.reporting.turn_evidence(handed) if handed is not None else {}),
            )
        phase = self.turns.phase
        after = self.turns.drawn(reply)
        if after is not AfterDraw.WAIT:
            assert reply.card is not None
            self.log.write("draw", card=wire(reply.card), last=reply.result == "last_card")
        self._log_phase_change(phase)
        if after is AfterDraw.WAIT:
            return
        await self.table.discard_pairs()
        if after is AfterDraw.OFFER:
            await self._offer_turn()
        else:
            await self._hand_on_draw()

    async def _hand_on_draw(self) -> None:
        request = self.turns.your_turn()
        left = self.turns.nick_of(self.turns.left_seat)
        if self.links.witnessing.on and self.config.stand_ins.withholds_your_turn(left):
            # ring check's stand-in for a your_turn lost on the way: the table hands it on.
            self.log.write("withheld", to=left)
            return
        taker = await self.walk.find_taker(request)
        if taker is None:
            self.turns.no_one_took(request)  # raises: someone is always in while the deck lasts
            return
        seat, _, _ = taker
        self.log.write("your_turn", to=self.turns.nick_of(seat))
        self.watch.handed_turn_to(seat)

    async def _offer_turn(self) -> None:
        """Hand the turn to the next player who is in, or find that we lost."""
        t_start = time.monotonic()
        if self.turns.out_of_cards:
            await self.table.go_out()
        offer = self.turns.offer()
        taker = await self.walk.find_taker(offer)
        if taker is None:
            self.turns.no_one_took(offer)
            self.log.write("lost", hand=self._hand_on_wire(), how="no one else in")
            return
        seat, t_offer, taken = taker
        to = self.turns.nick_of(seat)
        if offer.num_cards == 0:
            self.log.write("pass", to=to, t_start=t_start, t_offer=t_offer)
            self.watch.handed_turn_to(seat)
            await self.links.reporting.gave(to, taken)
            return
        self.log.write("offer", to=to, num_cards=offer.num_cards, t_start=t_start, t_offer=t_offer)
        await self._serve_pick(self.links.connection(seat), seat, offer.num_cards)
        self.watch.handed_turn_to(seat)
        # Before going out: the table's ledger must see the card leave first (14.6).
        await self.links.reporting.gave(to, taken)
        if self.turns.out_of_cards:
            await self.table.go_out()

    async def _serve_pick(self, link: Connection, seat: int, offered: int) -> None:
        await self.picks.serve_pick(link, seat, offered)

    # -- the event log -------------------------------------------------------------

    def _log_phase_change(self, before: Phase) -> None:
        log_phase_change(self.turns, self.log, before)

    def _hand_on_wire(self) -> list[list[str]]:
        return [wire(card) for card in self.turns.hand.cards]


def _first_error(group: BaseExceptionGroup) -> BaseException:
    """The most telling error in a nursery's group, as a ``PeerError`` if we know it."""
    known = (PeerError, *NETWORK_ERRORS)
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            inner = _first_error(exc)
            if isinstance(inner, PeerError):
                return inner
        elif isinstance(exc, known):
            return as_peer_error(exc)
    return group


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
