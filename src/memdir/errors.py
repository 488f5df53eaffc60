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
    ├── EditError                old text missing or ambiguous in an edit
    ├── StoreError               database problems (open, corrupt, locked)
    │   └── IndexMismatchError   index built with another embedder or dimension
    ├── EmbeddingError           an embedding provider failed or is misconfigured
    ├── DependencyError          an optional package is missing (names the extra)
    └── ChatModelError           a chat model provider failed
        ├── ContextLengthError   the request exceeded the model's context window
        └── StructuredOutputError  the model's JSON failed validation after repair
"""

from __future__ import annotations


class MemdirError(Exception):
    """Root of every error memdir raises on purpose."""


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


class EditError(MemdirError):
    """An exact find-and-replace edit could not be applied."""


class StoreError(MemdirError):
    """The index or facts database failed."""


class IndexMismatchError(StoreError):
    """The index was built with a different embedder; run ``memdir index rebuild``."""


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
