"""Two sans-IO links talking to each other, without sockets."""

from __future__ import annotations

import pytest

from ring.oldmaid.cards import Card
from ring.oldmaid.messages import (
    Discard,
    Draw,
    GameOver,
    Join,
    Offer,
    Pick,
    Reply,
    Status,
    YourTurn,
    error,
    ok,
)
from ring.oldmaid.protocol import (
    NEED_DATA,
    Answered,
    Closed,
    Invalid,
    Link,
    LocalProtocolError,
    RemoteProtocolError,
    Role,
)

THREE = Card("3", "spades")


def transfer(sender: Link, receiver: Link, message: object) -> object:
    receiver.receive_data(sender.send(message))
    return receiver.next_event()


def pair(dialler: Role, acceptor: Role) -> tuple[Link, Link]:
    return Link(dialler), Link(acceptor)


def test_offer_pick_exchange() -> None:
    offerer, picker = pair(Role.OFFERER, Role.PICKER)
    assert transfer(offerer, picker, Offer(num_cards=3)) == Offer(num_cards=3)
    assert transfer(picker, offerer, ok()) == Answered(Offer(num_cards=3), ok())
    assert transfer(picker, offerer, Pick(card_num=5)) == Pick(card_num=5)
    # A bad index is answered with error and the picker may pick again.
    answered = transfer(offerer, picker, error("card_num 5 is not between 0 and 2"))
    assert isinstance(answered, Answered) and answered.reply.result == "error"
    assert transfer(picker, offerer, Pick(card_num=1)) == Pick(card_num=1)
    answered = transfer(offerer, picker, ok(card=THREE))
    assert isinstance(answered, Answered) and answered.reply.card == THREE
    # The offer is closed: another pick is refused on both sides.
    with pytest.raises(LocalProtocolError):
        picker.send(Pick(card_num=0))
    assert offerer.next_event() is NEED_DATA


def test_pick_without_an_accepted_offer_is_invalid_and_answerable() -> None:
    offerer, picker = pair(Role.OFFERER, Role.PICKER)
    transfer(offerer, picker, Offer(num_cards=2))
    transfer(picker, offerer, Reply(result="out"))
    offerer.receive_data(b'{"cmd":"pick","card_num":0}\n')
    event = offerer.next_event()
    assert event == Invalid("pick without an accepted offer")
    assert offerer.owes_reply
    picker.receive_data(offerer.send(error(event.reason)))
    with pytest.raises(RemoteProtocolError):  # the picker had no request out
        picker.next_event()


def test_zero_card_offer_passes_the_turn_without_a_pick() -> None:
    offerer, picker = pair(Role.OFFERER, Role.PICKER)
    transfer(offerer, picker, Offer(num_cards=0))
    transfer(picker, offerer, ok())
    with pytest.raises(LocalProtocolError):
        picker.send(Pick(card_num=0))


def test_your_turn_round_trip_and_out() -> None:
    offerer, picker = pair(Role.OFFERER, Role.PICKER)
    assert transfer(offerer, picker, YourTurn()) == YourTurn()
    assert transfer(picker, offerer, Reply(result="out")) == Answered(YourTurn(), Reply("out"))


def test_second_request_before_the_reply_is_our_error() -> None:
    client = Link(Role.TABLE_CLIENT)
    client.send(Draw())
    with pytest.raises(LocalProtocolError):
        client.send(Status())


def test_reply_with_nothing_to_answer_is_our_error() -> None:
    with pytest.raises(LocalProtocolError):
        Link(Role.TABLE_SERVER).send(ok())


def test_table_exchange_and_game_over_notice_between_replies() -> None:
    client, server = pair(Role.TABLE_CLIENT, Role.TABLE_SERVER)
    assert transfer(client, server, Join(nick="al")) == Join(nick="al")
    server_bytes = server.send(ok(players=[(("127.0.0.1", 4000), "al")]))
    with pytest.raises(LocalProtocolError):
        client.send(Draw())  # the join reply has not come yet
    client.receive_data(server_bytes)
    event = client.next_event()
    assert isinstance(event, Answered) and event.reply.players


def test_game_over_notice_arrives_while_a_request_waits() -> None:
    client, server = pair(Role.TABLE_CLIENT, Role.TABLE_SERVER)
    transfer(client, server, Status())
    notice = GameOver(loser="bob", out=["al"])
    data = server.send(notice) + server.send(ok(in_=["bob"], out=["al"]))
    client.receive_data(data)
    assert client.next_event() == notice
    event = client.next_event()
    assert isinstance(event, Answered) and event.reply.out == ["al"]


def test_table_server_refuses_peer_requests_as_invalid() -> None:
    server = Link(Role.TABLE_SERVER)
    server.receive_data(b'{"cmd":"offer","num_cards":3}\n')
    event = server.next_event()
    assert isinstance(event, Invalid) and "offer" in event.reason
    server.send(error(event.reason))


def test_garbage_request_stays_answerable_and_stream_resynchronises() -> None:
    server = Link(Role.TABLE_SERVER)
    server.receive_data(b'garbage\n{"cmd":"status"}{"cmd":"draw"}')
    first = server.next_event()
    assert isinstance(first, Invalid)
    server.send(error(first.reason))
    assert server.next_event() == Status()
    server.send(ok(in_=[], out=[]))
    assert server.next_event() == Draw()


@pytest.mark.parametrize(
    ("request_", "reply"),
    [
        (Draw(), b'{"result":"ok"}'),
        (Draw(), b'{"result":"out","card":["3","spades"]}'),
        (Join(nick="a"), b'{"result":"ok"}'),
        (Status(), b'{"result":"ok","in":[]}'),
        (Discard(cards=[THREE, Card("3", "clubs")]), b'{"result":"last_card"}'),
        (Draw(), b"not json\n"),
    ],
)
def test_replies_that_make_no_sense_are_fatal(request_: object, reply: bytes) -> None:
    client = Link(Role.TABLE_CLIENT)
    client.send(request_)
    client.receive_data(reply)
    with pytest.raises(RemoteProtocolError):
        client.next_event()


def test_unsolicited_reply_is_fatal() -> None:
    picker = Link(Role.PICKER)
    picker.receive_data(b'{"result":"ok"}')
    with pytest.raises(RemoteProtocolError):
        picker.next_event()


def test_oversized_message_is_fatal() -> None:
    server = Link(Role.TABLE_SERVER, max_message=64)
    server.receive_data(b'{"cmd":"join","nick":"' + b"a" * 100)
    with pytest.raises(RemoteProtocolError, match="limit"):
        server.next_event()


def test_close_after_buffered_messages() -> None:
    server = Link(Role.TABLE_SERVER)
    server.receive_data(b'{"cmd":"status"}')
    server.receive_data(b"")
    assert server.next_event() == Status()
    server.send(ok(in_=[], out=[]))
    assert server.next_event() == Closed()
