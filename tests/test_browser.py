"""The companion page in headless Chromium (Debian's `chromium`, driven by Playwright) against a real `tabletop`
server started as a user would start it. Screenshots go to out/screenshots/ for a person to look at.

Without Chromium these tests are skipped on a developer's machine and fail under CI, where `scripts/setup.sh`
installs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.servers import ROOT, TABLETOP, free_port
from vision.table.mat import load_layout

SHOTS = ROOT / "out" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it as root)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


def start(args: list[str], tmp_path: Path, port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A server on `port` (default: a free one), answering; its output appended to a log in tmp_path."""
    port = port or free_port()
    log = (tmp_path / f"server-{port}.log").open("ab")
    proc = subprocess.Popen([*TABLETOP, *args, "--host", "127.0.0.1", "--port", str(port), "--duration", "300"],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server stopped: {(tmp_path / f'server-{port}.log').read_text()[-2000:]}")
        try:
            if httpx.get(url + "/api/state", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise AssertionError("the server did not answer within 60 s")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    assert CHROMIUM is not None, "Debian's chromium is needed (apt-get install chromium)"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                              "--disable-background-networking", "--disable-component-update"])  # fmt: skip
        yield b
        b.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def open_page(browser: object, url: str, width: int = 1100, height: int = 1000) -> object:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    return page


def moves(page: object) -> int:
    return int(page.evaluate("document.body.dataset.moves || '0'"))


def log_texts(page: object) -> list[str]:
    return page.eval_on_selector_all("#log li", "items => items.map(i => i.textContent)")


@pytest.mark.long
def test_demo_page_shows_video_state_announcements_and_takes_a_correction(browser, tmp_path):
    proc, url = start(["demo", "--once"], tmp_path)  # speech on: synthesised by espeak-ng, text on the page
    try:
        page = open_page(browser, url, 1280, 900)
        page.wait_for_selector("#connection.on", timeout=20_000)
        page.wait_for_function("document.getElementById('video').naturalWidth > 0", timeout=30_000)
        page.wait_for_selector("#log li.action", timeout=60_000)
        first = moves(page)
        assert first >= 1
        # the log is numbered: a four-digit number must fit left of its line, not be clipped (issue 19)
        room = page.evaluate(
            """() => { const log = document.getElementById('log'), li = log.querySelector('li');
                const pen = document.createElement('canvas').getContext('2d');
                pen.font = getComputedStyle(li).font;
                return [parseFloat(getComputedStyle(log).paddingLeft), pen.measureText('9999. ').width]; }"""
        )
        assert room[0] >= room[1], f"{room[0]:.0f} px before each line, {room[1]:.0f} px needed"
        page.screenshot(path=str(SHOTS / "demo-playing.png"))
        page.wait_for_function(
            "[...document.querySelectorAll('#log li')].some(li => li.textContent.includes('recorded game has ended'))",
            timeout=120_000,
        )
        assert moves(page) > first, "the state did not follow the recording"
        page.screenshot(path=str(SHOTS / "demo-ended.png"), full_page=True)
        state = httpx.get(url + "/api/state").json()
        last = state["last_step"]
        before = moves(page)
        page.click("#undo")  # "nothing happened" at the tracker's last step
        page.wait_for_function(f"Number(document.body.dataset.moves) === {before - len(last)}", timeout=10_000)
        assert any("Corrected: nothing happened" in t for t in log_texts(page))
        if last:
            page.fill("#entry", " ; ".join(last))  # and back: the player's word, checked by the rules
            page.click("#entry-go")
            page.wait_for_function(f"Number(document.body.dataset.moves) === {before}", timeout=10_000)
        page.fill("#entry", "explore 99")
        page.click("#entry-go")
        page.wait_for_selector("#error:not([hidden])", timeout=10_000)
        assert "does not fit the rules" in page.text_content("#error") or "explore" in page.text_content("#error")
        page.screenshot(path=str(SHOTS / "demo-corrected.png"), full_page=True)
    finally:
        stop(proc)


