"""The live page in a real browser: headless Chromium (the distribution's), driven by
Selenium, watching a real ``ring serve --web`` while real peers and bots play.

Skipped, with one line saying how to install it, where Chromium is missing (``.ci/run``
installs it). A screenshot of each view is saved in the test's folder.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip(
        "no Chromium: apt-get install chromium chromium-driver (as .ci/run does)",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoSuchElementException,
    StaleElementReferenceException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from services.fishnet.rules import FishNetGame  # noqa: E402
from services.reversi.rules import Position  # noqa: E402
from tests.services.ring_serve_process import ring, ring_serve  # noqa: E402

WAIT = 30.0
RING = ["p1", "p2", "p3", "p4"]
# Printable and without spaces: a FishNet team name. Shown as text, it is harmless.
HOSTILE = "<img/src=x/onerror=window.pwned=1>"


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, str]]:
    """One ring serve with the page and the four games; their addresses."""
    with ring_serve("--web=0", "--oldmaid=0", "--reversi=0", "--fishnet=0", "--notipping=0",
                    "--seed", "7", services=5) as addresses:  # fmt: skip
        yield addresses


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,900",
                 "--disable-dev-shm-usage"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


def until(driver: webdriver.Chrome, condition, what: str):  # type: ignore[no-untyped-def]
    return WebDriverWait(driver, WAIT).until(lambda d: condition(d), message=what)


def click(selector: str):  # type: ignore[no-untyped-def]
    """A wait's condition: find ``selector`` afresh and click it."""

    def clicked(driver: webdriver.Chrome) -> bool:
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
        except (NoSuchElementException, StaleElementReferenceException):
            return False
        return True

    return clicked


def ring_shown(driver: webdriver.Chrome) -> dict:  # type: ignore[type-arg]
    """What the drawn ring shows, read at one instant (it is redrawn at each record)."""
    return driver.execute_script(
        "const s = document.querySelector('svg.ring');"
        "if (!s) return {players: [], loser: '', turnMoves: '0'};"
        "return {loser: s.dataset.loser, turnMoves: s.dataset.turnMoves, players:"
        " [...s.querySelectorAll('g.player')].map(g => [g.dataset.nick, g.getAttribute('class')])};"
    )


def api(address: str, path: str) -> object:
    from urllib.request import urlopen

    with urlopen(f"http://{address}{path}", timeout=WAIT) as answer:
        return json.load(answer)


def start_all(commands: list[list[str]]) -> list[subprocess.Popen[bytes]]:
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    return [subprocess.Popen(command, **quiet) for command in commands]  # type: ignore[call-overload]


def finish(processes: list[subprocess.Popen[bytes]]) -> list[int]:
    codes = []
    for process in processes:
        try:
            codes.append(process.wait(timeout=WAIT))
        except subprocess.TimeoutExpired:
            process.kill()
            codes.append(process.wait(timeout=10))
    return codes


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


def move_times(records: list[dict]) -> list[float]:  # type: ignore[type-arg]
    """Each Reversi move's time: from the first board of its turn to its move record."""
    times, start = [], None
    for record in records:
        if record.get("dir") == "out" and str(record.get("line", "")).startswith("B"):
            start = record["t"] if start is None else start
        elif record.get("event") == "move":
            times.append(record["t"] - start)
            start = None
    return times


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
    command = ring("replay", str(transcript), "--port", "0")
    replay = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    try:
        assert replay.stdout is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(replay.stdout, selectors.EVENT_READ)
            assert waiting.select(WAIT), "ring replay said nothing"
            said = replay.stdout.readline().decode().split()
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
    finally:
        replay.send_signal(signal.SIGINT)
        assert replay.wait(timeout=WAIT) == 130


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
    replay = subprocess.Popen(
        ring("replay", str(out), "--port", "0"),
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
    finally:
        replay.send_signal(signal.SIGINT)
        assert replay.wait(timeout=WAIT) == 130


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
