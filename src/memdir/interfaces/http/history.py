"""``/api/v1/history``: the versions of the workspace files, their diffs, and restores.

Scoped like every route: ``?agent=`` (bound to the token's agent) chooses the workspace,
and a caller sees that workspace's versions only. Each version says who made it (agent,
token, session), with what (tool or route) and why (docs/history.md).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, ConfigDict, Field

from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.interfaces.http.routes import MemoryDep
from memdir.tools.versions import VersionOutput

router = APIRouter(prefix="/api/v1/history", tags=["history"], responses=PROBLEM_RESPONSES)

VersionId = Annotated[
    str, Path(pattern=r"^[0-9a-f]{7,40}$", description="A version id as GET /history lists it.")
]
PathQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=512, description="A workspace path, e.g. MEMORY.md."),
]


class RestoreBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=512)
    reason: str | None = Field(None, min_length=1, max_length=500)


@router.get("")
def list_versions(
    memory: MemoryDep,
    path: PathQuery = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> dict[str, Any]:
    """The versions of ``path`` (or of the whole workspace), newest first."""
    versions = memory.history_versions(path, limit=limit)
    encoded: dict[str, Any] = jsonable_encoder(
        {"versions": [VersionOutput.of(v) for v in versions]}
    )
    return encoded


@router.get("/{version}/diff")
def version_diff(memory: MemoryDep, version: VersionId, path: PathQuery = None) -> dict[str, Any]:
    """The unified diff ``version`` made (to ``path``, or to the whole workspace)."""
    return {"id": version, "diff": memory.history_diff(version, path)}


@router.post("/{version}/restore")
def restore_version(memory: MemoryDep, version: VersionId, body: RestoreBody) -> dict[str, Any]:
    """Put ``path`` back as it was at ``version``; the restore is itself a version."""
    restored = memory.restore(version, body.path, reason=body.reason)
    return {"path": restored, "restored_from": version}
