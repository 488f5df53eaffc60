"""The memory browser in headless chromium against a live server with real notes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect
from support_browser import FACTS_READY, HOSTILE_IMG, HOSTILE_SCRIPT, LiveServer

from memdir.access import AccessTokens
from memdir.interfaces.http.browser import browser_url

pytestmark = pytest.mark.slow

SCREENSHOT = "/tmp/memdir-browser.png"


def sign_in_with_form(page: Any, server: LiveServer, token: str | None = None) -> None:
    page.goto(server.url + "/")
    expect(page.get_by_label("API token")).to_be_visible()
    page.get_by_label("API token").fill(token or server.token)
    page.get_by_role("button", name="Connect").click()
    expect(page.get_by_role("tab", name="Search")).to_be_visible()


def search(page: Any, query: str) -> None:
    page.get_by_role("tab", name="Search").click()
    page.get_by_label("Search memory").fill(query)
    page.get_by_role("button", name="Search", exact=True).click()


def test_token_form_search_breakdown_and_citation_opens_highlighted_lines(
    page: Any, server: LiveServer
) -> None:
    sign_in_with_form(page, server)
    search(page, "shard orders region")

    hit = page.locator("#hits .hit").first
    citation = hit.locator("button.citation")
    expect(citation).to_have_text(re.compile(r"^memory/2024-05-02\.md:\d+-\d+$"))
    expect(hit.locator(".score")).to_contain_text(re.compile(r"score \d"))
    expect(hit.locator(".snippet")).to_contain_text("Decided to shard the orders table by region.")
    marked = {text.lower() for text in hit.locator(".snippet mark").all_inner_texts()}
    assert {"shard", "orders", "region"} <= marked, marked  # the query's words stand out
    breakdown = hit.locator("table.breakdown")
    expect(breakdown).to_be_hidden()  # folded: two hits no longer fill a screen
    hit.locator("details.why summary").click()
    expect(breakdown).to_be_visible()
    signals = hit.locator("table.breakdown tbody th").all_inner_texts()
    assert {"bm25", "vector", "final"} <= set(signals), signals

    start, end = map(int, citation.inner_text().rsplit(":", 1)[1].split("-"))
    citation.click()
    expect(page.get_by_role("tab", name="Files")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#file-title")).to_have_text("memory/2024-05-02.md")
    block = page.locator("#file-content .md-block.hl")  # rendered: the blocks holding the lines
    expect(block.first).to_be_visible()
    assert int(block.first.get_attribute("data-start")) <= start
    assert int(block.last.get_attribute("data-end")) >= end
    expect(page.locator("#file-content")).to_contain_text("Decided to shard the orders table")
    page.get_by_role("button", name="Show source").click()  # the exact lines, numbered
    highlighted = page.locator("#file-content .line.hl")
    expect(highlighted).to_have_count(end - start + 1)
    expect(highlighted.first).to_have_attribute("data-line", str(start))
    page.get_by_role("button", name="Show rendered").click()
    expect(page.locator("#file-list")).to_contain_text("MEMORY.md")
    assert page.evaluate("localStorage.getItem('memdir.token')") == server.token


def test_fragment_token_is_taken_and_dropped_and_context_report_has_bars(
    page: Any, server: LiveServer
) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    page.goto(browser_url("127.0.0.1", port, server.token))
    expect(page.get_by_role("tab", name="Search")).to_be_visible()
    assert "token" not in page.url

    page.get_by_role("tab", name="Context").click()
    agents = page.locator("#context-files li", has_text="AGENTS.md")
    expect(agents.locator(".badge")).to_have_text("TRUNCATED")
    meter = agents.get_by_role("meter")
    expect(meter).to_have_attribute("aria-valuenow", re.compile(r"^\d{4,}$"))
    assert int(meter.get_attribute("aria-valuenow")) <= int(meter.get_attribute("aria-valuemax"))
    fill_width = agents.locator(".meter-fill").bounding_box()["width"]
    assert fill_width > 0.8 * meter.bounding_box()["width"]

    memory_row = page.locator("#context-files li", has_text="MEMORY.md")
    expect(memory_row.locator(".badge")).to_have_text("OK")
    expect(page.locator("#context-files li", has_text="SOUL.md").locator(".badge")).to_have_text(
        "MISSING"
    )
    expect(page.locator("#context-summary")).to_contain_text("The system prompt is")
    page.screenshot(path=SCREENSHOT, full_page=True)


def test_wrong_token_is_refused_with_a_message(page: Any, server: LiveServer) -> None:
    page.goto(server.url + "/#token=not-the-right-token-at-all")
    expect(page.locator("#login-error")).to_contain_text("refused")
    expect(page.locator("#workspace")).to_be_hidden()


def test_agent_selector_scopes_search_and_files(page: Any, server: LiveServer) -> None:
    sign_in_with_form(page, server)
    search(page, "zebrafish tooling")
    expect(page.locator("#search-status")).not_to_have_text(re.compile(r"^$|Searching"))
    expect(page.locator("#hits .hit", has_text="zebrafish")).to_have_count(0)

    page.get_by_label("Agent").select_option("coder")
    expect(page.locator("#hits .hit").first).to_contain_text("zebrafish")
    expect(page.locator("#hits .hit .source").first).to_have_text("agent:coder")
    page.get_by_role("tab", name="Files").click()
    expect(page.locator("#file-list")).to_contain_text("2024-05-04.md")
    expect(page.locator("#file-list")).not_to_contain_text("memory/2024-05-02.md")


def test_an_agents_token_signs_in_to_that_agents_workspace_only(
    page: Any, server: LiveServer
) -> None:
    token, _ = AccessTokens(server.home).create("coder", "browser test")
    sign_in_with_form(page, server, token)
    expect(page.locator("#agent option")).to_have_text(["coder (this token's agent)"])
    search(page, "zebrafish tooling")
    expect(page.locator("#hits .hit").first).to_contain_text("zebrafish")
    page.get_by_role("tab", name="Files").click()
    expect(page.locator("#file-list")).to_contain_text("2024-05-04.md")
    assert page.evaluate("localStorage.getItem('memdir.token')") == token
    expect(page.get_by_role("button", name="New agent")).to_be_hidden()  # the admin's only
    page.get_by_role("tab", name="Why recalled").click()  # this agent's searches, no other's
    queries = page.locator("#trace-list .trace-query")
    expect(queries.first).to_contain_text("zebrafish tooling")
    assert all("zebrafish" in text for text in queries.all_inner_texts())


def test_memory_content_with_markup_is_shown_as_text_not_run(page: Any, server: LiveServer) -> None:
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    sign_in_with_form(page, server)
    search(page, "quarantine marker pasted")

    snippet = page.locator("#hits .snippet", has_text="quarantine")
    expect(snippet).to_contain_text(HOSTILE_SCRIPT)
    expect(snippet).to_contain_text(HOSTILE_IMG)
    assert page.locator("#hits img, #hits script").count() == 0

    page.locator("#hits button.citation", has_text="2024-05-03").click()
    expect(page.locator("#file-content")).to_contain_text("onerror=")  # rendered, as text
    assert page.locator("#file-content img, #file-content script").count() == 0
    page.get_by_role("button", name="Show source").click()
    expect(page.locator("#file-content")).to_contain_text(HOSTILE_IMG)
    assert page.locator("#file-content img, #file-content script").count() == 0
    page.get_by_role("button", name="Show rendered").click()
    page.wait_for_timeout(300)  # give a stray onerror handler time to fire
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []


def test_narrow_window_has_no_horizontal_scroll(browser: Any, server: LiveServer) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto(browser_url("127.0.0.1", int(server.url.rsplit(":", 1)[1]), server.token))
        search(page, "staging database port")
        expect(page.locator("#hits .hit").first).to_be_visible()
        page.locator("#hits button.citation").first.click()
        expect(page.locator("#file-content .hl").first).to_be_visible()
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0
    finally:
        context.close()


def test_tabs_move_with_the_arrow_keys(page: Any, server: LiveServer) -> None:
    sign_in_with_form(page, server)
    page.get_by_role("tab", name="Search").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Files")).to_be_focused()
    expect(page.get_by_role("tabpanel", name="Files")).to_be_visible()
    page.keyboard.press("End")
    expect(page.get_by_role("tab", name="Why recalled")).to_have_attribute("aria-selected", "true")


@pytest.mark.skipif(not FACTS_READY, reason="Memory.save/forget/list_facts are not in the facade")
def test_facts_timeline_strikes_superseded_links_successor_and_marks_forgotten(
    page: Any, server: LiveServer
) -> None:
    ids = server.fact_ids
    sign_in_with_form(page, server)
    page.get_by_role("tab", name="Facts").click()

    old = page.locator(f"[id='fact-{ids['old_cat']}']")
    expect(old.locator("del.fact-text")).to_have_text("My cat's name is Whiskerino")
    expect(old.locator(".successor")).to_contain_text("→ superseded by My cat is now called Luna")
    expect(old.locator(".validity time")).to_have_count(2)
    new = page.locator(f"[id='fact-{ids['new_cat']}']")
    expect(new.locator(".fact-text")).to_have_js_property("tagName", "SPAN")
    expect(new.locator(".validity")).to_contain_text("true since")
    old.locator(".successor button").click()
    expect(new).to_be_focused()

    standup = page.locator(f"[id='fact-{ids['standup']}']")
    expect(standup.locator(".badge.state-forgotten")).to_have_text("ended: forgotten")
    expect(standup.locator(".validity")).to_contain_text("until")  # ended, never "-> now"
    expect(standup.locator(".validity")).not_to_contain_text("now")
    expect(standup.locator(".forgotten-note")).to_contain_text("the standup was cancelled")

    page.get_by_label("Category", exact=True).select_option("preference")
    expect(page.locator("#facts .fact")).to_have_count(1)
    expect(page.locator("#facts .fact")).to_contain_text("dark roast coffee")

    page.get_by_label("Category", exact=True).select_option("")
    new.locator("button.source-link").click()
    expect(page.locator("#file-content .hl")).to_contain_text("My cat is now called Luna")
