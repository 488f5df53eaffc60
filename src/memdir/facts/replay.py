"""From the notes to the facts store: replay events, sync incrementally, rebuild.

Replay (:func:`derive_facts`) is the definition of a fact's state; saving
applies the same rules to one event at a time, and a rebuild must reproduce it:

1. every ``fact`` event creates its fact (text, category, importance,
   ``recorded_at`` = ``valid_from`` = its time, ``supersedes``, source line);
   a second ``fact`` event with an id already seen is ignored with a warning;
2. ``reinforce`` and ``forget`` events then apply in time order (file, line on
   ties): importance becomes the maximum; the first forget records time and
   reason; events whose fact does not exist (its line was deleted) are ignored;
3. a fact that is superseded ends where its successor begins: ``valid_to`` =
   the earliest ``valid_from`` among the facts that name it in ``supersedes``.

:func:`sync_facts` re-reads only the notes whose size, mtime or hash changed,
replays all stored events and writes the difference (new, changed and
vanished facts); it embeds only texts whose hash has no vector yet.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from memdir.embeddings.base import Embedder
from memdir.facts.markers import parse_fact_lines
from memdir.store.contracts import EmbedderIdentity, FactStore
from memdir.store.fact_records import (
    Fact,
    FactEvent,
    FactFilter,
    FactStamp,
    Vector,
)

logger = logging.getLogger(__name__)

FileRef = tuple[str, Path]  # (workspace-relative path, absolute path)
EVERYTHING = FactFilter(include_superseded=True, include_forgotten=True)


@dataclass(frozen=True)
class FactSyncReport:
    """What a sync did: files re-read, facts added/changed/removed, texts embedded."""

    files_read: int
    files_removed: int
    added: int
    changed: int
    removed: int
    embedded: int


def _order(event: FactEvent) -> tuple[object, ...]:
    return (event.at, event.path, event.line)


def derive_facts(events: Iterable[FactEvent]) -> dict[str, Fact]:
    """The state of every fact the events describe (rules in the module docstring)."""
    ordered = sorted(events, key=_order)
    facts: dict[str, Fact] = {}
    for e in ordered:
        if e.kind != "fact":
            continue
        if e.fact_id in facts:
            logger.warning(
                "ignoring a second line for fact %s at %s:%d (first at %s)",
                e.fact_id, e.path, e.line, facts[e.fact_id].citation,
            )  # fmt: skip
            continue
        facts[e.fact_id] = fact_of(e)
    for e in ordered:
        fact = facts.get(e.fact_id)
        if fact is None or e.kind == "fact":
            continue
        if e.kind == "reinforce":
            facts[e.fact_id] = replace(fact, importance=max(fact.importance, e.importance))
        elif fact.forgotten_at is None:
            facts[e.fact_id] = replace(fact, forgotten_at=e.at, forgotten_reason=e.reason)
    for fact in list(facts.values()):
        old = facts.get(fact.supersedes or "")
        if old is not None and (old.valid_to is None or fact.valid_from < old.valid_to):
            facts[old.id] = replace(old, valid_to=fact.valid_from)
    return facts


def fact_of(event: FactEvent) -> Fact:
    """The fact a ``fact`` event creates (rule 1 of the module docstring)."""
    return Fact(
        id=event.fact_id, text=event.text, category=event.category,
        importance=event.importance, recorded_at=event.at, valid_from=event.at,
        valid_to=event.until,
        supersedes=event.supersedes, source_path=event.path, source_line=event.line,
    )  # fmt: skip


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bind_embedder(store: FactStore, embedder: Embedder) -> None:
    """Record the embedder of the fact vectors (``IndexMismatchError`` if another one is)."""
    store.bind_identity(EmbedderIdentity(embedder.provider, embedder.model, embedder.dimensions))


def embed_texts(
    embedder: Embedder, store: FactStore, texts: dict[str, str]
) -> dict[str, tuple[str, Vector]]:
    """Vectors for ``{fact id: text}``, binding the embedder identity to the store."""
    if not texts:
        return {}
    bind_embedder(store, embedder)
    ids = list(texts)
    vectors = embedder.embed_documents([texts[i] for i in ids])
    return {
        fid: (text_sha(texts[fid]), np.asarray(vectors[row], dtype=np.float32))
        for row, fid in enumerate(ids)
    }


def _same_state(a: Fact, b: Fact) -> bool:
    """Equal apart from usage statistics."""
    return replace(a, access_count=0, last_access=None) == replace(
        b, access_count=0, last_access=None
    )


def _read_changed(
    store: FactStore, files: Sequence[FileRef]
) -> tuple[list[tuple[FactStamp, list[FactEvent]]], list[str], int]:
    """(stamp, events) of files whose stat changed, removed paths, and how many of them
    hold marker lines other than the recorded ones (an appended plain note changes none)."""
    known = store.file_stamps()
    changed: list[tuple[FactStamp, list[FactEvent]]] = []
    new_content = 0
    for relpath, path in files:
        try:
            stat = path.stat()
            old = known.get(relpath)
            if old is not None and (old.size, old.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
                continue
            data = path.read_bytes()
        except OSError as exc:  # vanished or unreadable: left as it was until the next sync
            logger.warning("cannot read %s for facts: %s", relpath, exc)
            continue
        sha = hashlib.sha256(data).hexdigest()
        stamp = FactStamp(relpath, sha, stat.st_size, stat.st_mtime_ns)
        events = parse_fact_lines(relpath, data.decode("utf-8", errors="replace"))
        if old is None or old.sha256 != sha:  # facts change only when the marker lines do
            new_content += set(events) != set(store.all_events(relpath))
        changed.append((stamp, events))
    present = {relpath for relpath, _ in files}
    recorded = set(known) | store.event_paths()  # saves record events before any stamp
    return changed, sorted(p for p in recorded if p not in present), new_content


def sync_facts(
    store: FactStore,
    embedder: Embedder | None,
    files: Sequence[FileRef] | Callable[[], Sequence[FileRef]],
) -> FactSyncReport:
    """Bring the facts store in line with ``files`` (the daily notes), incrementally.

    Files whose size and mtime match the stored stamp are not read; a file read
    with an unchanged hash only refreshes its stamp. Facts are re-derived only
    when some content changed or a file vanished. Listing the notes (pass a
    function that lists them), reading them, replacing their events and writing
    the derived facts is one store transaction, so a save of another process
    lands wholly before or after it and is never undone (a list taken before the
    transaction would miss a note that a save created meanwhile, and its facts
    would be dropped as those of a vanished note); vectors for new texts are
    computed afterwards, outside it.
    """
    with store.transaction():
        report = sync_notes_locked(store, files() if callable(files) else files)
    embedded = _backfill_vectors(store, embedder, only_missing=not report.files_read)
    if report.files_read or report.files_removed:
        logger.info(
            "facts sync: %d files read, %d removed; facts +%d ~%d -%d; %d embedded",
            report.files_read, report.files_removed, report.added, report.changed,
            report.removed, embedded,
        )  # fmt: skip
    return replace(report, embedded=embedded)


def sync_notes_locked(store: FactStore, files: Sequence[FileRef]) -> FactSyncReport:
    """``sync_facts`` without the vectors, inside the caller's store transaction."""
    changed, removed, new_content = _read_changed(store, files)
    if changed or removed:
        store.replace_file_events(changed, removed)
    if not new_content and not removed:
        return FactSyncReport(0, 0, 0, 0, 0, 0)
    added, updated, deleted = _apply_derived(store)
    return FactSyncReport(new_content, len(removed), added, updated, deleted, 0)


