"""What the browser tests share: Chromium and its driver (the distribution's), one real
``ring serve --web`` a module, and the waits, all bounded.

Where Chromium or its driver is missing, importing this skips the test module that
imports it, with one line saying how to install them (``.ci/run`` does).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.helpers.ring_serve_process import ring_serve

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
NO_CHROMIUM = "no Chromium: apt-get install chromium chromium-driver (as .ci/run does)"
if CHROMIUM is None or DRIVER is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)
WAIT = 30.0


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
        "if (!s) return {players: [], loser: '', turnMoves: '0', mode: ''};"
        "return {loser: s.dataset.loser, turnMoves: s.dataset.turnMoves, mode: s.dataset.mode,"
        " players:"
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
