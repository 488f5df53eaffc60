"""The browser on a large home: landing on 2,000 daily notes, the file tree of them, and a
file of 5,000 lines opened and scrolled (rendered and as source).

Figures are printed and written to ``$MEMDIR_TEST_ARTEFACTS/browser/scale.json``, not
asserted: timings depend on the machine (docs/browser.md reports them). The test checks
that everything the figures describe actually appeared.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from support_browser import LiveServer, start_server, stop_server
from test_browser_walk import SHOTS, port_of

from memdir.interfaces.http.browser import browser_url
from memdir.memory import Memory

pytestmark = pytest.mark.slow

NOTES = 2_000
BIG_LINES = 5_000


def seed_many(home: Path) -> None:
    """2,000 daily notes (one per day back from today, dated by mtime) and a 5,000-line file."""
    with Memory.open(home, embedder=None) as memory:
        memory.write_file("MEMORY.md", "# Memory\n\n- The user prefers short answers.\n")
    notes = home / "workspace" / "memory"
    notes.mkdir(parents=True, exist_ok=True)
    today = date.today()
    for back in range(NOTES):
        day = today - timedelta(days=back)
        path = notes / f"{day.isoformat()}.md"
        path.write_text(
            f"# {day.isoformat()}\n\n- Worked on ticket {back} with the billing team.\n"
            f"- Decided to keep retry limit at {back % 7} for service {back % 13}.\n",
            encoding="utf-8",
        )
        stamp = datetime(day.year, day.month, day.day, 18, 0).timestamp()
        os.utime(path, (stamp, stamp))
    lines = []
    for n in range(1, BIG_LINES + 1):
        if n % 50 == 1:
            lines.append(f"## Section {n // 50 + 1}")
        elif n % 10 == 0:
            lines.append("")
        else:
            lines.append(f"- item {n}: **step** with `code {n}` and a citation MEMORY.md:3")
    (home / "workspace" / "notes").mkdir(exist_ok=True)
    (home / "workspace" / "notes" / "big.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def big_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("browser-scale") / "home"
    seed_many(home)
    live = start_server(home)
    try:
        yield live
    finally:
        stop_server(live.process)


SCROLL = """async (selector) => {
  const box = document.querySelector(selector);
  const frames = [];
  let last = performance.now();
  const steps = 120;
  for (let i = 1; i <= steps; i += 1) {
    box.scrollTop = (box.scrollHeight - box.clientHeight) * i / steps;
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const now = performance.now();
    frames.push(now - last);
    last = now;
  }
  // Blocks off screen are laid out when they come near (content-visibility): the height
  // can still grow at the end, so settle at the bottom before judging.
  for (let i = 0; i < 20 && box.scrollTop + box.clientHeight < box.scrollHeight - 2; i += 1) {
    box.scrollTop = box.scrollHeight;
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  frames.sort((a, b) => a - b);
  return {
    frames: frames.length,
    median_ms: frames[Math.floor(frames.length / 2)],
    p95_ms: frames[Math.floor(frames.length * 0.95)],
    max_ms: frames[frames.length - 1],
    over_50ms: frames.filter((f) => f > 50).length,
    at_bottom: box.scrollTop + box.clientHeight >= box.scrollHeight - 2,
  };
}"""


# The switch to numbered source lines: building them and laying them out (reading the
# height forces the layout), in one task.
SWITCH = """() => {
  const start = performance.now();
  document.getElementById("view-source").click();
  void document.getElementById("file-content").scrollHeight;
  return performance.now() - start;
}"""


def frame_figures(measured: dict[str, Any]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in measured.items() if k != "at_bottom"}


def open_big_file(page: Any) -> float:
    """Open notes/big.md from quick-open; milliseconds from Enter to the last line shown."""
    page.keyboard.press("Control+k")
    page.keyboard.type("notes/big")
    start = page.evaluate("performance.now()")
    page.keyboard.press("Enter")
    expect(page.locator("#file-status")).to_have_text(re.compile(rf"^{BIG_LINES} lines"))
    elapsed: float = page.evaluate("performance.now()") - start
    return elapsed


def test_landing_on_two_thousand_notes_and_a_five_thousand_line_file(
    browser: Any, big_server: LiveServer
) -> None:
    figures: dict[str, Any] = {"notes": NOTES, "big_file_lines": BIG_LINES}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        wall = time.perf_counter()
        page.goto(browser_url("127.0.0.1", port_of(big_server), big_server.token))
        expect(page.locator("#recent-files li").first).to_contain_text(date.today().isoformat())
        expect(page.locator("#index-status")).to_contain_text("Index")
        figures["landing_ms"] = round(page.evaluate("performance.now()"))
        figures["landing_wall_ms"] = round((time.perf_counter() - wall) * 1000)

        start = page.evaluate("performance.now()")
        page.get_by_role("tab", name="Files").click()
        newest = page.locator("#file-list details.folder details.folder").first
        expect(newest.locator("summary")).to_contain_text(date.today().strftime("%Y-%m"))
        figures["file_tree_ms"] = round(page.evaluate("performance.now()") - start)
        figures["file_tree_buttons"] = page.locator("#file-list button").count()
        assert figures["file_tree_buttons"] >= NOTES

        figures["big_file_open_rendered_ms"] = round(open_big_file(page))
        expect(page.locator("#file-content h4").first).to_have_text("Section 1")
        rendered = page.evaluate(SCROLL, "#file-content")
        assert rendered["at_bottom"], rendered
        expect(page.locator("#file-content")).to_contain_text(f"item {BIG_LINES - 1}")
        figures["scroll_rendered"] = frame_figures(rendered)

        figures["big_file_source_switch_ms"] = round(page.evaluate(SWITCH))
        expect(page.get_by_role("button", name="Show rendered")).to_be_visible()
        assert page.locator("#file-content .line").count() == BIG_LINES
        source = page.evaluate(SCROLL, "#file-content")
        assert source["at_bottom"], source
        figures["scroll_source"] = frame_figures(source)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "8-big-file.png"))
    finally:
        context.close()
    (SHOTS / "scale.json").write_text(json.dumps(figures, indent=2), encoding="utf-8")
    print(f"\nbrowser scale figures ({SHOTS / 'scale.json'}): {json.dumps(figures)}")
