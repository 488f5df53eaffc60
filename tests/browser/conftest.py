"""Fixtures of the browser tests: one seeded live server and one headless chromium per module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    FACTS_READY,
    LiveServer,
    chromium_missing,
    seed_home,
    start_server,
    stop_server,
)


def save_facts(server: LiveServer) -> dict[str, str]:
    """Facts with a supersession and a forget; returns their ids by a short name."""
    ids: dict[str, str] = {}
    with server.client() as api:
        for name, content, category in [
            ("old_cat", "My cat's name is Whiskerino", "fact"),
            ("new_cat", "My cat is now called Luna", "fact"),
            ("coffee", "The user prefers dark roast coffee", "preference"),
            ("standup", "The team standup is at 9:30 every weekday", "context"),
        ]:
            response = api.post("/api/v1/facts", json={"content": content, "category": category})
            assert response.status_code == 201, response.text
            ids[name] = response.json()["fact"]["id"]
        forgotten = api.delete(
            f"/api/v1/facts/{ids['standup']}", params={"reason": "the standup was cancelled"}
        )
        assert forgotten.status_code == 200, forgotten.text
    return ids


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("browser") / "home"
    seed_home(home)
    (home / "memdir.toml").write_text("[trace]\nenabled = true\n")  # the Why recalled view
    live = start_server(home)
    try:
        if FACTS_READY:
            live.fact_ids = save_facts(live)
        # The server may seed the bootstrap templates on start: take one away so the
        # context report has a MISSING file to show.
        (home / "workspace" / "SOUL.md").unlink(missing_ok=True)
        yield live
    finally:
        stop_server(live.process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = chromium_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.errors = errors
    yield opened
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
