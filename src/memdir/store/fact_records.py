"""The values that cross the facts store contract, shared by every facts backend.

Owns ``Fact`` (one remembered statement and its history), ``FactEvent`` (one
marker line of a daily note), ``FactStamp`` (what a store knows of one note)
and ``FactFilter`` (which facts a query admits), plus the ``Vector`` type fact
embeddings travel as. Frozen dataclasses only: no SQL and no I/O here, so
``memdir.facts`` and both backends (``sqlite.facts``, ``postgres.facts``) can
share them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
EventKind = Literal["fact", "forget", "reinforce"]


@dataclass(frozen=True)
class Fact:
    """One remembered statement and its history; the embedding stays in the store.

    ``valid_to`` is set when a later fact supersedes this one (it is that fact's
    ``valid_from``); ``source_path``/``source_line`` locate the fact's line in
    the workspace. ``access_count``/``last_access`` are usage statistics, the
    only state a rebuild from the notes does not restore.
    """

    id: str
    text: str
    category: str
    importance: int
    recorded_at: datetime
    valid_from: datetime
    valid_to: datetime | None
    supersedes: str | None
    source_path: str
    source_line: int
    access_count: int = 0
    last_access: datetime | None = None
    forgotten_at: datetime | None = None
    forgotten_reason: str | None = None

    @property
    def citation(self) -> str:
        """``path:line`` of the fact's line in the workspace."""
        return f"{self.source_path}:{self.source_line}"

    @property
    def forgotten(self) -> bool:
        return self.forgotten_at is not None

    def valid_at(self, when: datetime) -> bool:
        """True when the fact held at ``when`` (forgetting is not considered)."""
        return self.valid_from <= when and (self.valid_to is None or when < self.valid_to)


@dataclass(frozen=True)
class FactEvent:
    """One marker line of a note: a saved fact, a forget or a reinforcement.

    ``text`` is the fact text (for a forget: the text shown on its line);
    ``category``/``supersedes`` belong to saves, ``importance`` to saves and
    reinforcements, ``reason`` to forgets.
    """

    path: str
    line: int
    kind: EventKind
    fact_id: str
    at: datetime
    text: str
    category: str = ""
    importance: int = 0
    supersedes: str | None = None
    reason: str | None = None
    until: datetime | None = None  # a save's end of validity ("valid_until"), if it has one


@dataclass(frozen=True)
class FactStamp:
    """What the facts store knows of one note: its hash and the stat it was read with."""

    path: str
    sha256: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class FactFilter:
    """Which facts a query admits.

    With ``as_of``: facts recorded by then and, unless ``include_superseded``,
    still valid then. Without: all facts, or only those never superseded.
    """

    as_of: datetime | None = None
    categories: tuple[str, ...] | None = None
    include_superseded: bool = False
    include_forgotten: bool = False


RetiredKind = Literal["superseded", "forgotten", "forget-record"]


@dataclass(frozen=True)
class RetiredLine:
    """A note line that holds no current fact: the line of a fact (or of its reinforcement)
    that was superseded or forgotten, or the audit line that recorded a forget.

    ``valid_from``/``valid_to`` are the fact's validity (``valid_to`` None while it was
    never superseded); ``forgotten_at``/``reason`` say when and why it was forgotten.
    """

    source: str
    path: str
    line: int
    fact_id: str
    kind: RetiredKind
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    forgotten_at: datetime | None = None
    reason: str | None = None
