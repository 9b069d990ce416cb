"""No Tipping's wire protocol without sockets: the server's end and a client's end talking."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ring.wire.sansio import NEED_DATA
from services.notipping.protocol import (
    MAX_MESSAGE,
    AddMove,
    BadJoin,
    Begin,
    ClientConnection,
    Closed,
    Denied,
    Garbled,
    Granted,
    Invalid,
    JoinRequest,
    LocalProtocolError,
    Lose,
    MessageTooLong,
    RemoteProtocolError,
    RemoveMove,
    Round,
    ServerConnection,
    Win,
    encode,
)
from tests.helpers.feeding import chunked, events_until, feed_until, splits

FINAL = (MessageTooLong, Closed)
START_STATE = (0,) * 6 + (3,) + (0,) * 14  # the initial block at -4
# The handout's examples.
HANDOUT_ADD = Round(2, 0, "ADD", (1, 2, 3, 6, 7), (2, 3, 4, 5, 6, 7),
                    (0, 0, 0, 5, 3, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0))  # fmt: skip
HANDOUT_REMOVE = Round(8, 1, "REMOVE", None, None, HANDOUT_ADD.weights)


events = partial(events_until, final=FINAL)  # every event available now
feed = partial(feed_until, final=FINAL)  # the chunks one read at a time, events after each


def server_events(
    data: bytes, *, eof: bool = False, max_message: int = MAX_MESSAGE
) -> list[object]:
    return feed(ServerConnection(max_message), [data], eof=eof)


# -- the handout's exchange, both ends paired -------------------------------------------


def test_the_handout_exchange_between_paired_ends() -> None:
    server = ServerConnection()
    client = ClientConnection("hjfreyer", 0)

    def to_client(message: object) -> bytes:
        data = server.send(message)  # type: ignore[arg-type]
        client.receive_data(data)
        assert events(client) == [message]
        return data

    def to_server(data: bytes) -> list[object]:
        server.receive_data(data)
        return events(server)

    assert to_server(client.start()) == [JoinRequest("hjfreyer", 0)]
    assert to_client(Granted()) == b"GRANTED;\n"
    assert to_client(Begin(12, 7)) == b"BEGIN:12:7;\n"
    data = to_client(HANDOUT_ADD)
    assert (
        data == b"ROUND:2.0:ADD:1 2 3 6 7:2 3 4 5 6 7:0 0 0 5 3 0 0 1 0 0 0 4 0 0 0 0 0 0 0 0 0;\n"
    )
    assert to_server(client.add(3, -2)) == [AddMove(3, -2)]
    assert to_client(HANDOUT_REMOVE) == (
        b"ROUND:8.1:REMOVE:0 0 0 5 3 0 0 1 0 0 0 4 0 0 0 0 0 0 0 0 0;\n"
    )
    assert to_server(client.remove(-2)) == [RemoveMove(-2)]
    assert to_client(Invalid()) == b"INVALID;\n"
    assert to_client(Lose()) == b"LOSE;\n"
    assert server.state == "done"
    client.receive_data(b"")
    server.receive_data(b"")
    assert events(client) == [Closed()] and events(server) == [Closed()]


def test_the_winner_and_a_denied_client_asking_again() -> None:
    server, client = ServerConnection(), ClientConnection("bob", 1)
    for message in (Denied(), Denied(), Granted(), Begin(1, 10), Win()):
        client.receive_data(server.send(message))
    assert events(client) == [Denied(), Denied(), Granted(), Begin(1, 10), Win()]


# -- what a client sends, as the server reads it ----------------------------------------

CLIENT_SCRIPT = b"JOINREQUEST:ann_1:1;ADD:3:-2;ADD:10:+10;REMOVE:-10;REMOVE:0;"
CLIENT_EVENTS = [JoinRequest("ann_1", 1), AddMove(3, -2), AddMove(10, 10), RemoveMove(-10),
                 RemoveMove(0)]  # fmt: skip


def test_messages_split_at_every_byte_give_the_same_events() -> None:
    for chunks in splits(CLIENT_SCRIPT):
        assert feed(ServerConnection(), chunks) == [*CLIENT_EVENTS, Closed()], chunks


@pytest.mark.parametrize(
    "data",
    [
        b"JOINREQUEST : ann_1 : 1 ;\nADD: 3 :-2;\r\n\tADD:10:+10 ;\n REMOVE:-10;REMOVE:0;\n",
        b"J O I N R E Q U E S T:an n_1:1;A\nD\nD:3:- 2;ADD:1 0:+10;REM OVE:-1 0;REMOVE:0\r\n;",
        b";;\n;JOINREQUEST:ann_1:1;;ADD:3:-2;  ;\n\n;ADD:10:+10;REMOVE:-10;\x0b\x0c;REMOVE:0;;",
    ],
)
def test_spaces_newlines_and_empty_messages_anywhere_are_ignored(data: bytes) -> None:
    for chunks in splits(data):
        assert feed(ServerConnection(), chunks) == [*CLIENT_EVENTS, Closed()], chunks


def test_commands_are_read_in_any_case() -> None:
    data = b"joinrequest:ann_1:1;add:3:-2;Add:10:+10;remove:-10;ReMoVe:0;"
    assert server_events(data) == CLIENT_EVENTS
    # A handle keeps its case.
    assert server_events(b"JoinRequest:AnN:0;") == [JoinRequest("AnN", 0)]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"JOINREQUEST;", "JOINREQUEST takes a handle and a player number"),
        (b"JOINREQUEST:ann;", "JOINREQUEST takes a handle and a player number"),
        (b"JOINREQUEST:ann:0:1;", "JOINREQUEST takes a handle and a player number"),
        (b"JOINREQUEST::0;", "a handle is 1-32"),
        (b"JOINREQUEST:" + b"a" * 33 + b":0;", "a handle is 1-32"),
        (b"JOINREQUEST:a/b:0;", "a handle is 1-32"),
        (b"JOINREQUEST:caf\xc3\xa9:0;", "a handle is 1-32"),
        (b"JOINREQUEST:ann:2;", "'2': the player number is 0 or 1"),
        (b"JOINREQUEST:ann:-1;", "'-1': the player number is 0 or 1"),
        (b"JOINREQUEST:ann:01;", "'01': the player number is 0 or 1"),
        (b"JOINREQUEST:ann:+1;", "'+1': the player number is 0 or 1"),
        (b"JOINREQUEST:ann:x;", "'x': the player number is 0 or 1"),
        (b"JOINREQUEST:ann:;", "'': the player number is 0 or 1"),
    ],
)
def test_every_bad_join(data: bytes, reason: str) -> None:
    [event] = server_events(data)
    assert isinstance(event, BadJoin) and reason in event.reason


def test_the_longest_handle_and_every_handle_character() -> None:
    handle = "Az09_.-" + "x" * 25
    assert server_events(f"JOINREQUEST:{handle}:1;".encode()) == [JoinRequest(handle, 1)]


ADD_USAGE = "ADD takes a weight and a position, as in ADD:3:-2;"
REMOVE_USAGE = "REMOVE takes a position, as in REMOVE:-2;"
WHO_SENDS = "a client sends JOINREQUEST, ADD or REMOVE"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"HELLO;", Garbled("HELLO", WHO_SENDS)),
        (b"GRANTED;", Garbled("GRANTED", WHO_SENDS)),
        (b"ADD;", Garbled("ADD", ADD_USAGE)),
        (b"ADD:3;", Garbled("ADD:3", ADD_USAGE)),
        (b"ADD:3:x;", Garbled("ADD:3:x", ADD_USAGE)),
        (b"ADD:3:4:5;", Garbled("ADD:3:4:5", ADD_USAGE)),
        (b"ADD:3:--2;", Garbled("ADD:3:--2", ADD_USAGE)),
        (b"ADD:3.0:2;", Garbled("ADD:3.0:2", ADD_USAGE)),
        (b"ADD:1234567890:2;", Garbled("ADD:1234567890:2", ADD_USAGE)),
        (b"REMOVE;", Garbled("REMOVE", REMOVE_USAGE)),
        (b"REMOVE:;", Garbled("REMOVE:", REMOVE_USAGE)),
        (b"REMOVE:1:2;", Garbled("REMOVE:1:2", REMOVE_USAGE)),
        (b"ADD\xff:1:2;", Garbled("ADD\\xff:1:2", WHO_SENDS)),
        (b"3:-2;", Garbled("3:-2", WHO_SENDS)),
    ],
)
def test_garbled_messages(data: bytes, expected: Garbled) -> None:
    for chunks in splits(data):
        assert feed(ServerConnection(), chunks, eof=False) == [expected], chunks


def test_numbers_outside_the_board_are_the_rules_business() -> None:
    # The protocol reads any decimal integer of up to 9 digits; the game refuses it.
    assert server_events(b"ADD:0:11;ADD:-5:999999999;REMOVE:-11;") == [
        AddMove(0, 11),
        AddMove(-5, 999999999),
        RemoveMove(-11),
    ]


def test_a_message_cut_off_by_the_close() -> None:
    cut = Garbled("ADD:3", "cut off by the close, before its ';'")
    assert server_events(b"ADD:3", eof=True) == [cut, Closed()]
    assert server_events(b"ADD:1:1;AD D: 3\n", eof=True) == [AddMove(1, 1), cut, Closed()]
    # Whitespace after the last message is not a message.
    assert server_events(b"ADD:1:1; \r\n\t", eof=True) == [AddMove(1, 1), Closed()]
    assert server_events(b"", eof=True) == [Closed()]


def test_closed_stays_closed_and_data_after_it_is_a_local_error() -> None:
    server = ServerConnection()
    server.receive_data(b"")
    server.receive_data(b"")  # a second close changes nothing
    assert server.next_event() == Closed() and server.next_event() == Closed()
    with pytest.raises(LocalProtocolError):
        server.receive_data(b"ADD:1:1;")


# -- the size limit ---------------------------------------------------------------------


def test_a_message_at_the_limit_is_read_and_one_byte_more_is_too_long() -> None:
    limit = 16
    at_limit = b"ADD:1:2" + b" " * (limit - 7)  # whitespace counts
    assert len(at_limit) == limit
    for chunks in splits(at_limit + b";ADD:3:4;"):
        assert feed(ServerConnection(limit), chunks, eof=False) == [AddMove(1, 2), AddMove(3, 4)]
    for data in (at_limit + b" ;", at_limit + b" "):  # with and without its ';'
        for chunks in splits(data):
            assert feed(ServerConnection(limit), chunks, eof=False) == [MessageTooLong(limit)]


def test_too_long_is_said_at_once_and_the_connection_is_done() -> None:
    limit = 16
    server = ServerConnection(limit)
    server.receive_data(b"x" * limit)
    assert events(server) == []  # its ';' may yet come
    server.receive_data(b"x")
    assert events(server) == [MessageTooLong(limit)]
    server.receive_data(b";ADD:1:1;")  # dropped
    server.receive_data(b"")
    assert server.next_event() == MessageTooLong(limit)
    assert server.buffered == 0


def test_the_limit_counts_a_message_not_a_connection() -> None:
    limit = 16
    assert server_events(b"ADD:1:1;" * 100, max_message=limit) == [AddMove(1, 1)] * 100
    # The limit is counted from the end of the last message, blank ones included.
    assert server_events(b";" * 100 + b"REMOVE:3;", max_message=limit) == [RemoveMove(3)]
    assert server_events(b"ADD:1:1;" + b" " * 17, max_message=limit) == [
        AddMove(1, 1),
        MessageTooLong(limit),
    ]


def test_the_default_limit() -> None:
    assert MAX_MESSAGE == 4096
    assert server_events(b" " * 1021 + b"ADD;") == [Garbled("ADD", ADD_USAGE)]
    assert server_events(b" " * 4097) == [MessageTooLong(4096)]


# -- what the server sends ----------------------------------------------------------------


def test_server_messages_and_their_bytes() -> None:
    assert encode(Granted()) == b"GRANTED;\n"
    assert encode(Denied()) == b"DENIED;\n"
    assert encode(Begin(3, 10)) == b"BEGIN:3:10;\n"
    assert encode(Invalid()) == b"INVALID;\n"
    assert encode(Win()) == b"WIN;\n"
    assert encode(Lose()) == b"LOSE;\n"
    state = " ".join(map(str, START_STATE))
    # The weight lists go out sorted, whatever order they came in.
    one_left = Round(7, 1, "ADD", (7,), (), START_STATE)
    assert encode(one_left) == f"ROUND:7.1:ADD:7::{state};\n".encode()
    assert encode(Round(1, 0, "ADD", (3, 1, 2), (2, 1), START_STATE)) == (
        f"ROUND:1.0:ADD:1 2 3:1 2:{state};\n".encode()
    )


def sent_in_order(messages: list[object]) -> ServerConnection:
    server = ServerConnection()
    for message in messages:
        server.send(message)  # type: ignore[arg-type]
    return server


ROUND = Round(1, 0, "REMOVE", None, None, START_STATE)


@pytest.mark.parametrize(
    ("before", "message"),
    [
        ([], Begin(1, 7)),
        ([], ROUND),
        ([], Invalid()),
        ([], Win()),
        ([Denied()], Lose()),
        ([Granted()], Granted()),
        ([Granted()], Denied()),
        ([Granted()], ROUND),
        ([Granted()], Win()),
        ([Granted(), Begin(1, 7)], Begin(1, 7)),
        ([Granted(), Begin(1, 7)], Granted()),
        ([Granted(), Begin(1, 7), Win()], ROUND),
        ([Granted(), Begin(1, 7), Invalid(), Lose()], Lose()),
        ([Granted(), Begin(1, 7), Lose()], Invalid()),
        ([Granted(), Begin(1, 7)], AddMove(1, 1)),
    ],
)
def test_the_server_sends_in_order(before: list[object], message: object) -> None:
    server = sent_in_order(before)
    with pytest.raises(LocalProtocolError, match=f"cannot send {type(message).__name__} while"):
        server.send(message)  # type: ignore[arg-type]


def test_the_states_the_server_goes_through() -> None:
    server = ServerConnection()
    for message, state in [
        (Denied(), "joining"),
        (Denied(), "joining"),
        (Granted(), "granted"),
        (Begin(1, 7), "playing"),
        (ROUND, "playing"),
        (Invalid(), "playing"),
        (Win(), "done"),
    ]:
        server.send(message)
        assert server.state == state


# -- the client's end ------------------------------------------------------------------------


@pytest.mark.parametrize(("handle", "player"), [("", 0), ("a b", 0), ("a" * 33, 1), ("ann", 2)])
def test_the_client_checks_its_handle_and_seat(handle: str, player: int) -> None:
    with pytest.raises(ValueError):
        ClientConnection(handle, player)


def test_the_client_reads_every_server_message() -> None:
    client = ClientConnection("ann", 0)
    client.receive_data(
        b"DENIED;GRANTED;\nBEGIN:42:10;\n"
        b"ROUND:2.0:ADD:\n1 2 3 6 7:\n2 3 4 5 6 7:\n"
        b"0 0 0 5 3 0 0 1 0 0 0 4 0 0 0 0 0 0 0 0 0;\n"
        b" round : 8.1 : remove :\n 0 0 0 5 3 0 0 1 0 0 0 4 0 0 0 0 0 0 0 0 0 ;"
        b"ROUND:9.0:ADD:7::" + b"0 " * 21 + b";invalid;\r\nWIN;LOSE;"
    )
    client.receive_data(b"")
    assert feed(client, []) == [
        Denied(),
        Granted(),
        Begin(42, 10),
        HANDOUT_ADD,
        HANDOUT_REMOVE,
        Round(9, 0, "ADD", (7,), (), (0,) * 21),
        Invalid(),
        Win(),
        Lose(),
        Closed(),
    ]


SERVER_SCRIPT = [Granted(), Begin(1, 7), HANDOUT_ADD, HANDOUT_REMOVE, Invalid(), Lose()]


@given(
    st.lists(st.sampled_from([b"", b"\n", b"\r\n", b" \t"]), min_size=6, max_size=6),
    st.lists(st.integers(min_value=0), max_size=30),
)
def test_any_chunking_of_a_valid_server_gives_the_same_events(
    separators: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(encode(m) + sep for m, sep in zip(SERVER_SCRIPT, separators, strict=True))
    assert feed(ClientConnection("bot", 1), chunked(data, cuts)) == [*SERVER_SCRIPT, Closed()]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"HELLO;", "cannot read the server's message 'HELLO'"),
        (b"GRANTED:1;", "cannot read"),
        (b"BEGIN:1;", "cannot read"),
        (b"BEGIN:x:7;", "cannot read"),
        (b"BEGIN:1:7:2;", "cannot read"),
        (b"ROUND;", "cannot read"),
        (b"ROUND:1:REMOVE:" + b"0 " * 21 + b";", "the round is <round>.<player>"),
        (b"ROUND:1.2:REMOVE:" + b"0 " * 21 + b";", "the round is <round>.<player>"),
        (b"ROUND:x.0:REMOVE:" + b"0 " * 21 + b";", "the round is <round>.<player>"),
        (b"ROUND:1.0:REMOVE:" + b"0 " * 20 + b";", "a state has 21 numbers, not 20"),
        (b"ROUND:1.0:REMOVE:" + b"0 " * 22 + b";", "a state has 21 numbers, not 22"),
        (b"ROUND:1.0:REMOVE:" + b"x " * 21 + b";", "state 'x x"),
        (b"ROUND:1.0:ADD:1:2:" + b"0 " * 20 + b"y;", "state"),
        (b"ROUND:1.0:ADD:1 a:2:" + b"0 " * 21 + b";", "weights '1 a': not numbers"),
        (b"ROUND:1.0:ADD:" + b"0 " * 21 + b";", "ADD with two weight lists, or REMOVE"),
        (b"ROUND:1.0:REMOVE:1:2:" + b"0 " * 21 + b";", "ADD with two weight lists, or REMOVE"),
        (b"ROUND:1.0:PLACE:1:2:" + b"0 " * 21 + b";", "ADD with two weight lists, or REMOVE"),
        (b"WIN", "the server closed in the middle of 'WIN'"),
        (b"x" * (MAX_MESSAGE + 1), f"a message over {MAX_MESSAGE} bytes"),
    ],
)
def test_the_client_refuses_what_is_not_the_server_protocol(data: bytes, problem: str) -> None:
    client = ClientConnection("bot", 0)
    client.receive_data(data)
    client.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as raised:
        events(client)
    assert problem in str(raised.value)


def test_the_client_moves_only_to_answer_a_round_of_that_phase() -> None:
    client = ClientConnection("ann", 0)
    assert client.start() == b"JOINREQUEST:ann:0;\n"
    with pytest.raises(LocalProtocolError, match="answers a ROUND"):
        client.add(1, 1)
    client.receive_data(encode(Granted()) + encode(Begin(1, 7)) + encode(HANDOUT_ADD))
    assert events(client) == [Granted(), Begin(1, 7), HANDOUT_ADD]
    with pytest.raises(LocalProtocolError, match="this round is ADD, not REMOVE"):
        client.remove(3)
    assert client.add(3, -2) == b"ADD:3:-2;\n"
    with pytest.raises(LocalProtocolError, match="answers a ROUND"):
        client.add(1, 1)  # once per round
    client.receive_data(encode(HANDOUT_REMOVE))
    assert events(client) == [HANDOUT_REMOVE]
    with pytest.raises(LocalProtocolError, match="this round is REMOVE, not ADD"):
        client.add(3, -2)
    assert client.remove(-2) == b"REMOVE:-2;\n"
    client.receive_data(b"")
    assert events(client) == [Closed()]
    with pytest.raises(LocalProtocolError):
        client.receive_data(b"WIN;")


# -- any chunking, any bytes ------------------------------------------------------------------

CLIENT_PIECES = [
    b"JOINREQUEST:ann:0;",
    b"JOINREQUEST:x:7;",
    b"ADD:3:-2;",
    b"add : 10 : +4 ;",
    b"REMOVE:-10;",
    b"REMOVE:",
    b"ADD:3",
    b";",
    b"hello;",
    b"  \r\n\t",
    b"x" * 11,
    b"\xc3\xa9",
]


def streams(pieces: list[bytes]) -> st.SearchStrategy[bytes]:
    piece = st.one_of(st.sampled_from(pieces), st.binary(max_size=8))
    return st.lists(piece, max_size=20).map(b"".join)


VALID_CLIENT = st.builds(
    lambda join, moves, separator: separator.join([join, *moves]) + separator,
    st.sampled_from([b"JOINREQUEST:ann:0;", b"joinrequest:a.b-c_9:1;", b"JOINREQUEST : z : 1 ;"]),
    st.lists(
        st.one_of(
            st.tuples(st.integers(1, 10), st.integers(-10, 10)).map(lambda m: b"ADD:%d:%d;" % m),
            st.integers(-10, 10).map(lambda p: b"REMOVE: %d ;" % p),
        ),
        max_size=15,
    ),
    st.sampled_from([b"", b"\n", b"\r\n", b" ", b"\n\n\t", b";"]),
)


@given(VALID_CLIENT, st.lists(st.integers(min_value=0), max_size=30))
def test_any_chunking_of_a_valid_client_gives_the_same_events(data: bytes, cuts: list[int]) -> None:
    whole = feed(ServerConnection(), [data])
    assert isinstance(whole[0], JoinRequest) and whole[-1] == Closed()
    assert all(isinstance(event, AddMove | RemoveMove) for event in whole[1:-1])
    assert len(whole) == data.upper().count(b"ADD") + data.count(b"REMOVE") + 2
    assert feed(ServerConnection(), chunked(data, cuts)) == whole


@given(
    streams(CLIENT_PIECES),
    st.lists(st.integers(min_value=0), max_size=12),
    st.booleans(),
    st.sampled_from([8, 16, MAX_MESSAGE]),
)
def test_any_bytes_give_the_server_the_same_events_however_they_are_cut(
    data: bytes, cuts: list[int], eof: bool, max_message: int
) -> None:
    whole = feed(ServerConnection(max_message), [data], eof=eof)
    assert feed(ServerConnection(max_message), chunked(data, cuts), eof=eof) == whole
    kinds = JoinRequest | BadJoin | AddMove | RemoveMove | Garbled | MessageTooLong | Closed
    assert all(isinstance(event, kinds) for event in whole)  # never an exception
    assert all(not isinstance(event, FINAL) for event in whole[:-1])


SERVER_PIECES = [encode(message) for message in SERVER_SCRIPT]


@given(
    streams(SERVER_PIECES),
    st.lists(st.integers(min_value=0), max_size=12),
    st.booleans(),
)
def test_any_bytes_give_the_client_events_or_a_remote_protocol_error(
    data: bytes, cuts: list[int], eof: bool
) -> None:
    def outcome(chunks: list[bytes]) -> tuple[list[object], str | None]:
        client = ClientConnection("bot", 0)
        seen: list[object] = []
        try:
            for chunk in [*chunks, b""] if eof else chunks:
                client.receive_data(chunk)
                while (event := client.next_event()) is not NEED_DATA:
                    seen.append(event)
                    if isinstance(event, Closed):
                        return seen, None
        except RemoteProtocolError as exc:
            return seen, str(exc)
        return seen, None

    whole = outcome([data] if data else [])
    assert outcome(chunked(data, cuts)) == whole
