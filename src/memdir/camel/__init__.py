"""memdir.camel layer.

A CAMEL-style object API over memdir: ``MemoryRecord`` and ``ContextRecord``
values; a ``ChatHistoryBlock`` (bounded, importance-aware eviction, persisted to a
session transcript) and a ``VectorDBBlock`` (records as daily-note lines, found
with memdir's hybrid search); ``ScoreBasedContextCreator``,
``RecencyContextCreator`` and ``RandomContextCreator`` that pack records under a token
limit (optionally within one task); the agent
memories ``ChatHistoryMemory``, ``VectorDBMemory`` and ``LongtermAgentMemory``;
and ``MemoryToolkit`` (remember / recall / forget as function tools). It is built
on the ``Memory`` facade only, so whatever it writes is ordinary memdir memory.
"""

from __future__ import annotations

from memdir.camel.context import (
    ContextCreator,
    ContextWeights,
    RandomContextCreator,
    RecencyContextCreator,
    ScoreBasedContextCreator,
)
from memdir.camel.history import ChatHistoryBlock
from memdir.camel.memories import (
    AgentMemory,
    ChatHistoryMemory,
    LongtermAgentMemory,
    VectorDBMemory,
    merge_records,
)
from memdir.camel.records import ContextRecord, MemoryRecord
from memdir.camel.toolkit import FunctionTool, MemoryToolkit, SessionArgs
from memdir.camel.vectordb import VectorDBBlock

__all__ = [
    "AgentMemory",
    "ChatHistoryBlock",
    "ChatHistoryMemory",
    "ContextCreator",
    "ContextRecord",
    "ContextWeights",
    "FunctionTool",
    "LongtermAgentMemory",
    "MemoryRecord",
    "MemoryToolkit",
    "RandomContextCreator",
    "RecencyContextCreator",
    "ScoreBasedContextCreator",
    "SessionArgs",
    "VectorDBBlock",
    "VectorDBMemory",
    "merge_records",
]