def test_manual_the_loop_dr_foo_turn_through_the_page(browser, tmp_path):
    proc, url = start(["run", "--game", "the-loop", "--manual", "--no-speech", "--seed", "2"], tmp_path)
    try:
        page = open_page(browser, url, 1100, 1000)
        page.wait_for_selector(".prompt.landing", timeout=20_000)
        assert any("Dr. Foo" in t for t in log_texts(page)), "Dr. Foo's first turn was not announced"
        assert page.locator(".ring .era").count() == 7
        drop = int(re.search(r"(\d+) rift cubes", page.text_content(".prompt.landing")).group(1))
        page.fill("#landing-0", "0")
        page.fill("#landing-1", str(drop))
        page.fill("#landing-2", "0")
        count = len(log_texts(page))
        page.click(".landing-enter")
        page.wait_for_selector("button[data-action='end']", timeout=10_000)
        assert len(log_texts(page)) > count
        page.screenshot(path=str(SHOTS / "the-loop-agents-turn.png"), full_page=True)
        count = len(log_texts(page))
        page.click("button[data-action='end']")  # the agents are done: Dr. Foo's turn is run and announced
        page.wait_for_selector(".prompt.landing", timeout=10_000)
        new = log_texts(page)[: len(log_texts(page)) - count]
        assert any("Dr. Foo" in t for t in new), new
        page.click(".prompt.landing button.secondary")  # simulate the chutes
        page.wait_for_selector("button[data-action='end']", timeout=10_000)
        page.screenshot(path=str(SHOTS / "the-loop-foo-turn.png"), full_page=True)
    finally:
        stop(proc)


def test_manual_loot_roll_fight_with_rolls_through_the_page(browser, tmp_path):
    proc, url = start(["run", "--game", "loot-roll", "--manual", "--no-speech", "--players", "2", "--seed", "1"],
                      tmp_path)  # fmt: skip
    prefer = ["choose fight", "fight", "done", "explore"]
    try:
        page = open_page(browser, url, 1100, 1000)
        page.wait_for_selector("#connection.on", timeout=20_000)
        rolled = 0
        for _ in range(80):
            page.wait_for_timeout(150)
            if page.locator(".prompt.roll").count():
                box = page.locator(".prompt.roll").first
                box.locator("input").fill("15")
                box.locator(".roll-enter").click()
                rolled += 1
                if rolled == 2:
                    break
                continue
            seat = re.match(r"Player (\d+) to act", page.text_content("#waiting") or "")
            assert seat, page.text_content("#waiting")
            if page.input_value("#viewer") != seat.group(1):
                page.select_option("#viewer", seat.group(1))  # pass the phone to the player whose turn it is
                page.wait_for_selector("#actions button", timeout=10_000)
            offered = page.eval_on_selector_all("#actions button.action", "bs => bs.map(b => b.dataset.action)")
            choice = next((a for a in prefer if a in offered), offered[0])
            page.click(f"#actions button[data-action='{choice}']")
        said = log_texts(page)
        assert rolled == 2, "no roll was asked for"
        assert any("wins with" in t for t in said), "the fight's outcome was not announced"
        assert sum("rolls 15" in t for t in said) >= 1
        page.screenshot(path=str(SHOTS / "loot-roll-rolls.png"), full_page=True)
    finally:
        stop(proc)


def test_the_hint_button_answers_for_the_player_whose_view_is_shown(browser, tmp_path):
    """Issue 23: the table view cannot be given a hint in a game of hidden hands (it would show a player's cards);
    viewed as the player to act, the hint names one of that player's actions, which can be taken at once, and a
    move made clears the hint."""
    proc, url = start(["run", "--game", "loot-roll", "--manual", "--no-speech", "--players", "2", "--seed", "1"],
                      tmp_path)  # fmt: skip
    try:
        page = open_page(browser, url, 1100, 1000)
        page.wait_for_selector("#hint-ask:not([hidden])", timeout=20_000)
        page.click("#hint-ask")
        page.wait_for_selector("#error:not([hidden])", timeout=20_000)
        assert "view as" in page.text_content("#error")
        seat = re.match(r"Player (\d+) to act", page.text_content("#waiting") or "").group(1)
        page.select_option("#viewer", seat)
        page.wait_for_selector("#actions button.action", timeout=10_000)
        page.click("#hint-ask")
        page.wait_for_selector("#hint:not([hidden])", timeout=30_000)
        text = page.text_content("#hint")
        said = re.match(rf"Hint for Player {seat}: (.+?) \((.+)\)$", text)
        assert said, text
        offered = page.eval_on_selector_all("#actions button.action", "bs => bs.map(b => b.dataset.action)")
        assert said.group(1) in offered, (said.group(1), offered)
        page.screenshot(path=str(SHOTS / "loot-roll-hint.png"), full_page=True)
        page.click(f"#actions button[data-action='{said.group(1)}']")
        page.wait_for_function("Number(document.body.dataset.moves) >= 1", timeout=10_000)
        page.wait_for_selector("#hint", state="hidden", timeout=10_000)
    finally:
        stop(proc)


