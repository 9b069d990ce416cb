"""A viewer of the live page that never reads, while an Old Maid ring of eight plays: the
game's handoffs are the same as without it, and the viewer is dropped (1013), never waited
for. Real processes: ``ring serve --web`` and eight ``ring peer``s; the viewer is a
blocking socket with a small receive buffer, as a frozen browser tab would be.
"""

from __future__ import annotations

import json
import socket
import subprocess
from contextlib import AbstractContextManager
from typing import Any
from urllib.request import urlopen

from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, BytesMessage, CloseConnection, Request, TextMessage

from tests.helpers.ring_serve_process import ring, ring_serve

WAIT = 60.0
NICKS = [f"p{n}" for n in range(1, 9)]


def serving() -> AbstractContextManager[dict[str, str]]:
    """A ring serve with an eight-player Old Maid table and the page; their addresses."""
    return ring_serve("--web=0", "--oldmaid=0", "--players", "8", "--seed", "7", services=2)


class Viewer:
    """A WebSocket viewer of the page on a blocking socket: ``receive`` reads one message."""

    def __init__(self, address: str, path: str, *, receive_buffer: int | None = None) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.socket()
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(WAIT)
        self.sock.connect((host, int(port)))
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.sock.sendall(self.ws.send(Request(host=address, target=path)))
        self.pending: list[Any] = []
        while not any(isinstance(e, AcceptConnection) for e in self._read()):
            pass
        self.text = ""
        self.closed: int | None = None

    def _read(self) -> list[Any]:
        data = self.sock.recv(4096)
        self.ws.receive_data(data or None)
        events = list(self.ws.events())
        accepted = [i for i, e in enumerate(events) if isinstance(e, AcceptConnection)]
        if accepted:  # the handshake's answer: anything after it is for receive
            self.pending.extend(events[accepted[0] + 1 :])
        else:
            self.pending.extend(events)
        return events

    def receive(self) -> dict[str, Any] | None:
        """The next message; None once the page closed the socket (``closed``: its code)."""
        while True:
            while self.pending:
                event = self.pending.pop(0)
                if isinstance(event, TextMessage):
                    self.text += event.data
                    if event.message_finished:
                        message, self.text = json.loads(self.text), ""
                        return message  # type: ignore[no-any-return]
                elif isinstance(event, CloseConnection):
                    self.closed = event.code
                    return None
                elif isinstance(event, BytesMessage):
                    raise AssertionError("the page sends text")
            self._read()

    def close(self) -> None:
        self.sock.close()


def api(address: str, path: str) -> Any:
    with urlopen(f"http://{address}{path}", timeout=WAIT) as answer:
        return json.load(answer)


def play_ring(stall: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int | None]:
    """Game 1 of a fresh server with the same seed, peers and seeds; with a viewer that never
    reads on it from before its start, or none. Its records; what that viewer had been
    sent, read after the game, and how it was closed."""
    with serving() as served:
        lobby = Viewer(served["web"], "/ws/lobby")
        stalled: Viewer | None = None
        peers = []
        try:
            for n, nick in enumerate(NICKS):
                if n == len(NICKS) - 1:  # seven have joined: the game forms, not started
                    while not forming_with(lobby.receive(), len(NICKS) - 1):
                        pass
                    if stall:  # the smallest receive buffer: its writes back up at once
                        stalled = Viewer(served["web"], "/ws/games/oldmaid-1", receive_buffer=1)
                peers.append(subprocess.Popen(
                    ring("peer", "--name", nick, "--server", served["oldmaid"], "--host",
                         "127.0.0.1", "--port", "0", "--seed", str(n)),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
            assert [peer.wait(timeout=WAIT) for peer in peers] == [0] * len(NICKS)
            records = api(served["web"], "/api/games/oldmaid-1")["records"]
            got = []
            while stalled and (message := stalled.receive()) is not None:
                got.append(message)
        finally:
            for peer in peers:
                peer.kill()
            lobby.close()
            if stalled:
                stalled.close()
    return records, got, stalled.closed if stalled else None


def forming_with(message: dict[str, Any] | None, joined: int) -> bool:
    assert message is not None, "the lobby closed"
    games = message["games"] if message["type"] == "lobby" else [message["game"]]
    return any(g["id"] == "oldmaid-1" and g["state"] == "forming" and len(g["players"]) == joined
               for g in games)  # fmt: skip


def handoffs(records: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """Every exchange as its giver reported it: its number, giver, taker. By number: the
    reports travel beside the game, each giver's at its own pace."""
    gave = [r for r in records if is_gave(r)]
    return sorted((r["msg"]["seq"], r["nick"], r["msg"]["to"]) for r in gave)


def is_gave(record: dict[str, Any]) -> bool:
    return record.get("dir") == "in" and (record.get("msg") or {}).get("cmd") == "gave"


def dealt(records: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(r["nick"], r.get("card")) for r in records if r.get("event") == "dealt"]


def test_a_viewer_that_never_reads_changes_no_handoff_and_is_dropped() -> None:
    alone, _, _ = play_ring(stall=False)
    watched, got, closed = play_ring(stall=True)
    assert alone[-1]["event"] == watched[-1]["event"] == "end"
    assert len(handoffs(alone)) > 20  # eight players hand the turn round many times
    assert dealt(watched) == dealt(alone)
    assert handoffs(watched) == handoffs(alone)
    assert watched[-1]["losers"] == alone[-1]["losers"]
    # The viewer was let go long before the game's end: told so (1013, try again later)
    # after the few records its socket could hold.
    assert closed == 1013
    assert got[0]["type"] == "snapshot" and got[0]["game"]["state"] == "forming"
    shown = [m for m in got if m["type"] == "record"]
    assert len(shown) < len(watched) / 2, (len(shown), len(watched))
    print(f"the stalled viewer was sent {len(shown)} of the game's {len(watched)} records")
