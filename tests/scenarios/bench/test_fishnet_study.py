"""The FishNet strength study: its candidate players and its seeded, repeatable figures."""

from __future__ import annotations

import pytest

from scenarios.bench import fishnet_study
from scenarios.bench.fishnet_study import AliceRandom, BobMost, OldBob, play_pair


def test_old_bob_asks_again_for_a_rank_the_opponent_lacked_once_it_has_fished() -> None:
    bob = OldBob(seed=1)
    for rank in (5, 5, 5, 7, 8, 9, 10):
        bob.hear(f"fish {rank}")
    assert bob.hear("yourturn") == "request 5"  # the rank he holds most of
    bob.hear("fish 11")  # a miss: the opponent lacks 5s
    bob.hear("request 12")  # the opponent's turn; takes nothing, so it fished
    assert bob.hear("yourturn") == "request 5"


def test_bob_most_asks_for_his_largest_holding_the_opponent_is_not_known_to_lack() -> None:
    bob = BobMost(seed=1)
    for rank in (5, 5, 5, 7, 7, 9, 10):
        bob.hear(f"fish {rank}")
    assert bob.hear("yourturn") == "request 5"
    bob.hear("fish 11")  # a miss: the opponent lacks 5s
    bob.hear("request 12")  # it fished, but has not asked for 5s
    assert bob.hear("yourturn") == "request 7"


def test_alice_rand_asks_at_random_where_alice_asks_for_her_largest_holding() -> None:
    asked = set()
    for seed in range(20):
        alice = AliceRandom(seed=seed)
        for rank in (2, 4, 4, 4, 6, 8, 10):
            alice.hear(f"fish {rank}")
        asked.add(alice.hear("yourturn"))
    assert "request 4" in asked and len(asked) > 1


def test_pairs_are_seeded_and_count_every_game() -> None:
    first = play_pair("bob", "spot", games=40, seed=9)
    again = play_pair("bob", "spot", games=40, seed=9)
    other = play_pair("bob", "spot", games=40, seed=10)
    assert (first.wins, first.ties, first.losses) == (again.wins, again.ties, again.losses)
    assert first.games == 40 and other.games == 40
    assert (first.wins, first.ties, first.losses) != (other.wins, other.ties, other.losses)


def test_the_study_prints_a_row_per_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert fishnet_study.main(["--games", "6", "--seed", "3"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if " v " in line]
    assert len(rows) == len(fishnet_study.PAIRS)
    for row, (first, second) in zip(rows, fishnet_study.PAIRS, strict=True):
        assert row.split()[:3] == [first, "v", second]
        games, wins, ties, losses = (int(word) for word in row.split()[3:7])
        assert games == wins + ties + losses == 6
