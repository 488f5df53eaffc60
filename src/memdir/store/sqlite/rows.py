"""Reading the small shared rows back: ``meta`` (tokenizer, embedder identity) and units."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from memdir.errors import IndexMismatchError
from memdir.store.contracts import EmbedderIdentity, Unit
from memdir.store.sqlite.connect import REBUILD_HINT


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table as a dict, read on ``conn`` (inside its current transaction)."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def tokenizer_of(conn: sqlite3.Connection) -> str:
    """The index's tokenizer (an entry of ``keywords.terms.TOKENIZERS``)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
    return str(row[0]) if row else "porter"


def identity_of(meta: dict[str, str]) -> EmbedderIdentity | None:
    if "identity_provider" not in meta:
        return None
    return EmbedderIdentity(
        provider=meta["identity_provider"],
        model=meta["identity_model"],
        dimensions=int(meta["identity_dimensions"]),
    )


def check_identity(recorded: EmbedderIdentity, wanted: EmbedderIdentity, path: Path) -> None:
    if recorded != wanted:
        raise IndexMismatchError(
            f"the index {str(path)!r} was built with embedder {recorded.provider}/"
            f"{recorded.model} ({recorded.dimensions} dimensions), not {wanted.provider}/"
            f"{wanted.model} ({wanted.dimensions} dimensions); {REBUILD_HINT}"
        )


def units_sql(count: int) -> str:
    """Units by id (``count`` of them) with their file's mtime, in :func:`unit_of` order."""
    return (
        "SELECT u.id, u.source, u.path, u.kind, u.start_line, u.end_line, u.text, "
        "u.heading_path, u.sha256, f.mtime FROM units u JOIN files f ON f.id = u.file_id "
        f"WHERE u.id IN ({', '.join('?' * count)})"
    )


def unit_of(row: Sequence[object]) -> Unit:
    uid, source, path, kind, start, end, text, heading, sha, mtime = row
    return Unit(
        id=int(uid),  # type: ignore[call-overload]
        source=str(source),
        path=str(path),
        kind="block" if kind == "block" else "chunk",
        start_line=int(start),  # type: ignore[call-overload]
        end_line=int(end),  # type: ignore[call-overload]
        text=str(text),
        heading_path=tuple(str(heading).split("\n")) if heading else (),
        sha256=str(sha),
        file_mtime=float(mtime),  # type: ignore[arg-type]
    )
