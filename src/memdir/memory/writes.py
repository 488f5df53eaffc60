"""The write path: every write to a workspace passes here, and is searchable when it returns.

A write through ``Memory`` (a file written, edited or deleted, a note appended, a fact
saved or forgotten) goes through ``WritePath``, which

1. resolves the path in the session's own workspace (a session writes only its own);
2. refuses content that adds a credential;
3. writes: atomically for a file, under the note's lock for an append, and for a fact as
   one event (``facts.saving``: its line, its fact row and the vector of its text);
4. indexes the changed file before returning, on a connection of its own, handing the
   index the vectors the write computed already (a saved fact's text is embedded once);
   if indexing fails (a locked or damaged index), the file stays pending and the next
   search indexes it first (``index.freshness``).

So the very next search of any process finds what was written, and a feature that writes
(a new file operation, a check of who may write) has one place to go.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime

from memdir.config import Settings
from memdir.errors import InvalidInputError, MemdirError
from memdir.facts import Fact, FactBook, SaveOutcome
from memdir.facts.replay import text_sha
from memdir.facts.safety import check_fact_text, reject_new_secrets, reject_secrets
from memdir.history import Change, WorkspaceHistory, attributed
from memdir.index import Freshness, SourceFile, index_pending
from memdir.memory.indexing import Indexer
from memdir.memory.paths import own_path
from memdir.store.fact_records import Vector
from memdir.workspace import (
    ContentCheck,
    NoteLocation,
    Workspace,
    daily_note_name,
    is_memory_path,
    revisions,
    validate_relative_path,
)
from memdir.workspace.revisions import FileText

log = logging.getLogger(__name__)


class WritePath:
    """The writes of one session's workspace (``source``), each indexed before it returns."""

    def __init__(
        self,
        workspace: Workspace,
        source: str,
        settings: Settings,
        indexer: Indexer,
        freshness: Freshness,
        history: WorkspaceHistory | None = None,
    ) -> None:
        self.history = history  # every write below is a version of it (docs/history.md)
        self.workspace = workspace
        self.source = source
        self.settings = settings
        self.indexer = indexer
        self.freshness = freshness

    # -- files ---------------------------------------------------------------------------
    def write_file(
        self,
        path: str,
        content: str,
        expected_sha256: str | None = None,
        create_only: bool = False,
    ) -> str:
        """Create or replace a file atomically; returns its workspace path.

        ``create_only``: only if no file is there; ``expected_sha256``: only if the file
        still holds the text the caller read (``workspace.revisions``).
        """
        own = own_path(path, self.source)
        expected = revisions.check_expected(expected_sha256)
        if create_only and expected is not None:
            raise InvalidInputError(
                "pass create_only or expected_sha256, not both: create-only writes a new "
                "file, expected_sha256 replaces the file you read"
            )
        with self.versioned("write_file") as versioned:
            if create_only:
                written = revisions.create_new(self.workspace, own, content, _checked)
            elif expected is not None:
                change = revisions.replace_text(content)
                written, _ = revisions.modify(self.workspace, own, change, expected, _checked)
            else:
                written = self.workspace.write_file(own, content, check=_checked)
            versioned.touched(written)
        self.indexed(written)
        self.workspace.finish_ritual_if_done()
        return written

    def edit_file(
        self,
        path: str,
        old_text: str,
        new_text: str,
        replace_all: bool,
        expected_sha256: str | None = None,
    ) -> int:
        """Exact find-and-replace; returns how many occurrences were replaced.

        With ``expected_sha256`` the edit applies only to the text the caller read."""
        own = own_path(path, self.source)
        expected = revisions.check_expected(expected_sha256)
        check: ContentCheck = _checked
        if expected is not None:
            revisions.expect_current(self.workspace, own, expected)  # before the text search
            check = _expecting(expected)
        with self.versioned("edit_file") as change:
            count = self.workspace.edit_file(
                own, old_text, new_text, replace_all=replace_all, check=check
            )
            change.touched(own)
        self.indexed(own)
        self.workspace.finish_ritual_if_done()
        return count

    def insert_lines(
        self, path: str, line: int, text: str, expected_sha256: str | None = None
    ) -> FileText:
        """Insert ``text`` after line ``line`` (0: before the first); the text after."""
        own = own_path(path, self.source)
        expected = revisions.check_expected(expected_sha256)
        change = revisions.insert_lines(line, text)
        with self.versioned("insert") as versioned:
            written, after = revisions.modify(self.workspace, own, change, expected, _checked)
            versioned.touched(written)
        self.indexed(written)
        self.workspace.finish_ritual_if_done()
        return FileText(written, after, revisions.content_sha256(after))

    def delete_file(self, path: str, expected_sha256: str | None = None) -> None:
        own = own_path(path, self.source)
        expected = revisions.check_expected(expected_sha256)
        with self.versioned("delete_file") as change:
            if expected is None:
                self.workspace.delete_file(own)
            else:
                own = revisions.delete_checked(self.workspace, own, expected)
            change.touched(own)
        self.indexed(own)

    def rename_file(
        self, old_path: str, new_path: str, expected_sha256: str | None = None
    ) -> tuple[str, str]:
        """Move a file to a free path (never over another file); both paths. The old
        path leaves the index and the new one enters it."""
        old, new = own_path(old_path, self.source), own_path(new_path, self.source)
        expected = revisions.check_expected(expected_sha256)
        with self.versioned("rename_file") as change:
            moved = revisions.rename_file(self.workspace, old, new, expected)
            for changed in moved:
                change.touched(changed)
        for changed in moved:
            self.indexed(changed)
        return moved

    def append_daily(self, text: str, date: datetime | None = None) -> NoteLocation:
        if isinstance(text, str):
            reject_secrets(text, "the note")
        with self.versioned("append_daily") as change:
            location = self.workspace.append_daily(text, date=date.date() if date else None)
            change.touched(location.path)
        self.indexed(location.path)
        return location

    # -- facts ---------------------------------------------------------------------------
    def save(
        self, facts: FactBook, content: str, category: str | None, importance: int | None
    ) -> SaveOutcome:
        """Save a fact: its text is embedded once, for the decision, its row and its line."""
        text = check_fact_text(content)
        vector = facts.embed(text)
        with self.versioned("save") as change:
            outcome = facts.save(text, category=category, importance=importance, vector=vector)
            if outcome.location is not None:
                change.touched(outcome.location.path)
        if outcome.location is not None:
            known = {} if vector is None else {text_sha(text): vector}
            self.indexed(outcome.location.path, known)
        return outcome

    def forget(self, facts: FactBook, fact_id: str | None, query: str | None, reason: str) -> Fact:
        """Retire a fact; its forget line goes to the note of the day it was forgotten."""
        with attributed(reason=reason or None), self.versioned("forget") as change:
            fact = facts.forget(fact_id, query, reason=reason)
            if fact.forgotten_at is not None:
                change.touched(daily_note_name(fact.forgotten_at.astimezone().date()))
        if fact.forgotten_at is not None:  # (a fact forgotten before: its note is indexed)
            self.indexed(daily_note_name(fact.forgotten_at.astimezone().date()))
        return fact

    # -- versions ------------------------------------------------------------------------
    def versioned(self, tool: str) -> AbstractContextManager[Change]:
        """Around a write: the files it touches become one version (``memdir.history``);
        ``tool`` names it when no tool or command in force did."""
        return nullcontext(Change()) if self.history is None else self.history.change(tool)

    # -- indexing ------------------------------------------------------------------------
    def indexed(self, path: str, vectors: dict[str, Vector] | None = None) -> None:
        """``path`` changed: index it now, so searches find it without waiting; if that
        fails, the file stays pending and the next search indexes it."""
        relative = str(validate_relative_path(path))
        if not is_memory_path(relative, self.settings.index.extra_paths):
            return
        file = SourceFile(self.source, relative, self.workspace.root / relative)
        self.freshness.written(file)
        try:
            index_pending(
                self.freshness, [self.source], lambda f: self.indexer.index_written(f, vectors)
            )
        except MemdirError as exc:  # the file is written; its indexing waits for a search
            log.warning("could not index %s after writing it: %s", relative, exc)


def _checked(relative: str, before: str, after: str) -> None:
    """Refuse a write or edit whose result holds a credential the file did not hold."""
    reject_new_secrets(before, after, f"the change to {relative!r}")


def _expecting(expected: str) -> ContentCheck:
    """``_checked``, and the text before must be the one the caller read."""

    def check(relative: str, before: str, after: str) -> None:
        revisions.check_unchanged(expected, relative, before)
        _checked(relative, before, after)

    return check
