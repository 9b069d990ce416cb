"""FishNet's line protocol without sockets: a server end and a client end talking."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ring.wire.sansio import NEED_DATA
from services.fishnet.protocol import (
    MAX_LINE,
    Closed,
    Error,
    Fish,
    Invalid,
    LineBuffer,
    Link,
    LocalProtocolError,
    Message,
    OppGives,
    OppMakes,
    Pass,
    Phase,
    Play,
    Quit,
    RemoteProtocolError,
    Request,
    Role,
    TieGame,
    YouLose,
    YouMake,
    YourTurn,
    YouWin,
    encode,
    name_key,
    parse_line,
)
from tests.helpers.feeding import chunked
from tests.helpers.fishnet import SAMPLE_LINES

CLIENT_BYTES = b"".join(line + b"\n" for who, line in SAMPLE_LINES if who == "C")
SERVER_BYTES = b"".join(line + b"\n" for who, line in SAMPLE_LINES if who == "S")
DEAL = [Fish(3), Fish(4), Fish(2), Fish(4), Fish(9), Fish(12), OppMakes(0), Fish(2)]


def transfer(sender: Link, receiver: Link, message: Message) -> object:
    receiver.receive_data(sender.send(message))
    event = receiver.next_event()
    assert receiver.next_event() is NEED_DATA
    return event


def pair() -> tuple[Link, Link]:
    return Link(Role.SERVER), Link(Role.CLIENT)


def playing() -> tuple[Link, Link]:
    """Both ends after ``play`` and the deal, the client about to be prompted."""
    server, client = pair()
    transfer(client, server, Play("cburch", "spot"))
    for message in DEAL:
        transfer(server, client, message)
    return server, client


def events(link: Link) -> list[object]:
    found = []
    while (event := link.next_event()) is not NEED_DATA:
        found.append(event)
        if isinstance(event, Closed):
            break
    return found


# -- the sample session --------------------------------------------------------------


def test_sample_session_replays_line_by_line_in_both_directions() -> None:
    server, client = pair()
    for who, line in SAMPLE_LINES:
        sender, receiver = (client, server) if who == "C" else (server, client)
        message = parse_line(line, receiver.role)
        assert message is not None
        data = sender.send(message)
        assert data == line + b"\n"  # the handout's exact spelling
        receiver.receive_data(data)
        assert receiver.next_event() == message
        assert receiver.next_event() is NEED_DATA
    assert server.phase is client.phase is Phase.OVER
    client.receive_data(b"")
    assert client.next_event() == Closed()


def test_sample_session_in_one_read_each_way() -> None:
    server, client = pair()
    # A client that knows the script writes all its lines at once; the server end
    # parses lazily, so each line is judged when the server takes its event.
    assert client.send(Play("cburch", "spot")) == CLIENT_BYTES.split(b"\n")[0] + b"\n"
    server.receive_data(CLIENT_BYTES)
    assert server.next_event() == Play("cburch", "spot")
    client.receive_data(b"".join(server.send(message) for message in [*DEAL, YourTurn()]))
    assert events(client) == [*DEAL, YourTurn()]
    client.send(Request(3))
    assert server.next_event() == Request(3)
    client.receive_data(server.send(OppGives(2, 3)) + server.send(YourTurn()))
    assert events(client) == [OppGives(2, 3), YourTurn()]
    client.send(Request(12))
    assert server.next_event() == Request(12)
    assert server.next_event() is NEED_DATA


def test_every_message_round_trips() -> None:
    for role, messages in [
        (Role.SERVER, [Play("Al", "Bob"), Request(0), Request(12), Pass(), Quit()]),
        (
            Role.CLIENT,
            [
                Fish(5),
                OppMakes(1),
                YouMake(7),
                YourTurn(),
                Request(4),
                OppGives(3, 9),
                Pass(),
                YouWin(),
                YouLose(),
                TieGame(),
                Error("rank_not_held"),
            ],
        ),
    ]:
        for message in messages:
            line = encode(message)
            assert line.endswith(b"\n") and b"\n" not in line[:-1]
            assert parse_line(line[:-1], role) == message


def test_messages_refuse_values_they_cannot_carry() -> None:
    for make in [
        lambda: Fish(13),
        lambda: Request(-1),
        lambda: Request(True),
        lambda: OppGives(4, 3),
        lambda: OppGives(0, 3),
        lambda: Error("two words"),
        lambda: Error(""),
        lambda: Play("a b", "spot"),
        lambda: Play("al", "sp\tot"),
    ]:
        with pytest.raises(ValueError):
            make()


def test_names_compare_case_insensitively_but_keep_their_spelling() -> None:
    server = Link(Role.SERVER)
    server.receive_data(b"PLAY CBurch Spot\n")
    play = server.next_event()
    assert play == Play("CBurch", "Spot")
    assert isinstance(play, Play) and name_key(play.opponent) == name_key("spot")


# -- parse errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"frobnicate", "unknown_command"),
        (b"fish 3", "unknown_command"),  # a server message, not a client one
        (b"play cburch", "missing_argument"),
        (b"play", "missing_argument"),
        (b"play a b c", "extra_argument"),
        (b"play a\x00 b", "bad_name"),
        (b"play a\xc2\xa0b spot", "bad_name"),  # a no-break space inside a name
        (b"request", "missing_argument"),
        (b"request 3 4", "extra_argument"),
        (b"request 13", "bad_rank"),
        (b"request -1", "bad_rank"),
        (b"request x", "bad_rank"),
        (b"request 1.0", "bad_rank"),
        (b"request \xd9\xa3", "bad_rank"),  # an Arabic-Indic 3: int() would take it
        (b"request " + b"9" * 5000, "bad_rank"),
        (b"pass now", "extra_argument"),
        (b"quit now", "extra_argument"),
        (b"request \xff", "bad_encoding"),
        (b"\xfe\xff", "bad_encoding"),
    ],
)
def test_client_line_errors_are_answerable_and_the_link_goes_on(line: bytes, reason: str) -> None:
    server = Link(Role.SERVER, max_line=max(MAX_LINE, len(line)))
    server.receive_data(line + b"\nplay al spot\n")
    event = server.next_event()
    assert event == Invalid(reason)
    assert " " not in reason
    assert server.send(Error(reason)) == f"error {reason}\n".encode()
    assert server.next_event() == Play("al", "spot")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"play a b", "unknown_command"),
        (b"wat", "unknown_command"),
        (b"fish", "missing_argument"),
        (b"fish 13", "bad_rank"),
        (b"oppgives 3", "missing_argument"),
        (b"oppgives 4 3", "bad_count"),
        (b"oppgives 0 3", "bad_count"),
        (b"oppgives 1 3 3", "extra_argument"),
        (b"error", "missing_argument"),
        (b"error two words", "extra_argument"),
        (b"error \x07", "bad_reason"),
        (b"yourturn\xff", "bad_encoding"),
    ],
)
def test_malformed_server_lines_are_fatal_to_the_client(line: bytes, reason: str) -> None:
    _, client = playing()
    client.receive_data(line + b"\n")
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.reason == reason


@pytest.mark.parametrize("role", list(Role))
def test_line_limit_counts_content_without_its_line_ending(role: Role) -> None:
    link = Link(role)
    if role is Role.CLIENT:
        link.send(Play("al", "spot"))
    padded = b"error " + b"x" * (MAX_LINE - 6) if role is Role.CLIENT else b" " * MAX_LINE
    assert len(padded) == MAX_LINE
    link.receive_data(padded + b"\r\n" + padded + b"\n")
    assert len(events(link)) == (2 if role is Role.CLIENT else 0)  # blank lines vanish
    link.receive_data(b"x" + padded + b"\n")
    with pytest.raises(RemoteProtocolError) as caught:
        link.next_event()
    assert caught.value.reason == "line_too_long"
    with pytest.raises(RemoteProtocolError):  # nothing after it can be trusted
        link.next_event()


def test_over_long_line_is_fatal_before_its_end_arrives() -> None:
    server = Link(Role.SERVER)
    server.receive_data(b"play al spot\n" + b"p" * MAX_LINE)
    assert server.next_event() == Play("al", "spot")
    server.receive_data(b"\r")
    assert server.next_event() is NEED_DATA  # 4 KiB and a "\r": its "\n" may follow
    server = Link(Role.SERVER)
    server.receive_data(b"play al spot\n" + b"p" * MAX_LINE)
    assert server.next_event() == Play("al", "spot")
    server.receive_data(b"p")
    with pytest.raises(RemoteProtocolError, match="line_too_long"):
        server.next_event()
    # The server still says why before it closes.
    assert server.send(Error("line_too_long")) == b"error line_too_long\n"


def test_crlf_blank_lines_spacing_and_case_are_accepted() -> None:
    server = Link(Role.SERVER)
    server.receive_data(b"\r\n\n  \t\r\n Play\tcburch   spot \r\n\n")
    assert server.next_event() == Play("cburch", "spot")
    assert server.next_event() is NEED_DATA
    server.send(YourTurn())
    server.receive_data(b"REQUEST 03\r\n")
    assert server.next_event() == Request(3)


def test_line_buffer_scans_each_byte_once_and_keeps_partial_lines() -> None:
    buffer = LineBuffer(max_line=8)
    for byte in b"fish 3\r":
        buffer.feed(bytes([byte]))
        assert buffer.next_line() is None
    buffer.feed(b"\nfi")
    assert buffer.next_line() == b"fish 3"
    assert buffer.next_line() is None
    assert buffer.take_rest() == b"fi"


# -- turns ---------------------------------------------------------------------------


def test_out_of_turn_moves_are_reported_for_the_server_to_answer() -> None:
    server = Link(Role.SERVER)
    server.receive_data(b"request 3\npass\n")
    assert events(server) == [Invalid("not_playing"), Invalid("not_playing")]
    server.receive_data(b"play al spot\nplay al bob\nrequest 3\n")
    assert events(server) == [
        Play("al", "spot"),
        Invalid("already_playing"),
        Invalid("not_your_turn"),
    ]
    server.send(Error("not_your_turn"))
    server.send(YourTurn())
    server.receive_data(b"request 3\nrequest 4\npass\n")
    assert events(server) == [Request(3), Invalid("not_your_turn"), Invalid("not_your_turn")]
    assert server.open_request == 3 and not server.client_has_turn


def test_refused_request_is_answered_with_error_then_yourturn_again() -> None:
    server, client = playing()
    transfer(server, client, YourTurn())
    assert transfer(client, server, Request(5)) == Request(5)
    # The rules refuse: rank_not_held. The requester's turn goes on (fishnet.md "Errors").
    assert transfer(server, client, Error("rank_not_held")) == Error("rank_not_held")
    assert transfer(server, client, YourTurn()) == YourTurn()
    assert transfer(client, server, Pass()) == Pass()
    assert transfer(server, client, Fish(1)) == Fish(1)  # a pass after a pass fishes


def test_bad_line_on_the_clients_turn_keeps_the_turn_until_the_server_reprompts() -> None:
    server, client = playing()
    transfer(server, client, YourTurn())
    server.receive_data(b"request 99\n")
    assert server.next_event() == Invalid("bad_rank")
    assert server.client_has_turn
    client.receive_data(server.send(Error("bad_rank")) + server.send(YourTurn()))
    assert events(client) == [Error("bad_rank"), YourTurn()]
    assert transfer(client, server, Request(2)) == Request(2)


def test_go_fish_on_an_empty_deck_sends_nothing_and_the_opponent_plays() -> None:
    server, client = playing()
    transfer(server, client, YourTurn())
    transfer(client, server, Request(9))
    assert transfer(server, client, Request(4)) == Request(4)  # the opponent's turn
    assert transfer(server, client, Pass()) == Pass()
    with pytest.raises(LocalProtocolError, match="oppgives_without_request"):
        server.send(OppGives(1, 9))
    client.receive_data(b"oppgives 1 9\n")
    with pytest.raises(RemoteProtocolError, match="oppgives_without_request"):
        client.next_event()


def test_a_book_after_the_answer_is_allowed_with_youmake() -> None:
    server, client = playing()
    transfer(server, client, YourTurn())
    transfer(client, server, Request(4))
    assert transfer(server, client, OppGives(2, 4)) == OppGives(2, 4)
    assert transfer(server, client, YouMake(4)) == YouMake(4)
    assert transfer(server, client, YourTurn()) == YourTurn()


@pytest.mark.parametrize(
    ("setup", "line", "reason"),
    [
        ("before_play", b"fish 3", "fish_before_play"),
        ("before_play", b"yourturn", "yourturn_before_play"),
        ("dealt", b"oppgives 1 3", "oppgives_without_request"),
        ("asked_3", b"oppgives 1 4", "oppgives_for_another_rank"),
        ("prompted", b"fish 3", "fish_during_client_turn"),
        ("prompted", b"request 3", "request_during_client_turn"),
        ("prompted", b"oppmakes 3", "oppmakes_during_client_turn"),
        ("over", b"yourturn", "message_after_game_over"),
        ("over", b"error oops", "message_after_game_over"),
    ],
)
def test_client_end_refuses_server_nonsense(setup: str, line: bytes, reason: str) -> None:
    server, client = playing() if setup != "before_play" else pair()
    if setup in ("prompted", "asked_3"):
        transfer(server, client, YourTurn())
    if setup == "asked_3":
        transfer(client, server, Request(3))
    if setup == "over":
        transfer(server, client, YouWin())
    client.receive_data(line + b"\n")
    with pytest.raises(RemoteProtocolError) as caught:
        client.next_event()
    assert caught.value.reason == reason


def test_errors_before_play_reach_the_client() -> None:
    client = Link(Role.CLIENT)
    client.receive_data(b"error no_such_opponent\n")
    assert client.next_event() == Error("no_such_opponent")


def test_each_end_refuses_to_send_what_it_may_not() -> None:
    server, client = pair()
    for link, message, reason in [
        (server, Play("a", "b"), "server_does_not_send_play"),
        (client, Fish(1), "client_does_not_send_fish"),
        (client, Request(1), "not_playing"),
        (server, YourTurn(), "yourturn_before_play"),
    ]:
        with pytest.raises(LocalProtocolError) as caught:
            link.send(message)
        assert caught.value.reason == reason
    server, client = playing()
    with pytest.raises(LocalProtocolError, match="not_your_turn"):
        client.send(Pass())
    transfer(server, client, YourTurn())
    with pytest.raises(LocalProtocolError, match="request_during_client_turn"):
        server.send(Request(3))
    transfer(server, client, TieGame())
    with pytest.raises(LocalProtocolError, match="message_after_game_over"):
        server.send(Error("late"))
    with pytest.raises(LocalProtocolError, match="game_over"):
        client.send(Request(3))


# -- quit and closing ----------------------------------------------------------------


@pytest.mark.parametrize("phase", ["before_play", "waiting", "dealt", "prompted", "asked", "over"])
def test_quit_is_accepted_at_any_time(phase: str) -> None:
    server, client = pair()
    if phase != "before_play":
        transfer(client, server, Play("al", "spot"))
    if phase in ("dealt", "prompted", "asked"):
        for message in DEAL:
            transfer(server, client, message)
    if phase in ("prompted", "asked"):
        transfer(server, client, YourTurn())
    if phase == "asked":
        transfer(client, server, Request(4))
    if phase == "over":
        transfer(server, client, YouLose())
    assert transfer(client, server, Quit()) == Quit()
    assert server.client_quit
    with pytest.raises(LocalProtocolError, match="already_quit"):
        client.send(Request(2))
    assert transfer(client, server, Quit()) == Quit()
    server.receive_data(b"pass\nquit\n")
    assert events(server) == [Invalid("already_quit"), Quit()]


def test_close_after_buffered_lines_and_closed_repeats() -> None:
    server = Link(Role.SERVER)
    server.receive_data(b"play al spot\r\n\r\n")
    server.receive_data(b"")
    assert events(server) == [Play("al", "spot"), Closed()]
    assert server.next_event() == Closed()
    with pytest.raises(LocalProtocolError):
        server.receive_data(b"late")


def test_a_line_cut_by_the_close_is_not_a_message() -> None:
    server = Link(Role.SERVER)
    server.receive_data(b"play al spot\nrequest 1")
    server.receive_data(b"")
    assert events(server) == [Play("al", "spot"), Invalid("unterminated_line"), Closed()]
    _, client = playing()
    client.receive_data(b"yourtu")
    client.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="unterminated_line"):
        client.next_event()


# -- any chunking, any bytes ---------------------------------------------------------


Driver = Callable[[Link, object], None]


def run(link: Link, chunks: list[bytes], react: Driver, *, eof: bool = True) -> list[object]:
    """Feed ``chunks``, letting ``react`` send after each event as a real peer would."""
    seen: list[object] = []
    for chunk in [*chunks, b""] if eof else chunks:
        link.receive_data(chunk)
        while (event := link.next_event()) is not NEED_DATA:
            seen.append(event)
            react(link, event)
            if isinstance(event, Closed):
                break
    return seen


def prompting_server(link: Link, event: object) -> None:
    if isinstance(event, Play):
        for message in [*DEAL, YourTurn()]:
            link.send(message)
    elif isinstance(event, Request):
        link.send(YourTurn())
    elif isinstance(event, Invalid):
        link.send(Error(event.reason))


class SampleClient:
    """Answers each ``yourturn`` with the sample's next request."""

    def __init__(self) -> None:
        self.requests = [Request(3), Request(12)]

    def __call__(self, link: Link, event: object) -> None:
        if isinstance(event, YourTurn):
            link.send(self.requests.pop(0) if self.requests else Pass())


