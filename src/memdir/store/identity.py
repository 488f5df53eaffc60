"""Checking a recorded embedder identity, the same way for both backends.

A store records which embedder made its vectors (``EmbedderIdentity.from_meta``); a
write or a query from another embedder, or with other dimensions, is refused with an
error that names the fix.
"""

from __future__ import annotations

from memdir.errors import IndexMismatchError
from memdir.store.contracts import EmbedderIdentity

REBUILD_HINT = "run `memdir index rebuild`"


def check_index_identity(
    location: str, recorded: EmbedderIdentity, wanted: EmbedderIdentity
) -> None:
    """Raise ``IndexMismatchError`` when the index at ``location`` was built otherwise."""
    if recorded != wanted:
        raise IndexMismatchError(
            f"the index {location!r} was built with embedder {recorded.provider}/"
            f"{recorded.model} ({recorded.dimensions} dimensions), not {wanted.provider}/"
            f"{wanted.model} ({wanted.dimensions} dimensions); {REBUILD_HINT}"
        )


def check_query_dimensions(location: str, recorded: EmbedderIdentity, dimensions: int) -> None:
    """Raise ``IndexMismatchError`` when a query vector does not fit the index's vectors."""
    if dimensions != recorded.dimensions:
        raise IndexMismatchError(
            f"the query vector has {dimensions} dimensions but the index {location!r} "
            f"holds {recorded.dimensions}-dimensional vectors of {recorded.model!r}; "
            f"{REBUILD_HINT}"
        )


def check_fact_identity(
    location: str, recorded: EmbedderIdentity, wanted: EmbedderIdentity
) -> None:
    """Raise ``IndexMismatchError`` when the facts at ``location`` were embedded otherwise."""
    if recorded != wanted:
        raise IndexMismatchError(
            f"the facts in {location!r} were embedded with {recorded.provider}/"
            f"{recorded.model} ({recorded.dimensions} dimensions), not {wanted.provider}/"
            f"{wanted.model} ({wanted.dimensions}); {REBUILD_HINT}"
        )
