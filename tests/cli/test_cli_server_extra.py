"""``memdir mcp`` and ``memdir serve`` without the server extra, or beside mcp 1, and an
integration without its framework: one line naming the ``pip install``, exit code 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HIDE = """
import sys
sys.modules.update(dict.fromkeys({hidden!r}))  # as if not installed: importing them fails
{code}
"""
CLI = "from memdir.interfaces.cli import main; sys.argv = ['memdir', *sys.argv[1:]]; main()"


def run(
    code: str, *args: str, hidden: tuple[str, ...] = (), path: Path | None = None
) -> tuple[int, str]:
    env = dict(os.environ)
    if path is not None:  # a directory first on the path: its packages win
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", HIDE.format(hidden=list(hidden), code=code), *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    return done.returncode, done.stderr


@pytest.mark.parametrize("command", ["mcp", "serve"])
@pytest.mark.parametrize("hidden", [("mcp", "mcp_types"), ("fastapi",), ("uvicorn",)])
def test_without_the_server_extra_one_line_names_the_install(
    home: Path, command: str, hidden: tuple[str, ...]
) -> None:
    code, err = run(CLI, "--home", str(home), command, hidden=hidden)
    assert code == 1
    assert err.count("\n") == 1, err
    assert err.startswith(f"Error: `memdir {command}` needs the server extra")
    assert err.rstrip().endswith("install it with: pip install 'memdir[server]'")


def test_beside_mcp_1_one_line_names_the_install(home: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"  # what pip leaves when a package pins mcp<2: mcp 1's files
    (site / "mcp").mkdir(parents=True)
    (site / "mcp" / "__init__.py").write_text("from mcp.client import *  # mcp 1\n")
    info = site / "mcp-1.26.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mcp\nVersion: 1.26.0\n")
    for command in ("mcp", "serve"):
        code, err = run(CLI, "--home", str(home), command, path=site)
        assert code == 1
        assert err.count("\n") == 1, err
        assert f"`memdir {command}` needs mcp 2, but mcp 1.26.0 is installed" in err
        assert "pip install 'memdir[server]'" in err


def test_an_integration_without_its_framework_names_its_extra() -> None:
    code, err = run("import memdir.integrations.anthropic", hidden=("anthropic", "anthropic.lib"))
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("memdir.errors.DependencyError: this integration needs the 'anthropic'")
    assert last.endswith("install it with: pip install 'memdir[anthropic]'")
