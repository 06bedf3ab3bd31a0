"""End to end in a real headless browser (Debian's chromium + chromium-driver, driven by selenium).

The server runs in a thread of this process (so the test can read the engine's own scores); the browser
plays whole games by clicking, at a desktop and at a phone-sized window, and watches a tournament game.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time

import numpy as np
import pytest

pytest.importorskip("flask")
pytest.importorskip("selenium")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from packetrow_arena.replay import replay_game  # noqa: E402
from packetrow_arena.tournament import load_games, run_tournament  # noqa: E402
from packetrow_web import create_app  # noqa: E402
from packetrow_web.sessions import PlaySession  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
DESKTOP, PHONE = (1280, 800), (390, 844)

if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)",
                allow_module_level=True)


def start_server(save_dir):
    """The web app on a free local port, served from a daemon thread; (app, base URL, server)."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args, **kwargs):
            pass

    app = create_app(save_dir)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return app, f"http://127.0.0.1:{server.server_port}/", server


def start_browser(profile: str):
    """Headless chromium with a fresh profile, through chromedriver."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    # a session of its own: no signal the browser sends its process group at shutdown reaches the test run
    service = Service(CHROMEDRIVER, popen_kw={"start_new_session": True})
    return webdriver.Chrome(options=options, service=service)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app, url, httpd = start_server(tmp_path_factory.mktemp("saves"))
    yield app, url
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = start_browser(str(tmp_path_factory.mktemp("profile")))
    yield driver
    driver.quit()


def wait(driver, condition, timeout=20):
    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(condition)


def ready(driver):
    """Whether the page waits for the person: legal moves offered (enabled), or the game is over."""
    return driver.execute_script(
        "return document.body.dataset.over === 'yes' || "
        "document.querySelectorAll('#play [data-action]:not([disabled])').length > 0")


def new_game_by_clicking(driver, players: int, seat: int, opponent: str):
    """Open 'New game…', set the options with the mouse and keyboard, start."""
    driver.find_element(By.ID, "new-game").click()
    Select(driver.find_element(By.ID, "opt-players")).select_by_value(str(players))
    Select(driver.find_element(By.ID, "opt-seat")).select_by_value(str(seat))
    fields = driver.find_elements(By.CSS_SELECTOR, "#opt-opponents input")
    assert len(fields) == players - 1
    for field in fields:
        field.clear()
        field.send_keys(opponent)
    old = driver.execute_script("return document.body.dataset.game")
    driver.find_element(By.ID, "opt-start").click()
    wait(driver, lambda d: d.execute_script("return document.body.dataset.game") != old)


def play_by_clicking(driver, rng, screenshot=None, at_click=25) -> int:
    """Click legal moves (buttons and supply cards, chosen at random) until the game is over; the clicks made."""
    clicks = 0
    while True:
        wait(driver, ready)
        if driver.execute_script("return document.body.dataset.over") == "yes":
            return clicks
        targets = driver.find_elements(By.CSS_SELECTOR, "#play [data-action]:not([disabled])")
        try:
            targets[int(rng.integers(len(targets)))].click()
        except StaleElementReferenceException:  # redrawn between finding and clicking: look again
            continue
        clicks += 1
        if screenshot and clicks == at_click:
            driver.save_screenshot(screenshot)
        assert clicks < 400, "the game did not end"


def shown_scores(driver) -> list[tuple[int, int]]:
    rows = driver.find_elements(By.CSS_SELECTOR, "#scores tbody tr")
    return [(int(r.find_element(By.CSS_SELECTOR, ".vp").text), int(r.find_element(By.CSS_SELECTOR, ".cash").text[1:]))
            for r in rows]


@pytest.mark.parametrize("size, players, seat", [(DESKTOP, 3, 1), (PHONE, 2, 0)], ids=["1280x800", "390x844"])
def test_a_person_plays_a_whole_game_by_clicking(server, browser, size, players, seat):
    app, url = server
    browser.set_window_size(*size)
    browser.get(url + "?delay=0")
    # opening the page starts a game at once: against the shipped agent, two players, your move first
    wait(browser, ready)
    first = app.config["SESSIONS"].get(browser.execute_script("return document.body.dataset.game"), PlaySession)
    assert first.opponents == ["ppo"] and first.game.num_players == 2
    assert "Your move" in browser.find_element(By.ID, "status").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#boards .board")) == 4

    new_game_by_clicking(browser, players, seat, "random")
    session = app.config["SESSIONS"].get(browser.execute_script("return document.body.dataset.game"), PlaySession)
    assert session.game.num_players == players and session.seat == seat and session.opponents == ["random"] * (players - 1)
    clicks = play_by_clicking(browser, np.random.default_rng(players))
    assert session.game.is_over and clicks >= 10
    expected = [(row["vp"], row["cash"]) for row in session.game.scores()]
    assert shown_scores(browser) == expected
    assert browser.find_element(By.CSS_SELECTOR, "#scores .verdict").text
    log = browser.find_element(By.ID, "log").text
    assert "(random)" in log and "Final scores" in log
    # the page fits the window's width: nothing to scroll sideways
    assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0]


def test_a_bot_that_thinks_shows_it(server, browser):
    app, url = server
    browser.set_window_size(*DESKTOP)
    browser.get(url + "?delay=600")  # a slow bot: the page shows who is thinking until its move arrives
    wait(browser, ready)
    browser.find_element(By.CSS_SELECTOR, "#moves [data-action]").click()
    status = wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#status .thinking"))
    assert "player 1 (ppo) is thinking" in status.text
    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#status .thinking"))


def test_watching_a_tournament_game_shows_the_replayed_scores(server, browser, tmp_path):
    app, url = server
    result = run_tournament(["heuristic", "random"], num_players=2, games=2, seed=4, progress=False)
    games_path, _ = result.write(tmp_path)
    record = load_games(games_path)[1]
    browser.set_window_size(*DESKTOP)
    browser.get(url + "?delay=0&tab=watch")
    browser.find_element(By.ID, "watch-file").send_keys(str(games_path))
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#watch-game option"))
    wait(browser, lambda d: "move 0 of" in d.find_element(By.ID, "watch-position").text)  # the controls shown
    Select(browser.find_element(By.ID, "watch-game")).select_by_value("1")
    Select(browser.find_element(By.ID, "watch-seat")).select_by_value("0")
    browser.find_element(By.ID, "watch-next").click()
    wait(browser, lambda d: "move 1 of" in d.find_element(By.ID, "watch-position").text)
    browser.find_element(By.ID, "watch-last").click()
    moves = len(record["actions"])
    wait(browser, lambda d: f"move {moves} of {moves}" in d.find_element(By.ID, "watch-position").text)
    rows = browser.find_elements(By.CSS_SELECTOR, "#watch-scores tbody tr")
    shown = [(int(r.find_element(By.CSS_SELECTOR, ".vp").text), int(r.find_element(By.CSS_SELECTOR, ".cash").text[1:]))
             for r in rows]
    assert shown == [(row["vp"], row["cash"]) for row in record["scores"]] == \
           [(row["vp"], row["cash"]) for row in replay_game(record).scores()]


def make_screenshot(path: str, seed: int = 11, clicks: int = 14) -> None:
    """A screenshot of a game in progress against the shipped agent at 1280x800 (docs/screenshot.png, shown on docs/play.md)."""
    folder = tempfile.mkdtemp()
    app, url, httpd = start_server(folder)
    driver = start_browser(os.path.join(folder, "profile"))
    try:
        driver.set_window_size(*DESKTOP)
        driver.get(url + f"?delay=0&seed={seed}&players=3&opponents=ppo|heuristic")
        rng = np.random.default_rng(seed)
        for _ in range(clicks):
            wait(driver, ready)
            targets = driver.find_elements(By.CSS_SELECTOR, "#play [data-action]:not([disabled])")
            targets[int(rng.integers(len(targets)))].click()
        wait(driver, ready)
        driver.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.2)
        driver.save_screenshot(path)
    finally:
        driver.quit()
        httpd.shutdown()


if __name__ == "__main__":  # python -m tests.test_web_browser docs/screenshot.png
    import sys

    make_screenshot(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshot.png")