def _apply_derived(store: FactStore) -> tuple[int, int, int]:
    """Re-derive every fact from the recorded events and write the difference."""
    derived = derive_facts(store.all_events())
    current = {f.id: f for f in store.list_facts(EVERYTHING)}
    added = [f for fid, f in derived.items() if fid not in current]
    updated = [
        f for fid, f in derived.items() if fid in current and not _same_state(f, current[fid])
    ]
    deleted = [fid for fid in current if fid not in derived]
    store.apply(upserts=[*added, *updated], deletes=deleted)
    return len(added), len(updated), len(deleted)


def _backfill_vectors(
    store: FactStore, embedder: Embedder | None, only_missing: bool = False
) -> int:
    """Embed facts whose text has no vector yet (new, edited, or saved keyword-only)."""
    if embedder is None or (only_missing and store.count_unembedded() == 0):
        return 0
    shas = store.vector_shas()
    stale = {
        f.id: f.text for f in store.list_facts(EVERYTHING) if shas.get(f.id) != text_sha(f.text)
    }
    if stale:
        store.apply(vectors=embed_texts(embedder, store, stale))
    return len(stale)


def rebuild_facts(
    store: FactStore,
    embedder: Embedder | None,
    files: Sequence[FileRef] | Callable[[], Sequence[FileRef]],
) -> FactSyncReport:
    """Forget everything the store knows (usage statistics too) and replay ``files``
    (listed inside the transaction when given as a function, as for ``sync_facts``)."""
    store.clear()  # apart: on PostgreSQL it locks the whole schema, a save the scope first
    with store.transaction():
        report = sync_notes_locked(store, files() if callable(files) else files)
    return replace(report, embedded=_backfill_vectors(store, embedder))
