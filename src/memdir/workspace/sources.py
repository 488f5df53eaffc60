"""Paths that name their workspace: how a citation says which workspace a line is in.

An agent session reads its own workspace and, by fallback, the global one; a search may
also return other agents' notes (``scope=all``). A plain path (``memory/2026-11-20.md``)
means the session's own workspace, so a hit from elsewhere is cited with a prefix:

* ``global:memory/2026-11-20.md`` for the global workspace;
* ``agent:writer:memory/2026-11-20.md`` for agent ``writer``'s workspace.

Workspace paths never contain ``:`` (``paths.validate_relative_path``), so the prefix can
never be mistaken for part of a path. ``memory_get`` and the other reads accept both forms.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.errors import InvalidPathError
from memdir.home import AGENT_PREFIX, GLOBAL_SOURCE, source_of, validate_agent_id


@dataclass(frozen=True)
class SourcePath:
    """A workspace path and the workspace it names: ``source`` is ``global``,
    ``agent:<id>`` or None (the session's own workspace)."""

    source: str | None
    path: str


def parse_source_path(text: str) -> SourcePath:
    """Split ``global:...`` or ``agent:<id>:...`` from a path; other paths stay whole.

    Only the prefix is checked here; the path itself is checked where it is read.
    """
    if not isinstance(text, str):
        return SourcePath(None, text)
    if text.startswith(GLOBAL_SOURCE + ":"):
        return SourcePath(GLOBAL_SOURCE, text[len(GLOBAL_SOURCE) + 1 :])
    if text.startswith(AGENT_PREFIX):
        agent, sep, rest = text[len(AGENT_PREFIX) :].partition(":")
        if not sep:
            raise InvalidPathError(
                f"invalid workspace path {text!r}: an agent's path reads "
                "'agent:<id>:<path>', e.g. 'agent:writer:memory/2026-11-20.md'"
            )
        return SourcePath(source_of(validate_agent_id(agent)), rest)
    return SourcePath(None, text)


def cite_path(source: str, path: str, own: str) -> str:
    """``path`` of workspace ``source`` as a session whose own workspace is ``own`` cites it."""
    return path if source == own else f"{source}:{path}"
