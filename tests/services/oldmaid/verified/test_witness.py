"""The table as witness (protocol 14.6): a quarrel about one exchange, finished through the
table, names the player that owed a move and did not make it, and never the other.

Each test stops an honest game (``tests.helpers.oldmaid_ledger``) just before one of its
exchanges, the ledger up to date, and plays that exchange through ``WitnessDesk``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ring.oldmaid import exchanges
from ring.oldmaid.cards import Card
from ring.oldmaid.messages import Answer, Move, OfferSeen, PickSeen, Witness
from services.oldmaid.verified.entries import Out
from services.oldmaid.verified.witness import (
    ANSWER,
    CARD,
    DONE,
    OFFER,
    PICK,
    Refused,
    WitnessDesk,
)
from tests.helpers.oldmaid_ledger import Exchange, HonestGame, feed, honest_game, ledger_of


@dataclass
class Scene:
    """An honest game stopped before exchange ``x``: the desk, and ``x`` as it was played."""

    game: HonestGame
    x: Exchange
    desk: WitnessDesk

    @property
    def offer(self) -> OfferSeen:
        r = self.x.received
        return OfferSeen(sender=self.x.sender, seq=self.x.seq, num_cards=r.num_cards,
                         hashes=list(r.hashes), mac=r.mac)  # fmt: skip

    @property
    def answer(self) -> Answer:
        assert self.x.gave.ack is not None
        return Answer(result="ok", ack=self.x.gave.ack)

    @property
    def pick(self) -> PickSeen:
        x = self.x
        assert x.received.card_num is not None
        mac = exchanges.pick_mac(
            self.game.secrets[x.receiver], picker=x.receiver, offerer=x.sender, seq=x.seq,
            card_num=x.received.card_num,
        )  # fmt: skip
        return PickSeen(card_num=x.received.card_num, mac=mac)

    def card(self, card: Card | None = None) -> Move:
        r = self.x.received
        assert r.card is not None and r.salt is not None
        return Move(seq=self.x.seq, card=tuple(card or r.card), salt=r.salt)  # type: ignore[arg-type]


def scene(seed: int, players: int = 4, passes: bool = False) -> Scene:
    """The game of the first seed from ``seed`` on that has an exchange of the kind asked
    for (a pass: a player went out holding the turn), stopped before the middle one."""
    while True:
        game = honest_game(seed, players)
        chosen = [x for x in game.exchanges if (x.received.num_cards == 0) == passes]
        if chosen:
            break
        seed += 1
    x = chosen[len(chosen) // 2]
    streams = {}
    for nick, entries in game.streams.items():
        later = [i for i, e in enumerate(entries) if getattr(e, "seq", 0) >= x.seq]
        streams[nick] = entries[: later[0]] if later else list(entries)
    ledger = ledger_of(game)
    assert feed(ledger, streams, []) is None
    assert (ledger.seq, ledger.holder) == (x.seq - 1, x.sender)
    out = {nick for nick, entries in streams.items() if any(isinstance(e, Out) for e in entries)}
    out.discard(x.sender)  # it offers before it goes out, as the table counts
    return Scene(game, x, WitnessDesk(game.seats, game.secrets, ledger, lambda: out))


def test_an_honest_exchange_finished_through_the_table_names_no_one() -> None:
    s = scene(3)
    x = s.x
    exchange, _ = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer))
    assert (exchange.owes, exchange.move, exchange.step) == (x.receiver, ANSWER, 1)
    exchange, lie = s.desk.move(x.receiver, Move(seq=x.seq, answer=s.answer))
    assert lie is None and (exchange.owes, exchange.move) == (x.receiver, PICK)
    exchange, lie = s.desk.move(x.receiver, Move(seq=x.seq, pick=s.pick))
    assert lie is None and (exchange.owes, exchange.move) == (x.sender, CARD)
    exchange, lie = s.desk.move(x.sender, s.card())
    assert lie is None and (exchange.owes, exchange.move, exchange.step) == (None, DONE, 4)
    notice = exchange.notice()
    assert (notice.card, notice.salt, notice.ack) == (x.received.card, x.received.salt, x.gave.ack)
    assert not s.desk.open


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 6), asker=st.sampled_from("OR"))
def test_any_honest_exchange_witnessed_from_either_side_ends_done(
    seed: int, players: int, asker: str
) -> None:
    s = scene(seed, players)
    x = s.x
    if asker == "O":  # the offerer, with the receiver's ack: it waits for the pick
        exchange, _ = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer, ack=x.gave.ack))
        assert exchange.owes == x.receiver
        exchange, lie = s.desk.move(x.receiver, Move(seq=x.seq, pick=s.pick))
        assert lie is None
    else:  # the receiver, with its pick: it waits for the card
        exchange, _ = s.desk.ask(x.receiver, Witness(to=x.sender, offer=s.offer, pick=s.pick))
    assert exchange.owes == x.sender
    exchange, lie = s.desk.move(x.sender, s.card())
    assert lie is None and exchange.move == DONE


def test_a_receiver_that_never_answers_is_named() -> None:
    s = scene(4)
    x = s.x
    exchange, _ = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer))
    lie = s.desk.overdue(x.seq, exchange.step)
    assert lie is not None and (lie.rule, lie.culprit) == ("no_answer", x.receiver)
    assert "answer the offer" in lie.what and x.sender in lie.what


def test_an_offerer_that_never_gives_the_card_is_named() -> None:
    s = scene(5)
    x = s.x
    exchange, _ = s.desk.ask(x.receiver, Witness(to=x.sender, offer=s.offer, pick=s.pick))
    lie = s.desk.overdue(x.seq, exchange.step)
    assert lie is not None and (lie.rule, lie.culprit) == ("no_answer", x.sender)


def test_a_move_made_in_time_is_no_overdue() -> None:
    s = scene(6)
    x = s.x
    first = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer))[0].step
    s.desk.move(x.receiver, Move(seq=x.seq, answer=s.answer))
    assert s.desk.overdue(x.seq, first) is None  # the deadline of a step already made


def test_a_card_that_does_not_open_the_picked_position_names_the_offerer() -> None:
    s = scene(7)
    x = s.x
    s.desk.ask(x.receiver, Witness(to=x.sender, offer=s.offer, pick=s.pick))
    other = (
        next(c for c in s.game.hands[x.sender] if c != x.received.card)
        if any(c != x.received.card for c in s.game.hands[x.sender])
        else Card("2", "spades")
    )
    _, lie = s.desk.move(x.sender, s.card(other))
    assert lie is not None and (lie.rule, lie.culprit) == ("wrong_card", x.sender)


def test_answering_out_while_counted_in_is_false_out() -> None:
    s = scene(8)
    x = s.x
    s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer))
    ack = exchanges.out_ack(s.game.secrets[x.receiver], x.sender)
    _, lie = s.desk.move(x.receiver, Move(seq=x.seq, answer=Answer(result="out", ack=ack)))
    assert lie is not None and (lie.rule, lie.culprit) == ("false_out", x.receiver)


def test_a_witnessed_pass_is_done_with_the_receivers_ok() -> None:
    s = scene(9, players=3, passes=True)
    x = s.x
    s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer))
    exchange, lie = s.desk.move(x.receiver, Move(seq=x.seq, answer=s.answer))
    assert lie is None and exchange.move == DONE


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("bad offer mac", "does not carry"),
        ("spent exchange", "judged already"),
        ("not the next player", "is not the next player in"),
        ("a stranger's offer", "neither you nor"),
        ("receiver without a pick", "ask with your pick"),
        ("nothing owed", "nothing is owed"),
    ],
)
def test_what_the_table_cannot_check_is_refused(case: str, says: str) -> None:
    s = scene(10, players=5)
    x = s.x
    offer = s.offer
    asker, to = x.sender, x.receiver
    request = Witness(to=to, offer=offer)
    if case == "bad offer mac":
        request.offer = OfferSeen(sender=offer.sender, seq=offer.seq, num_cards=offer.num_cards,
                                  hashes=offer.hashes, mac="0" * 32)  # fmt: skip
    elif case == "spent exchange":
        earlier = s.game.exchanges[x.seq - 2]
        r = earlier.received
        request = Witness(to=earlier.receiver, offer=OfferSeen(
            sender=earlier.sender, seq=earlier.seq, num_cards=r.num_cards,
            hashes=list(r.hashes), mac=r.mac))  # fmt: skip
        asker = earlier.sender
    elif case == "not the next player":  # signed by the offerer, to a player further on
        request.to = next(n for n in s.game.seats if n not in (x.sender, x.receiver))
        mac = exchanges.offer_mac(s.game.secrets[x.sender], seq=x.seq, sender=x.sender,
                                  to=request.to, num_cards=0, hashes=[])  # fmt: skip
        request.offer = OfferSeen(sender=x.sender, seq=x.seq, num_cards=0, hashes=[], mac=mac)
    elif case == "a stranger's offer":
        asker = next(n for n in s.game.seats if n not in (x.sender, x.receiver))
    elif case == "receiver without a pick":
        asker, request.to = x.receiver, x.sender
    elif case == "nothing owed":
        s = scene(10, players=3, passes=True)
        x = s.x
        asker, request = x.sender, Witness(to=x.receiver, offer=s.offer, ack=x.gave.ack)
    with pytest.raises(Refused, match=says):
        s.desk.ask(asker, request)
    assert not s.desk.open


def test_moves_the_table_cannot_take_are_refused_and_change_nothing() -> None:
    s = scene(11)
    x = s.x
    exchange, _ = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer))
    with pytest.raises(Refused, match="not yours"):
        s.desk.move(x.sender, Move(seq=x.seq, answer=s.answer))
    with pytest.raises(Refused, match="ack"):
        s.desk.move(x.receiver, Move(seq=x.seq, answer=Answer(result="ok", ack="0" * 32)))
    with pytest.raises(Refused, match="owe your answer"):
        s.desk.move(x.receiver, Move(seq=x.seq, pick=s.pick))
    assert (exchange.move, exchange.step) == (ANSWER, 1)
    assert s.desk.overdue(x.seq, 1) is not None  # its deadline still runs


def test_an_out_with_the_receivers_ack_brought_while_it_is_counted_in_is_false_out() -> None:
    s = scene(12)
    x = s.x
    ack = exchanges.out_ack(s.game.secrets[x.receiver], x.sender)
    answer = Answer(result="out", ack=ack)
    _, lie = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer, answer=answer))
    assert lie is not None and (lie.rule, lie.culprit) == ("false_out", x.receiver)
    assert not s.desk.open


def test_an_out_without_the_receivers_ack_makes_it_answer_again() -> None:
    s = scene(13)
    x = s.x
    answer = Answer(result="out", ack="0" * 32)  # the offerer cannot check an ack
    exchange, lie = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer, answer=answer))
    assert lie is None and (exchange.owes, exchange.move) == (x.receiver, ANSWER)


def test_asking_again_about_an_exchange_done_gets_its_end() -> None:
    s = scene(14)
    x = s.x
    s.desk.ask(x.receiver, Witness(to=x.sender, offer=s.offer, pick=s.pick))
    done, _ = s.desk.move(x.sender, s.card())
    again, lie = s.desk.ask(x.receiver, Witness(to=x.sender, offer=s.offer, pick=s.pick))
    assert again is done and lie is None and again.move == DONE and not s.desk.open


def test_a_receiver_asking_with_its_pick_and_its_ack_gives_the_offerer_the_ack() -> None:
    """The offerer's gave needs the receiver's ack: a receiver that asks brings it."""
    s = scene(15)
    x = s.x
    request = Witness(to=x.sender, offer=s.offer, ack=x.gave.ack, pick=s.pick)
    exchange, _ = s.desk.ask(x.receiver, request)
    notice = exchange.notice()
    assert (notice.answer, notice.ack, notice.owes, notice.move) == (
        "ok",
        x.gave.ack,
        x.sender,
        CARD,
    )


def test_an_ack_that_is_not_the_receivers_brought_by_the_offerer_leaves_the_answer_owed() -> None:
    """An ok without the receiver's ack (the offerer cannot tell): the receiver answers
    again through the table, and is named if it does not."""
    s = scene(16)
    x = s.x
    exchange, _ = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer, ack="0" * 32))
    assert (exchange.owes, exchange.move) == (x.receiver, ANSWER)
    lie = s.desk.overdue(x.seq, exchange.step)
    assert lie is not None and (lie.rule, lie.culprit) == ("no_answer", x.receiver)


# -- a receiver's check of an offer (14.6, "Checking an offer") --------------------------


def bent(offer: OfferSeen) -> OfferSeen:
    """The offer with its first hash changed: its mac no longer covers it."""
    first = format(int(offer.hashes[0], 16) ^ 1, "032x")
    return OfferSeen(sender=offer.sender, seq=offer.seq, num_cards=offer.num_cards,
                     hashes=[first, *offer.hashes[1:]], mac=offer.mac)  # fmt: skip


def test_an_offer_with_its_offerers_mac_passes_the_check_and_opens_nothing() -> None:
    s = scene(7)
    assert s.desk.check(s.x.receiver, s.offer) is None
    assert not s.desk.open


def test_a_bad_mac_makes_its_offerer_owe_the_offer_through_the_table() -> None:
    s = scene(8)
    x = s.x
    exchange = s.desk.check(x.receiver, bent(s.offer))
    assert exchange is not None and (exchange.owes, exchange.move) == (x.sender, OFFER)
    with pytest.raises(Refused, match="waits for"):  # the receiver cannot bring it
        s.desk.ask(x.receiver, Witness(to=x.sender, offer=s.offer, pick=s.pick))
    with pytest.raises(Refused, match="mac"):  # nor the offerer a bad one
        s.desk.move(x.sender, Move(seq=x.seq, offer=bent(s.offer)))
    exchange, lie = s.desk.move(x.sender, Move(seq=x.seq, offer=s.offer))
    assert lie is None and (exchange.owes, exchange.move) == (x.receiver, ANSWER)
    assert exchange.notice().offer == s.offer  # the receiver now takes the offerer's own
    exchange, _ = s.desk.move(x.receiver, Move(seq=x.seq, answer=s.answer))
    exchange, _ = s.desk.move(x.receiver, Move(seq=x.seq, pick=s.pick))
    exchange, lie = s.desk.move(x.sender, s.card())
    assert lie is None and exchange.move == DONE


def test_the_offerer_asking_with_its_offer_is_its_move() -> None:
    s = scene(9)
    x = s.x
    s.desk.check(x.receiver, bent(s.offer))
    exchange, lie = s.desk.ask(x.sender, Witness(to=x.receiver, offer=s.offer))
    assert lie is None and (exchange.owes, exchange.move, exchange.step) == (x.receiver, ANSWER, 2)


def test_an_offerer_holding_the_turn_that_never_brings_its_offer_is_named() -> None:
    s = scene(10)
    x = s.x
    exchange = s.desk.check(x.receiver, bent(s.offer))
    assert exchange is not None and not s.desk.undecided(x.seq, exchange.step)
    lie = s.desk.overdue(x.seq, exchange.step)
    assert lie is not None and (lie.rule, lie.culprit) == ("no_answer", x.sender)
    assert "offer through the table" in lie.what


def test_a_check_naming_a_player_without_the_turn_names_no_one() -> None:
    # A receiver's check is its word: a claimed offer from a player the reports do not
    # show holding the turn is dropped, whoever wrote it.
    s = scene(11, players=4)
    x = s.x
    seats = s.game.seats
    claimed = next(n for n in seats if n not in (x.sender, x.receiver))
    to = s.desk.next_in(claimed)
    assert to is not None
    fake = OfferSeen(sender=claimed, seq=x.seq, num_cards=1, hashes=["0" * 32], mac="1" * 32)
    exchange = s.desk.check(to, fake)
    assert exchange is not None and exchange.owes == claimed
    assert s.desk.overdue(x.seq, exchange.step) is None
    assert not s.desk.open


def test_a_check_ahead_of_the_reports_waits_for_them() -> None:
    s = scene(12)
    x = s.x
    to = s.desk.next_in(x.receiver)
    assert to is not None
    ahead = OfferSeen(sender=x.receiver, seq=x.seq + 1, num_cards=1, hashes=["0" * 32],
                      mac="1" * 32)  # fmt: skip
    exchange = s.desk.check(to, ahead)
    assert exchange is not None and s.desk.undecided(x.seq + 1, exchange.step)
    assert s.desk.overdue(x.seq + 1, exchange.step) is None and s.desk.open


@pytest.mark.parametrize(
    ("case", "says"),
    [("judged", "judged already"), ("not next", "not the next player"), ("self", "not another")],
)
def test_a_bad_offer_that_cannot_be_a_turn_opens_nothing(case: str, says: str) -> None:
    s = scene(13)
    x = s.x
    offer, asker = bent(s.offer), x.receiver
    if case == "judged":
        offer = OfferSeen(sender=offer.sender, seq=x.seq - 1, num_cards=offer.num_cards,
                          hashes=offer.hashes, mac=offer.mac)  # fmt: skip
    elif case == "not next":
        asker = next(n for n in s.game.seats if n not in (x.sender, x.receiver))
    else:
        asker = x.sender
    with pytest.raises(Refused, match=says):
        s.desk.check(asker, offer)
    assert not s.desk.open


def test_an_offer_with_its_offerers_mac_passes_even_where_the_table_sees_no_turn() -> None:
    # The table's count of who is out may lag what the players know (an out not yet
    # counted): whether it was a turn is the ledger's to judge, from the reports.
    s = scene(14)
    x = s.x
    judged = OfferSeen(sender=x.sender, seq=x.seq - 1, num_cards=s.offer.num_cards,
                       hashes=s.offer.hashes, mac=s.offer.mac)  # fmt: skip
    signed = exchanges.offer_mac(
        s.game.secrets[x.sender], seq=judged.seq, sender=x.sender, to=x.receiver,
        num_cards=judged.num_cards, hashes=judged.hashes,
    )  # fmt: skip
    judged.mac = signed
    assert s.desk.check(x.receiver, judged) is None and not s.desk.open
