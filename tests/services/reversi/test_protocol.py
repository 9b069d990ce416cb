"""Reversi's wire protocol without sockets: the server's end and a client's end talking."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ring.wire.sansio import NEED_DATA
from services.reversi.protocol import (
    MAX_LINE,
    BadName,
    Board,
    ClientConnection,
    Closed,
    Colour,
    GameOver,
    Garbled,
    LineTooLong,
    LocalProtocolError,
    Move,
    MoveAttempt,
    Name,
    Named,
    RemoteProtocolError,
    Result,
    ServerConnection,
    encode,
    is_name,
)

FINAL = (BadName, LineTooLong, Closed)


def board(**squares: int) -> Board:
    """A board from squares named like ``d34=2`` (x=3, y=4 black); the rest empty."""
    digits = ["0"] * 64
    for key, value in squares.items():
        x, y = int(key[1]), int(key[2])
        digits[x * 8 + y] = str(value)
    return Board("".join(digits))


START = board(d33=1, d44=1, d34=2, d43=2)  # WIRE.md's starting position
AFTER_23 = board(d23=2, d33=2, d43=2, d34=2, d44=1)  # black took (2, 3)
AFTER_24 = board(d23=2, d33=2, d43=2, d24=1, d34=1, d44=1)  # then white took (2, 4)


def events(conn: ServerConnection | ClientConnection) -> list[object]:
    """Every event available now, up to NEED_DATA or a final event."""
    found: list[object] = []
    while (event := conn.next_event()) is not NEED_DATA:
        found.append(event)
        if isinstance(event, FINAL):
            break
    return found


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def feed(
    conn: ServerConnection | ClientConnection, chunks: list[bytes], *, eof: bool = True
) -> list[object]:
    """Feed the chunks one read at a time, taking the events after each read."""
    seen: list[object] = []
    chunks = [chunk for chunk in chunks if chunk]  # b"" would be the close
    for chunk in [*chunks, b""] if eof else chunks:
        if seen and isinstance(seen[-1], FINAL):
            break
        conn.receive_data(chunk)
        seen += events(conn)
    return seen


def server_events(data: bytes, *, eof: bool = False, max_line: int = MAX_LINE) -> list[object]:
    return feed(ServerConnection(max_line=max_line), [data], eof=eof)


def splits(data: bytes) -> list[list[bytes]]:
    """The data in one read, in two reads at every point, and one byte per read."""
    two = [[data[:i], data[i:]] for i in range(1, len(data))]
    return [[data], *two, [data[i : i + 1] for i in range(len(data))]]


# -- the handout's exchange, both ends paired ------------------------------------------


@pytest.mark.parametrize("newlines", [True, False])
def test_the_handout_exchange_between_paired_ends(newlines: bool) -> None:
    end = b"\n" if newlines else b""
    server = ServerConnection(newlines=newlines)
    client = ClientConnection("team_1", newlines=newlines)

    def to_client(message: object) -> bytes:
        data = server.send(message)  # type: ignore[arg-type]
        client.receive_data(data)
        assert events(client) == [message]
        return data

    data = client.start()
    assert data == b"Nteam_1" + end
    server.receive_data(data)
    if newlines:
        assert events(server) == [Named("team_1")]
    else:  # a bare name shorter than 10 characters ends at 200 ms of silence
        assert events(server) == []
        assert server.name_started
        server.name_silence()
        assert events(server) == [Named("team_1")]
    assert server.name == "team_1" and not server.name_started

    assert to_client(Colour(1)) == b"U1" + end
    assert client.colour == 1
    assert to_client(START) == b"B" + START.digits.encode() + end
    assert START.square(3, 3) == 1 and START.square(3, 4) == 2 and START.square(0, 0) == 0

    data = client.move(2, 3)
    assert data == b"M23" + end
    server.receive_data(data)
    assert events(server) == [MoveAttempt(2, 3)]

    to_client(AFTER_24)
    assert client.board == AFTER_24 and client.may_move
    server.receive_data(client.move(2, 5))
    assert events(server) == [MoveAttempt(2, 5)]

    assert to_client(Result(1)) == b"W1" + end
    assert to_client(GameOver()) == b"G" + end
    assert client.result == 1 and client.game_over and server.game_over
    client.receive_data(b"")
    server.receive_data(b"")
    assert events(client) == [Closed()]
    assert events(server) == [Closed()]


@pytest.mark.parametrize("newlines", [True, False])
def test_a_whole_game_of_server_bytes_in_one_read(newlines: bool) -> None:
    server = ServerConnection(newlines=newlines)
    script = [Colour(0), START, AFTER_23, AFTER_24, Result(2), GameOver()]
    data = b"".join(server.send(message) for message in script)
    client = ClientConnection("bot")
    client.receive_data(data)
    client.receive_data(b"")
    assert events(client) == [*script, Closed()]


def test_the_client_names_move_by_move_through_send() -> None:
    client = ClientConnection("abc")
    assert client.send(Name("abc")) == b"Nabc\n"
    client.receive_data(b"U1B" + START.digits.encode())
    assert events(client) == [Colour(1), START]
    assert client.send(Move(2, 3)) == b"M23\n"
    with pytest.raises(LocalProtocolError):
        client.send(Name("abc"))  # once
    with pytest.raises(LocalProtocolError):
        client.send(Result(1))  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        ClientConnection("abc").send(Name("other"))


# -- names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"Nteam_1\n", b"Nteam_1\r\n", b"\r\n \n\tNteam_1 \t\r\n", b"Nteam_1\nM34"],
)
def test_a_name_with_its_newline_split_anywhere(data: bytes) -> None:
    for chunks in splits(data):
        seen = feed(ServerConnection(), chunks, eof=False)
        assert seen[0] == Named("team_1"), chunks
        assert seen[1:] == ([MoveAttempt(3, 4)] if data.endswith(b"M34") else [])


def test_a_name_without_newline_waits_for_silence_split_anywhere() -> None:
    for chunks in splits(b"  Nteam_1"):
        server = ServerConnection()
        assert feed(server, chunks, eof=False) == []
        assert server.name_started and server.naming
        server.name_silence()
        assert events(server) == [Named("team_1")]
        assert not server.naming


def test_a_name_without_newline_ends_when_the_client_closes() -> None:
    assert server_events(b"Nteam ", eof=True) == [Named("team"), Closed()]


@pytest.mark.parametrize("data", [b"Nabcdefghij", b"NABCDEFGHIJ", b"N0123456789", b"N__________"])
def test_a_ten_character_name_ends_at_the_byte_after_it_or_the_silence(data: bytes) -> None:
    name = Named(data[1:].decode())
    for chunks in splits(data):
        server = ServerConnection()
        assert feed(server, chunks, eof=False) == []  # an 11th character may yet come
        server.name_silence()
        assert events(server) == [name]
    for ending in (b"\n", b"\r\n", b" \n"):
        for chunks in splits(data + ending):
            assert feed(ServerConnection(), chunks, eof=False) == [name]
    assert server_events(data, eof=True) == [name, Closed()]


OVER = BadName("over 10 characters: a name is 1-10 of A-Z a-z 0-9 _")


def test_an_eleventh_character_refuses_the_name_however_the_bytes_are_split() -> None:
    for data in (b"Nabcdefghijk\n", b"Nabcdefghijk", b"Nabcdefghijklmno\n", b"NabcdefghijM34"):
        for chunks in splits(data):
            assert feed(ServerConnection(), chunks, eof=False) == [OVER]
    # After the silence, the name was complete: a later letter is move input.
    server = ServerConnection()
    assert feed(server, [b"Nabcdefghij"], eof=False) == []
    server.name_silence()
    assert events(server) == [Named("abcdefghij")]
    assert feed(server, [b"k\n"], eof=False) == [Garbled("k")]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"team\n", "missing N: a name starts with N, not 't'"),
        (b"  nteam\n", "missing N: a name starts with N, not 'n'"),
        (b"\xef\xbb\xbfNteam\n", "missing N: a name starts with N, not byte 0xef"),
        (b"M34", "missing N: a name starts with N, not 'M'"),
        (b"N\n", "empty name: N must be followed by 1-10 characters"),
        (b"N \r\n", "empty name: N must be followed by 1-10 characters"),
        (b"Nte-am\n", "bad character '-' in the name"),
        (b"Nmy team\n", "bad character ' ' in the name"),
        (b"Nmy\tteam", "bad character '\\t' in the name"),
        (b"N x", "bad character ' ' in the name"),
        (b"Nte\x00", "bad character '\\x00' in the name"),
        (b"Nt\xc3\xa9\n", "not ASCII: byte 0xc3 in the name"),
    ],
)
def test_bad_names_say_exactly_what_is_wrong(data: bytes, reason: str) -> None:
    for chunks in splits(data):
        server = ServerConnection()
        assert feed(server, chunks, eof=False) == [BadName(reason)], chunks
    # The connection is done: the same event again, and later bytes are dropped.
    server.receive_data(b"M34\n")
    assert server.next_event() == BadName(reason)
    assert server.naming is False and server.name is None


def test_an_empty_name_at_silence_or_close() -> None:
    server = ServerConnection()
    server.receive_data(b"N")
    server.name_silence()
    assert events(server) == [BadName("empty name: N must be followed by 1-10 characters")]
    assert server_events(b"N  ", eof=True) == [
        BadName("empty name: N must be followed by 1-10 characters")
    ]


def test_silence_before_a_name_has_begun_or_after_it_changes_nothing() -> None:
    server = ServerConnection()
    server.name_silence()
    server.receive_data(b" \r\n ")
    assert not server.name_started
    server.name_silence()
    assert events(server) == []
    server.receive_data(b"Nab")
    server.name_silence()
    server.name_silence()  # the name is already decided
    server.receive_data(b"cd\n")  # so these bytes are move input
    assert events(server) == [Named("ab"), Garbled("cd")]
    server.name_silence()
    assert events(server) == []


def test_a_client_that_closes_without_a_name() -> None:
    assert server_events(b"", eof=True) == [Closed()]
    assert server_events(b" \r\n\n", eof=True) == [Closed()]
    server = ServerConnection()
    server.receive_data(b"")
    assert server.next_event() == Closed() and server.next_event() == Closed()
    with pytest.raises(LocalProtocolError):
        server.receive_data(b"Nlate")


# -- move attempts -------------------------------------------------------------------


def named(**options: object) -> ServerConnection:
    server = ServerConnection(**options)  # type: ignore[arg-type]
    server.receive_data(b"Nteam\n")
    assert events(server) == [Named("team")]
    return server


def test_whitespace_and_blank_lines_between_attempts_are_skipped() -> None:
    data = b"\n\n  M34\r\n\r\n\tM25 \n   M77\x0b\x0cM00"
    for chunks in splits(data):
        assert feed(named(), chunks, eof=False) == [
            MoveAttempt(3, 4),
            MoveAttempt(2, 5),
            MoveAttempt(7, 7),
            MoveAttempt(0, 0),
        ]


def test_a_move_needs_no_newline() -> None:
    server = named()
    server.receive_data(b"M3")
    assert events(server) == []
    server.receive_data(b"4")
    assert events(server) == [MoveAttempt(3, 4)]
    server.receive_data(b"M25M77")
    assert events(server) == [MoveAttempt(2, 5), MoveAttempt(7, 7)]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"hello\n", [Garbled("hello")]),
        (b"hello \r\n", [Garbled("hello")]),
        (b"hello", []),  # not decided yet: no newline, no M
        (b"hello M34", [Garbled("hello"), MoveAttempt(3, 4)]),
        (b"34\n", [Garbled("34")]),
        (b"m34\n", [Garbled("m34")]),
        (b"M38\n", [Garbled("M38")]),
        (b"M3\n", [Garbled("M3")]),
        (b"M\r\n", [Garbled("M")]),
        (b"M345\n", [MoveAttempt(3, 4), Garbled("5")]),
        (b"M 34\n", [Garbled("M"), Garbled("34")]),
        (b"MM34", [Garbled("MM3")]),  # and "4" waits
        (b"Move 34\n", [Garbled("Mov"), Garbled("e 34")]),
        (b"\xff\xfe\n", [Garbled("\\xff\\xfe")]),
        (b"caf\xc3\xa9\n", [Garbled("café")]),
        (b"Nteam\n", [Garbled("Nteam")]),  # a second name is only garbage
    ],
)
def test_garbled_attempts(data: bytes, expected: list[object]) -> None:
    for chunks in splits(data):
        assert feed(named(), chunks, eof=False) == expected, chunks


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"M3", [Garbled("M3")]),
        (b"M", [Garbled("M")]),
        (b"hello ", [Garbled("hello")]),
        (b"M34 \r\n ", [MoveAttempt(3, 4)]),
    ],
)
def test_what_is_left_when_the_client_closes(data: bytes, expected: list[object]) -> None:
    assert feed(named(), [data], eof=True) == [*expected, Closed()]


def test_a_line_over_the_limit() -> None:
    limit = 16
    assert feed(named(max_line=limit), [b"x" * limit + b"\n"]) == [Garbled("x" * limit), Closed()]
    assert feed(named(max_line=limit), [b"x" * limit + b"\r\n"], eof=False) == [
        Garbled("x" * limit)
    ]
    # Too long as soon as it cannot fit, without waiting for the newline.
    # A "\r" not followed by "\n" is part of the line.
    for data in [b"x" * (limit + 1), b" " * (limit + 1), b"x" * limit + b"\ry", b"x" * 16 + b"\rM"]:
        for chunks in splits(data):
            server = named(max_line=limit)
            assert feed(server, chunks, eof=False) == [LineTooLong(limit)], (data, chunks)
        server.receive_data(b"M34\n")  # dropped: the connection is done
        assert server.next_event() == LineTooLong(limit)
    # A blank line is a line too, however it arrives.
    for chunks in splits(b"M34" + b" " * (limit + 1) + b"\nM25"):
        assert feed(named(max_line=limit), chunks, eof=False) == [
            MoveAttempt(3, 4),
            LineTooLong(limit),
        ]
    assert feed(named(max_line=limit), [b" " * limit + b"\r\nM34"], eof=False) == [
        MoveAttempt(3, 4)
    ]
    # A "\r" at the limit may be the start of its line's "\r\n".
    server = named(max_line=limit)
    server.receive_data(b"x" * limit + b"\r")
    assert events(server) == []


def test_the_limit_counts_a_line_not_a_connection() -> None:
    limit = 16
    # A client without newlines: every move ends a message, so the run starts again.
    assert feed(named(max_line=limit), [b"M34" * 100], eof=False) == [MoveAttempt(3, 4)] * 100
    assert (
        feed(named(max_line=limit), [(b"x" * 15 + b"\n") * 20], eof=False)
        == [Garbled("x" * 15)] * 20
    )
    # While naming too: whitespace before the name is part of its line.
    assert server_events(b" " * 20 + b"Nab", max_line=limit) == [LineTooLong(limit)]
    assert server_events(b" \n" * 20 + b"Nab\n", max_line=limit) == [Named("ab")]


def test_the_default_limit_is_4_kib() -> None:
    assert MAX_LINE == 4096
    assert feed(named(), [b"x" * 4096 + b"\r\n"], eof=False) == [Garbled("x" * 4096)]
    assert feed(named(), [b"x" * 4097], eof=False) == [LineTooLong(4096)]
    with pytest.raises(ValueError):
        ServerConnection(max_line=10)  # must fit N + 10 characters


# -- what the server sends -----------------------------------------------------------


def test_server_messages_and_their_bytes() -> None:
    for newlines, end in [(True, b"\n"), (False, b"")]:
        server = ServerConnection(newlines=newlines)
        assert server.send(Colour(0)) == b"U0" + end
        assert server.send(START) == b"B" + START.digits.encode() + end
        assert server.send(Result(2)) == b"W2" + end
        assert server.send(GameOver()) == b"G" + end
    assert encode(Colour(Colour.BLACK)) == b"U1"
    assert [encode(Result(r)) for r in (Result.WIN, Result.LOSS, Result.DRAW)] == [
        b"W1",
        b"W0",
        b"W2",
    ]
    assert len(encode(START)) == 65


@pytest.mark.parametrize(
    "bad",
    [
        lambda: Board("0" * 63),
        lambda: Board("0" * 65),
        lambda: Board("0" * 63 + "3"),
        lambda: Board("0" * 63 + "٣"),
        lambda: Board(0),  # type: ignore[arg-type]
        lambda: Colour(2),
        lambda: Colour(True),
        lambda: Colour("1"),  # type: ignore[arg-type]
        lambda: Result(3),
        lambda: Result(-1),
        lambda: START.square(8, 0),
        lambda: Move(8, 0),
        lambda: Name("a-b"),
    ],
)
def test_messages_check_their_values(bad: object) -> None:
    with pytest.raises(ValueError):
        bad()  # type: ignore[operator]


def sent_in_order(messages: list[object]) -> ServerConnection:
    server = ServerConnection()
    for message in messages:
        server.send(message)  # type: ignore[arg-type]
    return server


@pytest.mark.parametrize(
    ("before", "message", "problem"),
    [
        ([], START, "B before U"),
        ([], Result(1), "W before U"),
        ([], GameOver(), "G before U"),
        ([Colour(1)], Colour(0), "a second U"),
        ([Colour(1), Result(1)], Result(1), "a second W"),
        ([Colour(1), Result(1)], START, "B after W"),
        ([Colour(1), Result(0), GameOver()], GameOver(), "G after G"),
        ([Colour(1), GameOver()], START, "B after G"),
        ([Colour(1)], MoveAttempt(1, 2), "does not send"),
    ],
)
def test_the_server_sends_in_order(before: list[object], message: object, problem: str) -> None:
    server = sent_in_order(before)
    with pytest.raises(LocalProtocolError, match=problem):
        server.send(message)  # type: ignore[arg-type]


def test_the_server_may_end_without_a_result() -> None:
    server = sent_in_order([Colour(1), START, START, GameOver()])
    assert server.game_over and server.result is None and server.colour == 1


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
