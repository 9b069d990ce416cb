"""Who is on the other end (protocol 14.5): proofs, and the peer's check of them."""

from __future__ import annotations

import pytest

from ring.oldmaid import proofs
from ring.oldmaid.proofs import Forged, Identity

KEY = b"k" * 32


def identity(me: str, verified: list[str], players: list[str]) -> Identity:
    ident = Identity()
    ident.take(
        me,
        players,
        proofs.secret_for(KEY, me) if me in verified else None,
        proofs.expected_proofs(KEY, me, verified),
    )
    return ident


def test_a_proof_is_what_the_receiver_expects_and_no_use_with_another() -> None:
    alice = identity("alice", ["alice", "bob", "carol"], ["alice", "bob", "carol"])
    bob = identity("bob", ["alice", "bob", "carol"], ["alice", "bob", "carol"])
    carol = identity("carol", ["alice", "bob", "carol"], ["alice", "bob", "carol"])
    to_bob = alice.proof_to("bob")
    assert bob.check("alice", to_bob, None) == "alice"
    with pytest.raises(Forged):
        carol.check("alice", to_bob, None)  # replayed to another player
    with pytest.raises(Forged):
        bob.check("carol", to_bob, None)  # alice's proof, carol's name


def test_a_connection_that_proved_one_player_cannot_speak_as_another() -> None:
    bob = identity("bob", ["alice", "bob", "carol"], ["alice", "bob", "carol"])
    proved = bob.check("alice", identity("alice", ["alice"], []).proof_to("bob"), None)
    assert bob.check("alice", None, proved) == "alice"
    assert bob.check(None, None, proved) == "alice"
    with pytest.raises(Forged) as caught:
        bob.check("carol", None, proved)
    assert caught.value.culprit == "alice"


def test_a_turn_without_proof_as_a_verified_player_names_the_one_unverified() -> None:
    players = ["alice", "bob", "carol", "dave"]
    bob = identity("bob", ["alice", "bob", "carol"], players)
    with pytest.raises(Forged) as caught:
        bob.check("alice", None, None)
    assert caught.value.culprit == "dave"
    assert bob.check("dave", None, None) is None  # an older client: as before
    assert bob.check(None, None, None) is None  # dave may send no from
    two_old = identity("bob", ["alice", "bob"], players)
    with pytest.raises(Forged) as caught:
        two_old.check("alice", None, None)
    assert caught.value.culprit is None


def test_no_proofs_expected_means_no_checks() -> None:
    old = identity("bob", [], ["alice", "bob"])
    assert old.proof_to("alice") is None
    assert old.check("alice", "junk", None) is None
    everyone = identity("bob", ["alice", "bob", "carol"], ["alice", "bob", "carol"])
    with pytest.raises(Forged):
        everyone.check(None, None, None)  # every player proves: a stranger
