"""memdir inside the frameworks agents already run in; each one an optional extra.

Import the module of a framework (``memdir.integrations.anthropic``); without its
package installed the import fails with one line naming the ``pip install`` to run.
"""

from __future__ import annotations

from memdir.errors import DependencyError


def missing(package: str, extra: str, exc: ImportError) -> DependencyError:
    """The one-line error of an integration whose framework is not installed."""
    return DependencyError(
        f"this integration needs the {package!r} package, which is not installed "
        f"({exc.name or package}); install it with: pip install 'memdir[{extra}]'"
    )