def test_an_open_page_reconnects_to_a_restarted_server_and_shows_the_game_it_carries_on(browser, tmp_path):
    """Issue 19: the server restarted (from its journal) while a page is open: the page says it is reconnecting,
    comes back by itself, and shows the game as it was, the entries made before the restart included."""
    journal = tmp_path / "ltl.jsonl"
    port = free_port()

    def serve(args: list[str]) -> subprocess.Popen[bytes]:
        return start(["run", "--game", "loot-the-loop", "--manual", "--no-speech", *args], tmp_path, port)[0]

    proc = serve(["--seed", "3", "--save", str(journal)])
    try:
        page = open_page(browser, f"http://127.0.0.1:{port}", 1100, 900)
        page.wait_for_selector("#connection.on", timeout=20_000)
        page.click("#actions button.action")
        page.wait_for_function("Number(document.body.dataset.moves) === 1", timeout=10_000)
    finally:
        stop(proc)
    page.wait_for_selector("#connection.off", timeout=10_000)
    proc = serve(["--resume", str(journal)])
    try:
        page.wait_for_selector("#connection.on", timeout=20_000)
        page.wait_for_function("Number(document.body.dataset.moves) === 1", timeout=10_000)
        page.click("#actions button.action")
        page.wait_for_function("Number(document.body.dataset.moves) === 2", timeout=10_000)
    finally:
        stop(proc)


def test_the_table_is_set_up_on_the_page_by_four_corners_and_dragged_zones(browser, tmp_path):
    folder = tmp_path / "table"
    proc, url = start(["demo", "--once", "--no-speech", "--table-dir", str(folder)], tmp_path)
    try:
        page = open_page(browser, url, 1280, 1000)
        page.wait_for_function("document.getElementById('video').naturalWidth > 0", timeout=30_000)
        page.click("#table-setup summary")
        page.wait_for_function("document.getElementById('table-canvas').dataset.ready === 'points'", timeout=20_000)
        width, height = page.evaluate(
            "[document.getElementById('table-canvas').width, document.getElementById('table-canvas').height]"
        )
        box = page.locator("#table-canvas").bounding_box()

        def click(points: list[tuple[float, float]]) -> None:
            for x, y in points:
                page.mouse.click(box["x"] + x * box["width"] / width, box["y"] + y * box["height"] / height)

        corners = [
            (0.3 * width, 0.3 * height),
            (0.7 * width, 0.3 * height),
            (0.75 * width, 0.8 * height),
            (0.25 * width, 0.8 * height),
        ]
        click(corners[::-1])  # the wrong way round: refused with the reason, nothing kept
        page.click("#table-set")
        page.wait_for_selector("#error:not([hidden])", timeout=10_000)
        assert "clockwise" in page.text_content("#error")
        assert not (folder / "table-calibration.json").exists()
        page.click("#table-restart")
        page.wait_for_function("document.getElementById('table-canvas').dataset.ready === 'points'", timeout=20_000)
        click(corners)
        page.fill("#table-w", "420")
        page.fill("#table-h", "297")
        page.click("#table-set")
        page.wait_for_selector("#zone-tools:not([hidden])", timeout=10_000)
        page.wait_for_function("document.getElementById('table-canvas').dataset.ready === 'zones'", timeout=10_000)
        status = httpx.get(url + "/api/table").json()
        assert status["calibrated"] and status["size_mm"] == [420, 297]
        view = status["view"]
        box = page.locator("#table-canvas").bounding_box()
        width = page.evaluate("document.getElementById('table-canvas').width")
        scale = box["width"] / width  # page px per view px

        def at(x_mm: float, y_mm: float) -> tuple[float, float]:
            return (box["x"] + (x_mm - view["x0"]) / view["mm_per_px"] * scale,
                    box["y"] + (y_mm - view["y0"]) / view["mm_per_px"] * scale)  # fmt: skip

        page.select_option("#zone-name", "deck")
        page.mouse.move(*at(10, 10))
        page.mouse.down()
        page.mouse.move(*at(100, 150), steps=5)
        page.mouse.move(*at(150, 280), steps=5)
        page.mouse.up()
        assert page.locator("#zone-list li").count() == 1
        page.click("#zones-save")
        page.wait_for_function("document.getElementById('table-files').textContent.includes('table-layout.json')",
                               timeout=10_000)  # fmt: skip
        zones = httpx.get(url + "/api/table").json()["zones"]
        assert [z["name"] for z in zones] == ["deck"]
        x0, y0, x1, y1 = zones[0]["box_mm"]
        assert abs(x0 - 10) < 5 and abs(y0 - 10) < 5 and abs(x1 - 150) < 5 and abs(y1 - 280) < 5
        layout = load_layout(folder / "table-layout.json")
        assert layout.zone_at((80, 140)) == "deck"
        page.screenshot(path=str(SHOTS / "table-setup.png"), full_page=True)
    finally:
        stop(proc)


