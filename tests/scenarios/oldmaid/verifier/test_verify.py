"""The verifier against synthetic games: a clean game passes, each planted fault is caught.

``simulate`` (``tests/helpers/oldmaid_simulated.py``) plays a whole Old Maid game in one
process with a seeded RNG and writes what the table and the peers would log
(docs/logs.md), with a fake monotonic clock. Every mutation below breaks one rule and
must fail exactly the check that owns that rule, and no other.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ring.games.record import games_of
from scenarios.oldmaid.verifier import verify
from scenarios.oldmaid.verifier.verify import GameRecords
from tests.helpers.oldmaid_simulated import Record, failing, simulate, without_logs

# A game with skips, passes, an empty hand after the draw and a long ring:
# the mutations below need all of those to have something to break.
SEED = 7


@pytest.fixture
def game() -> GameRecords:
    records = simulate(8, SEED)
    summary = verify.summarise(records)
    assert summary.skips > 0 and summary.passes > 0
    return records


# --- clean games pass -------------------------------------------------------------


def test_clean_game_passes_every_check(game: GameRecords) -> None:
    results = verify.verify(game)
    assert [r.name for r in results] == list(verify.FINDING_NAMES)
    assert failing(game) == {}
    summary = verify.summarise(game)
    assert len(summary.out_order) == 7
    assert summary.loser not in summary.out_order
    assert summary.offers + summary.passes == len(summary.handoffs)
    assert len(summary.durations) == len(summary.handoffs)
    assert all(d > 0 for d in summary.durations)
    # The simulated transcript is one game in the envelope, as the table writes it.
    (recorded,) = games_of(game.transcript)
    assert recorded.players == summary.seats
    assert recorded.end is not None and recorded.end.losers == [summary.loser]


@settings(max_examples=150, derandomize=True, deadline=None)
@given(players=st.integers(2, 8), seed=st.integers(0, 2**32 - 1))
def test_every_simulated_game_passes(players: int, seed: int) -> None:
    assert failing(simulate(players, seed)) == {}


@settings(max_examples=60, derandomize=True, deadline=None)
@given(players=st.integers(3, 8), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_games_with_logless_peers_pass(players: int, seed: int, data: st.DataObject) -> None:
    records = simulate(players, seed)
    seats = verify.seat_order(records)
    # Any set of independent peers, even neighbours, as long as one peer logs.
    silent = data.draw(st.lists(st.sampled_from(seats), unique=True, max_size=players - 1))
    assert failing(without_logs(records, silent)) == {}


def test_handoffs_follow_the_ring_from_the_last_drawer(game: GameRecords) -> None:
    handoffs = verify.summarise(game).handoffs
    drawer, _ = verify.last_drawer(game)
    assert handoffs[0].giver == drawer
    for before, after in itertools.pairwise(handoffs):
        assert after.giver == before.receiver


# --- each planted fault fails exactly its own check ---------------------------------


def _events(records: GameRecords, nick: str, kind: str) -> list[Record]:
    return [e for e in records.events[nick] if e["event"] == kind]


def _offers_without_skips(records: GameRecords) -> list[tuple[str, int]]:
    """(giver, index in its log) of offers made to the immediate left neighbour."""
    seats = verify.seat_order(records)
    found = []
    for nick, log in records.events.items():
        skipped = False
        for index, event in enumerate(log):
            if event["event"] == "skip":
                skipped = True
            elif event["event"] in ("offer", "pass", "your_turn", "lost"):
                left = seats[(seats.index(nick) + 1) % len(seats)]
                if event["event"] == "offer" and not skipped and event["to"] == left:
                    found.append((nick, index))
                skipped = False
    return sorted(found, key=lambda spot: records.events[spot[0]][spot[1]]["t"])


def _matching(records: GameRecords, giver: str, offer: Record, kind: str) -> Record:
    receiver_log = records.events[offer["to"]]
    return next(
        e
        for e in receiver_log
        if e["event"] == kind and e.get("from") == giver and e["t"] > offer["t_offer"]
    )


def _move_pick(records: GameRecords, giver: str, offer: Record, to: str) -> None:
    pick = _matching(records, giver, offer, "pick")
    records.events[offer["to"]].remove(pick)
    pick["nick"] = to
    records.events[to].append(pick)
    records.events[to].sort(key=lambda e: e["t"])


def offer_skips_a_player_who_is_in(records: GameRecords) -> None:
    seats = verify.seat_order(records)
    outs = verify.out_times(records)
    for giver, index in _offers_without_skips(records):
        offer = records.events[giver][index]
        beyond = seats[(seats.index(offer["to"]) + 1) % len(seats)]
        if beyond != giver and outs.get(beyond, float("inf")) > offer["t"]:
            gave = next(e for e in records.events[giver][index:] if e["event"] == "gave")
            _move_pick(records, giver, offer, beyond)
            offer["to"] = gave["to"] = beyond
            return
    raise AssertionError("no offer to mutate")


def picker_does_not_take_the_next_turn(records: GameRecords) -> None:
    # Erase one whole handoff: the turn then seems to jump from the picker
    # before it to the picker after it.
    giver, index = _offers_without_skips(records)[len(_offers_without_skips(records)) // 2]
    log = records.events[giver]
    offer = log[index]
    pick = _matching(records, giver, offer, "pick")
    gave = next(e for e in log[index:] if e["event"] == "gave")
    log.remove(offer)
    log.remove(gave)
    records.events[offer["to"]].remove(pick)


def skip_over_a_player_who_is_in(records: GameRecords) -> None:
    giver, index = _offers_without_skips(records)[0]
    offer = records.events[giver][index]
    forged = {
        "t": (offer["t_start"] + offer["t_offer"]) / 2,
        "nick": giver,
        "event": "skip",
        "over": offer["to"],
        "phase": "offer",
    }
    records.events[giver].insert(index, forged)


def _loser(records: GameRecords) -> str:
    over = verify.over_record(records)
    assert over is not None
    return over["loser"]


def second_loser(records: GameRecords) -> None:
    other = next(n for n in verify.seat_order(records) if n != _loser(records))
    last = records.events[other][-1]["t"]
    records.events[other].append(
        {"t": last + 1e-5, "nick": other, "event": "lost", "hand": [["joker", "maid"]]}
    )


def loser_without_the_joker(records: GameRecords) -> None:
    (lost,) = _events(records, _loser(records), "lost")
    lost["hand"] = [["7", "hearts"]]


def pair_discarded_twice(records: GameRecords) -> None:
    index = next(i for i, r in enumerate(records.transcript) if r.get("event") == "discarded")
    records.transcript.insert(index + 1, copy.deepcopy(records.transcript[index]))


def pair_missing(records: GameRecords) -> None:
    record = [r for r in records.transcript if r.get("event") == "discarded"][10]
    records.transcript.remove(record)
    nick = record["nick"]
    records.events[nick].remove(
        next(e for e in _events(records, nick, "discard") if e["cards"] == record["cards"])
    )


def final_out_order_swapped(records: GameRecords) -> None:
    over = verify.over_record(records)
    assert over is not None
    over["out"][0], over["out"][1] = over["out"][1], over["out"][0]


def table_counts_out_after_a_later_player_saw_itself_out(records: GameRecords) -> None:
    # The first player out is counted only after the second already had its
    # acknowledgement, yet the table still ranks the first one first.
    first, second = [r for r in records.transcript if r.get("event") == "out"][:2]
    (seen,) = _events(records, second["nick"], "out")
    first["t"] = seen["t"] + 1e-6


def peer_exits_non_zero(records: GameRecords) -> None:
    nick = verify.seat_order(records)[2]
    records.exits[nick] = 1


def peer_killed(records: GameRecords) -> None:
    records.exits["table"] = None


def picked_card_differs(records: GameRecords) -> None:
    giver, index = _offers_without_skips(records)[0]
    pick = _matching(records, giver, records.events[giver][index], "pick")
    pick["card"] = ["joker", "maid"] if pick["card"] != ["joker", "maid"] else ["A", "spades"]


def giver_never_gives_the_card(records: GameRecords) -> None:
    giver, index = _offers_without_skips(records)[1]
    log = records.events[giver]
    log.remove(next(e for e in log[index:] if e["event"] == "gave"))


def draws_out_of_turn(records: GameRecords) -> None:
    third, fourth = [r for r in records.transcript if r.get("event") == "dealt"][2:4]
    third["nick"], fourth["nick"] = fourth["nick"], third["nick"]


def first_offer_not_from_the_last_drawer(records: GameRecords) -> None:
    # The table and the peers agree that someone else drew the last card.
    dealt = [r for r in records.transcript if r.get("event") == "dealt"]
    last, before = dealt[-1], dealt[-2]
    last["last"], before["last"] = False, True
    for record in (last, before):
        draw = next(
            e for e in _events(records, record["nick"], "draw") if e["card"] == record["card"]
        )
        draw["last"] = record["last"]


def peer_prints_the_wrong_place(records: GameRecords) -> None:
    over = verify.over_record(records)
    assert over is not None
    records.lines[over["out"][0]] = ["out 2nd of 8"]


def discards_another_players_card_in_the_draw(records: GameRecords) -> None:
    # The table took a pair, while cards were still dealt, from a player it had
    # not dealt them to (and that player logs it as its own).
    last_deal = max(i for i, r in enumerate(records.transcript) if r.get("event") == "dealt")
    record = next(r for r in records.transcript[:last_deal] if r.get("event") == "discarded")
    seats = verify.seat_order(records)
    owner, other = record["nick"], seats[(seats.index(record["nick"]) + 1) % len(seats)]
    event = next(e for e in _events(records, owner, "discard") if e["cards"] == record["cards"])
    records.events[owner].remove(event)
    records.events[other].append({**event, "nick": other})
    record["nick"] = other


def counts_a_player_out_that_holds_cards(records: GameRecords) -> None:
    # The first player out, counted as soon as the deck was empty: by its count it
    # still held most of its cards.
    transcript = records.transcript
    first = next(r for r in transcript if r.get("event") == "out")
    transcript.remove(first)
    last_deal = max(i for i, r in enumerate(transcript) if r.get("event") == "dealt")
    transcript.insert(last_deal + 1, first)


MUTATIONS: list[tuple[Callable[[GameRecords], None], str, str]] = [
    (offer_skips_a_player_who_is_in, verify.HANDOFF, "who is still in"),
    (picker_does_not_take_the_next_turn, verify.HANDOFF, "holds the turn"),
    (picked_card_differs, verify.HANDOFF, "picked"),
    (giver_never_gives_the_card, verify.HANDOFF, "logged no gave"),
    (draws_out_of_turn, verify.HANDOFF, "turn"),
    (first_offer_not_from_the_last_drawer, verify.HANDOFF, "holds the turn"),
    (skip_over_a_player_who_is_in, verify.SKIPS, "who was not out"),
    (second_loser, verify.LOSER, "lost events name"),
    (loser_without_the_joker, verify.LOSER, "not just the Old Maid"),
    (pair_discarded_twice, verify.PAIRS, "discarded 2 times"),
    (pair_missing, verify.PAIRS, "never discarded"),
    (final_out_order_swapped, verify.OUT_ORDER, "final out order"),
    (table_counts_out_after_a_later_player_saw_itself_out, verify.OUT_ORDER, "before the table"),
    (peer_exits_non_zero, verify.EXITS, "exited 1"),
    (peer_killed, verify.EXITS, "table did not exit"),
    (peer_prints_the_wrong_place, verify.LINES, "printed ['out 2nd of 8']"),
    (discards_another_players_card_in_the_draw, verify.CLAIMS, "before the deck was empty"),
    (counts_a_player_out_that_holds_cards, verify.CLAIMS, "holding at least"),
]


@pytest.mark.parametrize(
    ("mutate", "check", "reason"), MUTATIONS, ids=[m.__name__ for m, _, _ in MUTATIONS]
)
def test_mutation_fails_exactly_its_check(
    game: GameRecords, mutate: Callable[[GameRecords], None], check: str, reason: str
) -> None:
    mutate(game)
    failed = failing(game)
    assert set(failed) == {check}, failed
    assert reason in failed[check]


def test_missing_game_over_fails() -> None:
    records = simulate(4, 1)
    records.transcript = [r for r in records.transcript if r.get("event") != "over"]
    failed = failing(records)
    assert "the table recorded no game over" in failed[verify.LOSER]
    assert verify.OUT_ORDER in failed


def test_malformed_records_fail_instead_of_crashing() -> None:
    records = simulate(4, 2)
    for log in records.events.values():
        for event in log:
            if event["event"] == "skip":
                del event["over"]
    del records.transcript[-2]["t"]  # the last before the end
    del records.transcript[2]["players"]  # started
    for log in records.events.values():
        del log[0]["players"]
    results = verify.verify(records)
    assert [r.name for r in results] == list(verify.FINDING_NAMES)
    assert not all(r.ok for r in results)
    summary = verify.summarise(records)
    assert summary.seats == []


def test_both_ways_of_losing_pass() -> None:
    # A loser either finds no one else in by dialling round, or hears from
    # the table first (and the last pass may then be cut short or arrive
    # late). The simulator plays all of these; every one must pass.
    how = []
    for seed in range(40):
        records = simulate(2 + seed % 7, seed)
        assert failing(records) == {}, seed
        (lost,) = _events(records, _loser(records), "lost")
        how.append(lost["how"])
        if lost["how"] == "no one else in":
            # Dialling came round to the loser itself, skipping everyone.
            kinds = [e["event"] for e in records.events[_loser(records)]]
            assert kinds[kinds.index("lost") - 1] == "skip"
    assert set(how) == {"table", "no one else in"}


def test_a_round_that_stops_before_the_game_is_over_fails() -> None:
    # Seed 0 ends with the last holder's pass to the loser cut short by the
    # game over. Had the table not yet recorded the game over, stopping would
    # strand the turn.
    records = simulate(8, 0)
    assert failing(records) == {}
    last_moves = [
        [e for e in log if e["event"] not in ("game_over", "exit")][-1]
        for log in records.events.values()
    ]
    stopped = [event for event in last_moves if event["event"] == "skip"]
    assert stopped, "seed 0 no longer ends with a round cut short"
    over = verify.over_record(records)
    assert over is not None
    over["t"] = max(e["t"] for e in stopped) + 1e-6
    failed = failing(records)
    assert set(failed) == {verify.SKIPS}, failed
    assert "never finished dialling" in failed[verify.SKIPS]
