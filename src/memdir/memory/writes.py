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
from datetime import datetime

from memdir.config import Settings
from memdir.errors import MemdirError
from memdir.facts import Fact, FactBook, SaveOutcome
from memdir.facts.replay import text_sha
from memdir.facts.safety import check_fact_text, reject_new_secrets, reject_secrets
from memdir.index import Freshness, SourceFile, index_pending
from memdir.memory.indexing import Indexer
from memdir.memory.paths import own_path
from memdir.memory.proposals import guard_shared
from memdir.store.fact_records import Vector
from memdir.workspace import (
    NoteLocation,
    Workspace,
    daily_note_name,
    is_memory_path,
    validate_relative_path,
)

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
    ) -> None:
        self.workspace = workspace
        self.source = source
        self.settings = settings
        self.indexer = indexer
        self.freshness = freshness

    # -- files ---------------------------------------------------------------------------
    def write_file(self, path: str, content: str) -> str:
        """Create or replace a file atomically; returns its workspace path."""
        guard_shared(self.workspace, own_path(path, self.source), content=content)
        written = self.workspace.write_file(own_path(path, self.source), content, check=_checked)
        self.indexed(written)
        self.workspace.finish_ritual_if_done()
        return written

    def edit_file(self, path: str, old_text: str, new_text: str, replace_all: bool) -> int:
        """Exact find-and-replace; returns how many occurrences were replaced."""
        own = own_path(path, self.source)
        guard_shared(self.workspace, own, edit=(old_text, new_text, replace_all))
        count = self.workspace.edit_file(
            own, old_text, new_text, replace_all=replace_all, check=_checked
        )
        self.indexed(own)
        self.workspace.finish_ritual_if_done()
        return count

    def delete_file(self, path: str) -> None:
        own = own_path(path, self.source)
        self.workspace.delete_file(own)
        self.indexed(own)

    def append_daily(self, text: str, date: datetime | None = None) -> NoteLocation:
        if isinstance(text, str):
            reject_secrets(text, "the note")
        location = self.workspace.append_daily(text, date=date.date() if date else None)
        self.indexed(location.path)
        return location

    # -- facts ---------------------------------------------------------------------------
    def save(
        self, facts: FactBook, content: str, category: str | None, importance: int | None
    ) -> SaveOutcome:
        """Save a fact: its text is embedded once, for the decision, its row and its line."""
        text = check_fact_text(content)
        vector = facts.embed(text)
        outcome = facts.save(text, category=category, importance=importance, vector=vector)
        if outcome.location is not None:
            known = {} if vector is None else {text_sha(text): vector}
            self.indexed(outcome.location.path, known)
        return outcome

    def forget(self, facts: FactBook, fact_id: str | None, query: str | None, reason: str) -> Fact:
        """Retire a fact; its forget line goes to the note of the day it was forgotten."""
        fact = facts.forget(fact_id, query, reason=reason)
        if fact.forgotten_at is not None:  # (a fact forgotten before: its note is indexed)
            self.indexed(daily_note_name(fact.forgotten_at.astimezone().date()))
        return fact

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
