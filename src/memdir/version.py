"""The installed version of memdir (a leaf: the interfaces and the prompt report it)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("memdir")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"
