"""Reversi's wire protocol without sockets, the client's end: what it sends and what it
reads; and any chunking, any bytes, at either end.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ring.wire.sansio import NEED_DATA
from services.reversi.protocol import (
    MAX_LINE,
    BadName,
    ClientConnection,
    Closed,
    Colour,
    GameOver,
    Garbled,
    LineTooLong,
    LocalProtocolError,
    MoveAttempt,
    Named,
    RemoteProtocolError,
    Result,
    ServerConnection,
    encode,
    is_name,
)
from tests.helpers.feeding import chunked, splits
from tests.helpers.reversi import AFTER_23, AFTER_24, FINAL, START, events, feed

# -- the client's end ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "abcdefghijk", "a-b", "my team", "café", "N", 5])
def test_the_client_checks_its_name(name: object) -> None:
    if name == "N":  # a one-letter name is fine
        assert ClientConnection(name).start() == b"NN\n"
        return
    assert not is_name(name)
    with pytest.raises(ValueError):
        ClientConnection(name)  # type: ignore[arg-type]


def test_the_client_moves_only_to_answer_a_board() -> None:
    client = ClientConnection("abcdefghij")
    assert client.start() == b"Nabcdefghij\n"
    with pytest.raises(LocalProtocolError):
        client.start()
    with pytest.raises(LocalProtocolError, match="no board"):
        client.move(2, 3)
    client.receive_data(b"U1\nB" + START.digits.encode() + b"\n")
    assert events(client) == [Colour(1), START]
    with pytest.raises(ValueError):
        client.move(8, 3)
    assert client.move(2, 3) == b"M23\n"
    with pytest.raises(LocalProtocolError, match="no board"):
        client.move(2, 3)  # once per board
    client.receive_data(b"B" + START.digits.encode())  # the same board: that move was illegal
    assert events(client) == [START]
    client.receive_data(b"W0")
    assert events(client) == [Result(0)]
    with pytest.raises(LocalProtocolError):
        client.move(2, 3)  # the game is over
    unnamed = ClientConnection("x")
    unnamed.receive_data(b"U0B" + START.digits.encode())
    assert events(unnamed) == [Colour(0), START]
    with pytest.raises(LocalProtocolError, match="start"):
        unnamed.move(2, 3)


SERVER_SCRIPT = [Colour(1), START, AFTER_24, Result(1), GameOver()]
BARE_SERVER_BYTES = b"".join(encode(message) for message in SERVER_SCRIPT)


@pytest.mark.parametrize(
    "data",
    [
        BARE_SERVER_BYTES,
        b"".join(encode(message) + b"\n" for message in SERVER_SCRIPT),
        b"".join(b" \r\n\t" + encode(message) + b"\r\n" for message in SERVER_SCRIPT),
    ],
)
def test_the_client_reads_server_messages_split_anywhere(data: bytes) -> None:
    for chunks in splits(data):
        assert feed(ClientConnection("bot"), chunks) == [*SERVER_SCRIPT, Closed()]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"X", "not a server message: starts with 'X'"),
        (b"u1", "not a server message: starts with 'u'"),
        (b"\xc3", "not a server message: starts with byte 0xc3"),
        (b"U2", "bad U message: colour is '2'"),
        (b"U1W7", "bad W message: result is '7'"),
        (b"U1B0003", "bad B message: square 3 is '3'"),
        (b"U1B000\n", "bad B message: square 3 is '\\n'"),  # a board is 64 digits together
        (b"U1B" + b"0" * 63, "the server closed inside a B message"),
        (b"U", "the server closed inside a U message"),
        (b"B" + b"0" * 64, "B before U"),
        (b"G", "G before U"),
        (b"U1U0", "a second U"),
        (b"U1W1W1", "a second W"),
        (b"U1W1B" + b"0" * 64, "B after W"),
        (b"U1W1G\nG", "G after G"),
        (b"U1GU1", "U after G"),
    ],
)
def test_bytes_that_are_not_the_server_protocol(data: bytes, problem: str) -> None:
    client = ClientConnection("bot")
    client.receive_data(data)
    client.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as raised:
        events(client)
    assert str(raised.value) == problem or problem in str(raised.value)
    with pytest.raises(RemoteProtocolError):
        client.next_event()  # broken for good


def test_a_bad_board_is_refused_before_all_64_digits_arrive() -> None:
    client = ClientConnection("bot")
    client.receive_data(b"U1B0120")
    assert events(client) == [Colour(1)]
    client.receive_data(b"9")
    with pytest.raises(RemoteProtocolError, match="square 4"):
        client.next_event()


def test_the_client_sees_the_close_after_g_and_data_after_close_is_a_local_error() -> None:
    client = ClientConnection("bot")
    client.receive_data(b"U1W2G \r\n")
    client.receive_data(b"")
    assert events(client) == [Colour(1), Result(2), GameOver(), Closed()]
    assert client.next_event() == Closed()
    with pytest.raises(LocalProtocolError):
        client.receive_data(b"G")


# -- any chunking, any bytes -----------------------------------------------------------

CLIENT_PIECES = [
    b"Nteam",
    b"Nabcdefghij",
    b"Nx_9",
    b"M34",
    b"M77",
    b"M0",
    b"M",
    b"M38",
    b"hello",
    b"  ",
    b"\t",
    b"x" * 11,
    b" " * 12,
    b"\xc3\xa9",
]
ENDINGS = [b"\n", b"\r\n", b"\r", b"", b" "]


def streams(pieces: list[bytes], endings: list[bytes]) -> st.SearchStrategy[bytes]:
    piece = st.one_of(st.sampled_from(pieces), st.binary(max_size=8))
    return st.lists(st.tuples(piece, st.sampled_from(endings)), max_size=20).map(
        lambda parts: b"".join(p + e for p, e in parts)
    )


VALID_CLIENT = st.builds(
    lambda name, moves, separator: (
        b" \r\n"[: len(separator) % 4] + name + b"".join(separator + m for m in moves) + separator
    ),
    # A 10-character name with no newline is decided by the byte after it (or
    # the silence while the client waits for the server), so here it has one.
    st.sampled_from([b"Nteam\n", b"Nabcdefghij\n", b"Nx_9\r\n", b"N0123456789\n"]),
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 7)).map(lambda xy: b"M%d%d" % xy),
        max_size=15,
    ),
    st.sampled_from([b"", b"\n", b"\r\n", b" ", b"\n\n\t"]),
)


@given(VALID_CLIENT, st.lists(st.integers(min_value=0), max_size=30))
def test_any_chunking_of_a_valid_client_gives_the_same_events(data: bytes, cuts: list[int]) -> None:
    whole = feed(ServerConnection(), [data])
    assert isinstance(whole[0], Named) and whole[-1] == Closed()
    assert all(isinstance(event, MoveAttempt) for event in whole[1:-1])
    assert len(whole) == data.count(b"M") + 2
    assert feed(ServerConnection(), chunked(data, cuts)) == whole


@given(
    streams(CLIENT_PIECES, ENDINGS),
    st.lists(st.integers(min_value=0), max_size=12),
    st.booleans(),
    st.sampled_from([11, 12, 16, MAX_LINE]),
)
def test_any_bytes_give_the_server_the_same_events_however_they_are_cut(
    data: bytes, cuts: list[int], eof: bool, max_line: int
) -> None:
    whole = feed(ServerConnection(max_line=max_line), [data], eof=eof)
    assert feed(ServerConnection(max_line=max_line), chunked(data, cuts), eof=eof) == whole
    for event in whole:  # never an exception: everything is an event
        assert isinstance(event, Named | BadName | MoveAttempt | Garbled | LineTooLong | Closed)
    assert all(not isinstance(event, FINAL) for event in whole[:-1])


SERVER_PIECES = [encode(message) for message in [*SERVER_SCRIPT, AFTER_23, Colour(0)]]


@given(
    st.lists(st.sampled_from([b"", b"\n", b"\r\n", b" \t"]), min_size=5, max_size=5),
    st.lists(st.integers(min_value=0), max_size=30),
)
def test_any_chunking_of_a_valid_server_gives_the_same_events(
    separators: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(encode(m) + sep for m, sep in zip(SERVER_SCRIPT, separators, strict=True))
    assert feed(ClientConnection("bot"), chunked(data, cuts)) == [*SERVER_SCRIPT, Closed()]


@given(
    streams(SERVER_PIECES, [b"\n", b"", b" "]),
    st.lists(st.integers(min_value=0), max_size=12),
    st.booleans(),
)
def test_any_bytes_give_the_client_events_or_a_remote_protocol_error(
    data: bytes, cuts: list[int], eof: bool
) -> None:
    def outcome(chunks: list[bytes]) -> tuple[list[object], str | None]:
        client = ClientConnection("bot")
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
