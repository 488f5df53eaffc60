"""Smaller holes a red-team run found, closed through the real interfaces.

REST checks the Host header like ``/mcp`` (DNS rebinding), refuses loose types
(``"importance": true``, ``as_of=0.5``) instead of coercing them, and no
interface accepts a file name with bidi overrides or zero-width characters.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support_reliability import LiveServer, start_server, stop_server

from memdir.errors import InvalidPathError
from memdir.memory import Memory
from memdir.tools import ToolError, call_tool

pytestmark = pytest.mark.slow
DISGUISED = ["memory/invoice\u202edm.exe.md", "memory/a\u200bb.md", "MEMORY\u2066.md", "x\ufeff.md"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = start_server(tmp_path_factory.mktemp("hardening") / "home")
    yield live
    stop_server(live.process)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example"])
def test_rest_refuses_a_foreign_host_header(server: LiveServer, host: str) -> None:
    with server.client() as http:
        for method, path in (("GET", "/health"), ("GET", "/api/v1/files"), ("GET", "/"),
                             ("POST", "/mcp")):  # fmt: skip
            answer = http.request(method, path, headers={"Host": host})
            assert answer.status_code == 421, (method, path, answer.text)
        for good in ("127.0.0.1", "localhost:1234", "[::1]:80"):
            assert http.get("/api/v1/files", headers={"Host": good}).status_code == 200


def test_rest_refuses_loose_types(server: LiveServer) -> None:
    with server.client() as http:
        for body in ({"content": "Tea is nice", "importance": True},
                     {"content": "Tea is nice", "importance": "7"},
                     {"content": "Tea is nice", "importance": 7.5}):  # fmt: skip
            answer = http.post("/api/v1/facts", json=body)
            assert answer.status_code == 422, body
        for value in ("0.5", "1700000000", "yesterday", "2026-13-01"):
            recall = http.get("/api/v1/facts/recall", params={"query": "tea", "as_of": value})
            assert recall.status_code == 422, value
            assert "ISO 8601" in recall.json()["detail"] or value == "2026-13-01"
            listed = http.get("/api/v1/facts", params={"as_of": value})
            assert listed.status_code == 422, value
        ok = http.get("/api/v1/facts/recall", params={"query": "tea", "as_of": "2026-01-31"})
        assert ok.status_code == 200
        saved = http.post("/api/v1/facts", json={"content": "Tea is nice", "importance": 7})
        assert saved.status_code == 201
        assert http.get("/api/v1/facts", params={"as_of": "2026-01-31T09:00:00Z"}).is_success


@pytest.mark.parametrize("path", DISGUISED)
def test_disguised_file_names_are_refused_everywhere(
    server: LiveServer, memory: Memory, path: str
) -> None:
    with server.client() as http:
        put = http.put(f"/api/v1/files/{path}", json={"content": "# x\n"})
        assert put.status_code == 400, put.text
        assert "can disguise" in put.json()["detail"]
        tool = http.post("/api/v1/tools/memory_write_file", json={"path": path, "content": "# x\n"})
        assert tool.status_code == 400
    with pytest.raises(InvalidPathError, match="can disguise"):
        memory.write_file(path, "# x\n")
    with pytest.raises(ToolError, match="can disguise"):
        call_tool(memory, "memory_read_file", {"path": path})
    assert not list(server.home.rglob("*\u202e*"))
