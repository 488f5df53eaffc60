"""A walk through every view of the browser on a live server, by keyboard where a person
would use it: screenshots of each view are saved as artefacts (the path is printed), and
axe-core checks each view for serious accessibility violations.

Screenshots go to ``$MEMDIR_TEST_ARTEFACTS/browser`` (default: the temp dir's
``memdir-artefacts/browser``). axe-core comes from npm (``scripts/setup-axe``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect
from support_browser import FACTS_READY, LiveServer, start_server, stop_server

from memdir.interfaces.http.browser import browser_url

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / ".axe-env" / "node_modules" / "axe-core" / "axe.min.js"
DEFAULT_ARTEFACTS = Path(tempfile.gettempdir()) / "memdir-artefacts"
ARTEFACTS = Path(os.environ.get("MEMDIR_TEST_ARTEFACTS", DEFAULT_ARTEFACTS))
SHOTS = ARTEFACTS / "browser"

GUIDE = """# Runbook

Deploys go through **staging** first; see memory/2024-05-02.md:2 for the port.

- check the *dashboard*
- roll back with `deploy --undo`
  - then tell the team
- [x] write the runbook

> Pasted: <img src=x onerror="window.__pwned = 'md'">
> [click me](javascript:void0) and [safe](https://example.com/a)

| step | owner |
|------|-------|
| build | ci |
<!-- memdir:fact id=hidden-marker -->
"""


def port_of(server: LiveServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(200)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))}))"
    )
    print(f"axe: {len(found)} violations: {[(v['id'], v['impact']) for v in found]}")
    return [json.dumps(v) for v in found if v["impact"] in ("serious", "critical")]


@pytest.fixture
def walker(browser: Any) -> Any:
    # bypass_csp only so axe-core can be injected; the page's own CSP is checked elsewhere.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_favicon_needs_no_token(server: LiveServer) -> None:
    answer = httpx.get(server.url + "/favicon.ico")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("image/svg+xml")


def test_the_token_link_signs_in_a_tab_showing_the_form(walker: Any, server: LiveServer) -> None:
    page = walker
    page.goto(server.url + "/")
    expect(page.locator("#login")).to_be_visible()
    page.goto(browser_url("127.0.0.1", port_of(server), server.token))  # same document: hashchange
    expect(page.get_by_role("tab", name="Search")).to_be_visible()
    assert "token" not in page.url
    expect(page.get_by_role("link", name="API docs")).to_have_attribute("href", "/docs")


@pytest.mark.skipif(not FACTS_READY, reason="Memory.save/forget/list_facts are not in the facade")
def test_walk_every_view_by_keyboard(walker: Any, server: LiveServer) -> None:
    page = walker
    axe = AXE.exists()
    with server.client() as api:
        api.put("/api/v1/files/notes/runbook.md", json={"content": GUIDE})
    page.goto(browser_url("127.0.0.1", port_of(server), server.token))
    expect(page.locator("#recent-files li").first).to_be_visible()
    problems: dict[str, list[str]] = {}
    print(f"\nbrowser screenshots: {SHOTS}")

    # Landing: recent facts read as their state now, ended ones struck through.
    recent = page.locator("#recent-facts")
    expect(recent.locator("li.superseded s")).to_contain_text("Whiskerino")
    expect(recent.locator("li.forgotten s")).to_contain_text("standup")
    shoot(page, "1-landing")
    if axe:
        problems["landing"] = serious_violations(page)

    # Search from the keyboard: why in words, the raw breakdown folded, bars on a 0-1 scale.
    page.get_by_label("Search memory").fill("staging database port")
    page.get_by_label("Search memory").press("Enter")
    hit = page.locator("#hits .hit").first
    expect(hit.locator(".why-words")).to_contain_text("matched \u2018staging\u2019")
    expect(hit.locator("table.breakdown")).to_be_hidden()
    hit.locator("details.why summary").focus()
    page.keyboard.press("Enter")
    expect(hit.locator("table.breakdown")).to_be_visible()
    rows = hit.locator("table.breakdown tbody tr")
    for i in range(rows.count()):
        row = rows.nth(i)
        value = float(row.locator("td.num").inner_text())
        fill_el = row.locator(".bar-fill")
        if fill_el.count():
            assert 0 <= value <= 1
            style = fill_el.get_attribute("style") or ""
            assert f"width: {round(value * 100)}%" in style, (style, value)
    shoot(page, "2-search")
    if axe:
        problems["search"] = serious_violations(page)

    # Quick-open (Ctrl+K) to the runbook: rendered, marker hidden, citation a link.
    page.keyboard.press("Control+k")
    dialog = page.locator("#quick-open")
    expect(dialog).to_be_visible()
    page.keyboard.type("runbook")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page.locator("#file-title")).to_have_text("notes/runbook.md")
    content = page.locator("#file-content")
    expect(content.locator("h3")).to_have_text("Runbook")
    expect(content.locator("strong")).to_have_text("staging")
    expect(content.locator("ul ul li")).to_have_text("then tell the team")
    expect(content.locator("table th").first).to_have_text("step")
    expect(content).not_to_contain_text("memdir:fact")
    expect(content).to_contain_text('onerror="window.')  # hostile markup stays text
    assert content.locator("img, script").count() == 0
    expect(content).to_contain_text("[click me](javascript:void0)")  # not a link
    assert content.locator("a[href^='javascript']").count() == 0
    expect(content.get_by_role("link", name="safe")).to_have_attribute(
        "href", "https://example.com/a"
    )
    expect(page.locator("#file-list [aria-current='true']")).to_have_text("runbook.md")
    shoot(page, "3-file-rendered")
    if axe:
        problems["file"] = serious_violations(page)
    cite = content.locator("button.cite")
    expect(cite).to_have_text("memory/2024-05-02.md:2")
    cite.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#file-title")).to_have_text("memory/2024-05-02.md")
    expect(content.locator(".hl")).to_contain_text("5433")
    page.go_back()
    expect(page.locator("#file-title")).to_have_text("notes/runbook.md")

    # Free editing by keyboard: Ctrl+Enter reviews, the diff shows, Escape leaves.
    page.get_by_role("button", name="Edit").focus()
    page.keyboard.press("Enter")
    box = page.get_by_label("File text")
    expect(box).to_be_focused()
    box.press("Control+End")
    page.keyboard.type("- a new step\n")
    box.press("Control+Enter")
    expect(page.locator("#edit-diff .diff-row.ins")).to_contain_text("a new step")
    shoot(page, "4-file-edit-review")
    if axe:
        problems["edit"] = serious_violations(page)
    expect(page.get_by_role("button", name="Save these changes")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#file-status")).to_have_text("Saved notes/runbook.md.")
    expect(content).to_contain_text("a new step")

    # Facts: current first, filter, versions.
    page.get_by_role("tab", name="Facts").click()
    current = page.locator("#facts .fact")
    expect(current.first).to_be_visible()
    times = [t for t in current.locator(".validity time").evaluate_all(
        "els => els.map(e => e.getAttribute('datetime'))")]  # fmt: skip
    assert times == sorted(times, reverse=True), times  # newest first
    expect(page.locator("#facts-ended .fact.forgotten .validity")).not_to_contain_text("now")
    page.get_by_label("Filter facts").fill("cat")
    expect(current).to_have_count(1)
    history = current.first.locator("details.fact-history")
    history.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(history.locator("li")).to_have_count(2)
    expect(history.locator("li").first).to_contain_text("Whiskerino")
    shoot(page, "5-facts")
    if axe:
        problems["facts"] = serious_violations(page)
    page.get_by_label("Filter facts").fill("")

    # Context: the prompt as assembled, a file switched off and back from the keyboard.
    page.get_by_role("tab", name="Context").click()
    expect(page.locator("#prompt-text")).to_contain_text("short answers")  # MEMORY.md is in it
    toggle = page.get_by_role("checkbox", name="MEMORY.md")
    toggle.focus()
    page.keyboard.press("Space")
    expect(page.locator("#prompt-text")).not_to_contain_text("short answers")
    expect(page.get_by_role("checkbox", name="MEMORY.md")).not_to_be_checked()
    page.get_by_role("checkbox", name="MEMORY.md").focus()
    page.keyboard.press("Space")
    expect(page.locator("#prompt-text")).to_contain_text("short answers")
    order = page.locator("#context-files label.file-name").all_inner_texts()
    up = page.get_by_role("button", name=f"Move {order[2]} up")
    up.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#context-files label.file-name").nth(1)).to_have_text(order[2])
    expect(page.locator("#context-notes li").first).to_contain_text("memory/")
    shoot(page, "6-context")
    if axe:
        problems["context"] = serious_violations(page)

    # Activity: today's changes, newest first.
    page.get_by_role("tab", name="Activity").click()
    today = page.locator(".activity-day").first
    expect(today.locator("h2")).to_contain_text("Today")
    expect(today).to_contain_text("notes/runbook.md")
    expect(today).to_contain_text("fact forgotten")
    clocks = today.locator(".clock").all_inner_texts()
    assert clocks == sorted(clocks, reverse=True), clocks
    shoot(page, "7-activity")
    if axe:
        problems["activity"] = serious_violations(page)

    # Why recalled: the search above, who asked, its hits in words; a citation opens lines.
    page.get_by_role("tab", name="Activity").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Why recalled")).to_be_focused()
    entry = page.locator("#trace-list .trace-entry", has_text="staging database port").first
    expect(entry.locator(".badge")).to_have_text("searched")
    expect(entry).to_contain_text("through GET /api/v1/search")
    expect(entry.locator(".why-words").first).to_contain_text("matched \u2018staging\u2019")
    expect(entry.locator(".snippet mark").first).to_have_text(re.compile("staging", re.I))
    expect(page.locator("#trace-off")).to_be_hidden()
    shoot(page, "8-why-recalled")
    if axe:
        problems["why-recalled"] = serious_violations(page)
    cited = entry.locator("button.citation").first
    lines = cited.inner_text()
    cited.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#file-title")).to_have_text(lines.rsplit(":", 1)[0])
    expect(page.locator("#file-content .hl").first).to_be_visible()
    assert f"lines={lines.rsplit(':', 1)[1]}" in page.url
    page.get_by_role("tab", name="Search").click()  # a new search shows when it is shown again
    page.get_by_label("Search memory").fill("rollback plan")
    page.get_by_label("Search memory").press("Enter")
    expect(page.locator("#hits .hit").first).to_be_visible()
    page.get_by_role("tab", name="Why recalled").click()
    expect(page.locator("#trace-list .trace-query").first).to_contain_text("rollback plan")

    assert page.evaluate("window.__pwned") is None
    if not axe:
        pytest.skip(f"axe-core is missing ({AXE}): run scripts/setup-axe; views walked")
    serious = {view: found for view, found in problems.items() if found}
    assert not serious, f"serious accessibility violations: {serious}"


def test_quick_open_finds_by_letters_in_order(walker: Any, server: LiveServer) -> None:
    page = walker
    page.goto(browser_url("127.0.0.1", port_of(server), server.token))
    page.get_by_role("button", name=re.compile("Open a file")).click()
    page.keyboard.type("mem.md")  # letters of MEMORY.md in order, not a substring
    expect(page.locator("#quick-open-list button").first).to_have_text("MEMORY.md")
    page.keyboard.press("Enter")
    expect(page.locator("#file-title")).to_have_text("MEMORY.md")
    expect(page.locator("#quick-open")).to_be_hidden()


def test_create_edit_restore_rename_and_delete_a_file(walker: Any, server: LiveServer) -> None:
    page = walker
    page.goto(browser_url("127.0.0.1", port_of(server), server.token) + "")
    page.get_by_role("tab", name="Files").click()
    page.get_by_role("button", name="New file").click()
    page.get_by_label("New file path").fill("notes/plans")
    page.get_by_label("New file path").press("Enter")
    expect(page.locator("#file-title")).to_have_text("notes/plans.md")
    box = page.get_by_label("File text")
    expect(box).to_have_value("# plans\n")  # created, and open for editing
    box.fill("# plans\n\nship on friday\n")
    box.press("Control+Enter")
    page.get_by_role("button", name="Save these changes").click()
    expect(page.locator("#file-content")).to_contain_text("ship on friday")

    page.get_by_role("button", name="Earlier versions").click()
    expect(page.locator("#history-diff .diff-row.ins", has_text="ship on friday")).to_be_visible()
    restore = page.get_by_role("button", name="Restore the previous version")
    expect(restore).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#file-status")).to_contain_text("Restored notes/plans.md")
    expect(page.locator("#file-content")).not_to_contain_text("ship on friday")
    with server.client() as api:
        assert api.get("/api/v1/files/notes/plans.md").json()["content"] == "# plans\n"

    page.get_by_role("button", name="New file").click()  # a name that is taken
    page.get_by_label("New file path").fill("notes/plans.md")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#new-file-status")).to_contain_text("already a file at notes/plans.md")
    page.get_by_role("button", name="Cancel").first.click()

    page.get_by_role("button", name="Rename").click()
    page.get_by_label("New path").fill("notes/roadmap.md")
    page.get_by_label("New path").press("Enter")
    expect(page.locator("#file-title")).to_have_text("notes/roadmap.md")
    expect(page.locator("#file-list")).to_contain_text("roadmap.md")
    expect(page.locator("#file-list")).not_to_contain_text("plans.md")

    page.get_by_role("button", name="Delete", exact=True).click()
    page.get_by_role("button", name="Delete the file").click()
    expect(page.locator("#file-status")).to_contain_text("Deleted notes/roadmap.md")
    expect(page.locator("#file-list")).not_to_contain_text("roadmap.md")
    with server.client() as api:
        assert api.get("/api/v1/files/notes/roadmap.md").status_code == 404


@pytest.mark.skipif(not FACTS_READY, reason="Memory.save/forget/list_facts are not in the facade")
def test_editing_a_fact_saves_a_new_version(walker: Any, server: LiveServer) -> None:
    page = walker
    page.goto(browser_url("127.0.0.1", port_of(server), server.token))
    page.get_by_role("tab", name="Facts").click()
    coffee = page.locator("#facts .fact", has_text="dark roast coffee")
    coffee.get_by_role("button", name="Edit…").click()
    coffee.get_by_label("New text").fill("The user prefers green tea")
    coffee.get_by_label("new category").select_option("preference")
    coffee.get_by_label("New text").press("Enter")
    expect(page.locator("#save-fact-status")).to_contain_text("Updated: The user prefers green tea")
    tea = page.locator("#facts .fact", has_text="green tea")
    expect(tea.locator(".badge.state-current")).to_be_visible()
    tea.locator("details.fact-history summary").click()
    expect(tea.locator("details.fact-history li").first).to_contain_text("dark roast coffee")
    expect(page.locator("#facts-ended .fact", has_text="dark roast coffee")).to_be_visible()


def test_why_recalled_says_how_to_turn_tracing_on(walker: Any, tmp_path: Path) -> None:
    server = start_server(tmp_path / "home")  # no memdir.toml: tracing is off
    try:
        page = walker
        page.goto(browser_url("127.0.0.1", port_of(server), server.token) + "")
        page.get_by_role("tab", name="Why recalled").click()
        off = page.locator("#trace-off")
        expect(off).to_be_visible()
        expect(off).to_contain_text("trace.enabled = true")
        expect(off).to_contain_text("memdir --set trace.enabled=true serve")
        expect(page.locator("#trace-list li")).to_have_count(0)
        shoot(page, "8-why-recalled-off")
        if AXE.exists():
            assert not serious_violations(page)
    finally:
        stop_server(server.process)


def test_new_agent_from_the_picker_then_switches_to_it(walker: Any, server: LiveServer) -> None:
    page = walker
    page.goto(browser_url("127.0.0.1", port_of(server), server.token))
    button = page.get_by_role("button", name="New agent")
    button.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="New agent")
    expect(page.get_by_label("Agent id")).to_be_focused()
    page.keyboard.type("coder")  # seeded already
    page.keyboard.press("Enter")
    expect(dialog.locator("#new-agent-status")).to_contain_text("already an agent called coder")
    page.get_by_label("Agent id").fill("../etc")
    page.keyboard.press("Enter")
    expect(dialog.locator("#new-agent-status")).to_contain_text("lower-case letters")
    page.get_by_label("Agent id").fill("writer")
    page.get_by_label("Display name (optional)").fill("Writer")
    shoot(page, "9-new-agent")
    if AXE.exists():
        assert not serious_violations(page)
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(page.locator("#agent")).to_have_value("writer")
    expect(page.locator("#agent")).to_be_focused()
    assert "agent=writer" in page.url
    page.get_by_role("tab", name="Files").click()
    expect(page.locator("#file-list")).to_contain_text("SOUL.md")
    with server.client() as api:
        assert "writer" in api.get("/api/v1/agents").json()["agents"]
        soul = api.get("/api/v1/files/SOUL.md", params={"agent": "writer"}).json()["content"]
    assert "Writer" in soul
