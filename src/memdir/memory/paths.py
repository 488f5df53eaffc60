"""Which workspace a path of a read or a write means, for the ``Memory`` facade.

``global:`` and ``agent:<id>:`` prefixes name a workspace (search cites hits from outside
the session's own that way, ``memdir.workspace.sources``). A read may reach another
workspace; a write goes to the session's own workspace only.
"""

from __future__ import annotations

from memdir.errors import InvalidInputError, InvalidPathError
from memdir.home import agent_of
from memdir.workspace import Workspace
from memdir.workspace.sources import parse_source_path


def locate(own: Workspace, path: str, cross_agent: bool) -> tuple[Workspace, str]:
    """The workspace that holds the file a read of ``path`` means, and its path there.

    A plain path is the session's own file, else, in an agent session, the global file
    of that name. Another agent's workspace is readable only where ``search.cross_agent``
    (``cross_agent``) allows searching it.
    """
    given = parse_source_path(path)
    if given.source is None:
        if own.agent_id is not None and not own.has_file(given.path):
            shared = Workspace(own.home)
            if shared.has_file(given.path):
                return shared, given.path
        return own, given.path
    agent = agent_of(given.source)
    if agent not in (None, own.agent_id) and not cross_agent:
        raise InvalidInputError(
            f"{path!r} is in agent {agent!r}'s workspace, which this session may not read; "
            "read only your own and the global workspace's files. The home's owner can allow "
            "reading every agent's: set search.cross_agent = true"
        )
    return Workspace(own.home, agent), given.path


def own_path(path: str, source: str) -> str:
    """The path of a write: writes go to the session's own workspace (``source``) only."""
    given = parse_source_path(path)
    if given.source not in (None, source):
        raise InvalidPathError(
            f"{path!r} is in another workspace; a session writes only its own, "
            f"so write {given.path!r} (without the prefix) to keep a copy here"
        )
    return given.path
