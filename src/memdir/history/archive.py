"""A home as one file and back: a git bundle of its history (docs/history.md).

The archive holds every version of every workspace file, so the facts and their history
(kept as marked lines in the daily notes) come with it; the index, the facts database,
sessions, the configuration and tokens do not, as they are not versioned. Importing into a
home without workspaces checks the last version out; the index is then rebuilt from the
files, so searches answer as they did at home.
"""

from __future__ import annotations

from pathlib import Path

from memdir.errors import InvalidInputError, NotFoundError, StoreError
from memdir.history.repo import HomeHistory


def export_archive(history: HomeHistory, target: Path) -> Path:
    """Write the home's history (everything recorded, outside edits included) to ``target``."""
    target = Path(target).resolve()
    if target.is_dir():
        raise InvalidInputError(f"{target} is a folder; give the path of the archive file")
    with history.locked():
        history.start()
        history.record_outside()
        history.git("bundle", "create", "-q", str(target), "HEAD")
    return target


def import_archive(history: HomeHistory, source: Path) -> str:
    """Check the archive's last version out into this home, which has no workspaces yet;
    the version id."""
    source = Path(source).resolve()
    if not source.is_file():
        raise NotFoundError(f"no archive at {source}; give the file `memdir archive export` wrote")
    if any((history.root / name).exists() for name in ("workspace", "agents", ".git")):
        raise InvalidInputError(
            f"{history.root} already holds a memdir home; import into a new --home, or merge "
            "two homes with `memdir sync --remote`"
        )
    with source.open("rb") as file:
        header = file.read(20)
    if not header.startswith((b"# v2 git bundle\n", b"# v3 git bundle\n")):
        raise InvalidInputError(f"{source} is not a memdir archive (a git bundle)")
    history.root.mkdir(parents=True, exist_ok=True)
    with history.locked():
        history.git("init", "-q")
        history.git("fetch", "-q", str(source), "HEAD")
        history.git("reset", "-q", "--hard", "FETCH_HEAD")
        version = history.git("rev-parse", "HEAD").strip()
    if not version:
        raise StoreError(f"importing {source} left no version in {history.root}")
    return version
