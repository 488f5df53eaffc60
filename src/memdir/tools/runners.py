"""The tools' runners: parse nothing, call the host (``Memory``), render text and data.

Each runner takes the host and the validated arguments and returns the text for the
model, or a ``ToolResult`` with the structured data too.
"""

from __future__ import annotations

from memdir.errors import NotFoundError
from memdir.text import split_lines
from memdir.tools.args import (
    MemoryContextArgs,
    MemoryEditFileArgs,
    MemoryFinishRitualArgs,
    MemoryForgetArgs,
    MemoryGetArgs,
    MemoryListFactsArgs,
    MemoryListFilesArgs,
    MemoryReadFileArgs,
    MemoryRecallArgs,
    MemoryRecentArgs,
    MemorySaveArgs,
    MemorySearchArgs,
    MemorySetPromptFileArgs,
    MemoryWriteFileArgs,
)
from memdir.tools.host import ToolHost
from memdir.tools.outputs import (
    FileEdited,
    FileList,
    FileMeta,
    FileRead,
    FileWritten,
    PromptFileSetting,
    RitualFinished,
    SearchOutput,
    SliceOutput,
    report_data,
)
from memdir.tools.render import (
    render_fact_list,
    render_file_list,
    render_file_slice,
    render_forget,
    render_recall,
    render_recent,
    render_report,
    render_save,
    render_search,
)
from memdir.tools.spec import ToolResult
from memdir.workspace.revisions import content_sha256


def file_exists(memory: ToolHost, path: str) -> bool:
    """Whether ``path`` names a file ``memory_read_file`` would find."""
    try:
        memory.file_info(path)
    except NotFoundError:
        return False
    return True


def run_search(memory: ToolHost, args: MemorySearchArgs) -> ToolResult:
    results = memory.search(
        args.query, max_results=args.max_results, min_score=args.min_score, scope=args.scope,
        include_history=args.include_history,
    )  # fmt: skip
    output = SearchOutput.of(args.query, results)
    return ToolResult(render_search(output), output.model_dump(mode="json"))


def run_get(memory: ToolHost, args: MemoryGetArgs) -> ToolResult:
    part = memory.get(args.path, from_line=args.from_line, lines=args.lines)
    return ToolResult(render_file_slice(part), SliceOutput.of(part).model_dump(mode="json"))


def run_save(memory: ToolHost, args: MemorySaveArgs) -> str:
    return render_save(
        memory.save(args.content, category=args.category, importance=args.importance)
    )


def run_recall(memory: ToolHost, args: MemoryRecallArgs) -> str:
    facts = memory.recall(args.query, category=args.category, as_of=args.as_of, limit=args.limit)
    return render_recall(args.query, facts)


def run_forget(memory: ToolHost, args: MemoryForgetArgs) -> str:
    return render_forget(memory.forget(fact_id=args.fact_id, query=args.query, reason=args.reason))


def run_list_facts(memory: ToolHost, args: MemoryListFactsArgs) -> str:
    history = args.include_history
    facts = memory.list_facts(
        args.category, args.as_of, include_superseded=history, include_forgotten=history
    )
    return render_fact_list(facts, args.limit, history)


def run_recent(memory: ToolHost, args: MemoryRecentArgs) -> str:
    return render_recent(memory.recent(days=args.days, limit=args.limit), args.days)


def run_list_files(memory: ToolHost, args: MemoryListFilesArgs) -> ToolResult:
    paths = memory.list_files(args.prefix)
    files = [FileMeta.of(memory.file_info(path)) for path in paths]
    data = FileList(prefix=args.prefix, files=files)
    return ToolResult(render_file_list(args.prefix, paths), data.model_dump(mode="json"))


def run_read_file(memory: ToolHost, args: MemoryReadFileArgs) -> ToolResult:
    read = memory.read_text(args.path)
    text = read.content
    info = memory.file_info(args.path)
    lines = len(split_lines(text))
    data = FileRead(**FileMeta.of(info).model_dump(), lines=lines, sha256=read.sha256)
    return ToolResult(text if text else f"{args.path} is empty.", data.model_dump(mode="json"))


def run_write_file(memory: ToolHost, args: MemoryWriteFileArgs) -> ToolResult:
    existed = file_exists(memory, args.path)
    path = memory.write_file(
        args.path, args.content, expected_sha256=args.expected_sha256,
        create_only=args.create_only,
    )  # fmt: skip
    meta = FileMeta.of(memory.file_info(path))
    sha = content_sha256(args.content)
    data = FileWritten(**meta.model_dump(), created=not existed, overwritten=existed, sha256=sha)
    text = f"Wrote {path} ({len(args.content)} characters)."
    return ToolResult(text, data.model_dump(mode="json"))


def run_edit_file(memory: ToolHost, args: MemoryEditFileArgs) -> ToolResult:
    count = memory.edit_file(
        args.path, args.old_text, args.new_text, replace_all=args.replace_all,
        expected_sha256=args.expected_sha256,
    )  # fmt: skip
    meta = FileMeta.of(memory.file_info(args.path))
    data = FileEdited(**meta.model_dump(), replacements=count)
    text = f"Edited {meta.path}: replaced {count} occurrence{'s' if count != 1 else ''}."
    return ToolResult(text, data.model_dump(mode="json"))


def run_finish_ritual(memory: ToolHost, args: MemoryFinishRitualArgs) -> ToolResult:
    finished = memory.finish_ritual()
    text = (
        "First-run ritual finished: BOOTSTRAP.md is deleted and will not come back."
        if finished
        else "No first-run ritual is under way: this workspace has no BOOTSTRAP.md."
    )
    return ToolResult(text, RitualFinished(finished=finished).model_dump(mode="json"))


def run_context(memory: ToolHost, args: MemoryContextArgs) -> ToolResult:
    report = memory.context_report(session_kind=args.session_kind)
    return ToolResult(render_report(report), report_data(report))


def run_set_prompt_file(memory: ToolHost, args: MemorySetPromptFileArgs) -> ToolResult:
    setting = memory.set_prompt_file(args.path, enabled=args.enabled, sort_order=args.sort_order)
    state = "in the prompt" if setting.enabled else "out of the prompt"
    text = f"{setting.path} is {state}, sort order {setting.sort_order} (prompt.toml)."
    return ToolResult(text, PromptFileSetting.of(setting).model_dump(mode="json"))
