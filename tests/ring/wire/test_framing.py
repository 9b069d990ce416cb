from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ring.wire.framing import Garbage, JsonObjectSplitter, MessageTooLarge

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


def drain(splitter: JsonObjectSplitter) -> list[bytes | Garbage]:
    frames = []
    while (frame := splitter.next_frame()) is not None:
        frames.append(frame)
    return frames


def split_all(chunks: list[bytes], max_size: int = 65536) -> list[bytes | Garbage]:
    splitter = JsonObjectSplitter(max_size)
    frames: list[bytes | Garbage] = []
    for chunk in chunks:
        splitter.feed(chunk)
        frames.extend(drain(splitter))
    return frames


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def test_newline_delimited_objects() -> None:
    frames = split_all([b'{"cmd":"draw"}\n{"cmd":"status"}\n'])
    assert frames == [b'{"cmd":"draw"}', b'{"cmd":"status"}']


def test_back_to_back_objects_without_delimiter() -> None:
    frames = split_all([b'{"cmd":"draw"}{"cmd":"status"}{"a":{"b":{}}}'])
    assert frames == [b'{"cmd":"draw"}', b'{"cmd":"status"}', b'{"a":{"b":{}}}']


def test_braces_and_quotes_inside_strings_do_not_confuse_depth() -> None:
    text = rb'{"a":"}{\"\\","b":"\\"}'
    assert split_all([text]) == [text]


def test_crlf_and_blank_lines_are_ignored() -> None:
    frames = split_all([b'\r\n\n  {"cmd":"draw"}\r\n\r\n{"cmd":"status"}\r\n'])
    assert frames == [b'{"cmd":"draw"}', b'{"cmd":"status"}']


def test_garbage_is_reported_at_once_and_skipped_through_the_newline() -> None:
    splitter = JsonObjectSplitter()
    splitter.feed(b"hello")
    assert splitter.next_frame() == Garbage("not a JSON object")
    splitter.feed(b' world {"x":1}\n{"cmd":"draw"}\n')
    assert drain(splitter) == [b'{"cmd":"draw"}']


def test_a_json_array_is_garbage() -> None:
    assert split_all([b'[1,2]\n{"a":1}\n']) == [Garbage("not a JSON object"), b'{"a":1}']


def test_truncated_object_ends_at_the_newline_and_spares_the_next() -> None:
    frames = split_all([b'{"cmd":"dra\n{"cmd":"status"}\n'])
    assert frames == [Garbage("incomplete JSON object before end of line"), b'{"cmd":"status"}']
    frames = split_all([b'{"cmd":\n{"cmd":"status"}\n'])
    assert frames == [Garbage("incomplete JSON object before end of line"), b'{"cmd":"status"}']


def test_escape_split_across_chunks() -> None:
    assert split_all([b'{"a":"x\\', b'"y"}']) == [b'{"a":"x\\"y"}']


def test_balanced_but_invalid_json_is_passed_on_for_the_decoder_to_reject() -> None:
    assert split_all([b"{not json}\n"]) == [b"{not json}"]


def test_object_over_the_limit_raises() -> None:
    splitter = JsonObjectSplitter(max_size=32)
    splitter.feed(b'{"a":"' + b"x" * 40)
    with pytest.raises(MessageTooLarge):
        splitter.next_frame()


def test_complete_object_over_the_limit_raises() -> None:
    with pytest.raises(MessageTooLarge):
        split_all([b'{"a":"' + b"x" * 40 + b'"}'], max_size=32)


def test_endless_garbage_line_raises() -> None:
    splitter = JsonObjectSplitter(max_size=32)
    splitter.feed(b"x")
    assert isinstance(splitter.next_frame(), Garbage)
    splitter.feed(b"y" * 40)
    with pytest.raises(MessageTooLarge):
        splitter.next_frame()


def test_object_exactly_at_the_limit_passes() -> None:
    body = b'{"a":"' + b"x" * 24 + b'"}'
    assert len(body) == 32
    assert split_all([body], max_size=32) == [body]


def test_consumed_bytes_do_not_accumulate() -> None:
    splitter = JsonObjectSplitter(max_size=64)
    for _ in range(1000):
        splitter.feed(b'{"cmd":"status"}\n')
        assert drain(splitter) == [b'{"cmd":"status"}']
    assert splitter.buffered == 0


@given(
    objects=st.lists(json_objects, max_size=6),
    newline=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_any_chunking_of_a_valid_stream_decodes_to_the_same_objects(
    objects: list[dict], newline: bool, cuts: list[int]
) -> None:
    sep = "\n" if newline else ""
    data = "".join(json.dumps(o, separators=(",", ":")) + sep for o in objects).encode()
    frames = split_all(chunked(data, cuts))
    assert [json.loads(f) for f in frames if isinstance(f, bytes)] == objects
    assert not [f for f in frames if isinstance(f, Garbage)]


@given(objects=st.lists(json_objects, min_size=1, max_size=4))
def test_byte_by_byte_delivery(objects: list[dict]) -> None:
    data = "".join(json.dumps(o) for o in objects).encode()
    frames = split_all([data[i : i + 1] for i in range(len(data))])
    assert [json.loads(f) for f in frames] == objects


@given(data=st.binary(max_size=300), cuts=st.lists(st.integers(0, 400), max_size=8))
def test_any_bytes_give_frames_garbage_or_our_error(data: bytes, cuts: list[int]) -> None:
    splitter = JsonObjectSplitter(max_size=128)
    try:
        for chunk in chunked(data, cuts):
            splitter.feed(chunk)
            for frame in drain(splitter):
                assert isinstance(frame, (bytes, Garbage))
                if isinstance(frame, bytes):
                    assert frame.startswith(b"{") and frame.endswith(b"}")
                    assert len(frame) <= 128
    except MessageTooLarge:
        pass


# Bytes from JSON's own alphabet, newlines and escapes included, so that strings,
# braces, escapes and lines cut off anywhere are common.
json_ish = st.lists(
    st.sampled_from([b"{", b"}", b'"', b"\\", b"\n", b"a", b":", b",", b"1", b" ", b"[", b"]"]),
    max_size=80,
).map(b"".join)


def split_with(data: bytes, chunks: list[bytes]) -> list[bytes | Garbage] | str:
    """What a splitter makes of ``chunks``: its frames and garbage, or that it refused."""
    splitter = JsonObjectSplitter(max_size=64)
    found: list[bytes | Garbage] = []
    try:
        for chunk in chunks:
            splitter.feed(chunk)
            found += drain(splitter)
    except MessageTooLarge:
        return "too large"
    return found


@given(data=json_ish, cuts=st.lists(st.integers(0, 100), max_size=6))
def test_a_stream_splits_the_same_whole_cut_anywhere_or_byte_by_byte(
    data: bytes, cuts: list[int]
) -> None:
    """Whole, a chunk's strings are skipped in one match; cut, they are read across the
    cuts a byte at a time: both must find the same frames and garbage."""
    whole = split_with(data, [data])
    assert split_with(data, chunked(data, cuts)) == whole
    assert split_with(data, [data[i : i + 1] for i in range(len(data))]) == whole
