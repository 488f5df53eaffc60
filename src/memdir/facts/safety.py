"""What a fact may contain: no credentials, one line, no marker syntax, bounded length.

Credentials are found by ``secrets.find_secrets`` (detect-secrets' detectors
plus memdir's rules for notes); errors name the kind found, never the value.
Prose about passwords stays allowed (``I reset my password yesterday``, ``the
password is stored in the vault``); ``my password is hunter2`` does not.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

from memdir.errors import InvalidInputError, SecretRejectedError
from memdir.facts.secrets import detect_secret, new_secrets

MAX_FACT_CHARS = 1_000
MAX_REASON_CHARS = 300

_MARKER_SYNTAX = re.compile(r"<!--|-->")

__all__ = ["detect_secret"]


def redact_secrets(text: str) -> tuple[str, int]:
    """``text`` with every line that holds a credential replaced by a note naming its kind.

    Returns the redacted text and how many lines were left out. Used where memdir
    writes text it did not get from a person directly (curation quoting a
    conversation), so a password said in passing never lands in the notes.
    """
    lines = text.split("\n")
    left_out = 0
    for index, line in enumerate(lines):
        kind = detect_secret(line)
        if kind is not None:
            lines[index] = f"[line left out: it looked like {kind}]"
            left_out += 1
    return "\n".join(lines), left_out


def reject_secrets(text: str, what: str = "the fact") -> None:
    """Raise ``SecretRejectedError`` naming the kind of credential, never the value."""
    kind = detect_secret(text)
    if kind is not None:
        raise _rejected(what, kind)


def reject_new_secrets(before: str, after: str, what: str) -> None:
    """Refuse ``after`` if it holds a credential ``before`` did not (the result of a
    write or an edit, compared with the file's current text)."""
    added = new_secrets(before, after)
    if added:
        raise _rejected(what, added[0].kind)


def _rejected(what: str, kind: str) -> SecretRejectedError:
    return SecretRejectedError(
        f"{what} was not saved: it contains what looks like {kind}. Memory is plain "
        "Markdown; keep credentials in a secret manager and save a reference instead "
        "(e.g. 'the deploy key is in the team vault')"
    )


def _check_line_text(text: str, what: str, limit: int) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be a string, got {type(text).__name__}")
    cleaned = text.strip()
    if not cleaned:
        raise InvalidInputError(f"{what} {text!r} is empty; pass a short non-empty statement")
    if len(cleaned) > limit:
        raise InvalidInputError(
            f"{what} is {len(cleaned):,} characters, over the limit of {limit:,} "
            f"(starts {cleaned[:60]!r}); split it into shorter statements"
        )
    if len(cleaned.splitlines()) > 1:
        raise InvalidInputError(
            f"{what} {cleaned[:60]!r}... spans several lines; pass one line (save each "
            "statement separately)"
        )
    bad = next((c for c in cleaned if unicodedata.category(c) == "Cc" and c != "\t"), None)
    if bad is not None:
        raise InvalidInputError(
            f"{what} {cleaned[:60]!r} contains the control character {bad!r}; remove it"
        )
    if _MARKER_SYNTAX.search(cleaned):
        raise InvalidInputError(
            f"{what} {cleaned[:60]!r} contains '<!--' or '-->', which memdir uses to mark "
            "facts in the notes; rephrase without them"
        )
    return cleaned


def check_fact_text(text: str) -> str:
    """The fact text, stripped, or ``InvalidInputError``/``SecretRejectedError``."""
    cleaned = _check_line_text(text, "the fact text", MAX_FACT_CHARS)
    reject_secrets(cleaned)
    return cleaned


def check_reason(reason: str) -> str:
    """A forget reason: one short line, no secrets, not containing '(reason:'."""
    cleaned = _check_line_text(reason, "the reason", MAX_REASON_CHARS)
    if "(reason:" in cleaned:
        raise InvalidInputError(f"the reason {cleaned!r} may not contain '(reason:'")
    reject_secrets(cleaned, "the reason")
    return cleaned


def check_importance(importance: int) -> int:
    if isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 10:
        raise InvalidInputError(
            f"importance must be a whole number from 1 to 10, got {importance!r}"
        )
    return importance


def check_until(until: datetime | None) -> datetime | None:
    """A fact's end of validity as UTC (a naive time is local); it must lie ahead."""
    if until is None:
        return None
    if not isinstance(until, datetime):
        raise InvalidInputError(
            f"valid_until must be a date or datetime, got {type(until).__name__}"
        )
    end = until.astimezone(UTC)
    if end <= datetime.now(UTC):
        raise InvalidInputError(
            f"valid_until {until.isoformat()} is not in the future; give a later date, or "
            "forget the fact if it is no longer true"
        )
    return end
