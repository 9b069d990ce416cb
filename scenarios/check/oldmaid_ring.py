"""One Old Maid game for ``ring check oldmaid``: our table, our peers, and the program.

A peer cannot be checked alone: it talks to a table and to neighbours. A
case (``Stage``) runs our own table (``services.oldmaid.table.server``, which
referees every claim, protocol 14) and our own ``ring peer``s in this
process, over loopback TCP, with the program as one more player (``{nick}``,
``{table}``). A stage may stack the deck and choose the seats
(``scenarios.check.oldmaid_deck``), and give our players the habits of
other clients (``Part``): listening late, picking the first and the last
card, leaving once out, leaving mid-game.

What the program does is seen twice, by the table and by our peers
(``scenarios.check.oldmaid_watch``). The table's verdict comes first: a
game aborted naming the program is a FAIL with the table's rule. Then what
our peers saw: a pick outside an offer, or an offer that refused a good
pick, is a FAIL (6.3); the habits our peers put up with (listening late,
picking ``num_cards``) are WARNs (section 13).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import trio

from ring.games.record import GameKey, RecordHub
from ring.oldmaid.cards import Card
from ring.oldmaid.peer import Peer, PeerConfig, PeerError
from ring.oldmaid.stand_ins import StandIns
from scenarios.check import obligations as rules
from scenarios.check.context import CONNECT_TIMEOUT, CaseContext
from scenarios.check.obligations import Rule
from scenarios.check.oldmaid_deck import seed_seating, stacked_deck
from scenarios.check.oldmaid_forger import Forger
from scenarios.check.oldmaid_watch import PROGRAM as PROGRAM  # re-exported
from scenarios.check.oldmaid_watch import RingWatch
from scenarios.check.oldmaid_witness import ASK_AT_ONCE, WitnessWatch
from scenarios.check.relay import SplitSends, relay
from services.oldmaid.referee.rules import GameState
from services.oldmaid.table.server import TableConfig, TableOutcome, serve_table

SEED = 2013
SPLIT_PATIENCE = 10.0  # ring peer's own timeout, at least, when what we send is split

# The table's rules that name a player for what it did not do in time: a neighbour gave up
# on it (5.8), it left holding the turn (13.6), the game stopped at its turn (8), or, in a
# witnessed game, a move it owed (14.6). oldmaid.turn, not a claim proved false.
UNANSWERED = frozenset({"give_up", "left_with_turn", "stalled", "no_answer"})


@dataclass(frozen=True)
class Part:
    """One of our players, and the habit it has in this case (none by default)."""

    nick: str
    listen_late: float | None = None  # listen this long after the join reply (13.1)
    picks_ends: bool = False  # pick card_num 0, then num_cards - 1, in turn (6.3)
    leaves_when_out: bool = False  # once out and the turn passed on, close everything (7.8)
    leaves_at_draw: int | None = None  # leave the table at this draw of its own: an abort
    # Write its ok to an offer and its pick in one write, whatever the offer's stream flag.
    pick_with_ok: bool = False
    # Answer each pick with the card of another position (and its salt): a cheat its
    # verifying picker must refuse (14.6).
    serves_other: bool = False


@dataclass(frozen=True)
class Stage:
    """A game: the seats in order (the program's among them), and how it is dealt."""

    seats: tuple[str, ...]
    # The single cards each seat holds once the deck is empty (by seat); None: a shuffle.
    singles: Mapping[int, tuple[Card, ...]] | None = None
    parts: tuple[Part, ...] = ()
    aborted_by: str | None = None  # the part whose leaving aborts the game, if one does
    timed: bool = False  # FAIL as soon as the program holds the turn past the move limit
    split: bool = False  # every byte the table and our peers send the program on its own
    # The program's connection to the table closes (the table died, as far as it can
    # tell) once the table has answered this many of its draws.
    table_dies_at_draw: int | None = None
    # The program's hand is empty once the offers begin: a game over by the rules has it
    # among those out, never as the loser (7.8).
    goes_out: bool = False
    # The table seats only players that verify (--verified, protocol 14.5, 14.6): a
    # program that does not is refused at its join, a WARN (oldmaid.verify).
    verified: bool = False
    # Once the game starts, a stranger sends the program a turn with a wrong proof, which
    # it must refuse and report (14.5; scenarios.check.oldmaid_forger).
    forges_turn: bool = False
    # Our players ask the table to witness every exchange they wait in at all (14.6, the
    # table as witness; scenarios.check.oldmaid_witness): the program makes its moves of
    # them through the table, if it joined with witness.
    witnessed: bool = False

    @property
    def together(self) -> bool:
        """Some player writes ok and pick in one write: a one-recv reader may break."""
        return any(part.pick_with_ok for part in self.parts)

    def part(self, nick: str) -> Part:
        return next((part for part in self.parts if part.nick == nick), Part(nick))


async def play_stage(context: CaseContext, stage: Stage, move_limit: float) -> None:
    """Play ``stage`` with the program; FAIL for what the table or our peers caught."""
    watch = RingWatch(frozenset(nick for nick in stage.seats if nick != PROGRAM))
    context.evidence = lambda: list(watch.lines)
    context.last_seen = watch.last_seen
    hub = RecordHub()
    hub.subscribe(watch.table_record)
    table_dies = trio.Event()
    joined = trio.Event()
    refused = trio.Event()  # its join without verify, refused by a --verified table
    forger = Forger() if stage.forges_turn else None
    if forger is not None:
        hub.subscribe(forger.table_record)
    witnessing = WitnessWatch() if stage.witnessed else None
    if witnessing is not None:
        hub.subscribe(witnessing.table_record)
    if stage.table_dies_at_draw is not None:
        hub.subscribe(_at_draw(stage.table_dies_at_draw, table_dies))
    # The program reaches the table through a relay that splits, or that cuts; the
    # relay then takes the port a program started by hand dials (--manual).
    relayed = stage.split or stage.table_dies_at_draw is not None
    sources: dict[tuple[str, int], tuple[str, int]] = {}  # the relay's, by what the table sees
    singles = stage.singles
    config = TableConfig(
        players=len(stage.seats),
        port=0 if relayed else context.fixed_port,
        seed=seed_seating(stage.seats, SEED),
        deck=stacked_deck(len(stage.seats), singles) if singles is not None else None,
        linger=1.0,
        last_pair_grace=1.0,
        # Split, every byte the program gets takes its own wakeup: on a loaded machine its
        # first draw may come seconds late, which is not a stall.
        turn_timeout=max(4 * SPLIT_PATIENCE if stage.split else 5.0, 4 * move_limit),
        verified=stage.verified,
        # A verifying program that does not witness plays (oldmaid.verify.witness WARNs it).
        require_witness=False,
        hub=hub,
        # Told at once, not in the records a forming game holds until its start: a join
        # refused leaves the game waiting for ever, and one taken may be the last one.
        on_join=_if_program(joined.set),
        on_unverified=_if_program(refused.set),
        real_source=sources.get if relayed else None,
    )
    outcomes: list[TableOutcome] = []
    ended = trio.Event()
    too_slow: list[str] = []

    async def time_moves() -> None:
        # A stall is a turn held past twice the move limit and a second (the table's
        # own "nothing moved" timeout is longer: it cannot tell who holds the turn).
        limit = move_limit if stage.timed else 2 * move_limit + 1.0
        running = context.running
        exited = (lambda: running.exited) if running is not None else (lambda: False)
        too_slow.append(await watch.time_moves(limit, strict=stage.timed, exited=exited))
        ended.set()

    exited: list[bool] = []

    async def table_died() -> None:
        await table_dies.wait()
        exited.append(await context.running.wait(context.case.exit_within))  # type: ignore[union-attr]
        ended.set()

    async def table_over() -> None:  # the end, unless the program's table died first
        await over.wait()
        if not table_dies.is_set():
            ended.set()

    ours_failed: list[str] = []
    never_joined: list[str] = []

    async def join_refused() -> None:
        await refused.wait()
        ended.set()

    async def join_in_time() -> None:  # programs.md 3: its first message within 10 s
        with trio.move_on_after(CONNECT_TIMEOUT):
            await joined.wait()
            return
        never_joined.append(f"it did not join the table within {CONNECT_TIMEOUT:g} s of its start")
        ended.set()

    def unseated(why: str) -> None:
        ours_failed.append(why)
        ended.set()

    over = trio.Event()
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(_table, config, outcomes, over)
        table = (host, port)
        if relayed:
            to_table = functools.partial(
                relay,
                table,
                port=context.fixed_port,
                split=stage.split,
                cut=table_dies,
                sources=sources,
            )
            host, port = await nursery.start(to_table)
        address = f"{host}:{port}"
        await context.start(
            {"host": host, "port": str(port), "address": address, "nick": PROGRAM, "table": address}
        )
        ours = [nick for nick in stage.seats if nick != PROGRAM]
        for number, nick in enumerate(ours):
            part = stage.part(nick)
            nursery.start_soon(
                _our_player, part, table, number, move_limit, watch, stage, unseated,
                witnessing,
            )  # fmt: skip
        nursery.start_soon(time_moves)
        nursery.start_soon(join_in_time)
        if stage.verified:
            nursery.start_soon(join_refused)
        if forger is not None:
            nursery.start_soon(forger.forge, move_limit)
        nursery.start_soon(table_died)
        nursery.start_soon(table_over)
        await ended.wait()  # the game is over or aborted (or the program too slow, ...)
        nursery.cancel_scope.cancel()
    if refused.is_set():
        context.judge.warn(
            'it does not verify: it joined without "verify":true, which a table run with '
            "--verified refuses; to play there, prove who you are (14.5), commit to each offer "
            "and report every exchange (14.6); the worked example of 14.6 gives every value "
            "to test against",
            rules.OLDMAID_VERIFY,
        )
        context.broke_off()  # its join was refused: any ending of it is fine
        return
    if never_joined:
        raise context.judge.fail(rules.CONNECT, never_joined[0])
    if ours_failed:  # not the program's fault: an ERROR, said at once, not a hang
        raise RuntimeError(ours_failed[0])
    context.judge.move_times(watch.move_times)
    if too_slow:
        raise context.judge.fail(rules.OLDMAID_TURN, too_slow[0])
    if exited:
        context.broke_off()  # the table died: any ending is fine, but not none
        if not exited[0]:
            raise context.judge.fail(
                rules.EXIT,
                f"the program did not exit within {context.case.exit_within:g} s of its table "
                "connection closing in the middle of the game (the table died)",
            )
        return
    outcome = outcomes[0]
    context.judge.note(outcome.line)
    failed = _failure(outcome, watch, stage)
    if failed is None and stage.aborted_by is not None and outcome.state is GameState.OVER:
        # Not the program's doing: the part whose doing ends the game never struck, so the
        # case proved nothing (an ERROR, for the checker to fix, not a PASS).
        raise RuntimeError(f"our player {stage.aborted_by} never did what this case needs")
    if failed is not None and stage.together and not watch.streams:
        context.judge.warn(
            f"its game broke once an ok and a pick came in one segment ({failed[1]}), as a "
            "reader of one message a recv breaks; our peers pause between the two for it, "
            "since its offers do not say stream: true (13.2), but other peers may not "
            "(section 2: keep a buffer)",
            rules.OLDMAID_ONE_RECV,
        )
        context.broke_off()  # its game broke on what our peers allow: any ending is fine
        return
    if failed is not None and stage.together:
        failed = (
            rules.OLDMAID_STREAM,
            f"an ok and a pick came in one segment, as its offers allow (6.2): {failed[1]}",
        )
    if failed is not None:
        if outcome.culprit == PROGRAM and outcome.rule not in (None, "left"):
            # The table ended its game naming it for the rule it broke: that rule is the
            # FAIL, and how it exits after the abort is its own (not a crash of its own).
            context.broke_off()
        raise context.judge.fail(*failed)
    forged = forger.failure() if forger is not None else None
    if forged is not None:
        raise context.judge.fail(rules.OLDMAID_VERIFIED_PLAY, forged)
    if witnessing is not None:
        unchecked = witnessing.unchecked()
        if unchecked is not None:
            raise context.judge.fail(rules.OLDMAID_VERIFIED_PLAY, unchecked)
        _judge_witness(context, witnessing)
    for warning, rule in watch.warnings:
        context.judge.warn(warning, rule)
    if stage.aborted_by is None:
        context.over()
    else:
        context.broke_off()
    context.sent("the table's game_over")
    await context.expect_exit("the game's end" if stage.aborted_by is None else "the abort")


def _judge_witness(context: CaseContext, witnessing: WitnessWatch) -> None:
    """WARN a verifying program that did not take part in witnessed exchanges; an ERROR if
    one that did never had an exchange witnessed (the case proved nothing)."""
    warning = witnessing.not_taking_part()
    if warning is not None:
        context.judge.warn(warning, rules.OLDMAID_WITNESS)
    elif witnessing.joined_witness and not (
        witnessing.witnessed
        and witnessing.draw_turns
        and witnessing.oks_withheld
        and witnessing.offers_refused
    ):
        raise RuntimeError(
            f"the table witnessed {witnessing.witnessed} exchanges with it and handed it "
            f"{witnessing.draw_turns} draw turns, our players left "
            f"{witnessing.oks_withheld} of its your_turns unanswered, and it refused "
            f"{witnessing.offers_refused} offers with a bad mac: the case proved nothing"
        )
    else:
        context.judge.note(
            f"the table witnessed {witnessing.witnessed} exchanges with it; it made "
            f"{witnessing.moves} moves through the table; the table handed it "
            f"{witnessing.draw_turns} draw turn(s), and it drew; {witnessing.oks_withheld} "
            "your_turn of its went unanswered, and it waited on; it checked an offer with a "
            f"bad mac with the table and refused it ({witnessing.offers_refused})"
        )


def _failure(outcome: TableOutcome, watch: RingWatch, stage: Stage) -> tuple[Rule, str] | None:
    """What the table's verdict and our peers' view say the program did wrong, if anything,
    and the rule it breaks."""
    if outcome.state is not GameState.OVER and outcome.culprit == PROGRAM:
        if outcome.rule in UNANSWERED:
            rule = rules.OLDMAID_TURN
        elif outcome.rule == "left":
            rule = rules.OLDMAID_TO_END
        else:  # a claim the table (or, verified, its ledger) proves false
            rule = rules.OLDMAID_VERIFIED_PLAY if stage.verified else rules.OLDMAID_RULES_OF_TABLE
        return rule, f"the table aborted the game naming it (rule {outcome.rule}): {outcome.reason}"
    failure = watch.failure()
    if failure is not None:
        return rules.OLDMAID_PICK, failure
    if watch.unsigned:
        more = len(watch.unsigned) - 1
        return (
            rules.OLDMAID_VERIFIED_PLAY,
            watch.unsigned[0] + (f" (and {more} more like it)" if more else ""),
        )
    if stage.goes_out and outcome.state is GameState.OVER and PROGRAM not in outcome.out:
        return (
            rules.OLDMAID_GO_OUT,
            f"its hand was empty when the offers began, yet it never went out (7.8); the "
            f"table: {outcome.line}",
        )
    if outcome.rule == "stalled" and watch.holder == PROGRAM:
        return (
            rules.OLDMAID_TURN,
            f"it was handed the turn ({watch.handed}) and never passed it on (7.5, 7.7); "
            f"the table: {outcome.reason}",
        )
    if outcome.state is not GameState.OVER and (
        stage.aborted_by is None or outcome.culprit != stage.aborted_by
    ):
        return rules.OLDMAID_TO_END, f"the game was aborted, naming no one: {outcome.reason}"
    return None


def _if_program(call: Callable[[], object]) -> Callable[[str], None]:
    """A table callback told a nick: ``call`` when it is the program's."""

    def told(nick: str) -> None:
        if nick == PROGRAM:
            call()

    return told


def _at_draw(count: int, event: trio.Event) -> Callable[[GameKey, dict[str, Any]], None]:
    """A record hub subscriber that sets ``event`` at the program's ``count``-th draw."""
    draws = 0

    def on_record(_key: GameKey, record: dict[str, Any]) -> None:
        nonlocal draws
        message = record.get("msg")
        from_program = record.get("nick") == PROGRAM and record.get("dir") == "in"
        if from_program and isinstance(message, dict) and message.get("cmd") == "draw":
            draws += 1
            if draws == count:
                event.set()

    return on_record


async def _table(
    config: TableConfig, outcomes: list, ended: trio.Event, *, task_status: trio.TaskStatus
) -> None:
    outcomes.append(await serve_table(config, task_status=task_status))
    ended.set()


async def _our_player(
    part: Part,
    table: tuple[str, int],
    number: int,
    move_limit: float,
    watch: RingWatch,
    stage: Stage,
    unseated: Callable[[str], None],
    witnessing: WitnessWatch | None,
) -> None:
    """One of our peers, with its part's habit; its leaving is a cancelled scope."""
    leave = trio.CancelScope()
    draws = 0
    picks = itertools.count()

    def on_event(record: dict[str, Any]) -> None:
        nonlocal draws
        watch.peer_event(record)
        if witnessing is not None:
            witnessing.peer_event(record)
        event = record.get("event")
        if event == "pass" and part.leaves_when_out:  # it passes the turn only once out
            leave.cancel()
        if event == "draw":
            draws += 1
            if draws == part.leaves_at_draw:
                leave.cancel()

    def choose_ends(offered: int) -> int:  # card_num 0, then num_cards - 1, then 0, ...
        return 0 if next(picks) % 2 == 0 else offered - 1

    split = stage.split
    peer = Peer(
        PeerConfig(
            nick=part.nick,
            table=table,
            seed=SEED * 10 + number,
            # Split, a verified offer (a commitment a card) takes a second to arrive: the
            # time a program has to answer is not what our own splitting costs it.
            timeout=max(move_limit, SPLIT_PATIENCE) if split else move_limit,
            idle_timeout=4 * move_limit + 5.0,
            on_event=on_event,
            # A verified game waits for the report of every exchange (14.6), which a
            # player leaving the moment it passes the turn may not have sent; the
            # older clients that leave so never verify, and nor does this one. Split,
            # a verified game's offers (a commitment a card) take seconds to arrive.
            verify=not (part.leaves_when_out or split),
            witness_after=ASK_AT_ONCE if stage.witnessed else None,
            # The table hands it a draw turn too, and one of its own goes unanswered though
            # drawn on (14.6, "The draw turn"): it draws on the one, waits on the other.
            stand_ins=StandIns(
                listen_late=part.listen_late,
                wrap_stream=SplitSends if split else None,
                choose_pick=choose_ends if part.picks_ends else None,
                pick_with_ok=part.pick_with_ok,
                serve_other=part.serves_other,
                withhold_your_turn_to=PROGRAM if stage.witnessed else None,
                withhold_ok_from=PROGRAM if stage.witnessed else None,
                bad_mac_to=PROGRAM if stage.witnessed else None,
            ),
        )
    )
    with leave:
        try:
            await peer.play()
        except PeerError as exc:
            # Seated, the table's outcome says what happened; our peer's line adds
            # nothing. Not seated, the game can never start: the checker's failure.
            if not peer.seated.is_set():
                unseated(f"our player {part.nick} could not join the table: {exc}")
