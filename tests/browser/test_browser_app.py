"""The browser's server side: its URL, the public page and assets, the facts timeline route."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from support_browser import FACTS_READY

from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError
from memdir.facts import Fact
from memdir.interfaces.http import create_app
from memdir.interfaces.http.browser import STATIC_DIR, browser_url
from memdir.memory import Memory

TOKEN = "browser-test-token-0123456789abcdef"
needs_facts = pytest.mark.skipif(
    not FACTS_READY, reason="Memory.save/forget/list_facts are not in the facade yet"
)


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    def open_memory(agent: str | None) -> Memory:
        return Memory.open(home, agent, embedder=HashEmbedder())

    app = create_app(home, token=TOKEN, open_memory=open_memory)
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


# -- browser_url ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "http://127.0.0.1:8765/#token=abc-DEF_123"),
        ("localhost", "http://localhost:8765/#token=abc-DEF_123"),
        ("0.0.0.0", "http://127.0.0.1:8765/#token=abc-DEF_123"),
        ("::", "http://[::1]:8765/#token=abc-DEF_123"),
        ("::1", "http://[::1]:8765/#token=abc-DEF_123"),
        ("memory.example", "http://memory.example:8765/#token=abc-DEF_123"),
    ],
)
def test_browser_url_puts_the_token_in_the_fragment(host: str, expected: str) -> None:
    assert browser_url(host, 8765, "abc-DEF_123") == expected


def test_browser_url_quotes_odd_tokens() -> None:
    assert browser_url("127.0.0.1", 1, "a b&c=d#e").endswith("/#token=a%20b%26c%3Dd%23e")


@pytest.mark.parametrize(("port", "token"), [(0, "t"), (65536, "t"), (True, "t"), (80, "")])
def test_browser_url_refuses_a_bad_port_or_empty_token(port: int, token: str) -> None:
    with pytest.raises(InvalidInputError, match=r"port|token"):
        browser_url("127.0.0.1", port, token)


# -- the page and its assets ------------------------------------------------------------------


def test_page_and_assets_need_no_token_and_carry_a_strict_csp(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/static/app.js">' in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text):
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert "content-security-policy" in response.headers


def test_every_module_the_page_imports_is_served(client: TestClient) -> None:
    for module in STATIC_DIR.glob("*.js"):
        for imported in re.findall(r'from "\./([\w.]+)"', module.read_text(encoding="utf-8")):
            response = client.get(f"/static/{imported}")
            assert response.status_code == 200, f"{module.name} imports {imported}"
            assert "javascript" in response.headers["content-type"]


def test_the_api_still_needs_the_token(client: TestClient) -> None:
    assert client.get("/api/v1/agents").status_code == 401
    assert client.get("/api/v1/facts/timeline").status_code == 401
    assert client.post("/", json={}).status_code == 401  # only GET/HEAD bypass the auth
    assert client.get("/api/v1/agents", headers=auth()).status_code == 200


@pytest.mark.parametrize(
    "path", ["/static/../app.py", "/static/%2e%2e/app.py", "/static/missing.js", "/static/"]
)
def test_static_serves_nothing_outside_its_folder(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code in (401, 404)
    assert "create_app" not in response.text


def test_page_scripts_never_parse_strings_as_html() -> None:
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(")
    for source in STATIC_DIR.glob("*.js"):
        assert not sinks.search(source.read_text(encoding="utf-8")), source.name
    assert not re.search(r"<script>|\son\w+=", (STATIC_DIR / "index.html").read_text())


# -- the facts timeline ------------------------------------------------------------------------


def save(memory: Memory, text: str, category: str) -> Fact:
    fact = memory.save(text, category=category).fact
    assert fact is not None, f"{text!r} was not saved as a new fact"
    return fact


@needs_facts
def test_timeline_lists_superseded_and_forgotten_facts_with_links(
    client: TestClient, home: Path
) -> None:
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        old, new, tea, gone = (
            save(memory, text, category)
            for text, category in [
                ("My cat's name is Whiskerino", "fact"),
                ("My cat is now called Luna", "fact"),
                ("The user prefers green tea", "preference"),
                ("The team standup is at 9:30", "context"),
            ]
        )
        memory.forget(gone.id, reason="standup cancelled")

    body = client.get("/api/v1/facts/timeline", headers=auth()).json()
    rows = {row["id"]: row for row in body["facts"]}
    assert [row["id"] for row in body["facts"]] == [old.id, new.id, tea.id, gone.id]
    assert rows[old.id]["state"] == "superseded"
    assert rows[old.id]["superseded_by"] == new.id
    assert rows[old.id]["valid_to"] is not None
    assert rows[new.id]["state"] == "current"
    assert rows[new.id]["supersedes"] == old.id
    assert rows[gone.id]["state"] == "forgotten"
    assert rows[gone.id]["forgotten_reason"] == "standup cancelled"
    assert body["categories"] == ["context", "fact", "preference"]

    only = client.get("/api/v1/facts/timeline", params={"category": "preference"}, headers=auth())
    assert [row["id"] for row in only.json()["facts"]] == [tea.id]
    assert only.json()["categories"] == ["context", "fact", "preference"]


@needs_facts
def test_timeline_is_scoped_to_the_agent(client: TestClient, home: Path) -> None:
    with Memory.open(home, "coder", embedder=HashEmbedder()) as coder:
        coder.save("The build uses zebrafish tooling", category="fact")
    scoped = client.get("/api/v1/facts/timeline", params={"agent": "coder"}, headers=auth())
    assert [row["text"] for row in scoped.json()["facts"]] == ["The build uses zebrafish tooling"]
    assert client.get("/api/v1/facts/timeline", headers=auth()).json()["facts"] == []
