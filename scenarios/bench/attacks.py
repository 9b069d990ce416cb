"""One hostile connection, as the fuzzer and the hostile-client tests open it.

An ``Attack`` says where it goes (a service, or an honest Old Maid peer's
listener), what it sends (chunks, maybe a byte at a time), and how it ends:
it reads the answers until the server closes, aborts, stalls or holds its
place, or floods one message without ever reading. ``run_attack`` plays one
beside a round's honest games (``scenarios.bench.fuzz``), ``attack_alone``
one against any listener on loopback; each reports what came back and how
the connection ended (``AttackResult``). Every wait is bounded.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import trio

# The honest players are on 127.0.0.1; the attacks come from another address,
# as a stranger on the class's LAN would.
ATTACKER_HOST = "127.0.0.2"
ENDINGS = ("close", "abort", "stall")  # what the fuzzer draws from
HOSTILE_ENDINGS = ("flood", "hold")

# The servers' idle timeout in a round: short enough that a connection which
# stalls before proving itself is gone well within a round; long enough that
# the honest games never meet it. The attacks' waits are sized against it.
IDLE_TIMEOUT = 1.0
# How long an attack that has sent everything reads what the server answers;
# also the bound on each single write of an attack.
READ_TIMEOUT = 2 * IDLE_TIMEOUT + 1.0
# How long an attacker that expects to be closed waits for it. A server closes such a
# connection within about a second, but a few hundred newcomers refused at once on a
# machine busy with other tests can take longer to be accepted at all; the wait ends as
# soon as the close comes, so only a server that never closes waits this long.
CLOSE_TIMEOUT = 10 * IDLE_TIMEOUT
# The bound on one write of a flood: the server drops it within its 1 s write
# timeout; the rest is room for a loaded machine (the whole suite on two cores
# once took over 3 s), never waited when the server does its job.
FLOOD_WRITE_TIMEOUT = 8.0
FLOOD_WRITE = 65536  # bytes of a flood handed to the kernel at once


@dataclass(frozen=True)
class Attack:
    """One hostile connection: where to, what it sends, and how it ends.

    Endings: "close" reads what the server answers until it closes (within
    READ_TIMEOUT); "abort" closes at once, unread; "stall" holds the connection,
    unread, until the honest games are over; "flood" writes ``flood`` again and
    again, never reading, until the server drops the connection, then reads
    what had come; "hold" holds it, unread, until every attack that does not
    hold has ended, then closes.
    """

    target: str  # a service of ring serve, or "peer": an honest Old Maid peer's listener
    chunks: tuple[bytes, ...]
    ending: str = "close"  # of ENDINGS or HOSTILE_ENDINGS
    pace: float = 0.0  # above 0: the chunks go a byte at a time, this many seconds apart
    expect: bytes = b""  # once the chunks are sent, read until this has come
    flood: bytes = b""  # the message of the ending "flood"
    wave: int = 0  # starts once every attack of the waves before has sent and got what it expects


@dataclass
class AttackResult:
    attack: Attack
    received: bytes = b""
    closed_by_server: bool = False  # the server ended the connection (EOF or reset)
    refused: bool = False  # the connection could not even be opened
    flood_stuck: bool = False  # a flood's write waited FLOOD_WRITE_TIMEOUT: kept, unread


async def run_attack(
    attack: Attack,
    address: tuple[str, int],
    done: trio.Event,
    placed: trio.Event,
    released: trio.Event,
) -> AttackResult:
    """Run one attack; ``placed`` is set once it has sent its chunks and got what it expects
    (or has ended), ``released`` ends the ending "hold"."""
    result = AttackResult(attack)
    try:
        try:
            with trio.fail_after(READ_TIMEOUT):
                stream = await trio.open_tcp_stream(*address, local_address=ATTACKER_HOST)
        except (OSError, trio.TooSlowError):
            result.refused = True
            return result
        async with stream:
            # The server may close first, or stop reading: what it sent still counts.
            with contextlib.suppress(trio.BrokenResourceError, trio.TooSlowError):
                await _send_chunks(stream, attack)
            if attack.expect and not await _read_until(stream, attack.expect, result):
                return result
            placed.set()
            if attack.ending == "abort":
                return result
            if attack.ending == "stall":
                await done.wait()
                return result
            if attack.ending == "hold":
                await released.wait()
                return result
            if attack.ending == "flood" and not await _flood(stream, attack.flood):
                result.flood_stuck = True
                return result
            await _read_to_end(stream, result)
    finally:
        placed.set()
    return result


async def attack_alone(attack: Attack, address: tuple[str, int]) -> AttackResult:
    """One attack outside a round, against any listener on loopback.

    Not with the endings that wait on a round ("stall", "hold"): they would wait for ever.
    """
    if attack.ending in ("stall", "hold"):
        raise ValueError(f"the ending {attack.ending!r} needs a round")
    return await run_attack(attack, address, trio.Event(), trio.Event(), trio.Event())


async def _send_chunks(stream: trio.SocketStream, attack: Attack) -> None:
    if not attack.pace:
        for chunk in attack.chunks:
            with trio.fail_after(READ_TIMEOUT):
                await stream.send_all(chunk)
        return
    data = b"".join(attack.chunks)
    for i in range(len(data)):
        if i:
            await trio.sleep(attack.pace)  # the client's own slowness, not a wait for the server
        with trio.fail_after(READ_TIMEOUT):
            await stream.send_all(data[i : i + 1])


async def _read_until(stream: trio.SocketStream, expected: bytes, result: AttackResult) -> bool:
    """Read until ``expected`` has come; False if the server closed first (or it never came)."""
    with trio.move_on_after(READ_TIMEOUT):
        while expected not in result.received:
            try:
                data = await stream.receive_some(65536)
            except trio.BrokenResourceError:
                data = b""
            if not data:
                result.closed_by_server = True
                return False
            result.received += data
        return True
    return False


async def _flood(stream: trio.SocketStream, message: bytes) -> bool:
    """Write ``message`` over and over, never reading, until the server drops the connection:
    True then; False if a write waited FLOOD_WRITE_TIMEOUT (the server neither read nor
    dropped it)."""
    block = message * max(1, FLOOD_WRITE // len(message))
    try:
        while True:
            with trio.fail_after(FLOOD_WRITE_TIMEOUT):
                await stream.send_all(block)
    except trio.BrokenResourceError:
        return True
    except trio.TooSlowError:
        return False


async def _read_to_end(stream: trio.SocketStream, result: AttackResult) -> None:
    with trio.move_on_after(CLOSE_TIMEOUT):
        try:
            while data := await stream.receive_some(65536):
                result.received += data
            result.closed_by_server = True
        except trio.BrokenResourceError:
            result.closed_by_server = True
