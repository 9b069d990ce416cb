"""Which draw turns a peer acts on when the table may hand one on too (protocol 14.6, "The
draw turn"): the your_turn and the table's notice for one draw, in either order and with
the draw anywhere between, make one draw and blame no one."""

from __future__ import annotations

from ring.oldmaid.draw_turns import DrawTurns


def seated(seat: int = 1, players: int = 4, drawn: int = 0) -> DrawTurns:
    turns = DrawTurns()
    turns.seated(seat, players)
    turns.drawn = drawn
    return turns


def test_the_next_draw_counts_in_seat_order() -> None:
    turns = seated(seat=2, players=3)
    assert turns.next_draw == 3  # seat 3 counting from 1 draws cards 3, 6, 9, ...
    assert turns.by_your_turn()
    turns.answered(drew=True)
    assert turns.next_draw == 6


def test_a_notice_after_the_your_turn_and_its_draw_is_dropped() -> None:
    turns = seated()
    assert turns.by_your_turn()
    turns.answered(drew=True)
    assert not turns.by_table(2)  # card 2 was ours, and drawn
    assert turns.from_table == 0


def test_a_notice_while_the_your_turn_is_being_drawn_is_dropped() -> None:
    turns = seated()
    assert turns.by_your_turn()
    assert not turns.by_table(2)
    turns.answered(drew=True)
    assert turns.from_table == 0 and turns.next_draw == 6


def test_a_your_turn_after_the_table_handed_the_turn_and_it_was_drawn() -> None:
    """The late your_turn is answered and its draw refused: that refusal is its, not a
    sign that its sender handed us a turn that was not ours."""
    turns = seated()
    assert turns.by_table(2)
    turns.answered(drew=True)
    assert turns.by_your_turn()  # answered ok, and drawn: the table refuses it
    turns.answered(drew=False)
    assert turns.late()
    assert turns.from_table == 0 and turns.pending == 0


def test_a_your_turn_while_the_table_handed_turn_is_being_drawn_is_that_turn() -> None:
    turns = seated()
    assert turns.by_table(2)
    assert not turns.by_your_turn()
    turns.answered(drew=True)
    assert turns.from_table == 0 and turns.pending == 0


def test_a_notice_that_never_gets_its_your_turn_leaves_the_next_turns_alone() -> None:
    """Its sender never sent it: the next your_turn is a turn like any other."""
    turns = seated()
    assert turns.by_table(2)
    turns.answered(drew=True)
    assert turns.by_your_turn()  # card 6, handed honestly this time
    turns.answered(drew=True)
    assert turns.next_draw == 10


def test_without_the_table_a_second_your_turn_is_drawn_on_and_its_refusal_counts() -> None:
    """A draw turn handed twice (a cheat): the second draw is refused, and not late."""
    turns = seated()
    assert turns.by_your_turn() and turns.by_your_turn()
    turns.answered(drew=True)
    turns.answered(drew=False)
    assert not turns.late()


def test_a_notice_for_another_draw_is_not_a_turn() -> None:
    turns = seated(drawn=1)
    assert not turns.by_table(2) and not turns.by_table(10)
    assert turns.by_table(6)
