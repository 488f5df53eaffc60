"""Writes that know what the caller read: content hashes, create-only, insert, rename.

An agent reads a file, thinks, and writes: meanwhile another agent (or a save, or a
person in an editor) may have changed it. Each write here can take the SHA-256 of the
text the caller read (``expected_sha256``); under the file's lock the current text is
hashed and, when it differs, nothing is written and ``ConflictError`` says to read the
file again. So no caller needs a read-modify-write race:

* ``create_new``: create-only (``create_exclusive``: two creators cannot both win);
* ``modify``: replace or transform a file's text under its lock, hash-checked
  (``replace_text`` and ``insert_lines`` are transforms);
* ``delete_checked``: delete, hash-checked;
* ``rename_file``: move a file to a free path (a hard link, then the old name goes),
  never over an existing file.

These work on a ``Workspace`` with its own rules (an agent's copy of a global file it
reads by fallback, USER.md kept global) and take the same ``check(relative, before,
after)`` the workspace's writes take (the credential guard).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memdir.errors import (
    ConflictError,
    InvalidInputError,
    InvalidPathError,
    NextStep,
    NotFoundError,
)
from memdir.workspace.atomic import (
    check_size,
    create_exclusive,
    fsync_directory,
    read_markdown,
    write_atomic,
)
from memdir.workspace.locking import lock_file
from memdir.workspace.paths import resolve_inside, validate_relative_path
from memdir.workspace.workspace import SEE_FILES, ContentCheck, Workspace

logger = logging.getLogger(__name__)

_SHA256 = re.compile(r"[0-9a-f]{64}")
READ_AGAIN = NextStep("read it again with {}, then make your change to what it holds now", "reread")


def content_sha256(text: str) -> str:
    """The hex SHA-256 of ``text`` encoded as UTF-8: what a read returns as ``sha256``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FileText:
    """A whole file as read: its path, its text and the SHA-256 of that text."""

    path: str
    content: str
    sha256: str


def read_text(workspace: Workspace, path: str) -> FileText:
    """Read a whole file with its hash (``Workspace.read_file`` plus ``sha256``)."""
    content = workspace.read_file(path)
    return FileText(str(validate_relative_path(path)), content, content_sha256(content))


def check_expected(expected: str | None) -> str | None:
    """``expected_sha256`` as given, lower-cased; refused unless 64 hex digits."""
    if expected is None:
        return None
    if not isinstance(expected, str) or not _SHA256.fullmatch(expected.strip().lower()):
        raise InvalidInputError(
            f"expected_sha256 {expected!r} is not a SHA-256: pass the 64 hex digits of the "
            "sha256 that reading the file returned"
        )
    return expected.strip().lower()


def check_unchanged(expected: str | None, relative: str, before: str) -> None:
    """Raise ``ConflictError`` unless ``before`` hashes to ``expected`` (None: no check)."""
    if expected is None:
        return
    actual = content_sha256(before)
    if actual != expected:
        raise ConflictError(
            f"{relative!r} changed since you read it (its sha256 is now {actual[:12]}..., "
            f"not the {expected[:12]}... you read); nothing was changed",
            next_step=READ_AGAIN,
        )


def expect_current(workspace: Workspace, path: str, expected: str) -> None:
    """Raise ``ConflictError`` unless the file a read of ``path`` finds hashes to
    ``expected`` (a check before the work; the write checks again under the lock)."""
    try:
        current = workspace.read_file(path)
    except NotFoundError as exc:
        raise _gone(str(validate_relative_path(path))) from exc
    check_unchanged(expected, str(validate_relative_path(path)), current)


def _gone(relative: str) -> ConflictError:
    return ConflictError(
        f"{relative!r} no longer exists (deleted or renamed since you read it); nothing "
        "was changed",
        next_step=SEE_FILES,
    )


def _taken(relative: str, what: str) -> ConflictError:
    return ConflictError(
        f"{relative!r} already exists; {what}",
        next_step=NextStep("read it with {} and change it, or choose another path", "read_file"),
    )


def create_new(workspace: Workspace, path: str, content: str, check: ContentCheck) -> str:
    """Create ``path`` with ``content`` only if no file is there (create-only); its path.

    A file a read would find (the agent's own, or a global one by fallback) counts as
    there. Two concurrent creators cannot both win: the loser gets ``ConflictError``.
    """
    if not isinstance(content, str):
        raise InvalidInputError(f"content must be a string, got {type(content).__name__}")
    relative, target = workspace._target(path)
    if workspace.has_file(relative):
        raise _taken(relative, "nothing was written (create-only)")
    workspace._make_parents(relative, target)
    check(relative, "", content)
    if not create_exclusive(target, content):
        raise _taken(relative, "nothing was written (create-only)")
    logger.info("created %s in %s", relative, workspace.root)
    return relative


Change = Callable[[str, str], str]
"""``change(relative, before) -> after``: the new text of a file from its current text."""


