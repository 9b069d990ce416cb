"""The live page in a real browser: headless Chromium (the distribution's), driven by
Selenium, watching a real ``ring serve --web``: replays of a transcript, the No Tipping
lever, a tournament's standings.

Skipped, with one line saying how to install it, where Chromium is missing
(``browser_support``; ``.ci/run`` installs it). A screenshot of each view is saved in
the test's folder.
"""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from services.reversi.rules import Position
from tests.helpers.browser_support import (
    WAIT,
    api,
    browser,
    finish,
    move_times,
    served,
    start_all,
    until,
)
from tests.helpers.ring_serve_process import ring

__all__ = ["browser", "served"]  # the fixtures, used by name


@contextmanager
def ring_replay(path: Path) -> Iterator[list[str]]:
    """``ring replay PATH`` on any free port, while the block runs: the words of the line
    it prints (its address last); then Ctrl-C, and it exits 130."""
    replay = subprocess.Popen(
        ring("replay", str(path), "--port", "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,
    )
    try:
        assert replay.stdout is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(replay.stdout, selectors.EVENT_READ)
            assert waiting.select(WAIT), "ring replay said nothing"
            said = replay.stdout.readline().decode().split()
        yield said
    finally:
        replay.send_signal(signal.SIGINT)
        assert replay.wait(timeout=WAIT) == 130


def test_a_replay_steps_through_a_transcript(
    served: dict[str, str], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """ring replay of a finished game's transcript: the board at its end, then, stepped back
    to just after the tenth move, the board of the first ten moves."""
    bots = start_all([ring("bot", "reversi", "--server", served["reversi"], "--name", name,
                           "--level", level, "--seed", "2", "--games", "1")
                      for name, level in (("cy", "positional"), ("di", "random"))])  # fmt: skip
    assert finish(bots) == [0, 0]
    game = api(served["web"], "/api/games")
    assert isinstance(game, list)
    number = max(g["number"] for g in game if g["service"] == "reversi")
    played = api(served["web"], f"/api/games/reversi-{number}")
    assert isinstance(played, dict)
    transcript = tmp_path / "game.jsonl"
    transcript.write_text("".join(json.dumps(record) + "\n" for record in played["records"]))
    with ring_replay(transcript) as said:
        assert said[:2] == ["replay", "of"] and said[-1].endswith(f"/#reversi-{number}")
        browser.get(said[-1])
        records = played["records"]
        moves = [i for i, record in enumerate(records) if record.get("event") == "move"]
        position = Position.start()
        for i in moves:
            position = position.play(records[i]["x"] * 8 + records[i]["y"])
        until(browser, lambda d: board_digits(d) == position.digits(), "the end's board")
        tenth = Position.start()
        for i in moves[:10]:
            tenth = tenth.play(records[i]["x"] * 8 + records[i]["y"])
        browser.execute_script(
            "const step = document.getElementById('step');"
            f"step.value = '{moves[9] + 1}'; step.dispatchEvent(new Event('input'));"
        )
        until(browser, lambda d: board_digits(d) == tenth.digits(), "the tenth move's board")
        took = browser.execute_script("return document.querySelector('.clock').dataset.took")
        assert float(took) == pytest.approx(move_times(records)[9], abs=1e-6)
        browser.find_element(By.ID, "step-live").click()
        until(browser, lambda d: board_digits(d) == position.digits(), "the end again")
        browser.save_screenshot(str(tmp_path / "replay.png"))


def board_digits(driver: webdriver.Chrome) -> str | None:
    return driver.execute_script(  # type: ignore[no-any-return]
        "const b = document.querySelector('table.board'); return b && b.dataset.digits"
    )


def test_a_no_tipping_lever_holds_the_transcripts_blocks(
    served: dict[str, str], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """The drawn lever's blocks are those our rules make of the transcript's moves."""
    from services.notipping.rules import Add, Game, Remove

    players = enumerate((("ed", "greedy"), ("flo", "random")))
    bots = start_all([ring("bot", "notipping", "--server", served["notipping"], "--name", name,
                           "--seat", str(seat), "--level", level, "--seed", "3")
                      for seat, (name, level) in players])  # fmt: skip
    assert finish(bots) == [0, 0]
    played = api(served["web"], "/api/games/notipping-1")
    assert isinstance(played, dict)
    start = played["records"][0]
    game = Game.start(start["options"]["max_weight"])
    for record in played["records"]:
        if record.get("event") == "move":
            move = record["move"]
            game = game.play(
                Add(record["weight"], record["position"])
                if move == "ADD"
                else Remove(record["position"])
            )
    expected = " ".join(str(game.weight_at(position)) for position in range(-10, 11))
    browser.get(f"http://{served['web']}/#notipping-1")
    until(browser, lambda d: d.execute_script(
          "const s = document.querySelector('svg.lever'); return s && s.dataset.weights"
          ) == expected, "the lever is the transcript's")  # fmt: skip
    lever = browser.execute_script("return {...document.querySelector('svg.lever').dataset}")
    assert lever["torques"] == f"{game.left} {game.right}"
    assert lever["margins"] == f"{game.left} {-game.right}"  # the last move tipped: one < 0
    assert min(game.left, -game.right) < 0
    browser.save_screenshot(str(tmp_path / "notipping-lever.png"))
    # Stepped back to the start: the torques of the first board, no move yet.
    browser.execute_script(
        "const step = document.getElementById('step');"
        f"step.value = '{first_round(played['records']) + 1}';"
        " step.dispatchEvent(new Event('input'));"
    )
    start_game = Game.start(start["options"]["max_weight"])
    until(browser, lambda d: d.execute_script(
          "return document.querySelector('svg.lever').dataset.margins"
          ) == f"{start_game.left} {-start_game.right}", "the first board's margins")  # fmt: skip


def first_round(records: list[dict]) -> int:  # type: ignore[type-arg]
    """Where the first board of a No Tipping game is sent."""
    return next(i for i, r in enumerate(records) if str(r.get("line", "")).startswith("ROUND:"))


def test_a_tournaments_standings_page_shows_its_ranking(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """ring replay DIR of a ring tournament folder: the ranking, its chart of intervals,
    the crosstable, as standings.json has them."""
    out = tmp_path / "contest"
    command = ring("tournament", "reversi", "--builtin", "random", "--builtin", "greedy")
    command += ["--builtin", "deep", "--depth", "1", "--games", "2", "--out", str(out)]
    done = subprocess.run(command, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    table = json.loads((out / "standings.json").read_text())
    assert table["games"] == table["scheduled"] == 6
    with ring_replay(out) as said:
        assert said[:2] == ["standings", "of"] and said[-1].endswith("/standings")
        browser.get(said[-1])
        until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#ranking tr")) == 3,
              "the ranking lists the three entrants")  # fmt: skip
        shown = browser.execute_script(
            "return [...document.querySelectorAll('#ranking tr')]"
            ".map(r => r.children[1].textContent)"
        )
        assert shown == [entry["entrant"] for entry in table["ranking"]]
        assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart line.interval")) == 3
        assert len(browser.find_elements(By.CSS_SELECTOR, "#cross tr")) == 4
        title = browser.find_element(By.ID, "title").text
        assert title == "reversi: 6 of 6 games"
        browser.save_screenshot(str(tmp_path / "standings.png"))
        # the folder's games are in the lobby, each under its own number
        browser.get(said[-1].removesuffix("standings"))
        until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "tr.game")) == 6,
              "the lobby lists the six games")  # fmt: skip
