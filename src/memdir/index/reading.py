"""Reading a file to index: its bytes and text, or the reason it cannot be indexed."""

from __future__ import annotations

from pathlib import Path


class FileProblem(Exception):
    """A file that cannot be indexed; the message is the reason in the report."""


def read_markdown(path: Path, limit: int) -> tuple[bytes, str]:
    """Read a file's bytes and text; raise ``FileProblem`` naming why it cannot be indexed."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError as exc:
        raise FileProblem("vanished during sync") from exc
    except OSError as exc:
        raise FileProblem(f"unreadable: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise FileProblem(f"larger than the {limit}-byte limit")
    if b"\x00" in data[:8192]:
        raise FileProblem("binary file (NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileProblem(f"not UTF-8 (byte {exc.start}); re-save it as UTF-8") from exc
    return data, text.removeprefix("\ufeff")
