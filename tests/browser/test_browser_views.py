"""The browser's landing page, its state in the address, and editing from the browser.

A fresh seeded server for this module (tests here change memory): headless chromium
drives the page as a person would, and what the page did is checked through the API.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from support_browser import FACTS_READY, LiveServer

from memdir.interfaces.http.browser import browser_url

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/memdir-browser-views")
WIDTHS = {"wide": 1280, "narrow": 390}


def port_of(server: LiveServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def sign_in(page: Any, server: LiveServer, query: str = "") -> None:
    url = browser_url("127.0.0.1", port_of(server), server.token)
    if query:
        url = url.replace("/#", f"/?{query}#")
    page.goto(url)
    expect(page.get_by_role("tab", name="Search")).to_be_visible()


def search(page: Any, query: str) -> None:
    page.get_by_role("tab", name="Search").click()
    page.get_by_label("Search memory").fill(query)
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#hits .hit").first).to_be_visible()


@pytest.mark.skipif(not FACTS_READY, reason="Memory.save/forget/list_facts are not in the facade")
def test_the_landing_page_shows_recent_notes_and_facts(page: Any, server: LiveServer) -> None:
    sign_in(page, server)
    landing = page.locator("#landing")
    expect(landing).to_be_visible()
    notes = page.locator("#recent-files")
    expect(notes).to_contain_text("memory/2024-05-02.md")
    expect(notes).to_contain_text("MEMORY.md")
    expect(notes).not_to_contain_text("AGENTS.md")  # bootstrap files are not notes
    facts = page.locator("#recent-facts")
    expect(facts).to_contain_text("My cat is now called Luna")
    expect(facts.locator("li.forgotten")).to_contain_text("standup")
    notes.get_by_role("button", name="memory/2024-05-02.md").click()
    expect(page.locator("#file-title")).to_have_text("memory/2024-05-02.md")
    search(page, "staging database port")
    expect(landing).to_be_hidden()


def test_tab_query_agent_and_file_live_in_the_address(page: Any, server: LiveServer) -> None:
    sign_in(page, server)
    search(page, "staging database port")
    assert "q=staging+database+port" in page.url
    assert "token" not in page.url
    page.reload()
    expect(page.get_by_label("Search memory")).to_have_value("staging database port")
    expect(page.locator("#hits .hit").first).to_contain_text("5433")

    citation = page.locator("#hits button.citation").first
    start, end = citation.inner_text().rsplit(":", 1)[1].split("-")
    citation.click()
    expect(page).to_have_url(re.compile(rf"tab=files.*file=memory%2F.*lines={start}-{end}"))
    page.reload()
    expect(page.get_by_role("tab", name="Files")).to_have_attribute("aria-selected", "true")
    block = page.locator("#file-content .md-block.hl").first
    expect(block).to_be_visible()
    first, last = int(block.get_attribute("data-start")), int(block.get_attribute("data-end"))
    assert first <= int(start) <= last
    page.go_back()
    expect(page.get_by_role("tab", name="Search")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_label("Search memory")).to_have_value("staging database port")

    page.get_by_label("Agent").select_option("coder")
    assert "agent=coder" in page.url
    page.get_by_role("tab", name="Facts").click()
    page.reload()
    expect(page.get_by_label("Agent")).to_have_value("coder")
    expect(page.get_by_role("tab", name="Facts")).to_have_attribute("aria-selected", "true")


def test_switching_agent_closes_the_other_workspaces_file(page: Any, server: LiveServer) -> None:
    sign_in(page, server)
    page.get_by_role("tab", name="Files").click()
    page.locator("#file-list").get_by_role("button", name="MEMORY.md").click()
    expect(page.locator("#file-content")).to_contain_text("short answers")
    page.get_by_label("Agent").select_option("coder")
    expect(page.locator("#file-title")).to_have_text("No file open")
    expect(page.locator("#file-content")).to_be_empty()
    expect(page.locator("#file-list")).to_contain_text("2024-05-04.md")
    assert "file=" not in page.url


def test_editing_a_file_shows_the_changes_then_saves(page: Any, server: LiveServer) -> None:
    with server.client() as api:
        api.put("/api/v1/files/notes/drinks.md", json={"content": "# Drinks\n\ntea\nmilk\n"})
    sign_in(page, server, "tab=files&file=notes%2Fdrinks.md")
    expect(page.locator("#file-content h3")).to_have_text("Drinks")  # rendered Markdown
    page.get_by_role("button", name="Edit").click()
    box = page.get_by_label("File text")
    expect(box).to_be_focused()
    box.fill("# Drinks\n\ncoffee\nmilk\n")
    box.press("Control+Enter")  # review, from the keyboard
    diff = page.locator("#edit-diff")
    expect(diff.locator(".diff-row.del")).to_have_text(re.compile("tea"))
    expect(diff.locator(".diff-row.ins")).to_have_text(re.compile("coffee"))
    expect(page.locator("#edit-status")).to_contain_text("1 line added, 1 line removed")
    with server.client() as api:  # nothing written before the save
        assert api.get("/api/v1/files/notes/drinks.md").json()["content"].count("tea") == 1
    page.get_by_role("button", name="Save these changes").click()
    expect(page.locator("#file-status")).to_have_text("Saved notes/drinks.md.")
    expect(page.locator("#edit-form")).to_be_hidden()
    expect(page.locator("#edit-status")).to_be_empty()  # not left at "Saving…"
    expect(page.locator("#file-content")).to_contain_text("coffee")
    with server.client() as api:
        assert api.get("/api/v1/files/notes/drinks.md").json()["content"] == (
            "# Drinks\n\ncoffee\nmilk\n"
        )


def test_a_file_changed_meanwhile_is_not_overwritten(page: Any, server: LiveServer) -> None:
    with server.client() as api:
        api.put("/api/v1/files/notes/race.md", json={"content": "first\n"})
    sign_in(page, server, "tab=files&file=notes%2Frace.md")
    expect(page.locator("#file-content")).to_contain_text("first")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("File text").fill("mine\n")
    page.get_by_role("button", name="Review changes").click()
    with server.client() as api:  # an agent writes while the person reviews
        api.put("/api/v1/files/notes/race.md", json={"content": "the agent's\n"})
    page.get_by_role("button", name="Save these changes").click()
    status = page.locator("#edit-status")
    expect(status).to_contain_text("changed since you opened it")
    expect(status).not_to_contain_text("/api/v1")
    expect(page.get_by_label("File text")).to_have_value("mine\n")  # the person's text is kept
    with server.client() as api:
        assert api.get("/api/v1/files/notes/race.md").json()["content"] == "the agent's\n"
    page.get_by_role("button", name="Load the newer version (drops your changes)").click()
    expect(page.get_by_label("File text")).to_have_value("the agent's\n")


@pytest.mark.skipif(not FACTS_READY, reason="Memory.save/forget/list_facts are not in the facade")
def test_saving_and_forgetting_a_fact(page: Any, server: LiveServer) -> None:
    sign_in(page, server, "tab=facts")
    page.get_by_label("New fact").fill("The office plant is a fern")
    page.get_by_label("as", exact=True).select_option("fact")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#save-fact-status")).to_contain_text("The office plant is a fern")
    fern = page.locator("#facts .fact", has_text="The office plant is a fern")
    expect(fern.locator(".badge.state-current")).to_be_visible()

    fern.get_by_role("button", name="Forget…").click()
    fern.get_by_role("button", name="Forget", exact=True).click()  # no reason: not sent
    expect(fern.locator(".badge.state-current")).to_be_visible()
    fern.get_by_label("Why is it no longer true?").fill("the plant died")
    fern.get_by_role("button", name="Forget", exact=True).click()
    expect(page.locator("#save-fact-status")).to_contain_text("Forgot: The office plant is a fern")
    gone = page.locator("#facts-ended .fact.forgotten", has_text="The office plant is a fern")
    expect(gone.locator(".forgotten-note")).to_contain_text("the plant died")
    with server.client() as api:
        current = api.get("/api/v1/facts").json()["facts"]
    assert all("fern" not in fact["text"] for fact in current)


@pytest.mark.parametrize("width", WIDTHS, ids=list(WIDTHS))
def test_each_view_fits_the_window(browser: Any, server: LiveServer, width: str) -> None:
    """Screenshots of every view (look at them: /tmp/memdir-browser-views/) and no view
    scrolls sideways, at a desktop and a phone width."""
    SHOTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": WIDTHS[width], "height": 900})
    try:
        page = context.new_page()
        sign_in(page, server)
        expect(page.locator("#recent-files li").first).to_be_visible()
        views = {"landing": lambda: None}
        views["search"] = lambda: search(page, "orders shard region")

        def open_breakdown() -> None:
            page.locator("#hits details.why summary").first.click()

        def edit_file() -> None:
            page.locator("#hits button.citation").first.click()
            page.get_by_role("button", name="Edit").click()

        views["breakdown"] = open_breakdown
        views["files"] = edit_file
        views["facts"] = lambda: page.get_by_role("tab", name="Facts").click()
        views["context"] = lambda: page.get_by_role("tab", name="Context").click()
        views["activity"] = lambda: page.get_by_role("tab", name="Activity").click()
        views["why-recalled"] = lambda: page.get_by_role("tab", name="Why recalled").click()
        for name, show in views.items():
            show()
            page.wait_for_timeout(300)
            page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{name} scrolls sideways at {WIDTHS[width]} px"
    finally:
        context.close()
