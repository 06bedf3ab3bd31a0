"""The page's rows of issue 31 in a real headless Chromium: reloads, gone games, the log, icons, ``hidden``,
contrast, focus, plain words, the end of a game; and the docs' screenshots (start, pay decision, end, Watch).

Screenshots go to a temporary folder, or into docs/ with PACKETROW_SCREENSHOTS=docs (how docs/play.md's were
taken).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flask")
pytest.importorskip("selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

from packetrow_arena.tournament import run_tournament  # noqa: E402
from packetrow_web.sessions import PlaySession  # noqa: E402
from tests.test_web_browser import DESKTOP, ready, start_browser, start_server, wait  # noqa: E402
from tests.test_web_memory import call  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app, url, httpd = start_server(tmp_path_factory.mktemp("saves"))
    yield app, url
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = start_browser(str(tmp_path_factory.mktemp("profile")))
    driver.set_window_size(*DESKTOP)
    yield driver
    driver.quit()


def step(url: str, view: dict, rng, prefer=()) -> dict:
    """One move through the API: the bot's, or the person's (a preferred group if offered, else at random)."""
    if view["current_player"] != view["you"]:
        return call(url, "POST", f"/api/games/{view['id']}/advance", {"move": view["move"]})
    choice = [a for a in view["actions"] if a["group"] in prefer] or view["actions"]
    action = choice[int(rng.integers(len(choice)))]["id"]
    return call(url, "POST", f"/api/games/{view['id']}/act", {"action": action, "move": view["move"]})


def open_game(driver, url: str, key: str) -> None:
    driver.get(f"{url}?delay=0&game={key}")
    wait(driver, lambda d: d.execute_script("return document.body.dataset.game") == key)
    wait(driver, ready)


def game_in_page(driver) -> str:
    return driver.execute_script("return document.body.dataset.game")


# --------------------------------------------------------------------------- no lost games
def test_a_reload_and_a_second_tab_reopen_the_game(server, browser):
    app, url = server
    browser.get(url + "?delay=0")
    wait(browser, ready)
    key = game_in_page(browser)
    assert f"game={key}" in browser.current_url
    browser.find_element(By.CSS_SELECTOR, "#moves [data-action]").click()
    wait(browser, ready)
    moves = len(app.config["SESSIONS"].get(key, PlaySession).game.state.history)
    browser.refresh()
    wait(browser, ready)
    assert game_in_page(browser) == key
    assert len(browser.find_elements(By.CSS_SELECTOR, "#log li.move")) >= 1
    browser.switch_to.new_window("tab")
    try:
        browser.get(f"{url}?delay=0&game={key}")
        wait(browser, ready)
        assert game_in_page(browser) == key
        assert len(app.config["SESSIONS"].get(key, PlaySession).game.state.history) == moves
    finally:
        browser.close()
        browser.switch_to.window(browser.window_handles[0])


def test_a_game_let_go_by_the_server_goes_on_from_its_autosave(server, browser):
    app, url = server
    view = call(url, "POST", "/api/games", {"opponents": ["random"], "seed": 3})
    open_game(browser, url, view["id"])
    app.config["SESSIONS"]._forget(view["id"])  # as after a restart: only the autosave is left
    browser.find_element(By.CSS_SELECTOR, "#moves [data-action]").click()
    wait(browser, lambda d: len(app.config["SESSIONS"].get(view["id"], PlaySession).game.state.history) >= 1)
    assert "no longer" not in browser.find_element(By.ID, "status").text


def test_a_gone_game_says_so_and_offers_to_resume(server, browser):
    app, url = server
    view = call(url, "POST", "/api/games", {"opponents": ["random"], "seed": 4})
    open_game(browser, url, view["id"])
    sessions = app.config["SESSIONS"]
    sessions._forget(view["id"])
    (sessions.save_dir / f"game-{view['id']}.json").unlink()
    browser.find_element(By.CSS_SELECTOR, "#moves [data-action]").click()
    wait(browser, lambda d: d.execute_script("return document.body.dataset.over") == "gone")
    assert "This game is no longer on the server." in browser.find_element(By.ID, "status").text
    assert browser.find_elements(By.CSS_SELECTOR, "#play [data-action]") == []
    browser.find_element(By.ID, "gone-resume").click()
    wait(browser, lambda d: d.find_element(By.ID, "load-dialog").get_attribute("open") is not None)
    browser.get(f"{url}?delay=0&game=AAAAAAAAAAAAAAAA")  # an address whose game never existed
    wait(browser, lambda d: d.execute_script("return document.body.dataset.over") == "gone")


# --------------------------------------------------------------------------- the page's rows
def test_the_log_numbers_moves_and_not_separators(server, browser):
    app, url = server
    rng = np.random.default_rng(2)
    view = call(url, "POST", "/api/games", {"players": 3, "opponents": ["random"], "seed": 8})
    while view["move"] < 14 or view["current_player"] != view["you"]:
        view = step(url, view, rng)
    open_game(browser, url, view["id"])
    rows = browser.find_elements(By.CSS_SELECTOR, "#log li")
    numbers = [r.find_element(By.CSS_SELECTOR, ".num").text for r in rows]
    separators = [r for r in rows if "round" in r.get_attribute("class")]
    assert separators and all(r.find_element(By.CSS_SELECTOR, ".num").text == "" for r in separators)
    shown = [int(n[:-1]) for n in numbers if n]
    assert shown == [n for n in view["log_moves"] if n] and shown == sorted(set(shown))
    assert max(shown) >= 10  # numbers past 9 are shown whole, not cut to their last digit
    assert browser.execute_script("return getComputedStyle(document.getElementById('log')).listStyleType") == "none"
    widths = {r.find_element(By.CSS_SELECTOR, ".num").rect["width"] for r in rows}
    assert len(widths) == 1  # one column for every number


def test_the_hidden_attribute_is_honoured(server, browser):
    app, url = server
    browser.get(url + "?delay=0&tab=watch")
    wait(browser, ready)
    shown = browser.execute_script(
        "return ['play-tools', 'watch-controls', 'play'].map(id => getComputedStyle(document.getElementById(id))"
        ".display)")
    assert shown == ["none", "none", "none"]
    assert not browser.find_element(By.ID, "new-game").is_displayed()


CONTRAST = """
function rgb(text) { const m = text.match(/[\\d.]+/g).map(Number); return m; }
function lum(c) { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
  : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; }
