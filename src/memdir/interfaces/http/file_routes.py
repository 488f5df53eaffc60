"""The ``/api/v1`` routes that delete, rename and insert into files, and append to today's
note: each change can carry the ``expected_sha256`` a read returned (409 ``conflict`` when
the file changed since), so no client needs a read-modify-write race."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.interfaces.http.routes import MemoryDep
from memdir.tools import MAX_CONTENT_CHARS
from memdir.workspace.revisions import line_count

router = APIRouter(prefix="/api/v1", responses=PROBLEM_RESPONSES)

_EXPECTED = (
    "The sha256 that reading the file returned: the change applies only if the file still "
    "holds that text (409 conflict otherwise)."
)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RenameBody(_Body):
    from_path: str = Field(alias="from", min_length=1, max_length=1024)
    to_path: str = Field(alias="to", min_length=1, max_length=1024)
    expected_sha256: str | None = Field(None, description=_EXPECTED)


class InsertBody(_Body):
    path: str = Field(min_length=1, max_length=1024)
    line: int = Field(ge=0, description="0 inserts before the first line, n after line n.")
    text: str = Field(max_length=MAX_CONTENT_CHARS)
    expected_sha256: str | None = Field(None, description=_EXPECTED)


class DailyBody(_Body):
    text: str = Field(
        min_length=1, max_length=MAX_CONTENT_CHARS, description="The entry; several lines."
    )


@router.post("/files/rename", tags=["files"])
def rename_file(memory: MemoryDep, body: RenameBody) -> dict[str, Any]:
    """Move a file to a new path; 409 conflict when ``to`` exists (nothing is replaced)."""
    old, new = memory.rename_file(
        body.from_path, body.to_path, expected_sha256=body.expected_sha256
    )
    return {"from": old, "to": new}


@router.post("/files/insert", tags=["files"])
def insert_lines(memory: MemoryDep, body: InsertBody) -> dict[str, Any]:
    """Insert ``text`` as whole lines after line ``line`` (0: before the first line)."""
    after = memory.insert_lines(
        body.path, body.line, body.text, expected_sha256=body.expected_sha256
    )
    return {"path": after.path, "sha256": after.sha256, "lines": line_count(after.content)}


@router.delete("/files/{path:path}", tags=["files"])
def delete_file(
    memory: MemoryDep,
    path: str,
    expected_sha256: Annotated[str | None, Query(description=_EXPECTED)] = None,
) -> dict[str, Any]:
    """Delete a file of this workspace; it leaves the search index."""
    memory.delete_file(path, expected_sha256=expected_sha256)
    return {"path": path, "deleted": True}


@router.post("/daily", tags=["files"], status_code=201)
def append_daily(memory: MemoryDep, body: DailyBody) -> dict[str, Any]:
    """Append an entry (one line or many, e.g. a session summary) to today's daily note,
    under the note's lock; returns where it landed (``citation``)."""
    where = memory.append_daily(body.text)
    return {
        "path": where.path,
        "start_line": where.start_line,
        "end_line": where.end_line,
        "citation": where.cite(),
    }
