"""The table's rules without sockets: going out, the end of a game, players who leave,
left with the turn, giving up, aborts.
"""

from __future__ import annotations

import pytest

from ring.oldmaid.cards import split_pairs
from services.oldmaid.referee.rules import (
    DECK_SIZE,
    PAIRS,
    REPORT_QUIET,
    Aborted,
    Discarded,
    GameState,
    Left,
    Over,
    TableGame,
    WentOut,
)
from tests.helpers.oldmaid_referee import (
    THREE_C,
    THREE_S,
    address,
    deal_all,
    drawn_pair,
    empty_hand,
    error_text,
    nicks,
    out_but,
    started,
)

# -- going out and the end -----------------------------------------------------------


def test_going_out_counts_only_once_the_deck_is_empty() -> None:
    game = started(2)
    order = nicks(game)
    assert game.out_of_cards(order[0]) is False  # an early notice is ok, and ignored
    game.draw(order[0])
    assert game.out_of_cards(order[0]) is False
    deal_all(game)
    empty_hand(game, order[1])
    while game.undiscarded_pairs > 1:
        game.discard(order[0], *drawn_pair(game))
    game.take_events()
    assert game.out_of_cards(order[1]) is True
    assert game.take_events() == [WentOut(order[1], 1)]
    assert game.out_of_cards(order[1]) is False  # repeated: nothing changes
    assert game.out == (order[1],)


def test_a_true_flag_on_a_discard_counts_as_out_only_after_the_draw() -> None:
    game = started(3)
    order = nicks(game)
    # Deal until some pair is drawn; the flag then says "my hand is empty".
    while not split_pairs(game.drawn)[1]:
        game.draw(game.turn)
    first, second = split_pairs(game.drawn)[1][0]
    game.discard(order[0], first, second, declares_out=True)
    assert game.out == ()
    deal_all(game)
    game.discard(order[1], *drawn_pair(game))
    while game.least_held(order[1])[0] > 2:
        game.discard(order[1], *drawn_pair(game))
    first, second = drawn_pair(game)
    game.take_events()
    game.discard(order[1], first, second, declares_out=True)
    assert game.out == (order[1],)
    assert game.take_events() == [Discarded(order[1], [first, second]), WentOut(order[1], 1)]
    first, second = drawn_pair(game)
    assert "out of the game" in error_text(game.discard, order[1], first, second)


def test_the_last_player_in_holds_the_old_maid() -> None:
    for declares in (False, True):
        game = started(3)
        order = nicks(game)
        out_but(game, order[1], missing=1)
        assert game.decided
        discarded = game.discarded
        if declares:
            text = error_text(game.discard, order[1], *drawn_pair(game), declares_out=True)
        else:
            text = error_text(game.out_of_cards, order[1])
        # Someone lies: the claimant, or a player out holding the Old Maid.
        assert text.startswith(f"the Old Maid vanished: {order[1]}, the last player in")
        assert order[0] in text and order[2] in text
        assert (game.state, game.culprit, game.rule) == (
            GameState.ABORTED,
            None,
            "old_maid_vanished",
        )
        assert game.discarded == discarded  # the refused discard changed nothing


def test_an_empty_hand_that_must_hold_cards_names_the_liar() -> None:
    game = started(2)
    order = nicks(game)
    deal_all(game)
    least, why = game.least_held(order[0])
    assert least >= 24 and "dealt it 2" in why
    text = error_text(game.out_of_cards, order[0])
    assert text.startswith(f"{order[0]} claimed an empty hand, but it holds at least {least}")
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, order[0], "hand_not_empty")


def test_in_a_verified_game_the_count_leaves_an_empty_hand_to_the_ledger() -> None:
    """A cheater's pass from a player in breaks the count's premise (passes come only from
    players out), so the count would name the honest player it passed to; a verified
    game's ledger knows the hand exactly and judges the claim in order (issue 44)."""
    game = started(2)
    game.reports_exchanges = True
    order = nicks(game)
    deal_all(game)
    assert game.least_held(order[0])[0] >= 24
    assert game.out_of_cards(order[0]) is True
    assert game.decided  # the loser's pairs: its own to discard, then the grace ends it
    game.end_without_pairs()
    assert game.state is GameState.OVER and game.loser == order[1]


def test_what_an_empty_hand_may_still_hold() -> None:
    # A pass from each player out right next to it, and the first offer turn of
    # the last card's drawer, let a player give a card it never picked.
    game = started(4)
    order = nicks(game)
    deal_all(game)
    last = order[(DECK_SIZE - 1) % 4]
    for nick in order:
        game.discard(nick, *drawn_pair(game))
    before = {nick: game.least_held(nick)[0] for nick in order}
    right = order[(order.index(last) - 1) % 4]
    empty_hand(game, right)
    game.out_of_cards(right)
    assert game.least_held(last)[0] == before[last] - 1  # a pass may come from the right
    left = order[(order.index(last) + 1) % 4]
    assert game.least_held(left)[0] == before[left]  # the last drawer is in, to its right


