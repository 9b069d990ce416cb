"""The table's rules without sockets: accusations (docs/protocols/oldmaid.md 5.9) and
impersonation.
"""

from __future__ import annotations

from services.oldmaid.referee.rules import Aborted, Accused, GameState, TableGame
from tests.helpers.oldmaid_referee import address, deal_all, empty_hand, error_text, nicks, started

# -- accusations (protocol 5.9) -------------------------------------------------------


def test_an_accusation_from_a_dialled_connection_names_the_accused_after_its_window() -> None:
    game = started(4)
    order = nicks(game)
    game.take_events()
    evidence = {"num_cards": 5, "card_nums": [1, 3]}
    answer = game.accuse(order[0], order[1], "second_pick", evidence)
    assert "in a moment naming" in answer and game.pending is not None
    assert game.state is GameState.PLAYING
    game.leave(order[0])  # the accuser leaves once it has said it: no abort naming it
    assert game.state is GameState.PLAYING
    game.settle()
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[1], "second_pick")
    assert game.reason is not None
    assert game.reason.startswith(f"{order[1]} picked twice from one offer of {order[0]}'s")
    assert game.reason.endswith(f"reported by {order[0]}")
    events = game.take_events()
    assert events[0] == Accused(order[0], order[1], "second_pick", "pending")
    assert events[-1] == Aborted(game.reason, order[1], "second_pick")


def test_the_accused_leaving_settles_the_accusation_at_once() -> None:
    game = started(3)
    order = nicks(game)
    game.accuse(order[0], order[1], "bad_picks", {})
    game.leave(order[1])
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[1], "bad_picks")


def test_an_accusation_that_contradicts_the_table_is_refused_and_the_game_goes_on() -> None:
    game = started(4)
    order = nicks(game)
    # A picker is the next player in to the left, not one further on.
    text = error_text(game.accuse, order[0], order[2], "second_pick", {})
    assert f"{order[2]} is not the player {order[0]} offers to: {order[1]} sits" in text
    assert "unknown rule" in error_text(game.accuse, order[0], order[1], "cheating", {})
    assert "names the accused" in error_text(game.accuse, order[0], None, "false_out", {})
    assert "itself" in error_text(game.accuse, order[0], order[0], "duplicate_card", {})
    deal_all(game)
    empty_hand(game, order[1])
    game.out_of_cards(order[1])
    assert "is out, so it answers out" in error_text(
        game.accuse, order[0], order[1], "false_out", {}
    )
    assert game.state is GameState.PLAYING and game.pending is None
    # With order[1] out, order[2] is the one order[0] offers to.
    game.accuse(order[0], order[2], "second_pick", {})
    assert game.pending is not None


def test_two_players_accusing_each_other_are_both_left_unblamed() -> None:
    game = started(2)
    order = nicks(game)
    game.accuse(order[0], order[1], "false_out", {})
    game.accuse(order[0], order[1], "second_pick", {})  # more of the same: noted
    assert game.state is GameState.PLAYING
    text = game.accuse(order[1], order[0], "second_pick", {})
    assert text.startswith(f"{order[0]} and {order[1]} accuse each other")
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, None, "mutual")
    game.settle()  # nothing pending any more
    assert game.reason == text


def test_an_accusation_about_what_reached_the_accuser_names_no_one() -> None:
    for rule in ("duplicate_card", "second_joker", "not_neighbour", "pass_while_in"):
        game = started(3)
        order = nicks(game)
        text = game.accuse(order[1], order[0], rule, {"what": "got  a card\nit holds"})
        assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, None, rule)
        assert f"from {order[0]}, as {order[1]} was told" in text and "names no one" in text
        assert "(got a card it holds)" in text
        game = started(3)
        game.accuse(nicks(game)[1], None, rule, {})
        assert (game.state, game.culprit) == (GameState.ABORTED, None)


