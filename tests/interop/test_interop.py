"""Black-box interop tests: the handout-style peer against `ring table` and `ring peer`.

Everything here runs real OS processes and talks to them only through their
command lines, their stdout/stderr and (for the seating probe) the documented
wire protocol.

Seat patterns: the table seats players by a shuffle of their nicks made from
its seed, independent of join order (docs/protocols/oldmaid.md, 5.1). So
before each mixed game we *probe* the seating: start a throw-away table with
the same seed, join the same nicks from bare sockets, read the seat order
from the join reply and hang up. Then we decide which nick is played by which
implementation so that the seats follow the wanted pattern ("H" = handout
peer, "R" = `ring peer`, listed from player1), and check afterwards, from a
`ring peer --events` log, that the real game used that seating.
"""

import contextlib
import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

RING = Path(sys.executable).with_name("ring")
HANDOUT = Path(__file__).with_name("handout_peer.py")
GAME_TIMEOUT = 20.0  # whole game, every process included
LOST = "lost: holds the Old Maid"
OUT_RE = re.compile(r"^out (\d+)(st|nd|rd|th) of (\d+)$")
OVER_RE = re.compile(r"^game over: loser (\S+); out: ([^;[]*)")


def ordinal_ok(n, suffix):
    expected = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return suffix == expected


def read_first_line(proc, deadline):
    """Read one line of proc's stdout straight from the pipe, with a timeout.

    Reads byte by byte with os.read so nothing is left in a Python buffer and
    communicate() later gets the rest."""
    fd = proc.stdout.fileno()
    data = b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no line from {proc.args!r} in time (got {data!r})")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 1)
        if not chunk:
            raise AssertionError(
                f"{proc.args!r} closed stdout early (got {data!r}); exit {proc.poll()}"
            )
        data += chunk
    return data.decode().rstrip("\n")


