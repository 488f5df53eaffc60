"""``python -m memdir.interfaces.http --home DIR [--port N]``: the server without the CLI.

``--embedder hash`` uses the deterministic test embedder, ``--embedder none``
keyword-only search; ``--no-watch`` skips the file watcher.
"""

from __future__ import annotations

import argparse
import logging
import sys

from memdir.config import load_settings
from memdir.embeddings.base import HashEmbedder
from memdir.errors import MemdirError
from memdir.interfaces.http.app import ServerLimits
from memdir.interfaces.http.serve import serve
from memdir.memory import Memory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memdir.interfaces.http", description=__doc__)
    parser.add_argument("--home", help="memdir home (default: $MEMDIR_HOME or ~/.memdir)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--agent", help="default agent id (default: the global workspace)")
    parser.add_argument("--embedder", choices=("configured", "hash", "none"), default="configured")
    parser.add_argument("--no-watch", action="store_true", help="do not start the file watcher")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    def open_memory(agent: str | None) -> Memory:
        if args.embedder == "configured":
            return Memory.open(args.home, agent)
        embedder = HashEmbedder() if args.embedder == "hash" else None
        return Memory.open(args.home, agent, embedder=embedder)

    try:
        limits = ServerLimits.from_settings(load_settings(args.home).settings.server)
        serve(args.home, args.host, args.port, args.agent, open_memory=open_memory,
              services=[] if args.no_watch else None, limits=limits)  # fmt: skip
    except MemdirError as exc:
        sys.stderr.write(f"memdir serve: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
