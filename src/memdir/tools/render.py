"""The tools' results as text for an agent.

Memory content (hits, facts, activity) is quoted inside a ``<memory-results>`` fence with
a notice that it is data, not instructions (``memdir.prompt.fence_data``, the one fence
of memdir): memory files are written by agents and people, so a note may say "ignore
previous instructions".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memdir.facts import Fact, RecalledFact, SaveOutcome
from memdir.facts.activity import RecentActivity
from memdir.prompt import ContextReport, fence_data
from memdir.tools.outputs import FileMeta, HitOutput, SearchOutput
from memdir.workspace import FileSlice

RESULTS_TAG = "memory-results"
RESULTS_OPEN = f"<{RESULTS_TAG}>"
RESULTS_CLOSE = f"</{RESULTS_TAG}>"


def fenced(head: str, rows: Sequence[str]) -> str:
    """``head``, then ``rows`` quoted as data inside the results fence."""
    return f"{head}\n" + fence_data("\n".join(rows), RESULTS_TAG, "data quoted from memory")


def render_search(results: SearchOutput) -> str:
    """The search result as text for an agent: each hit's citation, score and lines."""
    query = results.query
    if not results.hits:
        hint = " Pass min_score=0 to see the weak matches." if results.below_floor else ""
        return f"{results.notice[:1].upper()}{results.notice[1:]}.{hint}"
    sure = "" if results.confidence is None else f"confidence {results.confidence:.2f}; "
    head = f"{len(results.hits)} result(s) for {query!r} ({sure}cite as path:start-end):"
    lines: list[str] = []
    for rank, hit in enumerate(results.hits, start=1):
        status = "" if hit.retired is None else f"  RETIRED: {hit.retired.summary}"
        lines.append(f"\n[{rank}] {hit.citation}  score {hit.score:.3f}{status}")
        lines.extend(f"    {line}" for line in hit.text.strip().splitlines())
        if hit.truncated:
            lines.append(f"    {cut_note(hit)}")
    return fenced(head, lines) + searched_footer(results.searched_files)


def cut_note(hit: HitOutput) -> str:
    """What a cut hit says: how much is shown, and the memory_get call that reads it all."""
    lines = hit.end_line - hit.start_line + 1
    return (
        f"[cut: {len(hit.text):,} of {hit.chars:,} characters shown; read all of it with "
        f"memory_get path={hit.path!r} from_line={hit.start_line} lines={lines}]"
    )


def searched_footer(files: int | None) -> str:
    """The last line of a search's text: how many files it covered."""
    return "" if files is None else f"\nSearched {files} file(s)."


def render_file_slice(part: FileSlice) -> str:
    if part.total_lines == 0:
        return f"{part.path} is empty."
    return (
        f"{part.path} lines {part.start_line}-{part.end_line} of {part.total_lines}:\n{part.text}"
    )


def render_file_list(prefix: str, files: Sequence[FileMeta]) -> str:
    """One file a line, the prompt's files first in prompt order, each saying so."""
    if not files:
        where = f" under {prefix!r}" if prefix else ""
        return f"No Markdown files{where}."
    return "\n".join(f"{file.path}{_prompt_state(file)}" for file in files)


def _prompt_state(file: FileMeta) -> str:
    if file.sort_order is None:
        return ""
    state = "in the prompt" if file.enabled else "out of the prompt"
    return f"  ({state}, order {file.sort_order})"


def _stamp(value: datetime) -> str:
    return value.isoformat(timespec="seconds")


def render_fact(fact: Fact, score: float | None = None) -> str:
    """One fact on one line: ``[id] text (category, importance, score, validity)``."""
    details = [fact.category, f"importance {fact.importance}"]
    if score is not None:
        details.append(f"score {score:.3f}")
    details.append(f"since {_stamp(fact.valid_from)}")
    if fact.valid_to is not None:
        details.append(f"until {_stamp(fact.valid_to)}")
    if fact.supersedes:
        details.append(f"supersedes {fact.supersedes}")
    if fact.forgotten_at is not None:
        details.append(f"forgotten: {fact.forgotten_reason}")
    return f"[{fact.id}] {fact.text} ({'; '.join(details)})"


def render_save(outcome: SaveOutcome) -> str:
    verb = {"add": "Saved", "update": "Updated", "supersede": "Saved", "none": "Already known"}
    if outcome.fact is None:
        return f"Nothing saved: {outcome.reason}"
    lines = [f"{verb.get(outcome.action, 'Saved')}: {render_fact(outcome.fact)}"]
    if outcome.superseded is not None:
        lines.append(f"superseded: {render_fact(outcome.superseded)}")
    if outcome.location is not None:
        lines.append(f"written to {outcome.location.cite()}")
    return "\n".join(lines)


def render_recall(query: str, facts: Sequence[RecalledFact]) -> str:
    if not facts:
        return f"No saved facts match {query!r}."
    rows = [render_fact(r.fact, r.score) for r in facts]
    return fenced(f"{len(facts)} fact(s) for {query!r}:", rows)


def render_forget(fact: Fact) -> str:
    return f"Retired: {render_fact(fact)}"


def render_fact_list(facts: Sequence[Fact], limit: int, history: bool) -> str:
    """Facts newest first, at most ``limit``, saying how many were left out."""
    if not facts:
        return "No saved facts." if not history else "No saved facts, current or retired."
    shown = sorted(facts, key=lambda fact: fact.recorded_at, reverse=True)[:limit]
    kind = "fact(s), current and retired," if history else "current fact(s)"
    head = f"{len(facts)} {kind} newest first"
    if len(facts) > limit:
        head += f" (the {limit} newest shown; narrow by category or raise limit)"
    return fenced(head + ":", [render_fact(fact) for fact in shown])


def render_recent(activity: RecentActivity, days: float) -> str:
    """Files written and facts changed since ``activity.since``, newest first."""
    since = _stamp(activity.since)
    if not activity.files and not activity.facts:
        return f"Nothing changed in memory in the last {days:g} day(s) (since {since})."
    files = [
        f"{change.path} ({_stamp(change.modified)}, {change.size_bytes} bytes)"
        for change in activity.files
    ]
    facts = [
        f"{change.kind} {_stamp(change.at)}: {render_fact(change.fact)}"
        for change in activity.facts
    ]
    lines = [
        *_listed(f"Files written since {since}, newest first:", files, activity.more_files),
        *_listed("Facts changed since then, newest first:", facts, activity.more_facts),
    ]
    head = f"Memory activity in the last {days:g} day(s):"
    return fenced(head, lines)


def _listed(title: str, rows: Sequence[str], more: int) -> list[str]:
    """``title`` and a bullet per row (``- none`` for no row), then how many were left out."""
    lines = [title, *(f"- {row}" for row in rows or ["none"])]
    return [*lines, f"- ... and {more} more"] if more else lines


def render_report(report: ContextReport) -> str:
    """The context report as text for an agent: one line per file, then the counts."""
    lines = [
        f"System prompt of {report.workspace} ({report.session_kind} session): "
        f"{report.prompt_chars} chars, ~{report.prompt_tokens} tokens; "
        f"{report.skills} skill(s), {report.tools} tool(s)."
    ]
    for item in (*report.files, *report.recent_notes):
        order = "" if item.sort_order is None else f" order {item.sort_order}"
        note = f" ({item.note})" if item.note else ""
        lines.append(
            f"- {item.name}: {item.status}{order}, {item.injected_chars}/{item.raw_chars} "
            f"chars{note}"
        )
    if report.left_out:
        lines.append(f"Left out of this session: {', '.join(report.left_out)}.")
    return "\n".join(lines)