def test_the_loop_board_is_squared_up_from_a_photo_and_its_eras_drawn_on_the_page(browser, tmp_path):
    import cv2

    from tests.test_board_setup import board_photo
    from vision.board.layout import ERA_CODES, load_board
    from vision.recognise.models import models_dir

    photo, corners = board_photo(8.0)
    cv2.imwrite(str(tmp_path / "board.jpg"), photo)
    folder = tmp_path / "board"
    proc, url = start(["run", "--game", "the-loop", "--manual", "--no-speech", "--board-dir", str(folder)], tmp_path)
    try:
        page = open_page(browser, url, 1280, 1100)
        page.wait_for_selector("#board-setup:not([hidden])", timeout=20_000)
        page.click("#board-setup summary")
        page.set_input_files("#board-file", str(tmp_path / "board.jpg"))
        page.wait_for_function("document.getElementById('board-canvas').dataset.ready === 'corners'", timeout=20_000)

        def clicker() -> object:
            page.locator("#board-canvas").scroll_into_view_if_needed()
            box = page.locator("#board-canvas").bounding_box()
            width, height = page.evaluate(
                "[document.getElementById('board-canvas').width, document.getElementById('board-canvas').height]"
            )

            def click(x: float, y: float) -> None:
                page.mouse.click(box["x"] + x * box["width"] / width, box["y"] + y * box["height"] / height)

            return click, width, height

        click, _, _ = clicker()
        for x, y in corners:
            click(x, y)
        page.click("#board-square")
        page.wait_for_function("document.getElementById('board-canvas').dataset.ready === 'regions'", timeout=20_000)
        page.click("#board-save")  # nothing drawn yet: refused, naming what is missing
        page.wait_for_selector("#error:not([hidden])", timeout=10_000)
        assert "no polygon for" in page.text_content("#error")
        click, width, height = clicker()
        truth = load_board(models_dir() / "the-loop-board")
        for code in ERA_CODES:
            page.select_option("#board-region", f"eras:{code}")
            for fx, fy in truth.eras[code][::6]:
                click(fx * width, fy * height)
            page.click("#board-close")
        page.select_option("#board-region", "missions:med")
        for fx, fy in truth.missions["med"][:3]:
            click(fx * width, fy * height)
        page.click("#board-close")  # three corners: refused
        assert "exactly 4 corners" in page.text_content("#error")
        fx, fy = truth.missions["med"][3]
        click(fx * width, fy * height)
        page.click("#board-close")
        assert page.locator("#board-list li").count() == 8
        page.click("#board-save")
        page.wait_for_function("document.getElementById('board-files').textContent.includes('--board')", timeout=10_000)
        board = load_board(folder)
        assert set(board.eras) == set(ERA_CODES) and set(board.missions) == {"med"}
        for code in ERA_CODES:  # each region where the Era is printed, to within a few mm of a 420 mm board
            assert np.abs(board.eras[code].mean(axis=0) - truth.eras[code][::6].mean(axis=0)).max() < 0.01
        assert np.abs(board.missions["med"] - truth.missions["med"]).max() < 0.01
        page.screenshot(path=str(SHOTS / "the-loop-board-setup.png"), full_page=True)
    finally:
        stop(proc)
