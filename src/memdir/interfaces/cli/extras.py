"""The optional packages a command needs, checked before it imports them: a missing or
wrong one is one line naming the ``pip install``, not a traceback."""

from __future__ import annotations

import importlib
import importlib.metadata

from memdir.errors import DependencyError

SERVER_MODULES = ("fastapi", "uvicorn", "mcp_types", "mcp.shared.exceptions")
"""What ``memdir mcp`` and ``memdir serve`` import from the ``server`` extra (``mcp_types``
and ``MCPError`` exist only in mcp 2)."""
SERVER_INSTALL = "pip install 'memdir[server]'"


def require_server(command: str) -> None:
    """Raise ``DependencyError`` unless the ``server`` extra is installed, with mcp 2."""
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        version = None
    if version is not None and version.split(".")[0] != "2":
        raise DependencyError(
            f"`memdir {command}` needs mcp 2, but mcp {version} is installed (a package that "
            f"pins mcp<2 may have replaced it); install it with: {SERVER_INSTALL} (and keep "
            "packages that need mcp 1 in an environment of their own)"
        )
    for module in SERVER_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            missing = (exc.name or module).split(".")[0]
            raise DependencyError(
                f"`memdir {command}` needs the server extra, and {missing!r} is not "
                f"installed; install it with: {SERVER_INSTALL}"
            ) from None
