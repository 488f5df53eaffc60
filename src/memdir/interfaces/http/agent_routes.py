"""``POST /api/v1/agents``: create an agent's workspace, as ``memdir --agent ID init`` does.

Admin only: an agent's token acts on its own workspace and may not make others. The
workspace is seeded by ``Memory.init`` (the code path of the CLI's ``init``), through the
server's own cache of open workspaces, so the new agent is ready for ``?agent=ID``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from memdir.access import Principal, require_admin
from memdir.errors import ConflictError
from memdir.home import validate_agent_id
from memdir.interfaces.http.auth import PRINCIPAL
from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.interfaces.http.routes import MemoryDep

router = APIRouter(prefix="/api/v1", tags=["workspace"], responses=PROBLEM_RESPONSES)


class NewAgent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str = Field(
        min_length=1,
        max_length=200,
        description="The agent id: 1-64 lower-case letters, digits, '-' or '_' (e.g. coder).",
    )
    name: str | None = Field(None, max_length=200, description="Display name; default the id.")
    description: str | None = Field(
        None, max_length=5000, description="The agent's role, written into its SOUL.md."
    )


@router.post("/agents", status_code=201)
def create_agent(memory: MemoryDep, request: Request, body: NewAgent) -> dict[str, Any]:
    """Create the workspace of a new agent (``agents/ID/``: SOUL.md, TOOLS.md, MEMORY.md,
    ``memory/``, its BOOTSTRAP.md); admin token only; 409 when the agent exists."""
    principal: Principal = request.scope[PRINCIPAL]
    require_admin(principal, "creating an agent")
    agent = validate_agent_id(body.agent)
    if agent in memory.agents():
        raise ConflictError(
            f"agent {agent!r} exists already: choose another id, or work in its workspace "
            f"with ?agent={agent} (the agent picker of the browser)"
        )
    with request.app.state.memories.lease(agent) as created_memory:
        created = created_memory.init(name=body.name, description=body.description)
    return {"agent": agent, "created": created}
