"""The live page in a real browser: headless Chromium (the distribution's), driven by
Selenium, watching a real ``ring serve --web`` while real peers and bots play: the Old
Maid ring, Reversi's board and clock, FishNet, a hostile name.

Skipped, with one line saying how to install it, where Chromium is missing
(``browser_support``; ``.ci/run`` installs it). A screenshot of each view is saved in
the test's folder.
"""

from __future__ import annotations

import os
import socket
import statistics
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from services.fishnet.rules import FishNetGame
from services.reversi.rules import Position
from tests.helpers.browser_support import (
    WAIT,
    api,
    browser,
    click,
    finish,
    move_times,
    ring_shown,
    served,
    start_all,
    until,
)
from tests.helpers.ring_serve_process import ring

__all__ = ["browser", "served"]  # the fixtures, used by name

RING = ["p1", "p2", "p3", "p4"]
# Printable and without spaces: a FishNet team name. Shown as text, it is harmless.
HOSTILE = "<img/src=x/onerror=window.pwned=1>"


def test_an_old_maid_ring_is_drawn_and_its_turn_and_loser_shown(
    served: dict[str, str], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    browser.get(f"http://{served['web']}/")
    until(browser, lambda d: d.find_element(By.ID, "status").text == "live", "the lobby is live")
    peers = start_all([ring("peer", "--name", nick, "--server", served["oldmaid"], "--host",
                            "127.0.0.1", "--port", "0", "--seed", str(n))
                       for n, nick in enumerate(RING)])  # fmt: skip
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-game="oldmaid-1"]'),
          "the lobby lists the Old Maid game")  # fmt: skip
    # The server's record times are this machine's monotonic clock; the page's, the wall
    # clock: one offset between them, taken here, compares the two.
    offset = time.time() - time.monotonic()
    # A click on the row (the lobby redraws its rows as games change: the row is found
    # again for each try)
    until(browser, click('tr[data-game="oldmaid-1"]'), "the row opens the game")
    until(browser, lambda d: ring_shown(d)["players"] and len(ring_shown(d)["players"]) == 4,
          "the ring shows 4 players")  # fmt: skip
    until(browser, lambda d: ring_shown(d)["loser"], "the loser is shown")
    assert finish(peers) == [0, 0, 0, 0]
    browser.save_screenshot(str(tmp_path / "oldmaid-ring.png"))
    shown = ring_shown(browser)
    game = api(served["web"], "/api/games/oldmaid-1")
    assert isinstance(game, dict)
    end = game["records"][-1]
    assert end["event"] == "end"
    assert shown["loser"] == end["losers"][0]
    assert int(shown["turnMoves"]) >= 2  # the turn went round
    assert shown["mode"] == "verified game"  # ring peers verify: every exchange reported
    assert sorted(nick for nick, _ in shown["players"]) == RING
    assert [nick for nick, classes in shown["players"] if "loser" in classes] == end["losers"]
    print(f"screenshot: {tmp_path / 'oldmaid-ring.png'}")
    # Stepped back from the end to the last exchange: an arrow from its giver to its taker,
    # who holds the turn, as the record of that exchange says.
    records = game["records"]
    [last] = [i for i, r in enumerate(records) if gave(r)][-1:]
    browser.execute_script(
        "const step = document.getElementById('step');"
        f"step.value = '{last + 1}'; step.dispatchEvent(new Event('input'));"
    )
    arrow = until(browser, lambda d: d.execute_script(
        "const a = document.querySelector('svg.ring line.handoff');"
        "return a && [a.dataset.from, a.dataset.to, a.ownerSVGElement.dataset.turn,"
        " document.querySelectorAll('svg.ring circle.token').length]"
        ), "the last exchange is drawn")  # fmt: skip
    giver, taker = records[last]["nick"], records[last]["msg"]["to"]
    assert arrow == [giver, taker, taker, 1]
    browser.save_screenshot(str(tmp_path / "oldmaid-handoff.png"))
    # How soon a record recorded by the server reached the page (a figure, not a test).
    # The records a forming game kept are published at its start with their own earlier
    # times: not counted (they were not late, only not a game's yet).
    arrivals = browser.execute_script("return window.arrivals")
    started = records[0]["t"]
    delays = sorted(arrived / 1000 - (t + offset) for t, arrived in arrivals if t >= started)
    if delays:
        print(f"records live on the page: {len(delays)}, from the server's record to the "
              f"page: median {statistics.median(delays) * 1000:.1f} ms, "
              f"max {delays[-1] * 1000:.1f} ms")  # fmt: skip


def gave(record: dict) -> bool:  # type: ignore[type-arg]
    """An Old Maid record of a verified exchange: its giver's report."""
    return record.get("dir") == "in" and (record.get("msg") or {}).get("cmd") == "gave"


