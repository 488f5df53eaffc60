"""Which workspace a path of a read or a write means, for the ``Memory`` facade.

``global:`` and ``agent:<id>:`` prefixes name a workspace (search cites hits from outside
the session's own that way, ``memdir.workspace.scoped``). A read may reach another
workspace; a write goes to the session's own workspace only.
"""

from __future__ import annotations

from memdir.errors import InvalidInputError, InvalidPathError
from memdir.home import agent_of
from memdir.workspace import Workspace
from memdir.workspace.scoped import parse_scoped_path


def locate(own: Workspace, path: str, cross_agent: bool) -> tuple[Workspace, str]:
    """The workspace that holds the file a read of ``path`` means, and its path there.

    A plain path is the session's own file, else, in an agent session, the global file
    of that name. Another agent's workspace is readable only where ``search.cross_agent``
    (``cross_agent``) allows searching it.
    """
    scoped = parse_scoped_path(path)
    if scoped.source is None:
        if own.agent_id is not None and not own.has_file(scoped.path):
            shared = Workspace(own.home)
            if shared.has_file(scoped.path):
                return shared, scoped.path
        return own, scoped.path
    agent = agent_of(scoped.source)
    if agent not in (None, own.agent_id) and not cross_agent:
        raise InvalidInputError(
            f"{path!r} is in agent {agent!r}'s workspace, which this session may not read; "
            "set search.cross_agent = true to allow it"
        )
    return Workspace(own.home, agent), scoped.path


def own_path(path: str, source: str) -> str:
    """The path of a write: writes go to the session's own workspace (``source``) only."""
    scoped = parse_scoped_path(path)
    if scoped.source not in (None, source):
        raise InvalidPathError(
            f"{path!r} is in another workspace; a session writes only its own, "
            f"so write {scoped.path!r} (without the prefix) to keep a copy here"
        )
    return scoped.path
