"""Validation of agent ids and workspace-relative paths.

Every path an agent hands to the file tools passes ``validate_relative_path``
(pure string checks) and then ``resolve_inside`` (symlink checks against the
disk). Both raise ``InvalidPathError`` with a message that quotes the path and
says what to send instead; neither writes anything.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePosixPath

from memdir.errors import InvalidPathError
from memdir.text import skeleton

MAX_PATH_CHARS = 1024
MAX_NAME_BYTES = 255
MARKDOWN_SUFFIX = ".md"

_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x01-\x1f\x7f]")
# Format characters (bidi overrides and isolates, zero-width spaces and joiners, BOM),
# line and paragraph separators, private use: invisible or reordering in a listing.
_INVISIBLE = frozenset({"Cf", "Zl", "Zp", "Co"})
_WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"]
    + [f"com{i}" for i in range(1, 10)]
    + [f"lpt{i}" for i in range(1, 10)]
)


def _reject(path: str, reason: str) -> InvalidPathError:
    return InvalidPathError(
        f"invalid workspace path {path!r}: {reason}; "
        "use a relative path such as 'memory/notes.md' inside the workspace"
    )


def _check_characters(path: str) -> None:
    if not isinstance(path, str):
        raise InvalidPathError(f"invalid workspace path {path!r}: expected a string")
    if not path.strip():
        raise _reject(path, "the path is empty")
    if "\x00" in path:
        raise _reject(path, "it contains a NUL byte")
    if _CONTROL.search(path):
        raise _reject(path, "it contains a control character")
    hidden = next((c for c in path if unicodedata.category(c) in _INVISIBLE), None)
    if hidden is not None:
        name = unicodedata.name(hidden, "an invisible character")
        raise _reject(
            path, f"it contains U+{ord(hidden):04X} ({name}), which can disguise a file name"
        )
    if "\\" in path:
        raise _reject(path, "backslashes are not allowed, separate folders with '/'")
    if len(path) > MAX_PATH_CHARS:
        raise _reject(path, f"it is longer than {MAX_PATH_CHARS} characters")


def _check_anchoring(path: str) -> None:
    if path.startswith("/"):
        raise _reject(path, "absolute paths are not allowed")
    if path.startswith("~"):
        raise _reject(path, "home-relative paths ('~') are not allowed")
    if _DRIVE.match(path):
        raise _reject(path, "Windows drive paths are not allowed")
    if ":" in path:
        raise _reject(path, "':' is not allowed (Windows drive or stream syntax)")


def _clean_parts(path: str) -> list[str]:
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise _reject(path, "'..' components are not allowed")
    if not parts:
        raise _reject(path, "the path names no file")
    for part in parts:
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise _reject(path, f"a path component is longer than {MAX_NAME_BYTES} bytes")
        if part != part.rstrip(" ."):
            raise _reject(path, f"component {part!r} ends with a space or a dot")
        if part.split(".")[0].lower() in _WINDOWS_RESERVED:
            raise _reject(path, f"{part!r} is a reserved device name on Windows")
    return parts


def validate_prefix(prefix: str) -> str:
    """Check a listing prefix (any relative folder or name start); return it normalised."""
    if prefix == "":
        return ""
    _check_characters(prefix)
    _check_anchoring(prefix)
    parts = [part for part in prefix.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise _reject(prefix, "'..' components are not allowed")
    normalised = "/".join(parts)
    return normalised + "/" if prefix.endswith("/") and normalised else normalised


def validate_relative_path(path: str) -> PurePosixPath:
    """Check a workspace-relative Markdown path without touching the disk.

    Accepts ``memory/2025-01-31.md`` or ``./MEMORY.md``; rejects empty paths,
    NUL and control characters, backslashes, absolute POSIX paths, Windows drive,
    UNC and stream forms, ``..`` components and names not ending in ``.md``.
    Returns the normalised path (``.`` and repeated slashes removed).
    """
    _check_characters(path)
    _check_anchoring(path)
    parts = _clean_parts(path)
    name = parts[-1]
    if not name.endswith(MARKDOWN_SUFFIX):
        raise _reject(path, "only Markdown files ending in '.md' are allowed")
    if name == MARKDOWN_SUFFIX:
        raise _reject(path, "the file name before '.md' is empty")
    _check_lookalike(path, name)
    return PurePosixPath(*parts)


# The files memdir gives a meaning (the prompt, fences, fallback): a name spelled with other
# characters to look like one (MEMORY.md with a Cyrillic capital em) would pass for it.
_MEANINGFUL = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "MEMORY.md",
               "HEARTBEAT.md", "BOOTSTRAP.md", "SKILL.md")  # fmt: skip
_MEANINGFUL_SKELETONS = {skeleton(name)[0]: name for name in _MEANINGFUL}


def _check_lookalike(path: str, name: str) -> None:
    if name.isascii():
        return
    meant = _MEANINGFUL_SKELETONS.get(skeleton(name)[0])
    if meant is not None:
        odd = ", ".join(f"U+{ord(c):04X}" for c in name if not c.isascii())
        raise _reject(
            path,
            f"its name looks like {meant!r} but is spelled with other characters ({odd}); "
            f"spell it {meant!r} in plain letters, or choose another name",
        )


def resolve_inside(root: Path, relative: PurePosixPath | str) -> Path:
    """Return the absolute path of ``relative`` under ``root``, refusing symlink escapes.

    Any symlink on the way (the file itself or a parent folder, existing or
    dangling) must resolve to a location inside ``root``. The returned path is
    not resolved, so a symlink kept inside the workspace stays a symlink.
    """
    text = str(relative)
    parts = validate_relative_path(text).parts
    real_root = root.resolve()
    candidate = root.absolute().joinpath(*parts)
    try:
        real_candidate = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise _reject(text, f"it cannot be resolved ({exc})") from exc
    if not real_candidate.is_relative_to(real_root):
        raise _reject(text, "a symlink on the way points outside the workspace")
    return candidate
