"""Importing another tool's Markdown memories into an agent workspace (``memdir import``).

The layouts (which file goes where) are ``memdir.workspace.foreign``. Here each planned
file is written into the agent's workspace if nothing is there yet (an existing file is
a conflict: reported, never overwritten), refused when it holds a credential or is not
UTF-8 text, its relative links to other imported files pointed at where they landed
(``workspace.foreign_links``; links to files not imported are left and reported), and
the files written become one version in the history (tool ``import``, the reason naming
the tool and the folder). The workspace is then indexed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from memdir.errors import InvalidInputError, MemdirError
from memdir.facts.secrets import detect_secret
from memdir.history import attributed
from memdir.progress import Progress
from memdir.workspace import Workspace
from memdir.workspace.atomic import check_size, create_exclusive
from memdir.workspace.foreign import plan
from memdir.workspace.foreign_links import rewrite_links
from memdir.workspace.paths import resolve_inside, validate_relative_path

if TYPE_CHECKING:
    from memdir.index.sync import SyncReport
    from memdir.memory import Memory

Action = Literal["imported", "conflict", "refused", "skipped"]


@dataclass(frozen=True)
class ImportedFile:
    """What became of one file of the other tool's folder."""

    source: str
    target: str | None
    action: Action
    detail: str = ""


@dataclass
class ImportReport:
    tool: str
    folder: str
    agent: str
    files: list[ImportedFile] = field(default_factory=list)
    version: str | None = None  # the history's version of the import
    indexed: int = 0  # files the index added or changed
    links_rewritten: int = 0  # relative links between imported files, pointed anew
    links_left: list[tuple[str, str]] = field(default_factory=list)  # (file, link) outside

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(item.action for item in self.files))


def _text(source: Path, relative: str) -> str:
    try:
        text = source.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{relative} is not UTF-8 text; save it as UTF-8") from None
    check_size(text, relative)
    kind = detect_secret(text)
    if kind is not None:
        raise InvalidInputError(
            f"{relative} holds what looks like a credential ({kind}); memory never keeps "
            "secrets: remove it from the file and import again"
        )
    return text


def _write(
    workspace: Workspace, folder: Path, source: str, target: str, moved: dict[str, str],
    report: ImportReport,
) -> ImportedFile:  # fmt: skip
    try:  # a name memdir cannot keep (a control character, a reserved name) is refused
        relative = str(validate_relative_path(target))
        path = resolve_inside(workspace.root, relative)
    except MemdirError as exc:
        return ImportedFile(source, None, "refused", str(exc))
    if path.exists():
        return ImportedFile(source, relative, "conflict", f"{relative} already exists; kept")
    try:
        text = _text(folder / source, source)
    except MemdirError as exc:
        return ImportedFile(source, relative, "refused", str(exc))
    text, links = rewrite_links(text, source, moved, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not create_exclusive(path, text):  # made by someone else meanwhile
        return ImportedFile(source, relative, "conflict", f"{relative} already exists; kept")
    report.links_rewritten += links.rewritten
    report.links_left += [(relative, link) for link in links.outside]
    return ImportedFile(source, relative, "imported")


def import_memories(
    memory: Memory, tool: str, folder: Path, progress: Progress | None = None
) -> ImportReport:
    """Import ``tool``'s memory ``folder`` into ``memory``'s agent workspace, as one
    version, then index it."""
    workspace = memory.workspace
    if workspace.agent_id is None:
        raise InvalidInputError(
            "an import goes into an agent workspace of its own; name it with --agent NAME"
        )
    folder = Path(folder).expanduser().resolve()
    planned = plan(tool, folder)
    if not memory.layout.exists():
        Workspace(memory.home).seed()  # the global workspace every agent falls back on
    report = ImportReport(tool, str(folder), workspace.agent_id)
    reason = f"imported from {tool} {folder}"
    moved = {item.source: item.target for item in planned if item.target is not None}
    with attributed(tool="import", reason=reason), memory.history.change("import") as change:
        for item in planned:
            if item.target is None:
                report.files.append(ImportedFile(item.source, None, "skipped", item.why))
                continue
            done = _write(workspace, folder, item.source, item.target, moved, report)
            if done.action == "imported" and done.target is not None:
                change.touched(done.target)
            report.files.append(done)
    if report.counts.get("imported") and memory.history.recording:
        memory.history.flush()
        report.version = memory.history.versions(limit=1)[0].id
    synced: SyncReport = memory.sync(progress=progress)
    report.indexed = synced.added + synced.changed
    return report
