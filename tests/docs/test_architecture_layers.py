"""docs/architecture.md's layer diagram is the import graph of the package, exactly.

Each diagram line ``a/ ──► b/, c.py`` (or ``──► nothing of ours``; a line may go on
below it, indented) names every package or module of memdir that ``a`` imports; the
leaves may be imported anywhere. Every top-level name of the package is on the left of
a line or is a leaf. Imports count wherever they are: at module level, inside a function
or under ``TYPE_CHECKING``. A new import across layers, or a dependency that went away,
fails here until the diagram says so; an import cycle between layers or between modules
fails whatever the diagram says.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "memdir"
NAME = r"(__init__\.py|__main__\.py|[a-z_]+/|[a-z_]+\.py)"
LINE = re.compile(rf"^((?:{NAME}(?:\s*\([^)]*\))?,?\s*)+)──►\s*(.*)$")


def _unit(token: str) -> str:
    return token.removesuffix("/").removesuffix(".py")


def _diagram() -> list[str]:
    """The diagram's lines, continuation lines joined to the line they continue."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## Layers", 1)[1].split("```")[1]
    lines: list[str] = []
    for raw in block.splitlines():
        if raw.startswith("    ") and lines and "──►" in lines[-1]:
            lines[-1] += " " + raw.strip()
        elif raw.strip():
            lines.append(raw.strip())
    return lines


def declared() -> dict[str, set[str]]:
    layers: dict[str, set[str]] = {}
    for line in _diagram():
        match = LINE.match(line)
        if not match:
            continue
        targets_text = match[len(match.groups())]
        targets = (
            set()
            if targets_text.startswith("nothing of ours")
            else {_unit(t) for t in re.findall(NAME, targets_text.split("(")[0])}
        )
        for name in re.findall(NAME, re.sub(r"\([^)]*\)", "", match[1])):
            layers[_unit(name)] = targets
    return layers


def leaves() -> set[str]:
    """The modules of the diagram's last line(s): ``a.py, b.py, ... (leaves ...)``."""
    found: set[str] = set()
    for line in _diagram():
        if "──►" in line:
            continue
        found |= {_unit(n) for n in re.findall(r"\b([a-z_]+\.py)", line.split("(")[0])}
    return found


def top_level_names() -> set[str]:
    return {
        _unit(path.name + ("/" if path.is_dir() else ""))
        for path in PACKAGE.iterdir()
        if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py"
    }


def _files(unit: str) -> Iterator[Path]:
    path = PACKAGE / unit
    if path.is_dir():
        yield from path.rglob("*.py")
    else:
        yield PACKAGE / f"{unit}.py"


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imported_modules(path: Path) -> Iterator[str]:
    """Every ``memdir...`` module ``path`` imports, wherever the import stands: ``from a
    import b`` imports ``a.b`` when that is a module, else a name of ``a``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                module = f"{node.module}.{alias.name}"
                yield module if _is_module(module) else node.module


def imported(unit: str) -> set[str]:
    found: set[str] = set()
    names = top_level_names()
    for path in _files(unit):
        for module in _imported_modules(path):
            parts = module.split(".")
            if parts[0] == "memdir" and len(parts) > 1 and parts[1] in names:
                found.add(parts[1])
    return found - {unit} - leaves()


def test_the_diagram_names_every_top_level_name() -> None:
    layers = declared()
    assert {"memory", "tools", "interfaces", "store", "search", "index", "facts"} <= set(layers)
    undeclared = top_level_names() - set(layers) - leaves()
    assert not undeclared, f"docs/architecture.md's layer diagram lacks {sorted(undeclared)}"
    for name in set(layers) | leaves():
        assert name in top_level_names(), f"docs/architecture.md names {name}, which is gone"


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


def test_leaves_import_only_leaves() -> None:
    for leaf in leaves():
        assert imported(leaf) == set(), f"{leaf}.py is a leaf but imports {imported(leaf)}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_layers() -> None:
    assert _cycles(declared()) == []
    assert _cycles({name: imported(name) for name in top_level_names()}) == []


def _module_graph() -> dict[str, set[str]]:
    modules: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return {
        name: {m for m in _imported_modules(path) if m in modules and m != name}
        for name, path in modules.items()
    }


def test_no_import_cycle_between_modules() -> None:
    # bench/ (LoCoMo's baselines and runner import each other) is measured elsewhere.
    cycles = [c for c in _cycles(_module_graph()) if not c[0].startswith("memdir.bench.")]
    assert cycles == []


def test_no_module_is_over_500_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}, "split these modules along what they do (docs/architecture.md)"
