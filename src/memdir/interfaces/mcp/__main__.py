"""``python -m memdir.interfaces.mcp --home DIR [--agent ID]``: the stdio MCP server.

The same server as ``memdir mcp``, without the CLI. ``--embedder hash`` uses the
deterministic test embedder and ``--embedder none`` keyword-only search.
"""

from __future__ import annotations

import argparse
import logging
import sys

from memdir.embeddings.base import HashEmbedder
from memdir.errors import MemdirError
from memdir.interfaces.mcp.server import run_stdio
from memdir.memory import Memory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memdir.interfaces.mcp", description=__doc__)
    parser.add_argument("--home", help="memdir home (default: $MEMDIR_HOME or ~/.memdir)")
    parser.add_argument("--agent", help="agent id (default: the global workspace)")
    parser.add_argument("--embedder", choices=("configured", "hash", "none"), default="configured")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        memory = _open(args.home, args.agent, args.embedder)
    except MemdirError as exc:
        sys.stderr.write(f"memdir mcp: {exc}\n")
        return 1
    with memory:
        run_stdio(memory)
    return 0


def _open(home: str | None, agent: str | None, embedder: str) -> Memory:
    if embedder == "configured":
        return Memory.open(home, agent)
    return Memory.open(home, agent, embedder=HashEmbedder() if embedder == "hash" else None)


if __name__ == "__main__":
    sys.exit(main())
