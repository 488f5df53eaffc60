"""memdir at the lowest dependency versions pyproject.toml allows, end to end.

scripts/check-minimums (run by scripts/test) installs them into ``.venv-minimums/``:
``core`` is memdir alone, ``server`` memdir[server,postgres], ``frameworks``
memdir[anthropic,langgraph,openai-agents] (camel-ai's adapter is tested in .venv-camel at
the versions its extra resolves to). Every check runs those
environments' own ``memdir`` and ``python`` in subprocesses, with the real local embedding
model; the MCP and HTTP clients are this environment's.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import tomllib
import uuid
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from pgserver_support import TestServer

from live_server import child_env, free_port
from memdir.store.postgres import PostgresStore

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / ".venv-minimums"
FACT = "The deploy window for the billing service is Tuesday 14:00 UTC."
QUERY = "when can we ship billing changes"

pytestmark = pytest.mark.slow


def env_dir(name: str) -> Path:
    path = ENVS / name
    if not (path / "bin" / "memdir").exists():
        pytest.skip(f"{path} is missing: run scripts/check-minimums (scripts/test runs it)")
    return path


def declared(*extras: str) -> list[Requirement]:
    """The requirements pyproject.toml declares: the core ones, or those of ``extras``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = project["dependencies"] if not extras else []
    for extra in extras:
        lines = [*lines, *project["optional-dependencies"][extra]]
    return [Requirement(line) for line in lines]


def installed(env: Path) -> dict[str, Version]:
    """What scripts/check-minimums installed in ``env`` (its ``pip freeze``)."""
    found: dict[str, Version] = {}
    for line in (env / "versions.txt").read_text(encoding="utf-8").splitlines():
        name, sep, version = line.partition("==")
        if sep:
            found[canonicalize_name(name)] = Version(version)
    return found