def modify(
    workspace: Workspace,
    path: str,
    change: Change,
    expected: str | None,
    check: ContentCheck,
) -> tuple[str, str]:
    """Apply ``change`` to a file's current text under its lock; ``(path, text after)``.

    With ``expected`` (a SHA-256) a file whose text hashes otherwise, or that is gone, is
    left as it is and ``ConflictError`` raised. An agent changing a global file it reads
    by fallback gets its own changed copy, made under the global file's lock (as an edit).
    """
    relative, target = workspace._target(path)
    while True:
        try:
            with lock_file(target):
                return relative, _apply(relative, target, target, change, expected, check)
        except FileNotFoundError:
            pass  # no copy of its own (yet, or deleted meanwhile)
        source = workspace._fallback(PurePosixPath(relative))
        if source is None:
            if expected is not None:
                raise _gone(relative)
            raise NotFoundError(
                f"{relative!r} does not exist in the workspace", next_step=SEE_FILES
            )
        try:
            with lock_file(source):
                if target.exists():
                    continue  # another writer made the copy while we waited
                workspace._make_parents(relative, target)
                return relative, _apply(relative, source, target, change, expected, check)
        except FileNotFoundError:
            continue  # the global file was replaced meanwhile: look again


def _apply(
    relative: str,
    source: Path,
    target: Path,
    change: Change,
    expected: str | None,
    check: ContentCheck,
) -> str:
    before = read_markdown(source)  # strict: a file that is not UTF-8 is never rewritten
    check_unchanged(expected, relative, before)
    after = change(relative, before)
    check_size(after, f"{relative!r} after the change")
    check(relative, before, after)
    write_atomic(target, after)
    logger.info("changed %s (%d -> %d chars)", relative, len(before), len(after))
    return after


def replace_text(content: str) -> Change:
    """The change that replaces the whole text with ``content``."""
    if not isinstance(content, str):
        raise InvalidInputError(f"content must be a string, got {type(content).__name__}")
    return lambda _relative, _before: content


def line_count(text: str) -> int:
    """Lines of ``text`` split on '\\n' (a last line without '\\n' counts; '' has none)."""
    return text.count("\n") + (0 if text == "" or text.endswith("\n") else 1)


def insert_lines(line: int, text: str) -> Change:
    """The change that inserts ``text`` as whole lines after line ``line`` (0: first).

    The file's own lines and line endings are kept; ``text`` gets a final '\\n' if it
    has none, and a last line without one gets it before text inserted after it.
    """
    if isinstance(line, bool) or not isinstance(line, int) or line < 0:
        raise InvalidInputError(
            f"line must be a whole number of 0 or more (0 inserts before the first line), "
            f"got {line!r}"
        )
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a string, got {type(text).__name__}")
    body = text if text.endswith("\n") else text + "\n"

    def change(relative: str, before: str) -> str:
        total = line_count(before)
        if line > total:
            raise InvalidInputError(
                f"line {line} is past the end of {relative!r}, which has {total} lines; "
                f"pass a line from 0 (before the first line) to {total} (after the last)"
            )
        pieces = [piece + "\n" for piece in before.split("\n")][:total]
        unterminated = before != "" and not before.endswith("\n")
        if unterminated and line < total:
            pieces[-1] = pieces[-1][:-1]  # the last line keeps having no '\n'
        return "".join(pieces[:line]) + body + "".join(pieces[line:])

    return change


def _own_file(workspace: Workspace, path: str) -> tuple[str, Path]:
    """A file of this workspace itself (never a global file read by fallback)."""
    relative = str(validate_relative_path(path))
    target = resolve_inside(workspace.root, relative)
    if target.is_dir():
        raise InvalidPathError(f"{path!r} is a folder, not a file; pass a '.md' file path")
    return relative, target


def delete_checked(workspace: Workspace, path: str, expected: str | None) -> str:
    """Delete a file of this workspace whose text hashes to ``expected``; its path."""
    relative, target = _own_file(workspace, path)
    try:
        with lock_file(target):
            if expected is not None:
                check_unchanged(expected, relative, read_markdown(target, strict=False))
            target.unlink()
    except FileNotFoundError as exc:
        if expected is not None:
            raise _gone(relative) from exc
        raise NotFoundError(
            f"{relative!r} does not exist in the workspace", next_step=SEE_FILES
        ) from exc
    fsync_directory(target.parent)
    logger.info("deleted %s in %s", relative, workspace.root)
    return relative


def rename_file(
    workspace: Workspace, old_path: str, new_path: str, expected: str | None
) -> tuple[str, str]:
    """Move a file of this workspace to a free path; ``(old, new)`` relative paths.

    Never replaces a file: the new name is a hard link made while the old file is
    locked (it fails when the name is taken), then the old name goes. A crash between
    the two leaves both names, never neither.
    """
    old, source = _own_file(workspace, old_path)
    new, dest = _own_file(workspace, new_path)
    if old == new:
        raise InvalidInputError(f"{old!r} is already called that; pass a different new path")
    workspace._make_parents(new, dest)
    try:
        with lock_file(source):
            if expected is not None:
                check_unchanged(expected, old, read_markdown(source, strict=False))
            _link_or_move(source, dest, new)
    except FileNotFoundError as exc:
        if expected is not None:
            raise _gone(old) from exc
        raise NotFoundError(
            f"{old!r} does not exist in the workspace", next_step=SEE_FILES
        ) from exc
    fsync_directory(dest.parent)
    if dest.parent != source.parent:
        fsync_directory(source.parent)
    logger.info("renamed %s to %s in %s", old, new, workspace.root)
    return old, new


def _link_or_move(source: Path, dest: Path, new: str) -> None:
    try:
        os.link(source, dest, follow_symlinks=False)
    except FileExistsError as exc:
        raise _taken(new, "nothing was moved") from exc
    except OSError as exc:  # no hard links here (some network and FAT filesystems)
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        if dest.exists():
            raise _taken(new, "nothing was moved") from exc
        os.rename(source, dest)
        return
    with contextlib.suppress(FileNotFoundError):
        source.unlink()