def test_status_before_during_and_after() -> None:
    game = TableGame(3, seed=2)
    game.join("zoe", address(1))
    game.join("amy", address(2))
    standing = game.status()
    assert (standing.state, standing.in_, standing.out) == (GameState.WAITING, ("zoe", "amy"), ())
    game.join("max", address(3))
    game.start()
    order = nicks(game)
    assert game.status().in_ == tuple(order)
    out_but(game, order[1], missing=3, others=[order[2], order[0]])
    standing = game.status()
    assert standing.state is GameState.PLAYING
    assert standing.in_ == (order[1],)
    assert standing.out == (order[2], order[0])  # winner first
    assert standing.loser is None
    while len(game.discarded) < 2 * PAIRS:
        game.discard(order[1], *drawn_pair(game))
    standing = game.status()
    assert standing.state is GameState.OVER
    assert standing.loser == order[1]
    assert standing.out == (order[2], order[0])
    assert game.take_events()[-1] == Over(order[1], [order[2], order[0]], 0)
    # After the end: out_of_cards is still ok; play is refused.
    assert game.out_of_cards(order[0]) is False
    assert "game is over" in error_text(game.draw, order[0])
    assert "game is over" in error_text(game.discard, order[1], THREE_S, THREE_C)
    assert "game is over" in error_text(game.join, "late", address(9))
    game.leave(order[0])
    assert game.state is GameState.OVER
    assert game.abort("too late") is False


def test_over_needs_every_pair_and_all_but_one_out() -> None:
    game = started(2)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    while len(game.discarded) < 2 * PAIRS:
        game.discard(order[0], *drawn_pair(game))
    assert game.state is GameState.PLAYING  # pairs done, but nobody is out yet
    game.out_of_cards(order[1])
    assert game.state is GameState.OVER
    assert game.loser == order[0]


def test_an_out_player_may_leave_and_the_game_goes_on() -> None:
    game = started(3)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[0])
    game.out_of_cards(order[0])
    game.take_events()
    game.leave(order[0])
    assert game.state is GameState.PLAYING
    assert game.take_events() == [Left(order[0])]
    assert game.status().out == (order[0],)
    game.leave(order[1])  # a player still in: the end
    assert game.state is GameState.ABORTED
    assert game.reason == f"{order[1]} left the table"


def test_leaving_after_an_early_out_of_cards_still_aborts() -> None:
    # out_of_cards during the draw counts for nothing, so the player is still in.
    game = started(2)
    order = nicks(game)
    game.out_of_cards(order[1])
    game.leave(order[1])
    assert game.state is GameState.ABORTED


def test_one_player_left_in_with_pairs_missing_is_decided_not_over() -> None:
    game = started(3)
    order = nicks(game)
    out_but(game, order[1], missing=3)  # two went out by out_of_cards, and one pick's pair
    assert game.decided
    assert game.state is GameState.PLAYING
    assert game.undiscarded_pairs == 3
    # The pairs may still come; the last one ends the game as usual.
    while len(game.discarded) < 2 * PAIRS:
        game.discard(order[1], *drawn_pair(game))
    assert not game.decided
    assert game.state is GameState.OVER
    assert game.take_events()[-1] == Over(order[1], [order[0], order[2]], 0)
    assert game.status().undiscarded == 0


def test_a_decided_game_ends_without_the_missing_pairs() -> None:
    game = started(2)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    while len(game.discarded) < 2 * PAIRS - 2:
        game.discard(order[0], *drawn_pair(game))
    assert "not decided" in error_text(game.end_without_pairs)
    game.out_of_cards(order[1])  # went out holding its last pair
    assert game.decided
    game.take_events()
    game.end_without_pairs()
    assert (game.state, game.loser) == (GameState.OVER, order[0])
    assert game.take_events() == [Over(order[0], [order[1]], 1)]
    standing = game.status()
    assert (standing.loser, standing.undiscarded) == (order[0], 1)
    assert "game is over" in error_text(game.discard, order[0], *drawn_pair(game))


def test_the_loser_leaving_a_decided_game_ends_it() -> None:
    game = started(3)
    order = nicks(game)
    out_but(game, order[2], missing=2)
    game.leave(order[2])
    assert (game.state, game.loser) == (GameState.OVER, order[2])
    assert game.status().undiscarded == 2


def test_more_pairs_missing_than_honest_players_leave_cannot_end_a_game() -> None:
    # One player out by out_of_cards may keep a pair, and the loser's last pick may
    # make one: three missing when one is left in is more than that.
    game = started(2)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    while game.undiscarded_pairs > 3:
        game.discard(order[0], *drawn_pair(game))
    game.out_of_cards(order[1])
    assert (game.state, game.culprit, game.rule) == (GameState.ABORTED, None, "pairs_vanished")
    assert game.reason is not None and game.reason.startswith("pairs vanished: 3 pairs")
    # Two missing waits for the loser's pair; the grace ends it with one kept pair at most.
    game = started(2)
    deal_all(game)
    empty_hand(game, order[1])
    while game.undiscarded_pairs > 2:
        game.discard(order[0], *drawn_pair(game))
    game.out_of_cards(order[1])
    assert game.decided
    game.end_without_pairs()
    assert (game.state, game.rule) == (GameState.ABORTED, "pairs_vanished")


