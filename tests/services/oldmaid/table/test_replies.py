"""The table's status reply, join reply and game_over notice, as the wire sees them."""

from __future__ import annotations

import msgspec

from ring.oldmaid import proofs
from ring.oldmaid.messages import GameOver
from services.oldmaid.referee.rules import GameState, Standing
from services.oldmaid.table.replies import end_notice, join_reply, status_reply

KEY = proofs.game_key(7)
PLAYERS = [(("127.0.0.1", 4001), "ann"), (("127.0.0.1", 4002), "bob")]


def wire(message: object) -> dict[str, object]:
    return msgspec.json.decode(msgspec.json.encode(message))


def test_status_of_a_game_under_way_from_older_clients_has_no_extension_fields() -> None:
    standing = Standing(GameState.PLAYING, ("ann", "bob"), ())
    assert wire(status_reply(standing, (), reported=False)) == {
        "result": "ok", "in": ["ann", "bob"], "out": [], "state": "playing",
    }  # fmt: skip


def test_status_of_an_ended_game_names_the_loser_or_the_reason() -> None:
    over = Standing(GameState.OVER, ("bob",), ("ann",), loser="bob", undiscarded=1)
    reply = wire(status_reply(over, {"bob", "ann"}, reported=True))
    assert reply["game_over"] is True and reply["loser"] == "bob" and reply["undiscarded"] == 1
    assert reply["verified"] == ["ann", "bob"] and reply["report"] is True
    assert "aborted" not in reply
    aborted = Standing(GameState.ABORTED, ("ann", "bob"), (), reason="bob left the table")
    reply = wire(status_reply(aborted, (), reported=False))
    assert reply["aborted"] is True and reply["reason"] == "bob left the table"
    assert "game_over" not in reply and "loser" not in reply


def test_an_older_client_sees_the_plain_join_reply_even_in_a_game_of_verifiers() -> None:
    reply = wire(join_reply(PLAYERS, "ann", ["bob"], KEY, reported=False, witnessed=False))
    assert reply == {"result": "ok", "players": [[["127.0.0.1", 4001], "ann"],
                                                 [["127.0.0.1", 4002], "bob"]]}  # fmt: skip


def test_a_verifier_gets_its_secret_the_others_proofs_and_the_games_mode() -> None:
    verified = ["ann", "bob"]
    reply = wire(join_reply(PLAYERS, "ann", verified, KEY, reported=True, witnessed=True))
    assert reply["secret"] == proofs.secret_for(KEY, "ann")
    assert reply["proofs"] == {"bob": proofs.proof(proofs.secret_for(KEY, "bob"), "ann")}
    assert reply["report"] is True and reply["witness"] is True
    plain = wire(join_reply(PLAYERS, "ann", verified, KEY, reported=False, witnessed=False))
    assert "report" not in plain and "witness" not in plain and plain["secret"]


def test_the_end_notice_names_the_loser_or_why_it_was_aborted() -> None:
    over = Standing(GameState.OVER, ("bob",), ("ann",), loser="bob")
    assert end_notice(over) == GameOver(loser="bob", out=["ann"], undiscarded=0)
    aborted = Standing(GameState.ABORTED, ("ann",), (), reason="the table shut down")
    assert end_notice(aborted) == GameOver(aborted=True, reason="the table shut down")
