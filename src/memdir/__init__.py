"""memdir: persistent, searchable, self-curating memory for AI agents, kept as Markdown.

from memdir import Memory

with Memory.open() as memory:          # $MEMDIR_HOME or ~/.memdir
    memory.sync()
    for hit in memory.search("what did we decide about the database?"):
        print(hit.citation, hit.text)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdir.errors import MemdirError
from memdir.version import __version__

if TYPE_CHECKING:
    from memdir.memory import Memory

__all__ = ["MemdirError", "Memory", "__version__"]


def __getattr__(name: str) -> Any:
    # Memory pulls in every layer; import it on first use so `import memdir` stays cheap.
    if name == "Memory":
        from memdir.memory import Memory

        return Memory
    raise AttributeError(f"module 'memdir' has no attribute {name!r}")