SERVER_STREAM = (
    b"\r\n" + CLIENT_BYTES.replace(b"request 3\n", b"request 3\r\n\nbogus\n") + b"pass\n"
)


@given(st.lists(st.integers(min_value=0), max_size=30))
def test_any_chunking_gives_the_server_the_same_events(cuts: list[int]) -> None:
    whole = run(Link(Role.SERVER), [SERVER_STREAM], prompting_server)
    assert whole == [
        Play("cburch", "spot"),
        Request(3),
        Invalid("unknown_command"),
        Request(12),
        Pass(),
        Closed(),
    ]
    assert run(Link(Role.SERVER), chunked(SERVER_STREAM, cuts), prompting_server) == whole


@given(st.lists(st.integers(min_value=0), max_size=30))
def test_any_chunking_gives_the_client_the_same_events(cuts: list[int]) -> None:
    def fresh() -> Link:
        client = Link(Role.CLIENT)
        client.send(Play("cburch", "spot"))
        return client

    whole = run(fresh(), [SERVER_BYTES], SampleClient())
    assert len(whole) == SERVER_BYTES.count(b"\n") + 1 and whole[-2:] == [YouLose(), Closed()]
    assert run(fresh(), chunked(SERVER_BYTES, cuts), SampleClient()) == whole


