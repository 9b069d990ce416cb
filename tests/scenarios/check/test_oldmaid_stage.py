"""The Old Maid check's staging: stacked decks deal what they promise, the watch judges
what our peers saw, and a late-listening student gets its WARN."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from ring.games.record import GameKey
from ring.oldmaid.cards import JOKER, full_deck, partner, split_pairs
from scenarios.check import oldmaid
from scenarios.check.context import Case, CaseContext
from scenarios.check.oldmaid_deck import card, cards, draws_per_seat, seed_seating, stacked_deck
from scenarios.check.oldmaid_ring import Stage, play_stage
from scenarios.check.oldmaid_watch import PROGRAM, RingWatch
from scenarios.check.runner import run_cases
from scenarios.check.verdicts import CaseVerdict
from scenarios.programs import Program
from services.oldmaid.referee.rules import DECK_SIZE, seating

HERE = Path(__file__).parent
STAGED = [stage for _, _, _, stage in oldmaid.stages(1.0) if stage.singles is not None]


def end_of_draw(deck: tuple, players: int, seat: int) -> list:
    """What ``seat`` holds once every card is drawn and its pairs discarded."""
    return split_pairs(deck[seat::players])[0]


def test_cards_are_written_short() -> None:
    assert card("10h") == ("10", "hearts") and card("Qc") == ("Q", "clubs")
    assert cards("2s joker") == (("2", "spades"), JOKER)


@pytest.mark.parametrize("stage", STAGED, ids=lambda stage: "-".join(stage.seats))
def test_each_staged_deck_leaves_the_chosen_singles(stage) -> None:
    players = len(stage.seats)
    deck = stacked_deck(players, stage.singles)
    assert sorted(deck) == sorted(full_deck())
    for seat in range(players):
        assert sorted(end_of_draw(deck, players, seat)) == sorted(stage.singles.get(seat, ()))


def test_a_seat_with_no_singles_completes_its_last_pair_with_the_deck_s_last_card() -> None:
    deck = stacked_deck(3, {0: cards("2s 3s 4s 5s"), 2: cards("2c 3c 4c 5c joker")})
    last_drawer = (DECK_SIZE - 1) % 3
    before_last = deck[last_drawer::3][:-1]
    assert partner(deck[-1]) in before_last  # the last draw completes a pair: hand empty


@st.composite
def singles_for(draw: st.DrawFn) -> tuple[int, dict[int, tuple]]:
    """Players, and singles with every partner at another seat and the Old Maid kept."""
    players = draw(st.integers(2, 6))
    keys = draw(st.lists(st.sampled_from(full_deck()[:-1:2]), unique=True, max_size=6))
    singles: dict[int, list] = {seat: [] for seat in range(players)}
    singles[draw(st.integers(0, players - 1))].append(JOKER)
    for first in keys:
        a, b = draw(st.lists(st.integers(0, players - 1), min_size=2, max_size=2, unique=True))
        singles[a].append(first)
        singles[b].append(partner(first))
    return players, {seat: tuple(kept) for seat, kept in singles.items()}


@settings(max_examples=60, deadline=None)
@given(singles_for())
def test_singles_are_dealt_exactly_when_every_seat_s_other_draws_are_pairs(
    dealt: tuple[int, dict[int, tuple]],
) -> None:
    players, singles = dealt
    counts = draws_per_seat(players)
    if any((counts[seat] - len(kept)) % 2 for seat, kept in singles.items()):
        with pytest.raises(ValueError):
            stacked_deck(players, singles)
        return
    deck = stacked_deck(players, singles)
    assert sorted(deck) == sorted(full_deck())
    for seat in range(players):
        assert sorted(end_of_draw(deck, players, seat)) == sorted(singles[seat])


@pytest.mark.parametrize(
    "singles",
    [
        {0: cards("2s 3s")},  # no one keeps the Old Maid
        {0: cards("2s joker"), 1: cards("3c")},  # 2s's partner and 3c's are kept by no one
        {0: cards("2s 2c joker")},  # a pair kept by one seat is no single
        {0: cards("joker 2s"), 1: cards("2c")},  # seat 0 draws 27 cards: 25 left, odd
    ],
)
def test_singles_that_cannot_be_dealt_are_refused(singles: dict[int, tuple]) -> None:
    with pytest.raises(ValueError):
        stacked_deck(2, singles)


def test_the_seed_found_seats_the_players_in_the_order_asked() -> None:
    order = ["ours2", PROGRAM, "ours1", "ours3"]
    assert seating(order, seed_seating(order, 2013)) == order


def watch_of(*records: dict) -> RingWatch:
    watch = RingWatch(frozenset({"ours1", "ours2"}))
    for record in records:
        watch.peer_event({"t": 1.0, **record})
    return watch


def test_the_watch_fails_a_pick_outside_the_offer_and_a_good_pick_refused() -> None:
    bad = watch_of({"nick": "ours1", "event": "bad_pick", "by": PROGRAM, "card_num": 5,
                    "num_cards": 3})  # fmt: skip
    assert bad.failure() is not None and "card_num 5 from an offer of 3" in bad.failure()
    refused = watch_of({"nick": "ours1", "event": "pick_refused", "by": None, "card_num": 0,
                        "num_cards": 3, "message": "no"})  # fmt: skip
    assert refused.failure() is not None and "refused ours1's pick of card_num 0" in (
        refused.failure()
    )
    # Out of range is the program's right to refuse; another of ours is none of its business.
    assert watch_of({"nick": "ours1", "event": "pick_refused", "by": None, "card_num": 3,
                     "num_cards": 3, "message": "no"}).failure() is None  # fmt: skip
    assert watch_of({"nick": "ours1", "event": "bad_pick", "by": "ours2", "card_num": 5,
                     "num_cards": 3}).failure() is None  # fmt: skip


def test_the_watch_warns_of_a_late_listener_and_an_inclusive_pick() -> None:
    watch = watch_of(
        {"nick": "ours2", "event": "dialled", "to": PROGRAM, "attempts": 4},
        {"nick": "ours1", "event": "gave", "to": PROGRAM, "card_num": 3, "num_cards": 3},
        {"nick": "ours1", "event": "gave", "to": PROGRAM, "card_num": 2, "num_cards": 3},
    )
    assert watch.failure() is None
    assert len(watch.warnings) == 2
    assert "refused 3 times (13.1" in watch.warnings[0][0]
    assert "card_num 3 from an offer of 3 cards" in watch.warnings[1][0]


def test_the_watch_follows_the_turn_to_the_program_and_away() -> None:
    watch = watch_of({"nick": "ours1", "event": "offer", "to": PROGRAM, "num_cards": 4})
    assert watch.holder == PROGRAM and "ours1's offer" in watch.handed
    watch.peer_event({"nick": "ours2", "event": "pick", "from": None, "card_num": 0})
    assert watch.holder == "ours2"


KEY = GameKey("oldmaid", 1)


def test_what_a_crash_came_after_is_what_was_seen_before_the_program_left() -> None:
    watch = RingWatch(frozenset({"ours1"}))
    reply = {"result": "ok", "players": []}
    watch.table_record(KEY, {"t": 1.0, "nick": PROGRAM, "dir": "out", "msg": reply})
    assert watch.last_seen() == 'table -> {"result":"ok","players":[]}'
    # The table's abort for its leaving comes after its exit: not what it crashed on.
    left = {"t": 2.0, "event": "aborted", "reason": f"{PROGRAM} left the table",
            "culprit": PROGRAM, "rule": "left"}  # fmt: skip
    watch.table_record(KEY, left)
    assert watch.lines[-1].startswith("table: aborted") and watch.last_seen() == watch.lines[0]
    # Another player's leaving is something it may have crashed after.
    watch.table_record(KEY, {**left, "culprit": "ours1", "reason": "ours1 left the table"})
    assert watch.last_seen() == watch.lines[-1]


STUDENT = (sys.executable, str(HERE.parent.parent / "interop" / "student_peer.py"), "--nick",
           "{nick}", "--table", "{table}")  # fmt: skip


@pytest.mark.scenario
@pytest.mark.parametrize(
    ("habit", "case_id", "says"),
    [
        (("--listen-late", "0.3"), "oldmaid.game.3", "it listens only after its join reply"),
        (("--one-recv",), "oldmaid.framing.together", "as a reader of one message a recv breaks"),
    ],
)
def test_an_older_student_s_habit_gets_a_warning(
    habit: tuple[str, ...], case_id: str, says: str, tmp_path: Path
) -> None:
    [case] = [case for case in oldmaid.cases(1.0) if case.case_id == case_id]
    [result] = trio.run(lambda: run_cases([case], Program((*STUDENT, *habit)), tmp_path))
    assert result.verdict is CaseVerdict.WARN, result.reason
    assert says in result.reason


@pytest.mark.scenario
def test_one_of_ours_that_cannot_join_is_the_checker_s_error_not_a_hang(tmp_path: Path) -> None:
    # A nick the table refuses: our player never sits, so the game could never start.
    stage = Stage(("bad nick", PROGRAM))

    async def play(context: CaseContext) -> None:
        await play_stage(context, stage, 1.0)

    case = Case("ours.cannot-join", "ours cannot join", "-", play, 60.0, name=PROGRAM,
                starts_itself=True)  # fmt: skip
    [result] = trio.run(lambda: run_cases([case], Program(STUDENT), tmp_path))
    assert result.verdict is CaseVerdict.ERROR, result.reason
    assert "our player bad nick could not join the table" in result.reason
