"""Unit tests of the 2013 student-client stand-in's own pieces (no table, no processes)."""

import importlib.util
import json
import socket
import time
from pathlib import Path

import pytest

STUDENT = Path(__file__).with_name("student_peer.py")


def load():
    spec = importlib.util.spec_from_file_location("student_peer", STUDENT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sp = load()


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    a.settimeout(2)
    b.settimeout(2)
    yield a, b
    a.close()
    b.close()


def wait_readable(sock):
    """Let both sends land in the receive buffer before the single read."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            data = sock.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            data = b""
        if data:
            return data
        time.sleep(0.005)
    raise AssertionError("nothing arrived")


def test_one_recv_reads_one_object_per_read(pair):
    a, b = pair
    conn = sp.Conn(b, "left", one_recv=True)
    msgs = [{"cmd": "offer", "num_cards": 3}, {"result": "ok", "card": ["10", "hearts"]}]
    for m in msgs:
        a.sendall(json.dumps(m).encode())
        assert conn.recv(time.monotonic() + 2) == m
    a.sendall(b'  {"cmd":"your_turn"}\r\n')  # whitespace around one object is fine
    assert conn.recv(time.monotonic() + 2) == {"cmd": "your_turn"}


def test_one_recv_crashes_on_two_objects_in_one_read(pair):
    a, b = pair
    conn = sp.Conn(b, "inbound from 127.0.0.1:4242", one_recv=True)
    a.sendall(b'{"result":"ok"}')
    a.sendall(b'{"cmd":"pick","card_num":1}')
    while len(wait_readable(b)) < 42:  # both objects are waiting in the buffer
        time.sleep(0.005)
    with pytest.raises(sp.TwoInOneRead) as info:
        conn.recv(time.monotonic() + 2)
    msg = str(info.value)
    assert msg.startswith(
        "crashed: two messages in one read on inbound from 127.0.0.1:4242: Extra data"
    )
    assert isinstance(info.value, sp.PeerError)


def test_one_recv_empty_read_is_the_other_side_closing(pair):
    a, b = pair
    conn = sp.Conn(b, "left", one_recv=True)
    a.close()
    with pytest.raises(sp.ConnClosed):
        conn.recv(time.monotonic() + 2)


def test_one_recv_times_out_without_data(pair):
    _a, b = pair
    conn = sp.Conn(b, "left", one_recv=True)
    with pytest.raises(sp.ReplyTimeout):
        conn.recv(time.monotonic() + 0.05)


def test_stream_reader_framing(pair):
    a, b = pair
    conn = sp.Conn(b, "left")
    chunks = [
        b'{"cmd":"offer","num_cards":3}{"result":"ok","message":"a } in \\" a string {"}',
        b'\r\n\n \t{"result":"ok","card":["10","hea',
        b'rts"]}',
        b'\n{"cmd":"your_turn","x":{"y":{}}}\n',
    ]
    for c in chunks:
        a.sendall(c)
    got = [conn.recv(time.monotonic() + 2) for _ in range(4)]
    assert got == [
        {"cmd": "offer", "num_cards": 3},
        {"result": "ok", "message": 'a } in " a string {'},
        {"result": "ok", "card": ["10", "hearts"]},
        {"cmd": "your_turn", "x": {"y": {}}},
    ]
    a.sendall(b'hello {"cmd":"status"}\n{"cmd":"draw"}')
    with pytest.raises(sp.BadInput):
        conn.recv(time.monotonic() + 2)
    assert conn.recv(time.monotonic() + 2) == {"cmd": "draw"}
    a.close()
    with pytest.raises(sp.ConnClosed):
        conn.recv(time.monotonic() + 2)


def test_stream_reader_byte_by_byte():
    r = sp.StreamReader()
    data = b'{"a":"{\\\\"}{"b":[1,{"c":2}]}'
    got = []
    for i in range(len(data)):
        r.feed(data[i : i + 1])
        obj = r.next()
        while obj is not None:
            got.append(obj)
            obj = r.next()
    assert got == [{"a": "{\\"}, {"b": [1, {"c": 2}]}]


def test_pick_inclusive_offerer_reads_one_based():
    hand = ["a", "b", "c"]
    n = len(hand)
    assert sp.pop_picked(list(hand), 0, one_based=True) == "c"  # hand[-1]: the last card
    assert sp.pop_picked(list(hand), n, one_based=True) == "c"  # the last card too
    assert sp.pop_picked(list(hand), 1, one_based=True) == "a"
    assert sp.pop_picked(list(hand), -2, one_based=True) == "a"  # -3: still a valid index
    for bad in (n + 1, -3, "1", 1.0, True, None):
        h = list(hand)
        assert sp.pop_picked(h, bad, one_based=True) is None
        assert h == hand  # a refused pick leaves the hand alone


def test_default_offerer_index_rule():
    hand = ["a", "b", "c"]
    assert sp.pop_picked(list(hand), 0, one_based=False) == "a"
    assert sp.pop_picked(list(hand), 2, one_based=False) == "c"
    assert sp.pop_picked(list(hand), 3, one_based=False) == "c"  # k = n: the last card
    for bad in (4, -1, "0", True):
        assert sp.pop_picked(list(hand), bad, one_based=False) is None
    assert sp.pop_picked([], 0, one_based=False) is None


def test_pairs_and_flags():
    assert sp.pairs_with(("3", "spades"), ("3", "clubs"))
    assert sp.pairs_with(("Q", "hearts"), ("Q", "diamonds"))
    assert not sp.pairs_with(("3", "spades"), ("3", "hearts"))
    assert not sp.pairs_with(("3", "spades"), ("3", "spades"))
    assert not sp.pairs_with(sp.JOKER, sp.JOKER)
    assert sp.canon_card(["joker", "MAID"]) == sp.JOKER
    args = sp.parse_args(["--nick", "n", "--table", "h:1", "--all"])
    assert args.listen_late == sp.DEFAULT_LISTEN_LATE
    assert args.one_recv and args.pick_inclusive and args.keep_last_pair
    assert args.leave_when_out and args.leave_holding_turn
    args = sp.parse_args(["--nick", "n", "--table", "h:1"])
    assert args.listen_late is None and not args.one_recv and not args.leave_holding_turn