def test_a_reversi_board_matches_its_transcript(
    served: dict[str, str], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    bots = start_all([ring("bot", "reversi", "--server", served["reversi"], "--name", name,
                           "--level", level, "--seed", "1", "--games", "1")
                      for name, level in (("ann", "random"), ("bob", "greedy"))])  # fmt: skip
    assert finish(bots) == [0, 0]
    browser.get(f"http://{served['web']}/#reversi-1")
    board = until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "table.board"),
                  "the board is drawn")[0]  # fmt: skip
    game = api(served["web"], "/api/games/reversi-1")
    assert isinstance(game, dict)
    position = Position.start()
    for record in game["records"]:
        if record.get("event") == "move":
            position = position.play(record["x"] * 8 + record["y"])
    until(browser, lambda d: d.find_element(By.CSS_SELECTOR, "table.board").get_attribute(
          "data-digits") == position.digits(), "the board is the transcript's")  # fmt: skip
    board = browser.find_element(By.CSS_SELECTOR, "table.board")
    assert len(board.find_elements(By.CSS_SELECTOR, "td.black")) == position.count(2)
    # Over: no clock runs; the last move's time is the transcript's, from the first board
    # of its turn to the move.
    clock = browser.execute_script("return {...document.querySelector('.clock').dataset}")
    assert clock["moveTime"] == str(game["records"][0]["options"]["move_time"]).removesuffix(".0")
    assert clock["left"] == ""
    assert float(clock["took"]) == pytest.approx(move_times(game["records"])[-1], abs=1e-6)
    browser.save_screenshot(str(tmp_path / "reversi-board.png"))


def test_a_reversi_players_time_runs_down_while_it_thinks(
    served: dict[str, str], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """A player that names itself and then never moves: its time left, shown live, falls
    from the move time between two records; it leaves, and the clock stops."""
    host, port = served["reversi"].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=WAIT) as silent:
        silent.sendall(b"Nstill\n")
        bot = start_all([ring("bot", "reversi", "--server", served["reversi"], "--name", "eve",
                              "--level", "greedy", "--seed", "5", "--games", "1")])  # fmt: skip
        games = until(browser, lambda d: [g for g in api(served["web"], "/api/games")
                                          if "still" in g["players"] and g["state"] == "playing"],
                      "the game begins")  # fmt: skip
        browser.get(f"http://{served['web']}/#{games[0]['id']}")
        first = float(until(browser, lambda d: d.execute_script(
            "const c = document.querySelector('.clock'); return c && c.dataset.left"
            ), "a clock runs"))  # fmt: skip
        assert first <= 30.0
        until(browser, lambda d: float(d.execute_script(
              "return document.querySelector('.clock').dataset.left") or 99) < first - 0.3,
              "the clock runs down with no record coming")  # fmt: skip
        browser.save_screenshot(str(tmp_path / "reversi-clock.png"))
    assert finish(bot) == [0]  # its opponent left: it won
    stopped = "return document.querySelector('.clock').dataset.left === ''"
    until(browser, lambda d: d.execute_script(stopped), "the clock stops")


def test_a_hostile_name_is_shown_as_text(
    served: dict[str, str], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    bot = start_all([ring("bot", "fishnet", "--server", served["fishnet"], "--name", HOSTILE,
                          "--opponent", "spot", "--level", "spot", "--seed", "1")])  # fmt: skip
    assert finish(bot) == [0]
    browser.get(f"http://{served['web']}/")
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-game^="fishnet-"]'),
          "the lobby lists the FishNet game")  # fmt: skip
    shown = browser.execute_script(
        "return document.querySelector('tr[data-game^=\"fishnet-\"]').textContent"
    )
    assert HOSTILE in shown
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.execute_script("return window.pwned === undefined")
    browser.save_screenshot(str(tmp_path / "lobby.png"))
    assert os.path.getsize(tmp_path / "lobby.png") > 0


def test_a_fishnet_game_shows_each_players_books(
    served: dict[str, str], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """The books the page counted as the game went (each "oppmakes" told to the other) are
    the books the server counted at the end."""
    bot = start_all([ring("bot", "fishnet", "--server", served["fishnet"], "--name", "gil",
                          "--opponent", "bob", "--level", "alice", "--seed", "4")])  # fmt: skip
    assert finish(bot) == [0]
    games = api(served["web"], "/api/games")
    assert isinstance(games, list)
    [game] = [g for g in games if g["service"] == "fishnet" and "gil" in g["players"]]
    played = api(served["web"], f"/api/games/{game['id']}")
    assert isinstance(played, dict)
    books = played["records"][-1]["details"]["books"]
    counted = [0, 0]
    for record in played["records"]:
        if record.get("dir") == "out" and str(record.get("line", "")).startswith("oppmakes"):
            counted[1 - record["seat"]] += 1
    assert counted == books  # what the page counts live is what the server counts
    browser.get(f"http://{served['web']}/#{game['id']}")
    until(browser, lambda d: d.execute_script(
          "const t = document.querySelector('table.fish'); return t && t.dataset.books"
          ) == " ".join(map(str, books)), "the books are shown")  # fmt: skip
    # The hands and the deck: our rules, dealt from the game's seed, playing its moves.
    records = played["records"]
    [deal] = [r for r in records if r.get("event") == "deal"]
    rules = FishNetGame(records[0]["seed"], deal["first"])
    for record in records:
        words = str(record.get("line", "")).split()
        if record.get("dir") == "in" and words[:1] == ["request"]:
            rules.request(record["seat"], int(words[1]))
        elif record.get("dir") == "in" and words == ["pass"]:
            rules.pass_turn(record["seat"])
    assert rules.over
    shown = browser.execute_script("return {...document.querySelector('table.fish').dataset}")
    assert shown["hands"] == f"{rules.hand_size(0)} {rules.hand_size(1)}"
    assert shown["deck"] == str(rules.deck_size)
    browser.save_screenshot(str(tmp_path / "fishnet.png"))
