"""A separate process that imports a home into a shared files table and prints its counts.

Used by test_workspace_files_pg.py: ``python pg_import_worker.py DSN SCHEMA HOME GO_FILE``.
The worker waits until ``GO_FILE`` exists, so both workers start importing together.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from memdir.store.postgres.files import PostgresFileTable, import_from_directory


def main(dsn: str, schema: str, home: str, go_file: str) -> None:
    with PostgresFileTable.open(dsn, schema) as table:
        deadline = time.monotonic() + 30
        while not Path(go_file).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        report = import_from_directory(table, home)
    sys.stdout.write(json.dumps(report.counts) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])
