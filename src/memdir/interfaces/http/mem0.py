"""A mem0-compatible REST surface under ``/api/mem0``: mem0's server routes over memdir.

A program written against mem0's REST server (``POST /memories``, ``POST /search``,
``GET|PUT|DELETE /memories/{id}``, ``GET /memories/{id}/history``, ``GET|DELETE
/memories``) points its base URL at ``http://HOST:PORT/api/mem0`` and sends memdir's
bearer token. What it gets is memdir's: facts kept as marked lines of daily notes,
updates as supersessions, deletes as forgets (kept for audit).

How mem0's notions map (docs/integrations.md, "mem0"):

- **Scope**: ``agent_id``, else ``user_id``, else ``run_id`` names the memdir agent
  workspace the call acts on; ``run_id`` also names the memdir session the added
  messages are recorded in. An agent's token may only name its own agent.
- **Ids**: a memory's id is the id of its first version; memdir gives every update a
  new fact id, and this surface answers with the first one, so ids stay stable across
  updates (any version's id is accepted).
- **Add**: ``infer`` (default true) saves the facts memdir's heuristics find in the user
  messages; ``infer: false`` saves each message as it is (one line each).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from memdir.access import Principal, bind_agent
from memdir.errors import InvalidInputError, NotFoundError
from memdir.facts import SaveOutcome
from memdir.facts.revisions import FactVersion
from memdir.interfaces.http.auth import PRINCIPAL
from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.memory import Memory
from memdir.store.fact_records import Fact

router = APIRouter(prefix="/api/mem0", tags=["mem0"], responses=PROBLEM_RESPONSES)

DELETE_REASON = "deleted through the mem0-compatible API"
MAX_MESSAGES = 200
IdQuery = Annotated[str | None, Query(max_length=64)]
MemoryId = Annotated[str, Path(min_length=1, max_length=128)]


class Mem0Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant", "system"]
    content: str = Field(max_length=20_000)


class _Scoped(BaseModel):
    model_config = ConfigDict(extra="ignore")  # mem0 clients send more (output_format, ...)

    user_id: str | None = Field(None, max_length=64)
    agent_id: str | None = Field(None, max_length=64)
    run_id: str | None = Field(None, max_length=64)


class AddBody(_Scoped):
    messages: list[Mem0Message] | str = Field(
        description="The conversation, or one message as a string (a user message)."
    )
    metadata: dict[str, Any] | None = Field(
        None, description="Only 'category' is kept (the facts' category)."
    )
    infer: bool = Field(True, description="false: save each message as it is.")


class SearchBody(_Scoped):
    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(
        10, ge=1, le=100, validation_alias=AliasChoices("limit", "top_k"), description="How many."
    )
    threshold: float | None = Field(None, ge=0.0, le=1.0, description="Drop lower scores.")
    filters: dict[str, Any] | None = Field(
        None, description="user_id, agent_id and run_id are read from here too."
    )


class UpdateBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(
        min_length=1,
        max_length=2000,
        validation_alias=AliasChoices("text", "data", "memory"),
        description="The memory's new text.",
    )


# -- scope ------------------------------------------------------------------------------


def _ids(scoped: _Scoped) -> dict[str, str]:
    return _query_ids(scoped.user_id, scoped.agent_id, scoped.run_id)


def _query_ids(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str]:
    named = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {key: value for key, value in named.items() if value}


def _from_filters(body: SearchBody) -> dict[str, str]:
    found = _ids(body)
    for key in ("user_id", "agent_id", "run_id"):
        value = (body.filters or {}).get(key)
        if isinstance(value, str) and value and key not in found:
            found[key] = value
    return found


def _agent_of(request: Request, ids: dict[str, str], required: bool = True) -> str | None:
    """The memdir agent a call acts as: agent_id, else user_id, else run_id (bound to what
    the token may act as: an agent's token that names none acts as its own agent)."""
    name = ids.get("agent_id") or ids.get("user_id") or ids.get("run_id")
    principal: Principal = request.scope[PRINCIPAL]
    if name is None and required and principal.is_admin:  # an agent's token names its own
        raise InvalidInputError(
            "pass at least one of user_id, agent_id or run_id: each names a memdir agent "
            "workspace (agent_id first, then user_id, then run_id)"
        )
    memories = request.app.state.memories
    return bind_agent(principal, [name] if name else [], memories.default_agent)


@contextmanager
def _leased(request: Request, agent: str | None) -> Iterator[Memory]:
    with request.app.state.memories.lease(agent) as memory:
        yield memory


def _candidates(request: Request, ids: dict[str, str]) -> list[str | None]:
    """Where a memory id is looked for: the scope named, else (an admin token) the
    server's default workspace and then every agent's."""
    principal: Principal = request.scope[PRINCIPAL]
    if ids or not principal.is_admin:
        return [_agent_of(request, ids, required=False)]
    default = request.app.state.memories.default_agent
    with _leased(request, default) as memory:
        agents = memory.agents()
    return [default, *(agent for agent in agents if agent != default)]


@contextmanager
def _found(
    request: Request, memory_id: str, ids: dict[str, str]
) -> Iterator[tuple[Memory, list[FactVersion]]]:
    """The memory (workspace) holding ``memory_id`` and that fact's chain of versions."""
    for agent in _candidates(request, ids):
        with _leased(request, agent) as memory:
            try:
                chain = memory.fact_history(memory_id)
            except NotFoundError:
                continue
            yield memory, chain
            return
    raise NotFoundError(f"no memory has the id {memory_id!r}")


def _alive(memory_id: str, chain: Sequence[FactVersion]) -> Fact:
    latest = chain[-1].fact
    if latest.forgotten:
        raise NotFoundError(f"memory {memory_id!r} was deleted ({latest.forgotten_reason})")
    return latest


# -- items ------------------------------------------------------------------------------


def _roots(every: dict[str, Fact]) -> dict[str, str]:
    """Each fact id's first version (the id this surface shows)."""
    roots: dict[str, str] = {}
    for fact in every.values():
        root, steps = fact, 0
        while root.supersedes in every and steps <= len(every):
            root, steps = every[root.supersedes], steps + 1
        roots[fact.id] = root.id
    return roots


def _every(memory: Memory) -> tuple[dict[str, Fact], dict[str, str]]:
    """Every fact of the workspace by id, and each one's first version."""
    every = {f.id: f for f in memory.list_facts(include_superseded=True, include_forgotten=True)}
    return every, _roots(every)


def _item(
    fact: Fact, first: Fact, ids: dict[str, str], score: float | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": first.id,
        "memory": fact.text,
        "hash": hashlib.md5(fact.text.encode("utf-8"), usedforsecurity=False).hexdigest(),
        "metadata": {
            "category": fact.category,
            "importance": fact.importance,
            "memdir_id": fact.id,
            "citation": fact.citation,
        },
        "created_at": first.recorded_at.isoformat(),
        "updated_at": None if fact.id == first.id else fact.recorded_at.isoformat(),
        **ids,
    }
    if score is not None:
        item["score"] = score
    return item


def _chain_item(chain: Sequence[FactVersion], ids: dict[str, str]) -> dict[str, Any]:
    return _item(chain[-1].fact, chain[0].fact, ids)


# -- routes -----------------------------------------------------------------------------


@router.post("/memories")
def add_memories(request: Request, body: AddBody) -> dict[str, Any]:
    """Add memories from messages (mem0's ``add``): ``{"results": [{"id", "memory",
    "event": "ADD"|"UPDATE", "previous_memory"?}]}``; a fact memdir knew already is left
    out, as mem0 leaves out ``NONE``."""
    from memdir.curate.heuristics import heuristic_extract
    from memdir.llm import Message

    ids = _ids(body)
    agent = _agent_of(request, ids)
    messages = (
        [Mem0Message(role="user", content=body.messages)]
        if isinstance(body.messages, str)
        else body.messages
    )
    if len(messages) > MAX_MESSAGES:
        raise InvalidInputError(f"send at most {MAX_MESSAGES} messages per call")
    category = (body.metadata or {}).get("category")
    turns = [Message(m.role, m.content) for m in messages]
    if body.infer:
        texts = [fact.text for fact in heuristic_extract(turns)]
    else:
        texts = [" ".join(m.content.split()) for m in messages if m.role != "system"]
    results: list[dict[str, Any]] = []
    with _leased(request, agent) as memory:
        if "run_id" in ids:
            session = memory.session(ids["run_id"])
            for turn in turns:
                session.append(turn)
        outcomes = [memory.save(text, category=category) for text in texts if text]
        roots = _every(memory)[1] if outcomes else {}
        for outcome in outcomes:
            results.extend(_event(outcome, roots))
    return {"results": results}


def _event(outcome: SaveOutcome, roots: dict[str, str]) -> list[dict[str, Any]]:
    fact = outcome.fact
    if fact is None or outcome.action == "none":
        return []
    row: dict[str, Any] = {"id": roots.get(fact.id, fact.id), "memory": fact.text, "event": "ADD"}
    if outcome.superseded is not None:
        row["event"] = "UPDATE"
        row["previous_memory"] = outcome.superseded.text
    return [row]


@router.get("/memories")
def get_all_memories(
    request: Request,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    run_id: IdQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Every current memory of the scope, newest first (mem0's ``get_all``)."""
    ids = _query_ids(user_id, agent_id, run_id)
    with _leased(request, _agent_of(request, ids)) as memory:
        facts = sorted(memory.list_facts(), key=lambda f: f.recorded_at, reverse=True)[:limit]
        every, roots = _every(memory)
    return {"results": [_item(f, every[roots.get(f.id, f.id)], ids) for f in facts]}


@router.post("/search")
def search_memories(request: Request, body: SearchBody) -> dict[str, Any]:
    """The memories that answer ``query``, best first, each with its ``score``."""
    ids = _from_filters(body)
    with _leased(request, _agent_of(request, ids)) as memory:
        found = memory.recall(body.query, limit=body.limit)
        every, roots = _every(memory)
    kept = [r for r in found if body.threshold is None or r.score >= body.threshold]
    return {
        "results": [
            _item(r.fact, every.get(roots.get(r.fact.id, r.fact.id), r.fact), ids, r.score)
            for r in kept
        ]
    }


@router.get("/memories/{memory_id}")
def get_memory(
    request: Request,
    memory_id: MemoryId,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    run_id: IdQuery = None,
) -> dict[str, Any]:
    """One memory by id (any version's id), as it reads now."""
    ids = _query_ids(user_id, agent_id, run_id)
    with _found(request, memory_id, ids) as (_memory, chain):
        _alive(memory_id, chain)
        return _chain_item(chain, ids)


@router.put("/memories/{memory_id}")
def update_memory(
    request: Request,
    memory_id: MemoryId,
    body: UpdateBody,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    run_id: IdQuery = None,
) -> dict[str, Any]:
    """Update a memory: memdir supersedes its current version; the id stays the same."""
    ids = _query_ids(user_id, agent_id, run_id)
    with _found(request, memory_id, ids) as (memory, chain):
        memory.update_fact(_alive(memory_id, chain).id, body.text)
        return {"message": "Memory updated successfully!", "id": chain[0].fact.id}


@router.delete("/memories/{memory_id}")
def delete_memory(
    request: Request,
    memory_id: MemoryId,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    run_id: IdQuery = None,
) -> dict[str, str]:
    """Delete a memory: memdir forgets it (kept, with the reason, for ``as_of`` and audit)."""
    ids = _query_ids(user_id, agent_id, run_id)
    with _found(request, memory_id, ids) as (memory, chain):
        memory.forget(fact_id=_alive(memory_id, chain).id, reason=DELETE_REASON)
    return {"message": "Memory deleted successfully"}


@router.delete("/memories")
def delete_all_memories(
    request: Request,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    run_id: IdQuery = None,
) -> dict[str, str]:
    """Delete every current memory of the scope (each forgotten, kept for audit)."""
    ids = _query_ids(user_id, agent_id, run_id)
    with _leased(request, _agent_of(request, ids)) as memory:
        for fact in memory.list_facts():
            memory.forget(fact_id=fact.id, reason=DELETE_REASON)
    return {"message": "All relevant memories deleted"}


@router.get("/memories/{memory_id}/history")
def memory_history(
    request: Request,
    memory_id: MemoryId,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    run_id: IdQuery = None,
) -> list[dict[str, Any]]:
    """The changes of a memory, oldest first: ADD, each UPDATE (``old_memory`` ->
    ``new_memory``) and a DELETE if it was deleted."""
    ids = _query_ids(user_id, agent_id, run_id)
    with _found(request, memory_id, ids) as (_memory, chain):
        return _history_rows(chain)


def _history_rows(chain: Sequence[FactVersion]) -> list[dict[str, Any]]:
    root = chain[0].fact.id
    rows: list[dict[str, Any]] = []
    previous: Fact | None = None
    for version in chain:
        fact = version.fact
        event = "ADD" if previous is None else "UPDATE"
        rows.append(_row(fact.id, root, previous, fact.text, event, fact.recorded_at.isoformat()))
        previous = fact
    last = chain[-1].fact
    if last.forgotten_at is not None:
        rows.append(_row(f"{last.id}-deleted", root, last, None, "DELETE",
                         last.forgotten_at.isoformat(), deleted=True))  # fmt: skip
    return rows


def _row(
    row_id: str, root: str, old: Fact | None, new: str | None, event: str, at: str,
    deleted: bool = False,
) -> dict[str, Any]:  # fmt: skip
    return {
        "id": row_id,
        "memory_id": root,
        "old_memory": None if old is None else old.text,
        "new_memory": new,
        "event": event,
        "created_at": at,
        "updated_at": None,
        "is_deleted": 1 if deleted else 0,
        "actor_id": None,
        "role": None,
    }
