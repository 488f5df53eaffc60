"""The file changes of the ``Memory`` facade, each through its one write path.

Every change is checked for credentials, written atomically, indexed before it returns
and recorded as a version (``memory.writes``). Kept apart from the facade so the
facade stays a readable composition root.
"""

from __future__ import annotations

from datetime import datetime

from memdir.memory.writes import WritePath
from memdir.workspace import NoteLocation
from memdir.workspace.revisions import FileText


class FileWriteMethods:
    """Writing, editing, inserting, renaming, appending and deleting workspace files."""

    writes: WritePath

    def write_file(
        self, path: str, content: str, *, expected_sha256: str | None = None,
        create_only: bool = False,
    ) -> str:  # fmt: skip
        """Create or replace a file atomically; content that adds a credential is refused.
        The file is searchable when this returns (``memory.writes``). ``create_only`` writes
        only a new file, ``expected_sha256`` only over the text read (else ``ConflictError``).
        Writing the last file the first-run ritual asks for ends it (BOOTSTRAP.md goes).
        """
        return self.writes.write_file(path, content, expected_sha256, create_only)

    def edit_file(
        self, path: str, old_text: str, new_text: str, replace_all: bool = False, *,
        expected_sha256: str | None = None,
    ) -> int:  # fmt: skip
        """Exact find-and-replace; an edit whose result holds a new credential is refused
        (even when the credential is assembled from the old text and the new).
        ``expected_sha256``: only if the file still holds what was read."""
        return self.writes.edit_file(path, old_text, new_text, replace_all, expected_sha256)

    def insert_lines(
        self, path: str, line: int, text: str, *, expected_sha256: str | None = None
    ) -> FileText:
        """Insert ``text`` as whole lines after line ``line`` (0: before the first line);
        returns the file as it is now, with its new ``sha256``."""
        return self.writes.insert_lines(path, line, text, expected_sha256)

    def rename_file(
        self, old_path: str, new_path: str, *, expected_sha256: str | None = None
    ) -> tuple[str, str]:
        """Move a file to ``new_path``, never over another (``ConflictError``); both paths."""
        return self.writes.rename_file(old_path, new_path, expected_sha256)

    def append_daily(self, text: str, date: datetime | None = None) -> NoteLocation:
        """Append to today's (or ``date``'s) daily note under a lock; returns where it landed.

        Text holding a credential is refused. The note is searchable when this returns.
        """
        return self.writes.append_daily(text, date)

    def delete_file(self, path: str, *, expected_sha256: str | None = None) -> None:
        """Delete a file of this workspace (never a global file read by fallback); with
        ``expected_sha256``, only if it still holds what was read. It leaves the index."""
        self.writes.delete_file(path, expected_sha256)
