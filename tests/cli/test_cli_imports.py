"""`memdir --help` and every `memdir <command> --help` load no heavy layer or library.

The commands import ``Memory``, model runtimes, servers and database drivers
inside their bodies, so help stays fast. A fresh interpreter prints every
command's help and then lists what it imported; the test fails when one of the
heavy modules is among them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "sqlean",
    "sqlite_vec",
    "fastapi",
    "starlette",
    "uvicorn",
    "mcp",
    "psycopg",
    "pydantic_settings",  # not pydantic itself: typer coerces option values with it
    "httpx",
    "memdir.config",
    "memdir.memory",
    "memdir.store",
    "memdir.search",
    "memdir.embeddings",
    "memdir.llm",
)

PROBE = """
import json, sys
from memdir.interfaces.cli import app
from memdir.interfaces.cli.reference import iter_commands
import typer

root = typer.main.get_command(app)
paths = [list(path) for path, _ in iter_commands(root)]
for path in paths:
    try:
        root.main([*path, "--help"], prog_name="memdir", standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps({"paths": len(paths), "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_help_of_every_command_imports_no_heavy_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["paths"] > 20  # the probe really walked the command tree
    assert "memdir.interfaces.cli" in report["modules"]
    assert _heavy(report["modules"]) == [], (
        "a command module imports a heavy module at import time; "
        "move the import into the command that needs it"
    )


def test_the_probe_sees_a_heavy_import() -> None:
    """The check above can fail: importing the store shows up in the same list."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, json, memdir.store; print(json.dumps(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "numpy" in _heavy(json.loads(done.stdout))


SEARCH_NEEDS_NOT = (
    "httpx",  # remote models and embedders only
    "watchfiles",  # the watcher of long-lived processes
    "croniter",  # the consolidation schedule
    "fastapi",
    "mcp",
    "memdir.curate",
    "memdir.context",
    "memdir.agent",
    "memdir.llm.openai_chat",
    "memdir.llm.anthropic_chat",
)

SEARCH_PROBE = """
import json, sys
from memdir.embeddings.base import HashEmbedder
from memdir.memory import Memory

with Memory.open(sys.argv[1], embedder=HashEmbedder()) as memory:
    memory.init()
    memory.append_daily("We chose PostgreSQL for billing.")
    memory.sync()
    assert memory.search("billing database").hits
print(json.dumps(sorted(sys.modules)))
"""


def test_a_search_loads_no_curation_model_client_or_server(tmp_path: Path) -> None:
    """A one-shot `memdir search` pays only for what a search uses (time and memory)."""
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_PROBE, str(tmp_path)],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    modules = json.loads(done.stdout)
    assert "memdir.search" in modules
    loaded = [m for m in modules if any(m == n or m.startswith(n + ".") for n in SEARCH_NEEDS_NOT)]
    assert loaded == [], "import these where they are used, not on the search path"
