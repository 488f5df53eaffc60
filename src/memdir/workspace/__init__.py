"""memdir.workspace: paths, templates, bootstrap files, daily notes, atomic writes, locks.

The layer imports nothing of memdir but the leaves (errors, home, text). Its entry point is
``Workspace``; the free functions serve the layers that work on files directly
(the indexer, curation).
"""

from __future__ import annotations

from memdir.home import validate_agent_id
from memdir.workspace.atomic import (
    MAX_FILE_BYTES,
    read_markdown,
    sweep_stale_temp_files,
    write_atomic,
)
from memdir.workspace.bootstrap import FALLBACK_FILES, PROMPT_FILES, BootstrapFile, Origin
from memdir.workspace.daily import DAILY_NOTE_NAME, MEMORY_DIR, NoteLocation, daily_note_name
from memdir.workspace.discovery import (
    MemoryFile,
    discover_memory_files,
    is_memory_path,
    list_markdown,
)
from memdir.workspace.locking import lock_file
from memdir.workspace.paths import (
    resolve_inside,
    validate_prefix,
    validate_relative_path,
)
from memdir.workspace.prompt_files import PROMPT_SETTINGS_FILE, PromptFile
from memdir.workspace.seeding import BOOTSTRAP_FILE, GLOBAL_TEMPLATES, IDENTITY_FILES
from memdir.workspace.skills import Skill, is_denied
from memdir.workspace.workspace import ContentCheck, FileInfo, FileSlice, Workspace

__all__ = [
    "BOOTSTRAP_FILE",
    "DAILY_NOTE_NAME",
    "FALLBACK_FILES",
    "GLOBAL_TEMPLATES",
    "IDENTITY_FILES",
    "MAX_FILE_BYTES",
    "MEMORY_DIR",
    "PROMPT_FILES",
    "PROMPT_SETTINGS_FILE",
    "BootstrapFile",
    "ContentCheck",
    "FileInfo",
    "FileSlice",
    "MemoryFile",
    "NoteLocation",
    "Origin",
    "PromptFile",
    "Skill",
    "Workspace",
    "daily_note_name",
    "discover_memory_files",
    "is_denied",
    "is_memory_path",
    "list_markdown",
    "lock_file",
    "read_markdown",
    "resolve_inside",
    "sweep_stale_temp_files",
    "validate_agent_id",
    "validate_prefix",
    "validate_relative_path",
    "write_atomic",
]
