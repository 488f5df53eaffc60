"""The ``/api/v1/facts/{id}`` routes: one fact by id, its update (a supersession) and its
history. Included after ``routes.router``, so ``/facts/recall`` keeps its own route.

An update never rewrites: the new text becomes a new fact, with a new id, that supersedes
the one named (``memdir.facts.revisions``). An id of another agent's fact answers 404,
like an id that never existed; a malformed id answers 422 naming the id's shape.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from memdir.facts import MAX_FACT_CHARS
from memdir.interfaces.http.problems import PROBLEM_RESPONSES
from memdir.interfaces.http.routes import MemoryDep
from memdir.tools.fact_outputs import FactHistoryResult, FactOutput

router = APIRouter(prefix="/api/v1", responses=PROBLEM_RESPONSES)

FactId = Annotated[
    str,
    Path(min_length=1, max_length=128, description="The fact's id, e.g. 'f-ab12cd34ef'."),
]


class UpdateFactBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_FACT_CHARS, description="The new statement.")
    category: str | None = Field(
        None,
        pattern=r"^[a-z][a-z0-9_-]{0,31}$",
        description="The new fact's category; default: the old fact's.",
    )


@router.get("/facts/{fact_id}", tags=["facts"])
def get_fact(memory: MemoryDep, fact_id: FactId) -> dict[str, Any]:
    """One fact, whatever its state: validity (``valid_from``, ``valid_to``, ``current``),
    ``supersedes``, ``superseded_by``, ``category``, ``salience`` and ``citation``."""
    return FactOutput.of_version(memory.get_fact(fact_id)).model_dump(mode="json")


@router.put("/facts/{fact_id}", tags=["facts"])
def update_fact(memory: MemoryDep, fact_id: FactId, body: UpdateFactBody) -> dict[str, Any]:
    """Update a fact as a supersession: the answer is the new fact (a new id, whose
    ``supersedes`` is ``fact_id``); the old one ends and stays readable. 409 when the fact
    is superseded already (the detail names its latest version) or forgotten."""
    outcome = memory.update_fact(fact_id, body.text, category=body.category)
    assert outcome.fact is not None  # an update always creates a fact
    return FactOutput.of(outcome.fact).model_dump(mode="json")


@router.get("/facts/{fact_id}/history", tags=["facts"])
def fact_history(memory: MemoryDep, fact_id: FactId) -> dict[str, Any]:
    """Every version of the fact, oldest first (``versions``), and the id of the one valid
    now (``current_id``, null when the last was forgotten)."""
    chain = memory.fact_history(fact_id)
    return FactHistoryResult.of(fact_id, chain).model_dump(mode="json")
