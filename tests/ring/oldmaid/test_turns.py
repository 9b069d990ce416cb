"""The peer's turn machine, without sockets: each decision, then whole games.

The property tests seat a ring of ``Turns`` at the pure referee and play
whole games the way the Trio peer does, with the links and the table in
memory (``Ring``): the machines decide everything, the simulation only
carries their requests and answers. Some seats play older clients: once out
they leave, or fall silent, and the others must skip them (7.7); some
pickers send the handout's inclusive index or one beyond it (6.3).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ring.oldmaid.cards import JOKER, Card, full_deck, split_pairs
from ring.oldmaid.messages import GameOver, Offer, Pick, Reply, YourTurn, error, ok
from ring.oldmaid.turns import (
    GONE,
    SILENT,
    AfterDraw,
    Outcome,
    PeerError,
    Phase,
    TurnRequest,
    Turns,
    ordinal,
)
from services.oldmaid.referee.rules import DECK_SIZE, GameState, TableGame

THREE_S, THREE_C, FIVE_H = Card("3", "spades"), Card("3", "clubs"), Card("5", "hearts")
NICKS = ["ann", "bob", "cy", "dee"]
PLAYERS = [(("10.0.0.1", 40000 + i), nick) for i, nick in enumerate(NICKS)]


def seated(nick: str = "bob", seed: int = 1) -> Turns:
    turns = Turns(nick, random.Random(seed))
    turns.take_seat(PLAYERS)
    return turns


def holding(*cards: Card, phase: Phase = Phase.OFFER) -> Turns:
    turns = seated()
    for card in cards:
        turns.hand.receive(card)
    turns.phase = phase
    return turns


# -- seats (7.2, 7.7) ---------------------------------------------------------------


def test_the_seat_is_the_nicks_place_in_the_join_reply() -> None:
    turns = seated("cy")
    assert turns.seat == 2 and turns.nicks == NICKS and turns.nick_of(0) == "ann"
    assert turns.left_seat == 3
    assert seated("dee").left_seat == 0  # the last seat's left is player1


def test_a_player_list_without_us_is_an_error() -> None:
    with pytest.raises(PeerError, match="does not include eve"):
        Turns("eve", random.Random(1)).take_seat(PLAYERS)


@given(players=st.integers(2, 8), seat=st.integers(0, 7))
def test_the_seats_to_ask_go_left_wrap_round_and_skip_us(players: int, seat: int) -> None:
    seat %= players
    ring = [(("10.0.0.1", 40000 + i), f"p{i}") for i in range(players)]
    turns = Turns(f"p{seat}", random.Random(1))
    turns.take_seat(ring)
    asked = turns.seats_to_ask()
    assert asked[0] == turns.left_seat
    assert asked == [(seat + step) % players for step in range(1, players)]
    assert sorted(asked) == sorted(set(range(players)) - {seat})


# -- the draw phase (7.3, 7.4) ------------------------------------------------------


def test_a_card_drawn_goes_into_the_hand_and_the_draw_turn_goes_on() -> None:
    turns = seated()
    assert turns.drawn(ok(card=THREE_S)) is AfterDraw.HAND_ON
    assert turns.hand.cards == (THREE_S,) and turns.phase is Phase.DRAW


def test_the_last_card_starts_the_offer_phase_and_we_hold_the_turn() -> None:
    turns = seated()
    assert turns.drawn(Reply(result="last_card", card=THREE_S)) is AfterDraw.OFFER
    assert turns.hand.cards == (THREE_S,) and turns.phase is Phase.OFFER


def test_a_draw_refused_for_an_empty_deck_starts_the_offer_phase_without_the_turn() -> None:
    turns = seated()
    refused = error("the deck is empty: all 53 cards have been dealt")
    assert turns.drawn(refused) is AfterDraw.WAIT
    assert turns.phase is Phase.OFFER and not turns.hand


def test_any_other_refused_draw_is_an_error() -> None:
    with pytest.raises(PeerError, match="the table refused a draw: it is ann's turn"):
        seated().drawn(error("it is ann's turn to draw, not bob's"))


def test_an_empty_hand_in_the_draw_phase_does_not_make_us_out() -> None:
    turns = holding(THREE_S, THREE_C, phase=Phase.DRAW)
    [pair] = turns.pairs_to_discard()
    discard = turns.discard(pair)
    assert discard.last_cards == "false" and not turns.out_of_cards
    assert not turns.discarded(discard) and not turns.out


def test_the_pair_that_empties_the_hand_in_the_offer_phase_says_so_and_makes_us_out() -> None:
    turns = holding(THREE_S, THREE_C)
    [pair] = turns.pairs_to_discard()
    assert sorted(pair) == sorted([THREE_S, THREE_C]) and not turns.hand
    discard = turns.discard(pair)
    assert discard.cards == list(pair) and discard.last_cards == "true"
    assert turns.answer().result == "ok"  # not out until the table has taken it (7.8)
    assert turns.discarded(discard) and turns.out
    assert turns.answer().result == "out"


def test_a_pair_that_leaves_cards_is_no_way_out() -> None:
    turns = holding(THREE_S, FIVE_H, THREE_C)
    [pair] = turns.pairs_to_discard()
    assert turns.hand.cards == (FIVE_H,)
    assert turns.discard(pair).last_cards == "false"


# -- holding the turn (7.5, 7.7) -----------------------------------------------------


def test_the_offer_is_the_whole_hand_and_says_we_read_a_stream() -> None:
    offer = holding(THREE_S, FIVE_H).offer()
    assert offer == Offer(num_cards=2, sender="bob", stream=True)
    assert holding().offer().num_cards == 0  # an empty hand passes the turn


def test_an_empty_hand_in_the_offer_phase_must_go_out_once_the_table_knows() -> None:
    turns = holding()
    assert turns.out_of_cards and not turns.out
    assert turns.answer().result == "ok"
    turns.went_out()
    assert turns.out and turns.answer() == Reply(result="out")


@pytest.mark.parametrize("request_", [YourTurn(sender="bob"), Offer(num_cards=2, sender="bob")])
def test_ok_takes_the_turn_and_out_gone_or_silent_skip_the_seat(request_: TurnRequest) -> None:
    turns = seated()
    assert turns.took(2, request_, ok())
    for skipped in (Reply(result="out"), GONE, SILENT):
        assert not turns.took(2, request_, skipped)


def test_any_other_answer_to_a_turn_names_the_seat() -> None:
    turns = seated()
    with pytest.raises(PeerError) as caught:
        turns.took(2, YourTurn(), error("busy"))
    assert (caught.value.culprit, str(caught.value)) == ("cy", "cy refused your_turn: busy")
    with pytest.raises(PeerError) as caught:
        turns.took(3, Offer(num_cards=1), error("no"))
    assert (caught.value.culprit, caught.value.clause) == ("dee", "refused bob's offer: no")


def test_with_cards_and_no_one_else_in_we_hold_the_old_maid() -> None:
    turns = holding(JOKER)
    turns.no_one_took(turns.offer())
    assert turns.lost


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (YourTurn(), "no other player would take the draw turn"),
        (Offer(num_cards=0), "no other player is in, yet this peer holds no cards"),
    ],
)
def test_no_one_to_take_a_draw_or_a_pass_is_an_error(request_: TurnRequest, message: str) -> None:
    turns = seated()
    with pytest.raises(PeerError, match=message):
        turns.no_one_took(request_)
    assert not turns.lost


def test_gone_seats_are_remembered_with_why() -> None:
    turns = seated()
    turns.drop(2, "left")
    turns.drop(3, "silent")
    assert turns.gone == {2: "left", 3: "silent"}
    assert turns.seats_to_ask() == [2, 3, 0]  # still asked: the links answer GONE at once


# -- a pick from our hand (6.3) ----------------------------------------------------------


@given(size=st.integers(1, 20), card_num=st.integers(-3, 23), seed=st.integers(0, 2**16))
def test_a_pick_gets_the_card_at_its_index_or_the_last_for_n_or_an_error(
    size: int, card_num: int, seed: int
) -> None:
    turns = seated(seed=seed)
    for card in full_deck()[:size]:
        turns.hand.receive(card)
    before = turns.hand.cards
    reply = turns.give(Pick(card_num=card_num), size)
    if 0 <= card_num < size:
        assert reply == ok(card=before[card_num])
    elif card_num == size:  # oldmaid.md 13.3: the handout's inclusive reading, the last card
        assert reply == ok(card=before[-1])
    else:
        assert reply == error(f"card_num {card_num} is not between 0 and {size - 1}")
        assert turns.hand.cards == before  # the offer stands
        return
    assert len(turns.hand) == size - 1


# -- a turn handed to us (6.1, 7.6) ---------------------------------------------------------


def test_an_offer_ends_our_draw_phase_even_with_no_cards_offered() -> None:
    turns = holding(THREE_S, phase=Phase.DRAW)
    turns.enter_offer_phase()
    assert turns.phase is Phase.OFFER and turns.answer() == ok()


def test_we_pick_at_random_below_the_number_offered_and_hold_what_we_get() -> None:
    turns = seated()
    picks = [turns.choose_pick(3) for _ in range(50)]
    assert set(picks) == {0, 1, 2}
    again = seated()
    assert picks == [again.choose_pick(3) for _ in range(50)]  # the seed replays them
    turns.picked(FIVE_H)
    assert turns.hand.cards == (FIVE_H,)


# -- the end (7.9) ------------------------------------------------------------------------


def test_the_place_comes_from_the_tables_out_order() -> None:
    notice = GameOver(loser="ann", out=["cy", "bob", "dee"])
    assert seated("bob").outcome(notice) == Outcome(4, 2)
    ann = seated("ann")
    ann.hand.receive(JOKER)
    assert ann.outcome(notice) == Outcome(4, None)
    assert Outcome(4, 2).line == "out 2nd of 4"
    assert Outcome(4, None).line == "lost: holds the Old Maid"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "112th"
    ]  # fmt: skip


def test_a_notice_that_contradicts_us_is_an_error() -> None:
    loser = seated("ann")
    loser.lost = True
    with pytest.raises(PeerError, match="yet the table says bob lost"):
        loser.outcome(GameOver(loser="bob", out=["cy", "ann", "dee"]))
    with pytest.raises(PeerError, match="neither out nor the loser"):
        seated("bob").outcome(GameOver(loser="ann", out=["cy", "dee"]))
    # The loser by the table's word without the Old Maid: someone went out holding it.
    with pytest.raises(PeerError, match="does not hold the Old Maid"):
        seated("ann").outcome(GameOver(loser="ann", out=["cy", "bob", "dee"]))


def test_what_reaches_us_that_cannot_be() -> None:
    turns = seated("ann")
    turns.hand.receive(JOKER)
    turns.hand.receive(Card("3", "spades"))
    assert turns.foreign(JOKER) == (
        "second_joker",
        "a second Old Maid, and this peer already holds one",
    )
    assert turns.foreign(Card("3", "spades")) == (
        "duplicate_card",
        "3 of spades, which this peer already holds",
    )
    turns.thrown.add(Card("4", "clubs"))
    assert turns.foreign(Card("4", "clubs")) == (
        "duplicate_card",
        "4 of clubs, which this peer has discarded",
    )
    assert turns.foreign(Card("4", "spades")) is None


# -- whole games against the referee ----------------------------------------------------------

HABITS = ("stays", "leaves", "silent")  # what a seat does once it is out


class Ring:
    """A ring of turn machines at the pure referee, with the links and the table in memory.

    Each step is what the Trio peer does with the machine's decisions; every
    request goes to ``TableGame``, which refuses (``RefereeError``) anything
    the rules forbid, so a wrong decision fails the test there and then.
    """

    def __init__(self, players: int, seed: int, habits: list[str], quirks: bool) -> None:
        self.table = TableGame(players, seed)
        for i in range(players):
            self.table.join(f"p{i}", ("10.0.0.1", 40000 + i))
        ring = [(seat.address, seat.nick) for seat in self.table.start()]
        self.seats: list[Turns] = []
        for i, (_, nick) in enumerate(ring):
            turns = Turns(nick, random.Random(seed * 10 + i))
            turns.take_seat(ring)
            self.seats.append(turns)
        self.habits = habits[:players]
        self.chance = random.Random(seed) if quirks else None  # the pickers' odd indexes
        self.left: set[str] = set()  # players who left once out
        self.skipped: set[str] = set()  # how seats were skipped: out, left, silent

    def play(self) -> Turns:
        """The whole game: the machine that found it had lost."""
        holder, draw = 0, True
        for _ in range(20 * DECK_SIZE):
            if draw:
                holder, draw = self.draw_turn(holder)
            else:
                taker = self.offer_turn(holder)
                if taker is None:
                    return self.seats[holder]
                holder = taker
            self.check()
        raise AssertionError("the game did not end")

    # -- what the peer does ------------------------------------------------------

    def draw_turn(self, seat: int) -> tuple[int, bool]:
        turns = self.seats[seat]
        card, last = self.table.draw(turns.nick)
        after = turns.drawn(Reply(result="last_card" if last else "ok", card=card))
        assert after is (AfterDraw.OFFER if last else AfterDraw.HAND_ON)
        self.discard_pairs(turns)
        if after is AfterDraw.OFFER:
            return seat, False
        taker = self.find_taker(turns, turns.your_turn())
        assert taker is not None, "a player is always in while the deck lasts"
        return taker, True

    def offer_turn(self, seat: int) -> int | None:
        turns = self.seats[seat]
        assert turns.phase is Phase.OFFER
        if turns.out_of_cards:
            self.go_out(turns)
        offer = turns.offer()
        assert offer.num_cards == len(turns.hand)
        taker = self.find_taker(turns, offer)
        if taker is None:
            turns.no_one_took(offer)
            return None
        if offer.num_cards > 0:
            picker = self.seats[taker]
            card = self.pick(turns, picker, offer.num_cards)
            assert not picker.out and not picker.lost, "only a player who is in picks"
            assert card not in picker.hand.cards and card not in self.table.discarded
            picker.picked(card)
            self.discard_pairs(picker)
            if turns.out_of_cards:
                self.go_out(turns)
        return taker

    def find_taker(self, turns: Turns, request: TurnRequest) -> int | None:
        for seat in turns.seats_to_ask():
            reply = self.ask(turns, seat, request)
            if turns.took(seat, request, reply):
                # 7.7: the next player who is in, every seat before it out.
                assert not self.seats[seat].out
                return seat
            assert self.seats[seat].out and self.seats[seat].nick in self.table.out
            self.skipped.add({id(GONE): "left", id(SILENT): "silent"}.get(id(reply), "out"))
        return None

    def ask(self, asker: Turns, seat: int, request: TurnRequest) -> Reply:
        """What ``Links.ask`` yields: ``GONE`` and ``SILENT`` for out seats that left or hush."""
        if seat in asker.gone:
            return GONE
        target = self.seats[seat]
        habit = self.habits[seat]
        if target.out and habit == "leaves":
            # It closed its listener and its table connection once the table
            # had counted it out; the asker finds it listed as out (7.7 step 5).
            assert target.nick in self.table.status().out
            if target.nick not in self.left:
                self.left.add(target.nick)
                self.table.leave(target.nick)
            asker.drop(seat, "left")
            return GONE
        if target.out and habit == "silent":
            asker.drop(seat, "silent")
            return SILENT
        return self.answer(target, request)

    def answer(self, turns: Turns, request: TurnRequest) -> Reply:
        """The peer's ``Taking.answer_your_turn`` and ``answer_offer`` up to its reply."""
        if isinstance(request, Offer):
            turns.enter_offer_phase()
            if turns.out_of_cards:
                self.go_out(turns)
        reply = turns.answer()
        assert (reply.result == "out") == turns.out
        return reply

    def pick(self, offerer: Turns, picker: Turns, offered: int) -> Card:
        """The picker's picks and the offerer's answers, until a card changes hands."""
        hand = offerer.hand.cards
        quirk = self.chance.choice(["none", "inclusive", "beyond"]) if self.chance else "none"
        if quirk == "beyond":  # an index past the end: an error, and the offer stands
            reply = offerer.give(Pick(card_num=offered + 1), offered)
            assert reply.result == "error" and offerer.hand.cards == hand
        if quirk == "inclusive":  # card_num == num_cards: the last card (oldmaid.md 13.3)
            card_num, expected = offered, hand[-1]
        else:
            card_num = picker.choose_pick(offered)
            assert 0 <= card_num < offered
            expected = hand[card_num]
        reply = offerer.give(Pick(card_num=card_num), offered)
        assert reply.ok and reply.card == expected and len(offerer.hand) == offered - 1
        return expected

    def go_out(self, turns: Turns) -> None:
        if not turns.out:
            self.table.out_of_cards(turns.nick)
            turns.went_out()

    def discard_pairs(self, turns: Turns) -> None:
        for pair in turns.pairs_to_discard():
            discard = turns.discard(pair)
            empties = not turns.hand and turns.phase is Phase.OFFER
            assert discard.declares_out == empties
            self.table.discard(turns.nick, *pair, declares_out=discard.declares_out)
            turns.discarded(discard)

    # -- what must hold after every step ---------------------------------------------

    def check(self) -> None:
        held = [card for turns in self.seats for card in turns.hand.cards]
        discarded = list(self.table.discarded)
        # Cards are conserved: every card dealt is in one hand or on the table, once.
        assert len(held) + len(discarded) == len(set(held) | set(discarded))
        assert set(held) | set(discarded) == set(self.table.drawn)
        for turns in self.seats:
            assert not split_pairs(turns.hand.cards)[1], "a pair held past its discard"
            if turns.out:
                assert not turns.hand and turns.nick in self.table.out


@settings(max_examples=200, deadline=None)
@given(
    players=st.integers(2, 8),
    seed=st.integers(0, 2**32),
    habits=st.lists(st.sampled_from(HABITS), min_size=8, max_size=8),
    quirks=st.booleans(),
)
def test_every_game_ends_with_one_loser_holding_the_old_maid(
    players: int, seed: int, habits: list[str], quirks: bool
) -> None:
    ring = Ring(players, seed, habits, quirks)
    loser = ring.play()
    ring.check()
    table = ring.table
    assert table.state is GameState.OVER and table.loser == loser.nick
    assert [turns for turns in ring.seats if turns.lost] == [loser]
    assert loser.hand.cards == (JOKER,) and not loser.out
    assert len(table.drawn) == DECK_SIZE and len(table.discarded) == DECK_SIZE - 1
    notice = GameOver(loser=table.loser, out=list(table.out))
    for turns in ring.seats:
        place = turns.outcome(notice).place
        if turns is loser:
            assert place is None
        else:
            assert turns.out and not turns.hand
            assert place == table.out.index(turns.nick) + 1
    event(f"skipped seats that were: {', '.join(sorted(ring.skipped))}")
