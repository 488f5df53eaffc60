"""A home as one file and back: its history and its settings (docs/history.md).

An archive is a zip file of three entries, stored as they are (the bundle is compressed
already):

* ``memdir-archive.json``, the manifest: the format and its version, which entries hold
  what, and which settings were left out and why (secrets never travel);
* ``history.bundle``: a git bundle of every version of every workspace file, so the facts
  and their history (marked lines of the daily notes) come with it;
* ``memdir.toml``: the home's settings without secrets (absent when the home had none).

The index, the facts database, sessions and tokens never travel: the index and facts are
rebuilt from the files, the rest belongs to the machine. Archives written before the
settings travelled are a bare git bundle; they import as they did.

Nothing in an archive is trusted: entries are read by their fixed names (never
extracted by the names the file gives), sizes are bounded, and the bundle's last version
is checked before anything is written (only ``workspace/``, ``agents/<id>/``,
``.gitignore`` and ``.gitattributes``; regular files only, no links, no ``..``, no
``.git``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memdir.errors import InvalidInputError, NotFoundError, StoreError
from memdir.history.remote_tree import shown, tree_refusals
from memdir.history.repo import HomeHistory
from memdir.home import AGENTS_DIR, GLOBAL_DIR

FORMAT = "memdir archive"
FORMAT_VERSION = 1
MANIFEST = "memdir-archive.json"
BUNDLE = "history.bundle"
SETTINGS = "memdir.toml"
ENTRIES = (MANIFEST, BUNDLE, SETTINGS)
MAX_MANIFEST_BYTES = 256 * 1024
MAX_SETTINGS_BYTES = 64 * 1024
NEVER_INCLUDED = (
    "agent tokens (tokens.json, api-token)",
    "the index and the facts database (rebuilt from the files)",
    "sessions",
)
_BUNDLE_HEADERS = (b"# v2 git bundle\n", b"# v3 git bundle\n")
_NOT_AN_ARCHIVE = "give a file `memdir archive export` wrote"


@dataclass(frozen=True)
class LeftOut:
    """A setting (or part of one) an export left out, and why."""

    key: str  # "section.name"
    what: str  # "the value", "the password"
    why: str


@dataclass(frozen=True)
class OpenedArchive:
    """An archive checked and ready to import: its bundle on disk, its settings' text."""

    source: Path
    bundle: Path
    settings: str | None
    left_out: tuple[LeftOut, ...]
    legacy: bool  # a bare git bundle, written before settings travelled


def export_archive(
    history: HomeHistory, target: Path, settings: str | None = None,
    left_out: Sequence[LeftOut] = (),
) -> Path:  # fmt: skip
    """Write the home's history (everything recorded, outside edits included) and
    ``settings`` (the text of a ``memdir.toml`` already without secrets) to ``target``."""
    target = Path(target).resolve()
    if target.is_dir():
        raise InvalidInputError(f"{target} is a folder; give the path of the archive file")
    if settings is not None and len(settings.encode("utf-8")) > MAX_SETTINGS_BYTES:
        raise InvalidInputError(
            f"the settings are over {MAX_SETTINGS_BYTES // 1024} KiB; shorten memdir.toml"
        )
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "history": BUNDLE,
        "settings": None
        if settings is None
        else {"file": SETTINGS, "left_out": [vars(item) for item in left_out]},
        "never_included": list(NEVER_INCLUDED),
    }
    with tempfile.TemporaryDirectory(prefix="memdir-archive-") as tmp:
        bundle = Path(tmp) / BUNDLE
        with history.locked():
            history.start()
            history.record_outside()
            history.git("bundle", "create", "-q", str(bundle), "HEAD")
        partial = target.with_name(f".{target.name}.partial")
        try:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as archive:
                archive.writestr(MANIFEST, json.dumps(manifest, indent=1) + "\n")
                archive.write(bundle, BUNDLE)
                if settings is not None:
                    archive.writestr(SETTINGS, settings)
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
    return target


@contextmanager
def open_archive(source: Path) -> Iterator[OpenedArchive]:
    """Check the archive at ``source`` (manifest, entries, sizes, the bundle's files);
    within the block its bundle is a file on disk. Writes nothing to any home."""
    source = Path(source).resolve()
    if not source.is_file():
        raise NotFoundError(f"no archive at {source}; {_NOT_AN_ARCHIVE}")
    with source.open("rb") as file:
        header = file.read(20)
    with tempfile.TemporaryDirectory(prefix="memdir-archive-") as tmp:
        if header.startswith(_BUNDLE_HEADERS):
            opened = OpenedArchive(source, source, None, (), legacy=True)
        elif header.startswith(b"PK\x03\x04"):
            opened = _unpack(source, Path(tmp))
        else:
            raise InvalidInputError(f"{source} is not a memdir archive; {_NOT_AN_ARCHIVE}")
        check_bundle(opened.bundle, Path(tmp) / "check.git", source)
        yield opened


def _bad(source: Path, problem: str) -> InvalidInputError:
    return InvalidInputError(
        f"{source} is not an archive memdir can import: {problem}; export the home again with "
        "`memdir archive export FILE` and import that file"
    )


