"""Adapters that put memdir behind agent frameworks' own memory interfaces.

Each adapter is a module of its own with an optional extra, imported only when used
(``from memdir.integrations.langgraph import MemdirStore``); a missing framework is
one error naming the ``pip install 'memdir[<extra>]'`` to run. No framework is imported
here, so ``import memdir.integrations`` never needs one.
"""

from __future__ import annotations

from memdir.errors import DependencyError


def missing(package: str, extra: str, exc: ImportError) -> DependencyError:
    """The one-line error of an integration whose framework is not installed."""
    return DependencyError(
        f"this integration needs the {package!r} package, which is not installed "
        f"({exc.name or package}); install it with: pip install 'memdir[{extra}]'"
    )
