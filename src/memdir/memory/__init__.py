"""memdir.memory: the ``Memory`` facade, the composition root every interface calls.

``facade`` (``Memory``: the operations), ``stores`` (the store handles it opens lazily),
``indexing`` (syncs, rebuilds and what they cover), ``paths`` (which workspace a path
means), ``prompt_inputs`` and ``curation`` (what the prompt and curation are given) and
``composition`` (providers and policies built from the settings).

    from memdir import Memory
    with Memory.open() as memory:
        memory.save("The team chose PostgreSQL for the orders service")
"""

from __future__ import annotations

from memdir.home import source_of
from memdir.memory.facade import BASE_PROMPT, Memory, ProgressCallback
from memdir.store.database_files import is_corruption
from memdir.tools import TOOL_NAMES, Scope

__all__ = [
    "BASE_PROMPT",
    "TOOL_NAMES",
    "Memory",
    "ProgressCallback",
    "Scope",
    "is_corruption",
    "source_of",
]
