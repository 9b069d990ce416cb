"""Reversi's wire protocol without sockets: the server's end and a client's end talking;
names, move attempts and what the server sends. (The client's end, and any chunking:
``test_protocol_client.py``.)
"""

from __future__ import annotations

import pytest

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
    Result,
    ServerConnection,
    encode,
)
from tests.helpers.feeding import splits
from tests.helpers.reversi import AFTER_23, AFTER_24, START, events, feed


def server_events(data: bytes, *, eof: bool = False, max_line: int = MAX_LINE) -> list[object]:
    return feed(ServerConnection(max_line=max_line), [data], eof=eof)


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
