"""The pause between ``ok`` and ``pick`` for an offerer that reads one message a recv."""

from __future__ import annotations

import pytest

from ring.oldmaid.peer import PICK_PAUSE_FACTOR, PICK_PAUSE_MAX, Peer, PeerConfig


def _peer() -> Peer:
    return Peer(PeerConfig(nick="ann", table=("127.0.0.1", 9), pick_pause=0.05))


def test_without_answers_seen_the_pause_is_the_configured_one() -> None:
    assert _peer().picks.pick_pause() == 0.05


@pytest.mark.parametrize("slowest", [0.001, 0.01, 0.05, 0.1, 2.0])
def test_the_pause_follows_the_slowest_recent_answer_within_bounds(slowest: float) -> None:
    peer = _peer()
    peer.picks.slow_answers.extend([0.001, slowest, 0.002])
    expected = min(PICK_PAUSE_MAX, max(0.05, PICK_PAUSE_FACTOR * slowest))
    assert peer.picks.pick_pause() == pytest.approx(expected)


def test_an_old_slow_answer_is_forgotten() -> None:
    peer = _peer()
    peer.picks.slow_answers.append(0.1)
    peer.picks.slow_answers.extend([0.001] * peer.picks.slow_answers.maxlen)  # type: ignore[operator]
    assert peer.picks.pick_pause() == 0.05
