"""The interactive API docs at /docs, the bearer scheme in OpenAPI, /mcp refusals as problems."""

from __future__ import annotations

import httpx
import pytest
from support_interfaces import LiveServer


def test_docs_are_public_and_load_their_assets_from_the_server(server: LiveServer) -> None:
    page = httpx.get(f"{server.url}/docs")
    assert page.status_code == 200
    assert "swagger-ui" in page.text
    assert "cdn." not in page.text  # offline: no asset from a CDN
    assert '"/openapi.json"' in page.text or "'/openapi.json'" in page.text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert asset in page.text
        served = httpx.get(f"{server.url}/docs/assets/{asset}")
        assert served.status_code == 200
        assert len(served.content) > 10_000


def test_openapi_declares_the_bearer_token(server: LiveServer) -> None:
    spec = httpx.get(f"{server.url}/openapi.json").json()
    assert spec["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The token in $MEMDIR_HOME/api-token (created by the first run).",
    }
    operations = [
        (path, method, op) for path, item in spec["paths"].items() for method, op in item.items()
    ]
    assert operations
    for path, method, op in operations:
        expected = [{"bearer": []}] if path.startswith("/api/") else []
        assert op["security"] == expected, (method, path)
    # and the declaration is true: an /api/ route refuses a request without the token
    assert httpx.get(f"{server.url}/api/v1/agents").status_code == 401
    assert httpx.get(f"{server.url}/health").status_code == 200


@pytest.mark.parametrize(
    ("headers", "status", "says"),
    [
        ({"Host": "evil.example:80"}, 421, "the Host header 'evil.example:80'"),
        ({"Origin": "http://evil.example"}, 403, "the origin 'http://evil.example'"),
        ({"Content-Type": "text/plain"}, 400, "'Content-Type: application/json'"),
    ],
)
def test_mcp_refusals_are_problem_json(
    server: LiveServer, headers: dict[str, str], status: int, says: str
) -> None:
    with server.client() as api:
        sent = {"Content-Type": "application/json", **headers}
        response = api.post("/mcp", headers=sent, content=b'{"jsonrpc": "2.0"}')
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert says in body["detail"]
