"""Adapters that put memdir behind agent frameworks' own memory interfaces.

Each adapter is a module of its own with an optional extra, imported only when used
(``from memdir.integrations.langgraph import MemdirStore``); a missing framework is
one error naming the ``pip install 'memdir[<extra>]'`` to run. No framework is imported
here, so ``import memdir.integrations`` never needs one.
"""

from __future__ import annotations

import json
from typing import Any

from memdir.errors import DependencyError, SecretRejectedError
from memdir.facts.safety import reject_secrets


def missing(package: str, extra: str, exc: ImportError) -> DependencyError:
    """The one-line error of an integration whose framework is not installed."""
    return DependencyError(
        f"this integration needs the {package!r} package, which is not installed "
        f"({exc.name or package}); install it with: pip install 'memdir[{extra}]'"
    )


def plain_records(
    records: list[Any], what: str, refused: type[SecretRejectedError]
) -> list[dict[str, Any]]:
    """``records`` as plain JSON values, refused whole (``refused``, nothing written) if
    one looks like it holds a credential; ``what`` names them in the error."""
    stored: list[dict[str, Any]] = [
        json.loads(json.dumps(record, ensure_ascii=False)) for record in records
    ]
    try:
        reject_secrets(json.dumps(stored, ensure_ascii=False), what)
    except SecretRejectedError as exc:
        raise refused(str(exc)) from exc
    return stored
