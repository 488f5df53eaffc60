"""The home folder's layout: the one place that knows where everything of a home lives.

A memdir home holds the global workspace, one workspace per agent, the derived index
and facts databases, the session transcripts and the configuration::

    <home>/memdir.toml                   configuration (optional)
    <home>/workspace/                    the global workspace
    <home>/agents/<agent id>/            one agent's workspace
    <home>/index/memdir.db, facts.db     the index and the facts (derived; SQLite store)
    <home>/sessions/<agent id|global>/   session transcripts

A workspace is keyed by its *source*: ``global`` or ``agent:<id>`` (docs/architecture.md,
"Glossary"). A leaf: any layer may import it; it imports nothing of ours but the errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import InvalidAgentIdError

CONFIG_FILE = "memdir.toml"
GLOBAL_DIR = "workspace"
AGENTS_DIR = "agents"
INDEX_DIR = "index"
SESSIONS_DIR = "sessions"
INDEX_FILE = "memdir.db"
FACTS_FILE = "facts.db"

GLOBAL_SOURCE = "global"
AGENT_PREFIX = "agent:"
GLOBAL_AGENT = "global"  # the name of the global workspace's sessions folder
AGENT_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def validate_agent_id(agent_id: str) -> str:
    """Return ``agent_id`` unchanged if it matches ``[a-z0-9][a-z0-9_-]{0,63}``."""
    if not isinstance(agent_id, str) or AGENT_ID_PATTERN.fullmatch(agent_id) is None:
        raise InvalidAgentIdError(
            f"invalid agent id {agent_id!r}: use 1-64 characters of lower-case letters, "
            "digits, '-' or '_', starting with a letter or digit (for example 'coder')"
        )
    return agent_id


def is_agent_id(name: str) -> bool:
    """Whether ``name`` is a valid agent id (a folder under ``agents/`` that is one)."""
    return isinstance(name, str) and AGENT_ID_PATTERN.fullmatch(name) is not None


def source_of(agent_id: str | None) -> str:
    """The source (workspace key) of a workspace: ``global`` or ``agent:<id>``."""
    return GLOBAL_SOURCE if agent_id is None else AGENT_PREFIX + agent_id


def agent_of(source: str) -> str | None:
    """The agent id of a source (None for the global workspace)."""
    return None if source == GLOBAL_SOURCE else source.removeprefix(AGENT_PREFIX)


@dataclass(frozen=True)
class Home:
    """The paths of one home (nothing is created or checked on construction)."""

    root: Path

    @property
    def global_root(self) -> Path:
        return self.root / GLOBAL_DIR

    @property
    def agents_dir(self) -> Path:
        return self.root / AGENTS_DIR

    def workspace_root(self, agent_id: str | None = None) -> Path:
        """The folder of the global workspace (None) or of agent ``agent_id``'s."""
        if agent_id is None:
            return self.global_root
        return self.agents_dir / validate_agent_id(agent_id)

    def source_root(self, source: str) -> Path:
        """The folder of the workspace ``source`` names."""
        return self.workspace_root(agent_of(source))

    @property
    def index_dir(self) -> Path:
        return self.root / INDEX_DIR

    @property
    def index_db(self) -> Path:
        return self.index_dir / INDEX_FILE

    @property
    def facts_db(self) -> Path:
        return self.index_dir / FACTS_FILE

    @property
    def config_file(self) -> Path:
        return self.root / CONFIG_FILE

    def sessions_dir(self, agent_id: str | None = None) -> Path:
        """``<home>/sessions/<agent id or "global">``."""
        agent = GLOBAL_AGENT if agent_id is None else validate_agent_id(agent_id)
        return self.root / SESSIONS_DIR / agent

    def agents(self) -> list[str]:
        """Ids of the agent workspaces (folders under ``agents/`` named as agent ids)."""
        if not self.agents_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.agents_dir.iterdir() if p.is_dir() and is_agent_id(p.name)
        )

    def exists(self) -> bool:
        """A memdir home holds a workspace (global or an agent's), a configuration or an index."""
        return (
            self.global_root.is_dir()
            or self.agents_dir.is_dir()
            or self.config_file.is_file()
            or self.index_db.is_file()
        )
