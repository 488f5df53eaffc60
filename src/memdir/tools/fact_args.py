"""The argument models of the tools that take a fact by id."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from memdir.facts import MAX_FACT_CHARS
from memdir.tools.args import _CATEGORY, _Args

_FACT_ID = Field(
    min_length=1,
    max_length=128,
    description="The fact's id, as memory_recall, memory_list_facts or memory_save give it "
    "(e.g. 'f-ab12cd34ef').",
)


class MemoryGetFactArgs(_Args):
    fact_id: str = _FACT_ID


class MemoryFactHistoryArgs(_Args):
    fact_id: str = _FACT_ID


class MemoryUpdateFactArgs(_Args):
    fact_id: str = _FACT_ID
    content: str = Field(
        min_length=1,
        max_length=MAX_FACT_CHARS,
        validation_alias=AliasChoices("content", "text"),
        description="The new statement, short and self-contained; it replaces the fact.",
    )
    category: str | None = _CATEGORY
