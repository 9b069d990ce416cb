"""FishNet for the tests: the handout's sample session, and a server with a raw line client.

Used by the FishNet tests (``tests/services/fishnet/``) and by the tests of what every
service shares (the flood rule, the move clocks: ``tests/ring/``).
"""

from __future__ import annotations

from collections import Counter
from contextlib import AbstractAsyncContextManager

import trio

from services.fishnet.rules import FishNetGame, full_deck
from services.fishnet.server import FishNetServer, ServerConfig, serve_fishnet
from tests.helpers import servers

# -- the handout's sample session -------------------------------------------------------

# The handout's sample session, every line in order: C is the client, S the server.
SAMPLE = """\
C play cburch spot
S fish 3
S fish 4
S fish 2
S fish 4
S fish 9
S fish 12
S oppmakes 0
S fish 2
S yourturn
C request 3
S oppgives 2 3
S yourturn
C request 12
S fish 8
S request 2
S request 2
S oppmakes 2
S youlose
"""
SAMPLE_LINES = [(line[0], line[2:].encode()) for line in SAMPLE.splitlines()]

# The handout's sample game: the client (seat 0) moves first and is dealt
# 3 4 2 4 9 12 2; spot makes its book of 0s with its sixth card; the client
# then fishes an 8 and spot the last 2.
SAMPLE_PREFIX = [3, 0, 4, 0, 2, 0, 4, 3, 9, 3, 12, 0, 2, 2, 8, 2]


def sample_deck() -> list[int]:
    rest = Counter(full_deck())
    rest.subtract(SAMPLE_PREFIX)
    return SAMPLE_PREFIX + sorted(rest.elements())


def sample_game(seed: str = "", first: int | None = None) -> FishNetGame:
    """A game factory for the server: the sample deal whatever the seed."""
    return FishNetGame.from_deck(sample_deck(), first=0)


# -- a server and a raw client ------------------------------------------------------------

WAIT = 10  # seconds: the bound on any single wait in these tests
BASE = ServerConfig(port=0, seed=7)


def running(config: ServerConfig = BASE) -> AbstractAsyncContextManager[FishNetServer]:
    """A FishNet server (``BASE``: any free port, seed 7) for the length of the block."""
    return servers.running(serve_fishnet, config)


class LineClient:
    """A raw client: bytes out, lines in, every read bounded."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    @classmethod
    async def connect(cls, server: FishNetServer) -> LineClient:
        with trio.fail_after(WAIT):
            return cls(await trio.open_tcp_stream(*server.address))

    async def send(self, data: str | bytes) -> None:
        await self.stream.send_all(data.encode() if isinstance(data, str) else data)

    async def line(self) -> str | None:
        """The next line; None once the server has closed the connection."""
        with trio.fail_after(WAIT):
            while b"\n" not in self.buffer:
                try:
                    chunk = await self.stream.receive_some(65536)
                except trio.BrokenResourceError:
                    chunk = b""
                if not chunk:
                    return None
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    async def lines_until(self, *ends: str) -> list[str]:
        """Lines up to and including the first that starts with one of ``ends``."""
        lines: list[str] = []
        while True:
            line = await self.line()
            assert line is not None, f"closed after {lines}"
            lines.append(line)
            if line.split()[0] in ends:
                return lines

    async def rest(self) -> list[str]:
        """Every line until the server closes."""
        lines = []
        while (line := await self.line()) is not None:
            lines.append(line)
        return lines

    async def aclose(self) -> None:
        await self.stream.aclose()


RESULTS = ("youwin", "youlose", "tiegame")


async def play_until_my_turn(client: LineClient, team: str, opponent: str = "spot") -> list[int]:
    """Start a game (we move first) and return our hand at the first yourturn."""
    await client.send(f"play {team} {opponent}\n")
    hand: list[int] = []
    for line in await client.lines_until("yourturn"):
        if line.startswith("fish"):
            hand.append(int(line.split()[1]))
        elif line.startswith("request"):
            rank = int(line.split()[1])
            hand = [card for card in hand if card != rank]
    return hand
