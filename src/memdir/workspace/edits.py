"""An exact find-and-replace edit of a file's text, with errors that name the fix."""

from __future__ import annotations

from memdir.errors import EditError, NextStep


def replaced(
    text: str, edit: tuple[str, str, bool], relative: str, what: str = ""
) -> tuple[str, int]:
    """``text`` with the edit ``(old, new, replace_all)`` applied, and how many times ``old``
    occurs; ``EditError`` naming the fix when it is missing or, without ``replace_all``,
    not unique (``what`` ends the message, e.g. "; nothing was proposed")."""
    old_text, new_text, replace_all = edit
    count = text.count(old_text) if old_text else 0
    if count == 0:
        raise EditError(
            f"the text to replace, {_preview(old_text)}, was not found in {relative!r}{what}",
            next_step=NextStep("read the file with {} and copy the text exactly", "read_file"),
        )
    if count > 1 and not replace_all:
        raise EditError(
            f"the text to replace, {_preview(old_text)}, occurs {count} times in "
            f"{relative!r}{what}",
            next_step=NextStep(
                "include more surrounding text to make it unique, or {} to replace every one",
                "replace_all",
            ),
        )
    return text.replace(old_text, new_text, -1 if replace_all else 1), count


def _preview(text: str, limit: int = 80) -> str:
    shown = text if len(text) <= limit else text[:limit] + "..."
    return repr(shown)
