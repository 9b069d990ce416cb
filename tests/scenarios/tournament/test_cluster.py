"""``ring tournament --cluster``: the games on a real Dask cluster (two worker processes on
loopback), with the same results as this machine's pool."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from scenarios.tournament import results
from scenarios.tournament.cluster import ClusterError, DaskPool
from scenarios.tournament.jobs import Entrant, Settings
from scenarios.tournament.runner import Tournament, TournamentError, run

distributed = pytest.importorskip("distributed", reason="pip install 'cardring[cluster]'")

ENTRANTS = (Entrant("random", level="random"), Entrant("deep", level="deep"))


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    ) as cluster:
        yield cluster.scheduler_address


def decided(folder: Path) -> dict[int, object]:
    """Every result in ``folder`` without its timings."""
    return {n: results.decided(r) for n, r in results.load(folder / "games").items()}


def test_a_cluster_plays_the_same_games_as_the_local_pool(tmp_path: Path, scheduler: str) -> None:
    settings = Settings(depth=1)
    here = Tournament("reversi", ENTRANTS, tmp_path / "here", seed=4, settings=settings)
    there = Tournament(
        "reversi", ENTRANTS, tmp_path / "there", seed=4, settings=settings, cluster=scheduler
    )
    assert run(here, stream=io.StringIO()) == 0
    assert run(there, stream=io.StringIO()) == 0
    assert len(decided(tmp_path / "there")) == 2
    assert decided(tmp_path / "there") == decided(tmp_path / "here")
    # what the games said on the workers came back with them
    assert (tmp_path / "there" / "games" / "00001" / "transcript.jsonl").stat().st_size > 0


def test_every_worker_checks_every_command_before_the_first_game(
    tmp_path: Path, scheduler: str
) -> None:
    entrants = (Entrant("a", ("./not-here", "{host}")), Entrant("b", level="random"))
    tournament = Tournament("reversi", entrants, tmp_path / "t", cluster=scheduler)
    with pytest.raises(TournamentError, match=r"^worker tcp://127\.0\.0\.1:\d+: cannot run a's"):
        run(tournament)
    assert not list((tmp_path / "t" / "games").glob("*.json"))


def test_an_unreachable_scheduler_is_one_line() -> None:
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler at tcp://127"):
        DaskPool("tcp://127.0.0.1:9", timeout=0.5)
