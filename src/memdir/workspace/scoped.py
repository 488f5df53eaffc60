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
from memdir.workspace.paths import validate_agent_id

GLOBAL_SCOPE = "global"
AGENT_PREFIX = "agent:"


@dataclass(frozen=True)
class ScopedPath:
    """A workspace path and the workspace it names: ``scope`` is ``global``,
    ``agent:<id>`` or None (the session's own workspace)."""

    scope: str | None
    path: str


def scope_of(agent_id: str | None) -> str:
    """The scope (index source) of a workspace: ``global`` or ``agent:<id>``."""
    return GLOBAL_SCOPE if agent_id is None else AGENT_PREFIX + agent_id


def agent_of(scope: str) -> str | None:
    """The agent id of a scope (None for the global workspace)."""
    return None if scope == GLOBAL_SCOPE else scope.removeprefix(AGENT_PREFIX)


def parse_scoped_path(text: str) -> ScopedPath:
    """Split ``global:...`` or ``agent:<id>:...`` from a path; other paths stay whole.

    Only the prefix is checked here; the path itself is checked where it is read.
    """
    if not isinstance(text, str):
        return ScopedPath(None, text)
    if text.startswith(GLOBAL_SCOPE + ":"):
        return ScopedPath(GLOBAL_SCOPE, text[len(GLOBAL_SCOPE) + 1 :])
    if text.startswith(AGENT_PREFIX):
        agent, sep, rest = text[len(AGENT_PREFIX) :].partition(":")
        if not sep:
            raise InvalidPathError(
                f"invalid workspace path {text!r}: an agent's path reads "
                "'agent:<id>:<path>', e.g. 'agent:writer:memory/2026-11-20.md'"
            )
        return ScopedPath(scope_of(validate_agent_id(agent)), rest)
    return ScopedPath(None, text)


def cite_path(scope: str, path: str, home: str) -> str:
    """``path`` as a session whose own workspace is ``home`` cites it."""
    return path if scope == home else f"{scope}:{path}"
