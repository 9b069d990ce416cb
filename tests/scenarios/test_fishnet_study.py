"""The FishNet strength study: its candidate players and its seeded, repeatable figures."""

from __future__ import annotations

import pytest

from scenarios import fishnet_study
from scenarios.fishnet_study import AliceMost, BobLacks, play_pair


def test_bob_lacks_leaves_out_a_rank_the_opponent_lacks_until_it_asks_for_it() -> None:
    bob = BobLacks(seed=1)
    for rank in (5, 5, 5, 7, 8, 9, 10):
        bob.hear(f"fish {rank}")
    assert bob.hear("yourturn") == "request 5"  # the rank he holds most of
    bob.hear("fish 11")  # a miss: the opponent lacks 5s
    bob.hear("request 12")  # the opponent's turn; it fished (bob holds no 12s)
    assert bob.hear("yourturn") != "request 5"  # a fish since does not bring 5 back
    bob.hear("fish 3")
    bob.hear("request 5")  # the opponent shows a 5 and takes bob's three
    bob.hear("fish 5")
    bob.hear("fish 5")
    assert bob.hear("yourturn") == "request 5"


def test_alice_most_asks_for_her_largest_holding_where_alice_would_pick_at_random() -> None:
    alice = AliceMost(seed=1)
    for rank in (2, 4, 4, 4, 6, 8, 10):
        alice.hear(f"fish {rank}")
    assert alice.hear("yourturn") == "request 4"


def test_pairs_are_seeded_and_count_every_game() -> None:
    first = play_pair("bob-lacks", "spot", games=40, seed=9)
    again = play_pair("bob-lacks", "spot", games=40, seed=9)
    other = play_pair("bob-lacks", "spot", games=40, seed=10)
    assert (first.wins, first.ties, first.losses) == (again.wins, again.ties, again.losses)
    assert first.games == 40 and other.games == 40
    assert (first.wins, first.ties, first.losses) != (other.wins, other.ties, other.losses)


def test_the_study_prints_a_row_per_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert fishnet_study.main(["--games", "6", "--seed", "3"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if " v " in line]
    assert len(rows) == len(fishnet_study.PAIRS)
    for row, (first, second) in zip(rows, fishnet_study.PAIRS, strict=True):
        assert row.split()[:3] == [first, "v", second]
        wins, ties, losses = (int(word) for word in row.split()[3:6])
        assert wins + ties + losses == 6
