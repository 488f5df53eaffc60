"""Facts by id over REST, against a live server: get, update as a supersession, history."""

from __future__ import annotations

import httpx
import pytest
from support_interfaces import LiveServer
from test_http_api import assert_problem

pytestmark = pytest.mark.slow


def saved(api: httpx.Client, text: str, agent: str | None = None) -> str:
    params = {"agent": agent} if agent else {}
    response = api.post("/api/v1/facts", params=params, json={"content": text})
    assert response.status_code == 201, response.text
    fact_id: str = response.json()["fact"]["id"]
    return fact_id


def test_update_by_id_supersedes_and_history_keeps_every_version(
    server: LiveServer, api: httpx.Client
) -> None:
    first = saved(api, "The build server is called hopper-7")
    got = api.get(f"/api/v1/facts/{first}").json()
    assert (got["id"], got["current"], got["superseded_by"]) == (first, True, None)
    assert got["citation"].startswith("memory/")
    assert got["salience"] > 0

    response = api.put(
        f"/api/v1/facts/{first}", json={"text": "The build server is called lovelace-2"}
    )
    assert response.status_code == 200, response.text
    second = response.json()
    assert second["id"] != first
    assert (second["supersedes"], second["current"], second["category"]) == (
        first, True, got["category"],
    )  # fmt: skip
    third = api.put(
        f"/api/v1/facts/{second['id']}",
        json={"text": "The build server is called turing-3", "category": "context"},
    ).json()
    assert third["category"] == "context"

    old = api.get(f"/api/v1/facts/{first}").json()
    assert old["current"] is False
    assert old["valid_to"] == second["valid_from"]
    assert old["superseded_by"] == second["id"]
    for asked in (first, second["id"], third["id"]):
        history = api.get(f"/api/v1/facts/{asked}/history").json()
        assert [v["id"] for v in history["versions"]] == [first, second["id"], third["id"]]
        assert history["current_id"] == third["id"]
    texts = [v["text"] for v in history["versions"]]
    assert texts[0] == "The build server is called hopper-7"  # nothing deleted
    current = api.get("/api/v1/facts").json()["facts"]
    assert [f["id"] for f in current if "build server" in f["text"]] == [third["id"]]
    note = (server.home / "workspace" / third["citation"].split(":")[0]).read_text()
    assert f"supersedes={second['id']}" in note


def test_updating_a_superseded_fact_is_a_conflict_naming_the_latest(api: httpx.Client) -> None:
    first = saved(api, "The on-call phone is the blue one")
    latest = api.put(f"/api/v1/facts/{first}", json={"text": "The on-call phone is the red one"})
    body = assert_problem(
        api.put(f"/api/v1/facts/{first}", json={"text": "The on-call phone is green"}), 409
    )
    assert latest.json()["id"] in str(body["detail"])


def test_another_agents_fact_is_not_found_and_a_bad_id_names_the_shape(
    api: httpx.Client,
) -> None:
    theirs = saved(api, "Mallory keeps the vault code in a drawer", agent="other")
    assert api.get(f"/api/v1/facts/{theirs}", params={"agent": "other"}).status_code == 200
    for method in ("GET", "PUT"):
        response = api.request(
            method, f"/api/v1/facts/{theirs}", json={"text": "overwritten by a stranger"}
        )
        body = assert_problem(response, 404)
        assert "Mallory" not in response.text
        assert "GET /api/v1/facts/recall" in str(body["detail"])
    assert_problem(api.get(f"/api/v1/facts/{theirs}/history"), 404)
    body = assert_problem(api.get("/api/v1/facts/not-an-id"), 422)
    assert "f-ab12cd34ef" in str(body["detail"])
    unchanged = api.get(f"/api/v1/facts/{theirs}", params={"agent": "other"}).json()
    assert unchanged["current"] is True


def test_recall_route_is_not_taken_for_a_fact_id(api: httpx.Client) -> None:
    saved(api, "Lunch is at noon on Fridays")
    response = api.get("/api/v1/facts/recall", params={"query": "lunch"})
    assert response.status_code == 200
    assert "facts" in response.json()
