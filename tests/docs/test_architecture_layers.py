"""docs/architecture.md's layer diagram is the import graph of the package, exactly.

Each diagram line ``a/ ──► b/, c/`` (or ``──► nothing of ours``) names every package of
memdir that modules of ``a/`` import; the leaves (``errors.py``, ``machine.py``,
``progress.py``) may be imported anywhere. A new import across layers, or a dependency
that went away, fails here until the diagram says so.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "memdir"
LEAVES = {"errors", "machine", "progress"}
LINE = re.compile(r"^((?:[a-z_]+/,?\s*)+)──►\s*(.*)$")


def declared() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = text.split("## Layers", 1)[1].split("```")[1]
    layers: dict[str, set[str]] = {}
    for line in diagram.splitlines():
        match = LINE.match(line.strip())
        if not match:
            continue
        targets = (
            set()
            if match[2].startswith("nothing of ours")
            else set(re.findall(r"([a-z_]+)/", match[2].split("(")[0]))
        )
        for name in re.findall(r"([a-z_]+)/", match[1]):
            layers[name] = targets
    return layers


def imported(package: str) -> set[str]:
    found: set[str] = set()
    for path in (PACKAGE / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            found |= {n.split(".")[1] for n in names if n.startswith("memdir.")}
    return found - {package} - LEAVES


def test_the_diagram_names_the_layers_it_should() -> None:
    layers = declared()
    assert {"store", "search", "index", "facts", "workspace", "prompt", "embeddings", "llm"} <= set(
        layers
    )
    for name in layers:
        assert (PACKAGE / name).is_dir(), f"docs/architecture.md names {name}/, which is gone"


def test_each_layer_imports_exactly_what_the_diagram_says() -> None:
    wrong = {
        name: {
            "undeclared": sorted(imported(name) - targets),
            "not imported": sorted(targets - imported(name)),
        }
        for name, targets in declared().items()
        if imported(name) != targets
    }
    assert not wrong, f"update docs/architecture.md's layer diagram or the imports: {wrong}"
