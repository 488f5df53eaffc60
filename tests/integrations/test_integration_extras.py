"""A framework adapter without its framework: one error naming the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

CASES = [
    ("langgraph", "langgraph", "pip install 'memdir[langgraph]'"),
    ("openai_agents", "agents", "pip install 'memdir[openai-agents]'"),
    ("camel", "camel", "pip install 'memdir[camel]'"),
]


@pytest.mark.parametrize(("module", "framework", "command"), CASES)
def test_a_missing_framework_names_the_extra(module: str, framework: str, command: str) -> None:
    code = (
        f"import sys; sys.modules[{framework!r}] = None\n"  # as if it were not installed
        "from memdir.errors import DependencyError\n"
        f"try:\n    import memdir.integrations.{module}\n"
        "except DependencyError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(command)


def test_the_package_imports_no_framework() -> None:
    frameworks = {"langgraph", "agents", "camel"}
    code = f"import sys, memdir.integrations; print(sorted({frameworks!r} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
