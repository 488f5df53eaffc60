"""The embedder contract and the deterministic test double.

An ``Embedder`` turns text into L2-normalised float32 vectors. Providers live in
one module each and register a factory in ``memdir.embeddings.registry``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit vectors of a fixed dimension.

    ``provider``, ``model`` and ``dimensions`` form the embedder's identity; the
    index records it and refuses to mix vectors of different identities.
    """

    provider: str
    model: str
    dimensions: int

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed passages for storage; returns an array of shape (len(texts), dimensions)."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Embed one search query; returns an array of shape (dimensions,)."""
        ...


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """A deterministic bag-of-words embedder for tests: no model, no network.

    Each lower-cased word is hashed into one of ``dimensions`` buckets with a sign,
    so texts sharing words get a positive cosine. It is a test double, not a
    semantic model: paraphrases without shared words do not match.
    """

    provider = "hash"

    def __init__(self, dimensions: int = 64, *, record: bool = False) -> None:
        if dimensions < 2:
            raise ValueError("dimensions must be at least 2")
        self.dimensions = dimensions
        self.model = f"hash-{dimensions}"
        self.calls: list[tuple[str, ...]] | None = [] if record else None
        """With ``record``: the texts of each ``embed_documents`` call, in order."""

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.calls is not None:
            self.calls.append(tuple(texts))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _TOKEN.findall(text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dimensions] += 1.0 if (value >> 63) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector
