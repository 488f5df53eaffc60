"""The fact tools' runners: text for the model and the structured result beside it.

Every fact in a structured result is a ``FactOutput`` (``fact_outputs``): ids, text,
category, score (recall), validity, what it supersedes and what superseded it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from memdir.facts import Fact
from memdir.tools.args import (
    MemoryForgetArgs,
    MemoryListFactsArgs,
    MemoryRecallArgs,
    MemoryRecentArgs,
    MemorySaveArgs,
)
from memdir.tools.fact_args import MemoryFactHistoryArgs, MemoryGetFactArgs, MemoryUpdateFactArgs
from memdir.tools.fact_outputs import (
    FactHistoryResult,
    FactListResult,
    FactOutput,
    ForgetResult,
    RecallResult,
    RecentResult,
    SaveResult,
    successors_of,
)
from memdir.tools.fact_render import render_fact_history, render_fact_version
from memdir.tools.host import ToolHost
from memdir.tools.render import (
    render_fact_list,
    render_forget,
    render_recall,
    render_recent,
    render_save,
)
from memdir.tools.spec import ToolResult


def _data(model: BaseModel) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json")
    return data


def _successors(memory: ToolHost, facts: Iterable[Fact]) -> dict[str, str]:
    """Who superseded each of ``facts`` that was superseded (one listing, only if needed)."""
    if all(fact.valid_to is None for fact in facts):
        return {}
    return successors_of(memory.list_facts(include_superseded=True, include_forgotten=True))


def run_save(memory: ToolHost, args: MemorySaveArgs) -> ToolResult:
    outcome = memory.save(
        args.content,
        category=args.category,
        importance=args.importance,
        valid_until=args.valid_until,
    )
    return ToolResult(render_save(outcome), _data(SaveResult.of(outcome)))


def run_recall(memory: ToolHost, args: MemoryRecallArgs) -> ToolResult:
    found = memory.recall(args.query, category=args.category, as_of=args.as_of, limit=args.limit)
    text = render_recall(args.query, found)
    if not found:
        saved = len(memory.list_facts())
        text = (
            f"No saved facts match {args.query!r} among the {saved} current fact(s); "
            "memory_list_facts lists them, memory_search searches the notes."
        )
    return ToolResult(text, _data(RecallResult.of(args.query, found)))


def run_forget(memory: ToolHost, args: MemoryForgetArgs) -> ToolResult:
    fact = memory.forget(fact_id=args.fact_id, query=args.query, reason=args.reason)
    output = FactOutput.of(fact, _successors(memory, [fact]))
    return ToolResult(render_forget(fact), _data(ForgetResult(fact=output)))


def run_list_facts(memory: ToolHost, args: MemoryListFactsArgs) -> ToolResult:
    history = args.include_history
    facts = memory.list_facts(
        args.category, args.as_of, include_superseded=history, include_forgotten=history
    )
    text = render_fact_list(facts, args.limit, history)
    return ToolResult(text, _data(FactListResult.of(facts, args.limit)))


def run_recent(memory: ToolHost, args: MemoryRecentArgs) -> ToolResult:
    activity = memory.recent(days=args.days, limit=args.limit)
    successors = _successors(memory, [change.fact for change in activity.facts])
    data = RecentResult.of(activity, args.days, successors)
    return ToolResult(render_recent(activity, args.days), _data(data))


def run_get_fact(memory: ToolHost, args: MemoryGetFactArgs) -> ToolResult:
    version = memory.get_fact(args.fact_id)
    return ToolResult(render_fact_version(version), _data(FactOutput.of_version(version)))


def run_update_fact(memory: ToolHost, args: MemoryUpdateFactArgs) -> ToolResult:
    outcome = memory.update_fact(args.fact_id, args.content, category=args.category)
    return ToolResult(render_save(outcome), _data(SaveResult.of(outcome)))


def run_fact_history(memory: ToolHost, args: MemoryFactHistoryArgs) -> ToolResult:
    chain = memory.fact_history(args.fact_id)
    data = FactHistoryResult.of(args.fact_id, chain)
    return ToolResult(render_fact_history(chain), _data(data))
