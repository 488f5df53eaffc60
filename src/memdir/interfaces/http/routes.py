"""The ``/api/v1`` routes: each parses, calls one ``Memory`` method and renders JSON.

Handlers are plain ``def``: FastAPI runs them in its worker threads, so the
synchronous core never blocks the event loop. ``?agent=ID`` scopes every call; by the
time a route runs, ``binding.AgentBinding`` has set it to the agent the token may act as.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from memdir.errors import InvalidInputError
from memdir.facts.safety import MAX_REASON_CHARS
from memdir.interfaces.http.binding import visible_agents
from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.memory import Memory
from memdir.tools import (
    MAX_CONTENT_CHARS,
    MemoryRecallArgs,
    MemorySaveArgs,
    Scope,
    SearchOutput,
    anthropic_tool_schemas,
    call_tool,
    iso_moment,
    openai_tool_schemas,
)
from memdir.workspace.revisions import content_sha256

router = APIRouter(prefix="/api/v1", responses=PROBLEM_RESPONSES)

AgentQuery = Annotated[
    str | None,
    Query(description="Agent id; default: the server's agent (or the global workspace)."),
]


def memory_of(request: Request, agent: AgentQuery = None) -> Memory:
    memory: Memory = request.app.state.memories.get(agent)
    return memory


MemoryDep = Annotated[Memory, Depends(memory_of)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


ExpectedSha = Field(
    None,
    description="The sha256 that reading the file returned: the change applies only if the "
    "file still holds that text (409 conflict otherwise).",
)


class WriteBody(_Body):
    content: str = Field(max_length=MAX_CONTENT_CHARS)
    expected_sha256: str | None = ExpectedSha
    create_only: bool = Field(False, description="Only create a new file (409 if it exists).")


class EditBody(_Body):
    old_text: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    new_text: str = Field(max_length=MAX_CONTENT_CHARS)
    replace_all: bool = False
    expected_sha256: str | None = ExpectedSha


# -- search and files ---------------------------------------------------------------


@router.get("/search", tags=["search"])
def search_memory(
    memory: MemoryDep,
    query: Annotated[str, Query(min_length=1, max_length=2000)],
    max_results: Annotated[int, Query(ge=1, le=100)] = 6,
    min_score: Annotated[float | None, Query(ge=0.0, le=2.0)] = None,
    scope: Scope = "agent",
    sync: Annotated[
        bool,
        Query(
            description="Index first what this server wrote since (and everything when the "
            "last full sync is older than index.refresh_seconds); POST /index/sync is the "
            "full sync."
        ),
    ] = True,
    include_history: Annotated[
        bool,
        Query(description="Also lines of superseded or forgotten facts, last, with `retired`."),
    ] = False,
) -> dict[str, Any]:
    """Hybrid search; each hit carries its ``path:start-end`` citation and score breakdown
    (the ``memory_search`` tool's structured result)."""
    results = memory.search(
        query, max_results=max_results, min_score=min_score, scope=scope,
        include_history=include_history, fresh=sync,
    )  # fmt: skip
    return SearchOutput.of(query, results).model_dump(mode="json")


@router.get("/files", tags=["files"])
def list_files(
    memory: MemoryDep, prefix: Annotated[str, Query(max_length=512)] = ""
) -> dict[str, list[str]]:
    """Workspace Markdown files whose path starts with ``prefix``."""
    return {"files": memory.list_files(prefix)}


@router.get("/files/{path:path}", tags=["files"])
def read_file(
    memory: MemoryDep,
    path: str,
    from_line: Annotated[int | None, Query(alias="from", ge=1)] = None,
    lines: Annotated[int | None, Query(ge=1, le=100_000)] = None,
) -> dict[str, Any]:
    """A whole file with the ``sha256`` of its text (send it back as ``expected_sha256``),
    or ``lines`` lines from line ``from`` with line numbers."""
    if from_line is None and lines is None:
        text = memory.read_text(path)
        return {"path": path, "content": text.content, "sha256": text.sha256}
    part: dict[str, Any] = jsonable_encoder(memory.get(path, from_line=from_line, lines=lines))
    return part


@router.put("/files/{path:path}", tags=["files"])
def write_file(memory: MemoryDep, path: str, body: WriteBody) -> dict[str, Any]:
    """Create or replace a file atomically; ``create_only`` or ``expected_sha256``: 409
    conflict when the file exists, or changed since it was read."""
    memory.write_file(
        path, body.content, expected_sha256=body.expected_sha256, create_only=body.create_only
    )
    return {"path": path, "chars": len(body.content), "sha256": content_sha256(body.content)}


@router.patch("/files/{path:path}", tags=["files"])
def edit_file(memory: MemoryDep, path: str, body: EditBody) -> dict[str, Any]:
    """Exact find-and-replace; 409 when ``old_text`` is missing or ambiguous, or the file
    changed since ``expected_sha256`` was read."""
    count = memory.edit_file(
        path, body.old_text, body.new_text, replace_all=body.replace_all,
        expected_sha256=body.expected_sha256,
    )  # fmt: skip
    return {"path": path, "replacements": count}


# -- facts ---------------------------------------------------------------------------


@router.post("/facts", tags=["facts"], status_code=201)
def save_fact(memory: MemoryDep, body: MemorySaveArgs) -> Any:
    """Save a fact to today's daily note and the facts store."""
    return jsonable_encoder(
        memory.save(
            body.content,
            category=body.category,
            importance=body.importance,
            valid_until=body.valid_until,
        )
    )


class RecallQuery(MemoryRecallArgs):
    """The recall arguments as query parameters (``agent`` is read by ``memory_of``)."""

    model_config = ConfigDict(extra="ignore")


@router.get("/facts/recall", tags=["facts"])
def recall_facts(memory: MemoryDep, args: Annotated[RecallQuery, Query()]) -> dict[str, Any]:
    """Facts relevant to ``query`` (``as_of`` for what was true at a moment)."""
    found = memory.recall(args.query, category=args.category, as_of=args.as_of, limit=args.limit)
    return {"query": args.query, "facts": jsonable_encoder(found)}


@router.get("/facts", tags=["facts"])
def list_facts(
    memory: MemoryDep,
    category: Annotated[str | None, Query(max_length=32)] = None,
    as_of: Annotated[
        datetime | None,
        BeforeValidator(iso_moment),
        Query(description="ISO 8601 date or datetime, e.g. 2026-01-31."),
    ] = None,
    include_superseded: bool = False,
) -> dict[str, Any]:
    """All facts, optionally of one category, as of a moment, with superseded ones."""
    found = memory.list_facts(category=category, as_of=as_of, include_superseded=include_superseded)
    return {"facts": jsonable_encoder(found)}


@router.delete("/facts/{fact_id}", tags=["facts"])
def forget_fact(
    memory: MemoryDep,
    fact_id: Annotated[str, Path(min_length=1, max_length=128)],
    reason: Annotated[str, Query(min_length=1, max_length=MAX_REASON_CHARS)],
) -> Any:
    """Retire a fact (it stays queryable with ``as_of``); ``reason`` is recorded."""
    return jsonable_encoder(memory.forget(fact_id=fact_id, reason=reason))


@router.get("/recent", tags=["facts"])
def recent_activity(
    memory: MemoryDep,
    days: Annotated[float, Query(gt=0, le=3650, description="How far back, in days.")] = 7,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many of each.")] = 20,
) -> Any:
    """What changed lately, newest first: files written (``path``, ``modified``,
    ``size_bytes``) and facts saved, superseded or forgotten (``kind``, ``at``, ``fact``)."""
    return jsonable_encoder(memory.recent(days=days, limit=limit))


# -- prompt, context, index -------------------------------------------------------------


SessionKindQuery = Annotated[
    Literal["private", "group", "shared"] | None,
    Query(
        description="private (you and your human), group or shared: the latter two leave "
        "MEMORY.md, the facts and private details out (default: prompt.session_kind)."
    ),
]


class PromptFileBody(_Body):
    enabled: bool | None = Field(None, description="true: inject the file; false: leave it out.")
    sort_order: int | None = Field(
        None, ge=-10_000, le=10_000, description="Lower goes first (AGENTS.md 10, MEMORY.md 60)."
    )


@router.get("/prompt", tags=["prompt"])
def system_prompt(memory: MemoryDep, session_kind: SessionKindQuery = None) -> dict[str, str]:
    """The system prompt assembled from the workspace (BOOTSTRAP.md while the ritual lasts)."""
    return {"prompt": memory.system_prompt(session_kind=session_kind)}


@router.get("/context", tags=["prompt"])
def context_report(memory: MemoryDep, session_kind: SessionKindQuery = None) -> Any:
    """Per-file status (OK/TRUNCATED/MISSING/SKIPPED/DISABLED/EXCLUDED), prompt.toml order
    and sizes of what the prompt carries; recent daily notes; workspace, skills and tools."""
    return jsonable_encoder(memory.context_report(session_kind=session_kind))


@router.get("/prompt/files", tags=["prompt"])
def prompt_files(memory: MemoryDep) -> dict[str, Any]:
    """The files the prompt may carry, in order, with enabled and sort_order (prompt.toml)."""
    return {"files": jsonable_encoder(memory.prompt_files())}


@router.put("/prompt/files/{path:path}", tags=["prompt"])
def set_prompt_file(memory: MemoryDep, path: str, body: PromptFileBody) -> Any:
    """Switch a workspace file into or out of the prompt and/or move it (prompt.toml)."""
    if body.enabled is None and body.sort_order is None:
        raise InvalidInputError("send enabled and/or sort_order in the body")
    return jsonable_encoder(
        memory.set_prompt_file(path, enabled=body.enabled, sort_order=body.sort_order)
    )


@router.get("/ritual", tags=["prompt"])
def ritual_status(memory: MemoryDep) -> dict[str, bool]:
    """Whether the first-run ritual (this workspace's BOOTSTRAP.md) is under way."""
    return {"active": memory.ritual_active}


@router.post("/ritual/finish", tags=["prompt"])
def finish_ritual(memory: MemoryDep) -> dict[str, bool]:
    """End the first-run ritual: delete this workspace's BOOTSTRAP.md (``finished`` false:
    there was none)."""
    return {"finished": memory.finish_ritual()}


@router.get("/index/status", tags=["index"])
def index_status(memory: MemoryDep) -> Any:
    """Files, chunks and vectors in the index, and the embedder it was built with."""
    return jsonable_encoder(memory.index_status())


@router.post("/index/sync", tags=["index"])
def sync_index(memory: MemoryDep, all_agents: bool = False) -> Any:
    """Bring the index up to date with the files (incremental)."""
    return jsonable_encoder(memory.sync(all_agents=all_agents))


@router.get("/agents", tags=["workspace"])
def list_agents(memory: MemoryDep, request: Request) -> dict[str, list[str]]:
    """Ids of the agent workspaces under this home (an agent's token sees its own)."""
    return {"agents": visible_agents(request, memory.agents())}


# -- curation (wired by the curate layer) ------------------------------------------------


def _agent_memory(request: Request, agent: str) -> Memory:
    """The memory of a path's ``{agent}`` part; ``global`` names the global workspace."""
    memory: Memory = request.app.state.memories.get(None if agent == "global" else agent)
    return memory


@router.post("/memory/{agent}/summarize/{conversation}", tags=["curation"])
def summarize_conversation(request: Request, agent: str, conversation: str) -> Any:
    """Curate memory from one conversation transcript (``sessions/<agent>/<id>.jsonl``):
    daily entry, facts and loss-guarded MEMORY.md/USER.md updates; the model when
    configured, heuristics otherwise. ``agent`` may be ``global``."""
    return jsonable_encoder(_agent_memory(request, agent).extract(conversation))


@router.post("/memory/{agent}/emergence", tags=["curation"])
def run_emergence(
    request: Request,
    agent: str,
    dry_run: Annotated[bool, Query(description="Return the diff; write nothing.")] = False,
    days: Annotated[int | None, Query(ge=1, le=365)] = None,
) -> Any:
    """Consolidate recent daily notes into MEMORY.md (loss-guarded); returns the diff."""
    result = _agent_memory(request, agent).consolidate(dry_run=dry_run, days=days)
    return {
        "method": result.method,
        "notes": result.notes,
        "added": result.added,
        "diff": result.diff,
        "written": result.written,
        "error": result.error,
        "proposals": result.proposals,  # under curate.review: for `memdir proposals`
    }


# -- the agent tools ------------------------------------------------------------------------


@router.get("/tools", tags=["tools"])
def tool_schemas(
    fmt: Annotated[Literal["openai", "anthropic"], Query(alias="format")] = "openai",
) -> Any:
    """The memory tools as function-calling schemas."""
    return openai_tool_schemas() if fmt == "openai" else anthropic_tool_schemas()


@router.post("/tools/{name}", tags=["tools"])
def run_tool(
    memory: MemoryDep, name: str, arguments: Annotated[dict[str, Any], Body()]
) -> dict[str, str]:
    """Run one memory tool with a JSON object of arguments; returns its text."""
    return {"tool": name, "result": call_tool(memory, name, arguments)}
