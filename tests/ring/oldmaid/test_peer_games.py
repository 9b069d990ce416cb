"""Whole games: the real table and real peers, in one process, over loopback TCP."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import trio

from ring.games.events import read_events
from ring.oldmaid.cards import JOKER
from ring.oldmaid.peer import Outcome, Peer, PeerConfig, PeerError
from services.oldmaid.table.server import TableConfig, TableOutcome, serve_table
from tests.helpers.connections import refusing_port


async def play_game(
    players: int, seed: int, log_dir: Path | None = None, peer_class: type[Peer] = Peer
) -> tuple[TableOutcome, dict[str, Outcome | PeerError], dict[str, Peer]]:
    config = TableConfig(players=players, port=0, seed=seed, linger=5.0)
    table_result: list[TableOutcome] = []
    results: dict[str, Outcome | PeerError] = {}
    peers: dict[str, Peer] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(_run_table, config, table_result)
            for index in range(1, players + 1):
                nick = f"p{index}"
                events = str(log_dir / f"{nick}.jsonl") if log_dir else None
                peer = peer_class(
                    PeerConfig(
                        nick=nick,
                        table=(host, port),
                        seed=seed * 100 + index,
                        events=events,
                        timeout=5.0,
                    )
                )
                peers[nick] = peer
                nursery.start_soon(_run_peer, peer, results)
    for peer in peers.values():
        peer.log.close()
    return table_result[0], results, peers


async def _run_table(
    config: TableConfig, out: list[TableOutcome], *, task_status: trio.TaskStatus
) -> None:
    out.append(await serve_table(config, task_status=task_status))


async def _run_peer(peer: Peer, results: dict[str, Outcome | PeerError]) -> None:
    try:
        results[peer.nick] = await peer.play()
    except PeerError as exc:
        results[peer.nick] = exc


@pytest.mark.parametrize("players", range(2, 9))
@pytest.mark.parametrize("seed", range(3))
async def test_whole_game(players: int, seed: int) -> None:
    table, results, peers = await play_game(players, seed)
    assert table.loser is not None and len(table.out) == players - 1
    outcomes = {nick: r for nick, r in results.items() if isinstance(r, Outcome)}
    assert len(outcomes) == players, results
    losers = [nick for nick, o in outcomes.items() if o.place is None]
    assert losers == [table.loser]
    assert peers[table.loser].hand.cards == (JOKER,)
    places = {nick: o.place for nick, o in outcomes.items() if o.place is not None}
    assert places == {nick: place for place, nick in enumerate(table.out, start=1)}
    assert all(not peers[nick].hand for nick in table.out)


async def test_event_log_tells_the_game(tmp_path: Path) -> None:
    table, _, _ = await play_game(5, 11, log_dir=tmp_path)
    logs = {p.stem: read_events(p) for p in tmp_path.glob("*.jsonl")}
    assert len(logs) == 5
    seats = logs["p1"][0]["players"]
    assert list(seats) == list(table.players)
    kinds = {record["event"] for records in logs.values() for record in records}
    assert {
        "start",
        "phase",
        "draw",
        "discard",
        "your_turn",
        "offer",
        "gave",
        "pick",
        "out",
        "lost",
        "game_over",
    } <= kinds - {"exit"} | {"game_over"}
    draws = sum(1 for records in logs.values() for r in records if r["event"] == "draw")
    assert draws == 53
    discards = [r for records in logs.values() for r in records if r["event"] == "discard"]
    assert len(discards) == 26
    offers = [r for records in logs.values() for r in records if r["event"] == "offer"]
    picks = [r for records in logs.values() for r in records if r["event"] == "pick"]
    assert len(offers) == len(picks) > 0
    for offer in offers:
        assert offer["t_start"] <= offer["t_offer"] <= offer["t"]


class QuitsAfterTwoDraws(Peer):
    """Leaves the game (its process dies, say) in the middle of the draw phase."""

    draws = 0

    async def _draw_turn(self) -> None:
        self.draws += 1
        if self.nick == "p2" and self.draws == 2:
            raise PeerError("quitting on purpose")
        await super()._draw_turn()


async def test_a_player_leaving_aborts_the_game_for_everyone() -> None:
    table, results, _ = await play_game(4, 3, peer_class=QuitsAfterTwoDraws)
    assert table.reason is not None and "p2" in table.reason
    assert str(results["p2"]) == "quitting on purpose"
    for nick in ("p1", "p3", "p4"):
        assert isinstance(results[nick], PeerError), results[nick]
        assert "p2" in str(results[nick])


async def test_table_unreachable_is_one_clear_error() -> None:
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    peer = Peer(PeerConfig(nick="lonely", table=("127.0.0.1", port), timeout=2.0))
    with pytest.raises(PeerError, match=f"cannot reach the table at 127.0.0.1:{port}"):
        await peer.play()


async def test_join_refused_is_one_clear_error() -> None:
    config = TableConfig(players=2, port=0, seed=1, linger=0.5)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(serve_table, config)
            peer = Peer(PeerConfig(nick="no spaces", table=(host, port), timeout=2.0))
            with pytest.raises(PeerError, match=r"refused the join: .*\$\.nick"):
                await peer.play()
            nursery.cancel_scope.cancel()


async def test_a_neighbour_that_never_listens_is_named_after_the_peer_timeout() -> None:
    config = TableConfig(players=2, port=0, seed=1, linger=0.5)
    with trio.fail_after(10), refusing_port() as dead_port:  # every dial there is refused
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(serve_table, config)
            ghost = await trio.open_tcp_stream(host, port)
            join = f'{{"cmd":"join","nick":"ghost","host":"127.0.0.1","port":{dead_port}}}\n'
            await ghost.send_all(join.encode())
            peer = Peer(PeerConfig(nick="ann", table=(host, port), timeout=0.5))
            where = f"ghost at 127.0.0.1:{dead_port}"
            expected = rf"cannot reach {where} within 0.5 s \((\d+) attempts\)"
            with pytest.raises(PeerError, match=expected) as failed:
                await peer.play()
            attempts = int(re.search(expected, str(failed.value)).group(1))
            assert attempts > 1  # dialled again and again, not once
            await ghost.aclose()
            nursery.cancel_scope.cancel()
