"""memdir.embeddings layer."""

from memdir.embeddings.base import Embedder, HashEmbedder, Vectors
from memdir.embeddings.gemini import GeminiEmbedder
from memdir.embeddings.local import LocalEmbedder
from memdir.embeddings.openai_compatible import OpenAIEmbedder
from memdir.embeddings.registry import (
    ENTRY_POINT_GROUP,
    EmbedderFactory,
    available_embedders,
    create_embedder,
    register_embedder,
    unregister_embedder,
)
from memdir.embeddings.remote import RemoteEmbedder
from memdir.embeddings.voyage import VoyageEmbedder

__all__ = [
    "ENTRY_POINT_GROUP",
    "Embedder",
    "EmbedderFactory",
    "GeminiEmbedder",
    "HashEmbedder",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "RemoteEmbedder",
    "Vectors",
    "VoyageEmbedder",
    "available_embedders",
    "create_embedder",
    "register_embedder",
    "unregister_embedder",
]
