"""Versions of every workspace file: who changed it, with what, and why (docs/history.md).

One git repository per home (``repo``), each commit attributed (``attribution``); the
write path records through ``WorkspaceHistory``, which also scopes what a caller sees.
"""

from memdir.history.attribution import Attribution, attributed, current
from memdir.history.repo import NO_GIT, HomeHistory, Version, git_available
from memdir.history.workspace import Change, WorkspaceHistory

__all__ = [
    "NO_GIT",
    "Attribution",
    "Change",
    "HomeHistory",
    "Version",
    "WorkspaceHistory",
    "attributed",
    "current",
    "git_available",
]