def _unpack(source: Path, tmp: Path) -> OpenedArchive:
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise _bad(source, f"a damaged zip file ({exc})") from exc
    with archive:
        names = [info.filename for info in archive.infolist()]
        for name in names:
            if name not in ENTRIES:
                raise _bad(source, f"it holds an unexpected entry {name!r}")
            if names.count(name) > 1:
                raise _bad(source, f"it holds the entry {name!r} twice")
        for needed in (MANIFEST, BUNDLE):
            if needed not in names:
                raise _bad(source, f"it has no {needed}")
        manifest = _manifest(source, _read(archive, source, MANIFEST, MAX_MANIFEST_BYTES))
        settings_entry = manifest.get("settings")
        settings: str | None = None
        left_out: tuple[LeftOut, ...] = ()
        if settings_entry is not None:
            if SETTINGS not in names:
                raise _bad(source, f"its manifest names settings but it has no {SETTINGS}")
            raw = _read(archive, source, SETTINGS, MAX_SETTINGS_BYTES)
            try:
                settings = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _bad(source, f"its {SETTINGS} is not UTF-8 text") from exc
            left_out = _left_out(source, settings_entry)
        bundle = tmp / BUNDLE
        try:
            with archive.open(BUNDLE) as entry, bundle.open("wb") as out:
                shutil.copyfileobj(entry, out, 1 << 20)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise _bad(source, f"its {BUNDLE} cannot be read ({exc})") from exc
    with bundle.open("rb") as file:
        if not file.read(20).startswith(_BUNDLE_HEADERS):
            raise _bad(source, f"its {BUNDLE} is not a git bundle")
    return OpenedArchive(source, bundle, settings, left_out, legacy=False)


def _read(archive: zipfile.ZipFile, source: Path, name: str, limit: int) -> bytes:
    """The entry's bytes, refused past ``limit`` (however large the zip says it is)."""
    if archive.getinfo(name).file_size > limit:
        raise _bad(source, f"its {name} is over {limit // 1024} KiB")
    try:
        with archive.open(name) as entry:
            data = entry.read(limit + 1)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise _bad(source, f"its {name} cannot be read ({exc})") from exc
    if len(data) > limit:
        raise _bad(source, f"its {name} is over {limit // 1024} KiB")
    return data


def _manifest(source: Path, raw: bytes) -> Mapping[str, Any]:
    try:
        manifest = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(source, f"its {MANIFEST} is not JSON") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _bad(source, f"its {MANIFEST} is not a memdir archive manifest")
    version = manifest.get("version")
    if not isinstance(version, int) or version < 1:
        raise _bad(source, f"its {MANIFEST} has no valid format version")
    if version > FORMAT_VERSION:
        raise InvalidInputError(
            f"{source} was written by a newer memdir (archive format {version}, this one "
            f"reads up to {FORMAT_VERSION}); upgrade memdir to import it"
        )
    if manifest.get("history") != BUNDLE:
        raise _bad(source, f"its manifest names the history {manifest.get('history')!r}")
    settings = manifest.get("settings")
    if settings is not None and (
        not isinstance(settings, dict) or settings.get("file") != SETTINGS
    ):
        raise _bad(source, f"its manifest names the settings {settings!r}")
    return manifest


def _left_out(source: Path, entry: Mapping[str, Any]) -> tuple[LeftOut, ...]:
    items = entry.get("left_out", [])
    if not isinstance(items, list) or len(items) > 1000:
        raise _bad(source, "its manifest's settings.left_out is not a list")
    out = []
    for item in items:
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) and len(item[k]) < 500 and item[k].isprintable()
            for k in ("key", "what", "why")  # printed to a terminal: no control characters
        ):
            raise _bad(source, f"its manifest's settings.left_out holds {item!r}")
        out.append(LeftOut(item["key"], item["what"], item["why"]))
    return tuple(out)


def check_bundle(bundle: Path, scratch: Path, source: Path) -> None:
    """Refuse a bundle whose last version holds anything but workspace files (a path out
    of the home, a link, a submodule, a ``.git`` folder), before any home sees it."""
    checker = HomeHistory(scratch)
    scratch.mkdir(parents=True)
    checker.git("init", "-q", "--bare")
    try:
        checker.git("fetch", "-q", str(bundle), "HEAD")
    except StoreError as exc:
        raise _bad(source, f"its history cannot be read ({exc})") from exc
    refused = tree_refusals(checker, "FETCH_HEAD")
    if refused is None:
        raise _bad(source, "its history has no last version")
    if refused:
        raise _bad(source, f"its files hold what no home may check out: {shown(refused)}")


def import_archive(history: HomeHistory, opened: OpenedArchive) -> str:
    """Check the archive's last version out into this home, which has no workspaces yet;
    the version id."""
    if any((history.root / name).exists() for name in (GLOBAL_DIR, AGENTS_DIR, ".git")):
        raise InvalidInputError(
            f"{history.root} already holds a memdir home; import into a new --home, or merge "
            "two homes with `memdir sync --remote`"
        )
    history.root.mkdir(parents=True, exist_ok=True)
    with history.locked():
        history.git("init", "-q")
        history.git("fetch", "-q", str(opened.bundle), "HEAD")
        history.git("reset", "-q", "--hard", "FETCH_HEAD")
        version = history.git("rev-parse", "HEAD").strip()
    if not version:
        raise StoreError(f"importing {opened.source} left no version in {history.root}")
    return version