def env_vars(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A child's environment: ``home`` as MEMDIR_HOME, nothing of this one's Python path."""
    base = {k: v for k, v in child_env().items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    return {**base, "MEMDIR_HOME": str(home), **(extra or {})}


def run(env: Path, home: Path, *args: str, extra_env: dict[str, str] | None = None) -> str:
    """``memdir ARGS`` of ``env`` on ``home``; its stdout. Fails the test on a non-zero exit."""
    result = subprocess.run(
        [str(env / "bin" / "memdir"), *args],
        env=env_vars(home, extra_env),
        capture_output=True, text=True, timeout=180, check=False, cwd=home.parent,
    )  # fmt: skip
    assert result.returncode == 0, f"memdir {' '.join(args)}: {result.stderr[-3000:]}"
    return result.stdout


def save_and_search(env: Path, home: Path, extra_env: dict[str, str] | None = None) -> None:
    """init, save a fact, and find it again by meaning (the real model), with a citation."""
    run(env, home, "init", extra_env=extra_env)
    saved = run(env, home, "save", FACT, extra_env=extra_env)
    citation = re.search(r"written to (memory/\S+\.md:\d+-\d+)", saved)
    assert citation, saved
    found = run(env, home, "search", QUERY, extra_env=extra_env)
    assert citation.group(1) in found, found
    assert "Tuesday 14:00 UTC" in found, found


@pytest.mark.parametrize(
    ("name", "extras"),
    [
        ("core", ()),
        ("server", ("server", "postgres")),
        ("frameworks", ("anthropic", "langgraph", "openai-agents")),
    ],
    ids=["core", "server", "frameworks"],
)
def test_every_declared_minimum_is_what_installs(name: str, extras: tuple[str, ...]) -> None:
    env = env_dir(name)
    versions = installed(env)
    wrong = []
    for requirement in declared(*extras):
        bounds = [s.version for s in requirement.specifier if s.operator in {">=", "=="}]
        lowest = min(map(Version, bounds), default=None)
        got = versions.get(canonicalize_name(requirement.name))
        if lowest is not None and got != lowest:
            wrong.append(f"{requirement} installed as {got}")
    assert not wrong, (
        "these minimums do not install as declared at the lowest resolution; raise each in "
        f"pyproject.toml to the version installed ({env / 'versions.txt'}): {wrong}"
    )


def test_core_minimums_import_save_and_search(tmp_path: Path) -> None:
    env = env_dir("core")
    imported = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import memdir, memdir.memory; print(memdir.__file__)"],
        env=env_vars(tmp_path / "home"),
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert str(env) in imported.stdout  # the environment's memdir, not this checkout's
    # a setting from the environment too: pydantic-settings reads MEMDIR_<SECTION>__<KEY>
    save_and_search(env, tmp_path / "home", {"MEMDIR_SEARCH__MAX_RESULTS": "3"})


def test_core_minimums_name_the_server_extra(tmp_path: Path) -> None:
    env = env_dir("core")
    result = subprocess.run(
        [str(env / "bin" / "memdir"), "mcp"], stdin=subprocess.DEVNULL,
        env=env_vars(tmp_path / "home"),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "pip install 'memdir[server]'" in result.stderr


def test_server_minimums_answer_mcp_over_stdio(tmp_path: Path) -> None:
    env = env_dir("server")
    home = tmp_path / "home"
    save_and_search(env, home)
    params = StdioServerParameters(
        command=str(env / "bin" / "memdir"), args=["mcp"],
        env=env_vars(home), cwd=str(tmp_path),
    )  # fmt: skip

    async def session() -> tuple[list[str], str]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("memory_search", {"query": QUERY})
            return tools, str(result.content[0].text)  # type: ignore[union-attr]

    tools, text = anyio.run(session)
    assert {"memory_search", "memory_save", "memory_get"} <= set(tools)
    assert "Tuesday 14:00 UTC" in text, text


def test_server_minimums_serve_health_and_search(tmp_path: Path) -> None:
    env = env_dir("server")
    home = tmp_path / "home"
    save_and_search(env, home)
    port = free_port()
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(env / "bin" / "memdir"), "serve", "--port", str(port)],
            env=env_vars(home), stdout=log, stderr=log, cwd=tmp_path,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        health = None
        while health is None and time.monotonic() < deadline:
            assert process.poll() is None, log_path.read_text(errors="replace")[-3000:]
            try:
                health = httpx.get(url + "/health", timeout=2)
            except httpx.TransportError:
                time.sleep(0.2)
        assert health is not None, "memdir serve did not answer /health within 60 s"
        assert health.status_code == 200
        assert health.json()["status"] == "ok"
        token = (home / "api-token").read_text(encoding="utf-8").strip()
        search = url + "/api/v1/search"
        assert httpx.get(search, params={"query": QUERY}, timeout=30).status_code == 401
        found = httpx.get(
            search, params={"query": QUERY}, headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )  # fmt: skip
        assert found.status_code == 200, found.text
        assert any("Tuesday 14:00 UTC" in hit["text"] for hit in found.json()["hits"])
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_postgres_minimums_save_and_search(tmp_path: Path, pg_server: TestServer) -> None:
    env = env_dir("server")
    dsn = pg_server.dsn
    schema = f"t_{uuid.uuid4().hex[:12]}"
    settings = {
        "MEMDIR_STORE__BACKEND": "postgres",
        "MEMDIR_STORE__DSN": dsn,
        "MEMDIR_STORE__SCHEMA_NAME": schema,
        "MEMDIR_STORE__POOL_SIZE": "2",  # psycopg_pool's pool too
    }
    try:
        save_and_search(env, tmp_path / "home", settings)
        status = run(env, tmp_path / "home", "index", "status", extra_env=settings)
        assert schema in status, status
    finally:
        PostgresStore.delete(dsn, schema)


def run_script(env: Path, home: Path, name: str, *args: str) -> str:
    """tests/integrations/``name`` (a real agent run with a scripted model) with ``env``'s
    Python; its stdout."""
    script = ROOT / "tests" / "integrations" / name
    result = subprocess.run(
        [str(env / "bin" / "python"), str(script), str(home), *args],
        env=env_vars(home), capture_output=True, text=True, timeout=180, check=False,
        cwd=home.parent,
    )  # fmt: skip
    assert result.returncode == 0, f"{name} {' '.join(args)}: {result.stderr[-3000:]}"
    return result.stdout


def test_framework_minimums_run_real_agents(tmp_path: Path) -> None:
    """LangGraph's agent, the Agents SDK's Runner and Anthropic's tool runner at the lowest
    versions memdir's extras allow, each storing through memdir (the next process reading it
    back is tested at the current versions in tests/integrations)."""
    env = env_dir("frameworks")
    graph = tmp_path / "langgraph"
    saved = [
        json.loads(line)
        for line in run_script(env, graph, "langgraph_agent.py", "save").splitlines()
    ]
    assert {"type": "tool", "content": "saved"} in saved
    notes = list((graph / "workspace" / "memory" / "store").rglob("*.md"))
    assert len(notes) == 1
    assert "allergic to peanuts" in notes[0].read_text()

    agents = tmp_path / "agents"
    first = json.loads(run_script(env, agents, "openai_agents_run.py", "support-42", "first"))
    assert "Lisbon" in first["final_output"]
    transcripts = list((agents / "sessions").rglob("support-42.jsonl"))
    assert len(transcripts) == 1
    assert "4821" in transcripts[0].read_text()

    claude = tmp_path / "claude"
    (claude / "workspace").mkdir(parents=True)
    create = {"command": "create", "path": "/memories/user.md", "file_text": "Green tea.\n"}
    created = json.loads(run_script(env, claude, "anthropic_run.py", json.dumps(create)))
    assert created["result"]["content"] == "File created successfully at: /memories/user.md"
    assert (claude / "workspace" / "memories" / "user.md").read_text() == "Green tea.\n"