function background(node) {  // the colours behind the text, composited up to the first opaque one
  const layers = [];
  for (let n = node; n; n = n.parentElement) {
    const c = rgb(getComputedStyle(n).backgroundColor);
    const alpha = c.length < 4 ? 1 : c[3];
    if (alpha > 0) layers.push([c[0], c[1], c[2], alpha]);
    if (alpha === 1) break;
  }
  let out = [255, 255, 255];
  for (const [r, g, b, a] of layers.reverse()) {
    out = [r * a + out[0] * (1 - a), g * a + out[1] * (1 - a), b * a + out[2] * (1 - a)];
  }
  return out;
}
const low = [];
for (const node of document.querySelectorAll(arguments[0])) {
  if (!node.offsetParent || node.closest('[disabled]') || node.closest('.card.hidden')) continue;
  const own = [...node.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
  if (!own) continue;
  const a = lum(rgb(getComputedStyle(node).color)), b = lum(background(node));
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  if (ratio < 4.5) low.push([node.className || node.tagName, node.textContent.slice(0, 30), ratio.toFixed(2)]);
}
return low;
"""


def test_text_contrast_is_at_least_4_5_to_1(server, browser):
    app, url = server
    rng = np.random.default_rng(5)
    view = call(url, "POST", "/api/games", {"players": 3, "opponents": ["random"], "seed": 21})
    for _ in range(40):
        view = step(url, view, rng)
    open_game(browser, url, view["id"])
    low = browser.execute_script(CONTRAST, "#play *, header *")
    assert low == [], low
    assert browser.execute_script("return document.querySelectorAll('#boards .card .price').length") > 8


def test_focus_stays_in_the_move_area_after_a_keyboard_move(server, browser):
    app, url = server
    view = call(url, "POST", "/api/games", {"players": 2, "opponents": ["random"], "seed": 6})
    open_game(browser, url, view["id"])
    for _ in range(4):
        button = browser.find_element(By.CSS_SELECTOR, "#moves [data-action]")
        browser.execute_script("arguments[0].focus()", button)
        button.send_keys(Keys.ENTER)
        wait(browser, ready)
        wait(browser, lambda d: d.execute_script(
            "return document.activeElement.closest('#moves') !== null"))


def test_icons_render_without_an_emoji_font(server, browser):
    """Every character beyond ASCII the page shows is in an installed font that is not an emoji font."""
    if not shutil.which("fc-list"):
        pytest.skip("needs fontconfig's fc-list")
    app, url = server
    rng = np.random.default_rng(3)
    view = call(url, "POST", "/api/games", {"players": 2, "opponents": ["random"], "seed": 9})
    while not view["over"]:
        view = step(url, view, rng)
    open_game(browser, url, view["id"])
    text = browser.execute_script("return document.body.innerText + document.title")
    browser.get(url + "?delay=0&tab=watch")
    text += browser.execute_script("return document.body.innerText")
    for char in sorted(set(text) - set(map(chr, range(128)))):
        fonts = subprocess.run(["fc-list", f":charset={ord(char):x}", "family"], capture_output=True, text=True,
                               timeout=30).stdout.splitlines()
        assert [f for f in fonts if "emoji" not in f.lower()], f"{char!r} (U+{ord(char):04X}) needs an emoji font"
    assert browser.find_elements(By.CSS_SELECTOR, "#watch-first svg.icon")


def test_a_lone_pass_comes_with_its_reason_and_no_rule_id_is_shown(server, browser):
    app, url = server
    for seed in range(300):
        rng = np.random.default_rng(seed)
        view = call(url, "POST", "/api/games", {"players": 2, "opponents": ["random"], "seed": seed})
        while not view["over"] and "pass_reason" not in view:
            view = step(url, view, rng)
        if not view["over"]:
            break
    open_game(browser, url, view["id"])
    moves = browser.find_element(By.ID, "moves").text
    assert view["pass_reason"] in moves and "Pass" in moves
    assert not re.search(r"R-[A-Z]+-\d", browser.find_element(By.TAG_NAME, "body").text)


def test_the_end_shows_every_starting_contract_and_aligned_scores(server, browser):
    app, url = server
    for seed in range(40):
        rng = np.random.default_rng(seed)
        view = call(url, "POST", "/api/games", {"players": 3, "opponents": ["random"], "seed": 100 + seed})
        while not view["over"]:
            view = step(url, view, rng)
        if any(p["hidden_cards"] for p in view["players"]):
            break
    hidden = [p["seat"] for p in view["players"] if p["hidden_cards"]]
    assert hidden, "no game ended with a starting contract still held"
    open_game(browser, url, view["id"])
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#players .card.revealed"))
    assert browser.find_elements(By.CSS_SELECTOR, "#players .card.hidden") == []
    for seat in hidden:
        card = browser.find_element(By.CSS_SELECTOR, f"#players .player[data-seat='{seat}'] .card.revealed")
        assert "contract" in card.text.lower() and "starting" in card.text
    # every number's right edge lines up with its column's heading
    heads = browser.find_elements(By.CSS_SELECTOR, "#scores th")
    for row in browser.find_elements(By.CSS_SELECTOR, "#scores tbody tr"):
        cells = row.find_elements(By.TAG_NAME, "td")
        assert len(cells) == len(heads)
        for head, cell in zip(heads[1:], cells[1:]):
            assert abs((head.rect["x"] + head.rect["width"]) - (cell.rect["x"] + cell.rect["width"])) < 1


def test_the_watch_history_is_numbered_once(server, browser, tmp_path):
    app, url = server
    result = run_tournament(["heuristic", "random"], num_players=2, games=1, seed=3, progress=False)
    games_path, _ = result.write(tmp_path)
    browser.get(url + "?delay=0&tab=watch")
    browser.find_element(By.ID, "watch-file").send_keys(str(games_path))
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#watch-game option"))
    wait(browser, lambda d: "move 0 of" in d.find_element(By.ID, "watch-position").text)  # the controls shown
    for _ in range(12):
        browser.find_element(By.ID, "watch-next").click()
    wait(browser, lambda d: "move 12 of" in d.find_element(By.ID, "watch-position").text)
    rows = browser.find_elements(By.CSS_SELECTOR, "#watch-history li")
    assert [r.find_element(By.CSS_SELECTOR, ".num").text for r in rows] == [f"{m}." for m in range(1, 13)]
    assert all(r.find_element(By.CSS_SELECTOR, ".line").text.startswith("round ") for r in rows)


# --------------------------------------------------------------------------- the docs' screenshots
def screenshot_folder(tmp_path) -> Path:
    return DOCS if os.environ.get("PACKETROW_SCREENSHOTS") == "docs" else tmp_path


def test_screenshots_of_a_whole_game_and_of_watch(server, browser, tmp_path):
    """Start, a pay decision (played by clicking an option), the end, and Watch; the PNGs of docs/play.md."""
    app, url = server
    folder = screenshot_folder(tmp_path)
    for seed in range(80):  # a deal where the person meets a choice of payments
        rng = np.random.default_rng(seed)
        start = view = call(url, "POST", "/api/games", {"players": 2, "opponents": ["heuristic"], "seed": seed})
        while not view["over"] and not any(a["group"] == "pay" for a in view["actions"]):
            view = step(url, view, rng, prefer=("contract", "ship"))
        if not view["over"] and len([a for a in view["actions"] if a["group"] == "pay"]) >= 2:
            break
    shots = {}
    pay_key = view["id"]
    fresh = call(url, "POST", "/api/games", {"players": 2, "opponents": ["heuristic"], "seed": seed})
    open_game(browser, url, fresh["id"])  # the start: a new game of the same deal
    assert fresh["boards"] == start["boards"]
    shots["play-start.png"] = browser.get_screenshot_as_png()
    open_game(browser, url, pay_key)
    assert browser.find_elements(By.CSS_SELECTOR, "#moves .pay-option")
    assert "which cards to discard" in browser.find_element(By.ID, "moves").text
    assert not re.search(r"R-[A-Z]+-\d", browser.find_element(By.ID, "moves").text)
    shots["play-pay.png"] = browser.get_screenshot_as_png()
    browser.find_elements(By.CSS_SELECTOR, "#moves .pay-option")[-1].click()
    wait(browser, ready)
    view = call(url, "GET", f"/api/games/{pay_key}")
    assert not any(a["group"] == "pay" for a in view["actions"])
    while not view["over"]:
        view = step(url, view, rng)
    open_game(browser, url, pay_key)
    wait(browser, lambda d: d.execute_script("return document.body.dataset.over") == "yes")
    browser.find_element(By.ID, "scores").location_once_scrolled_into_view
    shots["play-end.png"] = browser.get_screenshot_as_png()
    result = run_tournament(["ppo", "heuristic"], num_players=2, games=1, seed=7, progress=False)
    games_path, _ = result.write(tmp_path)
    browser.get(url + "?delay=0&tab=watch")
    browser.find_element(By.ID, "watch-file").send_keys(str(games_path))
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#watch-game option"))
    wait(browser, lambda d: "move 0 of" in d.find_element(By.ID, "watch-position").text)  # the controls shown
    for _ in range(30):
        browser.find_element(By.ID, "watch-next").click()
    wait(browser, lambda d: "move 30 of" in d.find_element(By.ID, "watch-position").text)
    shots["watch.png"] = browser.get_screenshot_as_png()
    for name, png in shots.items():
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, name
        (folder / name).write_bytes(png)