def test_impersonation_names_the_one_player_that_sends_no_proofs() -> None:
    game = TableGame(4, 1)
    for i in range(4):
        game.join(f"p{i}", address(i))
    game.verified.update({"p0", "p1", "p2"})
    game.start()
    started_event = game.take_events()[-1]
    assert sorted(started_event.verified or []) == ["p0", "p1", "p2"]
    # Only a verified player can tell; two that send no proofs cannot be told apart.
    assert "did not join with verify" in error_text(game.accuse, "p3", "p0", "impersonation", {})
    game.accuse("p0", "p3", "impersonation", {"what": "a turn as p1 without a proof"})
    game.settle()
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, "p3", "impersonation")


def test_impersonation_with_two_older_clients_names_no_one_and_the_game_goes_on() -> None:
    """A refused turn changed nothing: an accusation of it that cannot name its author is
    noted, and the game goes on (a cheater cannot end a game by forging turns)."""
    game = started(4)
    game.verified.update({"p0", "p1"})
    assert "neither do" in error_text(game.accuse, "p0", "p3", "impersonation", {})
    text = game.accuse("p0", None, "impersonation", {})
    assert text.startswith("noted: p0 refused a turn;") and "the game goes on" in text
    assert (game.state, game.pending) == (GameState.PLAYING, None)
    assert game.take_events()[-1] == Accused("p0", None, "impersonation", "noted", text)


def test_an_unproved_impersonation_in_a_verified_game_is_noted_and_the_game_goes_on() -> None:
    game = started(3)
    game.verified.update(nicks(game))
    game.reports_exchanges = True
    order = nicks(game)
    text = game.accuse(order[0], order[1], "impersonation", {"what": "no mac"})
    assert f"refused a turn sent as {order[1]} (no mac)" in text
    assert (game.state, game.culprit) == (GameState.PLAYING, None)


def test_a_game_does_not_end_normally_while_an_accusation_waits() -> None:
    """The last out_of_cards would end the game with a loser; a pending accusation
    always ends it instead, so the end waits for its verdict (issue 44)."""
    game = started(3)
    order = nicks(game)
    deal_all(game)
    for nick in order[1:]:
        empty_hand(game, nick)
    game.out_of_cards(order[1])
    # order[0] accuses the next player in to its left, still in: order[2].
    game.accuse(order[0], order[2], "second_pick", {})
    game.out_of_cards(order[2])
    assert game.state is GameState.PLAYING and game.loser is None
    game.end_without_pairs()  # the decided game's grace: the verdict still comes first
    assert game.state is GameState.PLAYING
    game.settle()
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[2], "second_pick")


# -- a witnessed game: a word ends nothing (protocol 14.6) --------------------------------


def witnessed(players: int) -> TableGame:
    game = started(players)
    game.verified.update(nicks(game))
    game.reports_exchanges = True
    game.witnessed = True
    game.take_events()
    return game


def test_in_a_witnessed_game_a_give_up_is_noted_and_its_reporter_named_only_if_it_leaves() -> None:
    game = witnessed(4)
    order = nicks(game)
    text = game.give_up(order[0], order[2], "did not answer offer within 10 s")
    assert text.startswith(f"noted: {order[0]} gave up, saying {order[2]} did not answer")
    assert "the game goes on" in text
    assert (game.state, game.culprit) == (GameState.PLAYING, None)
    assert game.give_up(order[1], None, "heard nothing").startswith(f"noted: {order[1]} gave up:")
    assert game.state is GameState.PLAYING
    game.leave(order[0])  # it leaves while in, as it said it would: that is what is named
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[0], "left")


def test_in_a_witnessed_game_an_accusation_the_table_cannot_prove_ends_nothing() -> None:
    for rule, accuser, accused in (
        ("duplicate_card", 1, 0), ("second_pick", 0, 1), ("bad_picks", 0, 1),
        ("not_neighbour", 1, 0), ("false_out", 0, 1), ("impersonation", 2, None),
    ):  # fmt: skip
        game = witnessed(3)
        order = nicks(game)
        named = None if accused is None else order[accused]
        text = game.accuse(order[accuser], named, rule, {})
        assert text.startswith("noted: "), (rule, text)
        assert (game.state, game.culprit, game.pending) == (GameState.PLAYING, None, None)
        assert game.take_events()[-1].verdict == "noted"
