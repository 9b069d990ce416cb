from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ring.oldmaid.cards import JOKER, Card
from ring.oldmaid.messages import (
    BadMessage,
    Discard,
    Join,
    Message,
    Offer,
    Reply,
    YourTurn,
    decode,
    decode_thoroughly,
    encode,
)


def test_join_with_optional_fields_and_extras() -> None:
    message = decode(b'{"cmd":"join","nick":"al-ice_1","port":4001,"host":"10.0.0.5","x":1}')
    assert message == Join(nick="al-ice_1", port=4001, host="10.0.0.5")


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        (b'{"cmd":"join","nick":"a b"}', "$.nick"),
        (b'{"cmd":"join","nick":""}', "$.nick"),
        (b'{"cmd":"join","nick":"' + b"a" * 33 + b'"}', "$.nick"),
        (b'{"cmd":"join"}', "`nick`"),
        (b'{"cmd":"join","nick":"a","port":"12"}', "$.port"),
        (b'{"cmd":"join","nick":"a","port":70000}', "$.port"),
        (b'{"cmd":"offer","num_cards":-1}', "$.num_cards"),
        (b'{"cmd":"pick","card_num":"2"}', "$.card_num"),
        (b'{"cmd":"discard","cards":[["3","spades"]]}', "$.cards"),
        (b'{"cmd":"discard","cards":[["3","spades"],["3","clubz"]]}', "$.cards[1]"),
        (b'{"cmd":"discard","cards":[["3","spades"],[3,"clubs"]]}', "$.cards[1][0]"),
        (
            b'{"cmd":"discard","cards":[["3","spades"],["3","clubs"]],"last_cards":"yes"}',
            "last_cards",
        ),
        (b'{"cmd":"dance"}', "unknown cmd 'dance'"),
        (b'{"cmd":7}', "$.cmd"),
        (b"[1,2]", "JSON object"),
        (b"{nope}", "invalid JSON"),
        (b'{"hello":1}', '"cmd"'),
    ],
)
def test_bad_messages_name_the_problem(raw: bytes, names: str) -> None:
    with pytest.raises(BadMessage, match=None) as caught:
        decode(raw)
    assert names in str(caught.value)


def test_cards_are_case_insensitive_and_come_out_canonical() -> None:
    message = decode(b'{"cmd":"discard","cards":[["q","SPADES"],["Q","Clubs"]]}')
    assert isinstance(message, Discard)
    assert message.cards == [Card("Q", "spades"), Card("Q", "clubs")]
    assert encode(message).startswith(b'{"cmd":"discard","cards":[["Q","spades"],["Q","clubs"]]')


@pytest.mark.parametrize(
    ("fields", "out"),
    [
        (b'"last_cards":"true"', True),
        (b'"last_cards":"TRUE"', True),
        (b'"last_cards":"false"', False),
        (b'"last_cards":true', True),
        (b'"last_card":true', True),
        (b'"last_card":"true"', True),
        (b'"last_card":false', False),
        (b'"x":0', False),
    ],
)
def test_last_cards_flag_in_every_spelling(fields: bytes, out: bool) -> None:
    raw = b'{"cmd":"discard","cards":[["3","spades"],["3","clubs"]],' + fields + b"}"
    message = decode(raw)
    assert isinstance(message, Discard)
    assert message.declares_out is out


def test_reply_round_trip_with_in_renamed() -> None:
    reply = Reply(result="ok", in_=["a"], out=["b"], card=JOKER)
    data = encode(reply)
    assert b'"in":["a"]' in data and b'["joker","maid"]' in data
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert decode(data) == reply


def test_our_extra_from_field_is_optional() -> None:
    assert decode(b'{"cmd":"offer","num_cards":0}') == Offer(num_cards=0)
    assert decode(b'{"cmd":"your_turn","from":"bob"}') == YourTurn(sender="bob")


def assert_decodes_or_explains(data: bytes) -> None:
    try:
        message = decode(data)
    except BadMessage as exc:
        assert str(exc)
    else:
        assert isinstance(message, (Message, Reply))


@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_bad_message(data: bytes) -> None:
    assert_decodes_or_explains(data)


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "cmd",
                "nick",
                "cards",
                "result",
                "card",
                "num_cards",
                "card_num",
                "last_cards",
                "players",
                "in",
            ]
        ),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=5)
        | st.lists(st.text(max_size=5), max_size=3),
        max_size=5,
    )
)
def test_any_json_object_decodes_or_raises_bad_message(obj: dict) -> None:
    assert_decodes_or_explains(msgspec.json.encode(obj))


COMMANDS = ["join", "draw", "discard", "out_of_cards", "status", "offer", "pick", "your_turn",
            "received", "gave", "nope"]  # fmt: skip
FIELDS = ["cmd", "result", "nick", "num_cards", "card_num", "card", "cards", "stream", "from",
          "message", "seq", "mac", "state"]  # fmt: skip


@given(
    st.dictionaries(
        st.sampled_from(FIELDS),
        st.sampled_from([*COMMANDS, "ok", "error", "out", "last_card"])
        | st.none()
        | st.booleans()
        | st.integers(-2, 60)
        | st.lists(st.sampled_from(["3", "spades", "clubs", "joker", "maid"]), max_size=2),
        max_size=5,
    )
)
def test_the_fast_path_decodes_exactly_as_the_thorough_one(obj: dict) -> None:
    frame = msgspec.json.encode(obj)
    try:
        expected: object = decode_thoroughly(frame)
    except BadMessage as exc:
        expected = ("refused", str(exc))
    try:
        got: object = decode(frame)
    except BadMessage as exc:
        got = ("refused", str(exc))
    assert got == expected