CLIENT_WORDS = [b"play al spot", b"request 3", b"REQUEST 12", b"pass", b"quit", b"fish 1", b" "]
SERVER_WORDS = [
    b"fish 3",
    b"oppgives 2 3",
    b"oppmakes 0",
    b"youmake 1",
    b"yourturn",
    b"request 2",
    b"pass",
    b"error x",
    b"youwin",
    b"tiegame",
]


def streams(words: list[bytes]) -> st.SearchStrategy[bytes]:
    piece = st.one_of(st.sampled_from(words), st.binary(max_size=12))
    ending = st.sampled_from([b"\n", b"\r\n", b"\r", b""])
    return st.lists(st.tuples(piece, ending), max_size=25).map(
        lambda parts: b"".join(p + e for p, e in parts)
    )


@given(streams(CLIENT_WORDS), st.lists(st.integers(min_value=0), max_size=10), st.booleans())
def test_any_bytes_give_the_server_events_or_a_protocol_error(
    data: bytes, cuts: list[int], eof: bool
) -> None:
    try:
        run(Link(Role.SERVER, max_line=24), chunked(data, cuts), prompting_server, eof=eof)
    except RemoteProtocolError as exc:
        assert exc.reason == "line_too_long"


@given(streams(SERVER_WORDS), st.lists(st.integers(min_value=0), max_size=10), st.booleans())
def test_any_bytes_give_the_client_events_or_a_protocol_error(
    data: bytes, cuts: list[int], eof: bool
) -> None:
    client = Link(Role.CLIENT, max_line=24)
    client.send(Play("al", "spot"))
    try:
        run(client, chunked(data, cuts), SampleClient(), eof=eof)
    except RemoteProtocolError as exc:
        assert exc.reason and " " not in exc.reason