def test_left_with_turn_aborts_naming_the_player_and_the_rule() -> None:
    game = started(4)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    game.out_of_cards(order[1])
    assert "still in the game" in error_text(game.left_with_turn, order[0], order[2])
    assert "still connected" in error_text(game.left_with_turn, order[0], order[1])
    assert "not playing" in error_text(game.left_with_turn, "ghost", order[1])
    assert "not playing" in error_text(game.left_with_turn, order[0], "ghost")
    assert "itself" in error_text(game.left_with_turn, order[1], order[1])
    game.leave(order[1])
    assert game.state is GameState.PLAYING
    # Only the player that handed it the turn, right of it with no one in between, can know.
    text = error_text(game.left_with_turn, order[3], order[1])
    assert f"{order[3]} cannot have handed {order[1]} the turn: {order[0]} sits" in text
    # A game that moved a moment ago is not stalled.
    assert "moved 0.10 s ago" in error_text(game.left_with_turn, order[0], order[1], quiet=0.1)
    assert game.state is GameState.PLAYING
    reason = game.left_with_turn(order[0], order[1], quiet=REPORT_QUIET)
    assert game.state is GameState.ABORTED
    assert (game.reason, game.culprit, game.rule) == (reason, order[1], "left_with_turn")
    assert reason.startswith(f"{order[1]} went out holding the turn and left without passing it")
    assert "num_cards 0" in reason
    assert reason.endswith(f"reported by {order[0]}")
    assert "aborted" in error_text(game.left_with_turn, order[0], order[1])


def test_left_with_turn_is_refused_once_the_game_moved_after_the_player_went_out() -> None:
    game = started(3)
    order = nicks(game)
    deal_all(game)
    for nick in order[:2]:
        empty_hand(game, nick)
    while game.undiscarded_pairs > 2:
        game.discard(order[2], *drawn_pair(game))
    game.out_of_cards(order[1])
    game.leave(order[1])
    game.out_of_cards(order[0])  # the one that handed it the turn: its last card was picked
    game.take_events()
    assert game.state is GameState.PLAYING
    game.discard(order[2], *drawn_pair(game))  # someone else moved: the turn went on
    text = error_text(game.left_with_turn, order[0], order[1])
    assert text.startswith(f"the game moved after {order[1]} went out ({order[2]} discarded")
    assert game.state is GameState.PLAYING


def test_give_up_aborts_naming_the_player_it_blames_not_the_reporter() -> None:
    game = started(4)
    order = nicks(game)
    assert "not playing" in error_text(game.give_up, "ghost", order[1], "did not answer")
    assert "not playing" in error_text(game.give_up, order[0], "ghost", "did not answer")
    assert "because of itself" in error_text(game.give_up, order[0], order[0], "did not answer")
    assert game.state is GameState.PLAYING
    reason = game.give_up(order[0], order[1], "did not answer offer\nwithin 10 s")
    assert reason == (
        f"{order[1]} did not answer offer within 10 s (reported by {order[0]}, "
        "which gave up waiting)"
    )
    assert (game.state, game.reason, game.culprit) == (GameState.ABORTED, reason, order[1])
    assert game.take_events()[-1] == Aborted(reason, culprit=order[1], rule="give_up")
    assert "aborted" in error_text(game.give_up, order[1], order[3], "did not pick")


def test_give_up_names_no_one_where_the_report_cannot_be_true() -> None:
    # A player deals only with its neighbours among the players in, and one that is
    # out only answers out: a report about anyone else is the reporter's word alone.
    game = started(4)
    order = nicks(game)
    reason = game.give_up(order[0], order[2], "did not answer offer within 10 s")
    assert reason.startswith(f"{order[0]} gave up, saying {order[2]} did not answer offer")
    assert f"{order[2]} is not next to {order[0]}" in reason
    assert (game.state, game.culprit) == (GameState.ABORTED, None)
    game = started(3)
    order = nicks(game)
    deal_all(game)
    empty_hand(game, order[1])
    game.out_of_cards(order[1])
    reason = game.give_up(order[0], order[1], "sent garbage")
    assert f"{order[1]} is out" in reason and game.culprit is None


def test_give_up_without_a_culprit_names_no_one_else() -> None:
    game = started(3)
    order = nicks(game)
    reason = game.give_up(order[1], None, "heard nothing for 120 s")
    assert reason == f"{order[1]} gave up: heard nothing for 120 s"
    assert game.culprit is None


def test_abort_once() -> None:
    game = TableGame(2, seed=1)
    assert game.abort("the table shut down") is True
    assert game.abort("again") is False
    standing = game.status()
    assert (standing.state, standing.reason) == (GameState.ABORTED, "the table shut down")
    assert "aborted" in error_text(game.join, "a", address(1))


def test_players_needed_is_checked() -> None:
    for bad in (1, 9):
        with pytest.raises(ValueError):
            TableGame(bad, seed=1)
