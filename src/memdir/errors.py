"""The one exception tree of memdir.

Every error memdir raises on purpose derives from ``MemdirError``. Messages say
what happened, quote the offending value and name the next action. The edges
translate them: the CLI prints one line and exits 1, the MCP server returns a
tool error, the REST API answers with problem JSON.

    MemdirError
    ├── ConfigError              invalid memdir.toml / environment / flag value
    ├── InvalidInputError        bad argument: too long, empty, wrong type or range
    │   ├── InvalidPathError     absolute, '..', not '.md', NUL byte, symlink escape
    │   ├── InvalidAgentIdError  agent id outside [a-z0-9][a-z0-9_-]{0,63}
    │   └── SecretRejectedError  content that looks like a credential
    ├── NotFoundError            missing file, fact, session or agent
    ├── AccessDeniedError        a token may not act for that agent or workspace
    ├── EditError                old text missing or ambiguous in an edit
    ├── ConflictError            the file changed since the caller read it, or already exists
    ├── StoreError               database problems (open, corrupt, locked)
    │   └── IndexMismatchError   index built with another embedder or dimension
    ├── DiskFullError            no space left (or quota, or file size limit): nothing written
    ├── EmbeddingError           an embedding provider failed or is misconfigured
    ├── DependencyError          an optional package is missing (names the extra)
    └── ChatModelError           a chat model provider failed
        ├── ContextLengthError   the request exceeded the model's context window
        └── StructuredOutputError  the model's JSON failed validation after repair

An error that knows the next step carries it as a ``NextStep``: a sentence with a
slot and the name of an action (``list_files``, ``replace_all``, ...). The core
never names a CLI command, an MCP tool or a REST route; each edge fills the slot
from its own vocabulary (``describe(names)``), so the CLI says "see which files
exist with `memdir files list`" where MCP says "... with memory_list_files".
``str(error)`` uses the Python API's names (``PYTHON_STEP_NAMES``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

Action = Literal[
    "list_files", "read_file", "write_file", "recall", "replace_all", "list_sessions", "reread"
]
"""What a next step can point to; every edge's vocabulary names each one."""

ACTIONS: tuple[str, ...] = get_args(Action)

PYTHON_STEP_NAMES: Mapping[str, str] = {
    "list_files": "Memory.list_files()",
    "read_file": "Memory.read_file(path)",
    "write_file": "Memory.write_file(path, content)",
    "recall": "Memory.recall(query)",
    "replace_all": "pass replace_all=True",
    "list_sessions": "Memory.sessions()",
    "reread": "Memory.read_text(path) (its .sha256 is the new expected_sha256)",
}


@dataclass(frozen=True)
class NextStep:
    """What to do next: ``text`` with a ``{}`` slot where an edge puts its name of ``action``."""

    text: str
    action: Action

    def render(self, names: Mapping[str, str]) -> str:
        return self.text.replace("{}", names.get(self.action, PYTHON_STEP_NAMES[self.action]))


class MemdirError(Exception):
    """Root of every error memdir raises on purpose.

    ``next_step`` (optional) says what to do about it, in words each edge completes.
    """

    def __init__(self, *args: object, next_step: NextStep | None = None) -> None:
        super().__init__(*args)
        self.next_step = next_step

    def describe(self, names: Mapping[str, str] = PYTHON_STEP_NAMES) -> str:
        """The message, with the next step in the terms of ``names`` (an edge's vocabulary)."""
        message = super().__str__()
        if self.next_step is None:
            return message
        return f"{message}; {self.next_step.render(names)}"

    def __str__(self) -> str:
        return self.describe()


class ConfigError(MemdirError):
    """A configuration value is invalid."""


class InvalidInputError(MemdirError):
    """An argument is invalid (too long, empty, out of range)."""


class InvalidPathError(InvalidInputError):
    """A workspace path is absolute, escapes the workspace or is not Markdown."""


class InvalidAgentIdError(InvalidInputError):
    """An agent id does not match ``[a-z0-9][a-z0-9_-]{0,63}``."""


class SecretRejectedError(InvalidInputError):
    """Content looks like a credential and was not stored."""


class NotFoundError(MemdirError):
    """A file, fact, session or agent does not exist."""


class AccessDeniedError(MemdirError):
    """A token may not act for that agent or workspace (or use that admin switch)."""


class EditError(MemdirError):
    """An exact find-and-replace edit could not be applied."""


class ConflictError(MemdirError):
    """A write lost a race: the file changed since the caller read it (its sha256 is not
    ``expected_sha256``), or a create-only write or a rename found the path taken."""


class StoreError(MemdirError):
    """The index or facts database failed."""


class IndexMismatchError(StoreError):
    """The index was built with a different embedder; run ``memdir index rebuild``."""


class DiskFullError(MemdirError):
    """The disk (or the user's quota) is full; the write was undone, nothing changed."""


class EmbeddingError(MemdirError):
    """An embedding provider failed or is misconfigured."""


class DependencyError(MemdirError):
    """An optional dependency is missing; the message names the extra to install."""


class ChatModelError(MemdirError):
    """A chat model provider failed."""


class ContextLengthError(ChatModelError):
    """The request exceeded the model's context window."""


class StructuredOutputError(ChatModelError):
    """The model's structured output failed validation, even after one repair."""


def missing_dependency(package: str, extra: str) -> DependencyError:
    """Build the error for a missing optional package, naming the pip command."""
    return DependencyError(
        f"the optional package {package!r} is not installed; run: pip install 'memdir[{extra}]'"
    )