def start_table(players, seed, deadline):
    proc = subprocess.Popen(
        [str(RING), "table", "--players", str(players), "--port", "0", "--seed", str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    line = read_first_line(proc, deadline)
    m = re.fullmatch(r"table listening on (\S+):(\d+)", line)
    assert m, f"unexpected first table line {line!r}"
    return proc, f"{m.group(1)}:{m.group(2)}"


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
            p.communicate(timeout=5)


def probe_seating(nicks, seed):
    """Seat order (nicks, player1 first) a table with this seed gives these nicks."""
    deadline = time.monotonic() + 10
    table, addr = start_table(len(nicks), seed, deadline)
    host, port = addr.rsplit(":", 1)
    socks = []
    try:
        for i, nick in enumerate(nicks):
            s = socket.create_connection((host, int(port)), timeout=5)
            socks.append(s)
            # Never dialled: we hang up as soon as the seating is known.
            s.sendall(
                (
                    json.dumps(
                        {"cmd": "join", "nick": nick, "port": 40000 + i, "host": "127.0.0.1"}
                    )
                    + "\n"
                ).encode()
            )
        buf = b""
        while b"\n" not in buf:
            chunk = socks[0].recv(65536)
            assert chunk, "probe table closed the connection"
            buf += chunk
        reply = json.loads(buf.split(b"\n", 1)[0])
        assert reply.get("result") == "ok", reply
        return [nick for _addr, nick in reply["players"]]
    finally:
        for s in socks:
            s.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            table.communicate(timeout=max(0.1, deadline - time.monotonic()))
        stop([table])


def run_game(kinds, table_seed, tmp_path, nicks=None):
    """Play one game; kinds[i] is "H" or "R" for seat i (player1 first).

    Returns a dict with the outcome; asserts everything on the way."""
    n = len(kinds)
    nicks = nicks or [f"p{i}" for i in range(n)]
    seating = probe_seating(nicks, table_seed)
    role = {nick: kinds[seat] for seat, nick in enumerate(seating)}

    deadline = time.monotonic() + GAME_TIMEOUT
    procs = []
    peers = {}
    try:
        table, addr = start_table(n, table_seed, deadline)
        procs.append(table)
        events = {}
        for i, nick in enumerate(nicks):
            peer_seed = table_seed * 100 + i + 1  # distinct per peer
            if role[nick] == "H":
                cmd = [
                    sys.executable,
                    str(HANDOUT),
                    "--nick",
                    nick,
                    "--table",
                    addr,
                    "--seed",
                    str(peer_seed),
                    "--timeout",
                    str(GAME_TIMEOUT),
                ]
            else:
                events[nick] = tmp_path / f"{nick}.events.jsonl"
                cmd = [
                    str(RING),
                    "peer",
                    "--name",
                    nick,
                    "--server",
                    addr,
                    "--seed",
                    str(peer_seed),
                    "--events",
                    str(events[nick]),
                ]
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            procs.append(p)
            peers[nick] = p

        results = {}
        for nick, p in peers.items():
            try:
                out, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                out, err = b"", b"(still running at the game timeout)"
            results[nick] = (p.returncode, out.decode(), err.decode())
        try:
            tout, terr = table.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            tout, terr = b"", b"(table still running at the game timeout)"
        table_result = (table.returncode, tout.decode(), terr.decode())
    finally:
        stop(procs)

    report = "\n".join(
        [
            f"seats: {' '.join(f'{nk}({role[nk]})' for nk in seating)}",
            f"table: rc={table_result[0]} out={table_result[1]!r} err={table_result[2]!r}",
        ]
        + [f"{nk}({role[nk]}): rc={rc} out={o!r} err={e!r}" for nk, (rc, o, e) in results.items()]
    )

    for nick, (rc, out, _err) in results.items():
        assert rc == 0, f"{nick} exited {rc}\n{report}"
        assert out.count("\n") == 1 and out.endswith("\n"), f"{nick}: not one line\n{report}"
    assert table_result[0] == 0, f"table exited {table_result[0]}\n{report}"

    lines = {nick: out.strip() for nick, (_rc, out, _e) in results.items()}
    losers = [nick for nick, line in lines.items() if line == LOST]
    assert len(losers) == 1, f"expected exactly one loser\n{report}"
    places = {}
    for nick, line in lines.items():
        if nick in losers:
            continue
        m = OUT_RE.match(line)
        assert m, f"{nick}: unexpected line {line!r}\n{report}"
        place, suffix, of = int(m.group(1)), m.group(2), int(m.group(3))
        assert of == n and ordinal_ok(place, suffix), f"{nick}: {line!r}\n{report}"
        places[nick] = place
    assert sorted(places.values()) == list(range(1, n)), f"places not 1..{n - 1}\n{report}"

    table_lines = table_result[1].strip().splitlines()
    m = OVER_RE.match(table_lines[-1]) if table_lines else None
    assert m, f"no game-over line from the table\n{report}"
    assert m.group(1) == losers[0], f"table and peers disagree on the loser\n{report}"
    out_order = [x.strip() for x in m.group(2).split(",")]
    assert out_order == sorted(places, key=places.get), f"out order differs\n{report}"

    # The real game used the probed seating (so the seat pattern is the one asked).
    for path in list(events.values())[:1]:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        start = next(r for r in records if r.get("event") == "start")
        assert start["players"] == seating, f"seating differs from the probe\n{report}"
    return {"seating": seating, "role": role, "loser": losers[0], "out": out_order}


def test_handout_peers_alone_3(tmp_path):
    run_game("HHH", table_seed=101, tmp_path=tmp_path)


def test_handout_peers_alone_2(tmp_path):
    run_game("HH", table_seed=102, tmp_path=tmp_path)


@pytest.mark.parametrize(
    "kinds,table_seed",
    [
        ("HR", 201),  # 2 players, 1 + 1, handout peer is player1
        ("RH", 202),  # 2 players, ring peer is player1
        ("HHRR", 203),  # 4 players, 2 + 2, in blocks
        ("HRHR", 204),  # 4 players, alternating, handout peer first
        ("RHRH", 205),  # 4 players, alternating, ring peer first
        ("RRHRRH", 206),  # 6 players, 4 ours + 2 handout, spread out
        ("HRHRHRHR", 209),  # 8 players, alternating
        ("HRR", 210),  # 3 players, as in the doc's example
        ("RHH", 211),
        ("RRHH", 215),  # 4 players, in blocks, ring peers first
    ],
)
def test_mixed_ring(kinds, table_seed, tmp_path):
    run_game(kinds, table_seed, tmp_path)


def test_handout_reader_framing():
    """The handout peer's reader copes with no newlines, merged and split objects."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("handout_peer", HANDOUT)
    hp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hp)
    with socket.create_server(("127.0.0.1", 0)) as srv:
        a = socket.create_connection(srv.getsockname(), timeout=2)
        b, _ = srv.accept()
    try:
        conn = hp.Conn(b, "test")
        chunks = [
            b'{"cmd":"offer","num_cards":3}'  # two objects in one send
            b'{"result":"ok","message":"a } in \\" a string {"}',
            b'\r\n\n \t{"result":"ok","card":["10","hea',
            b'rts"]}',
            b'\n{"cmd":"your_turn"}\n',
        ]
        for c in chunks:
            a.sendall(c)
        got = [conn.recv(time.monotonic() + 2) for _ in range(4)]
        assert got == [
            {"cmd": "offer", "num_cards": 3},
            {"result": "ok", "message": 'a } in " a string {'},
            {"result": "ok", "card": ["10", "hearts"]},
            {"cmd": "your_turn"},
        ]
        a.sendall(b'hello\n{"cmd":"status"}')
        with pytest.raises(hp.BadInput):
            conn.recv(time.monotonic() + 2)
        assert conn.recv(time.monotonic() + 2) == {"cmd": "status"}
    finally:
        a.close()
        b.close()
