"""What a fact may contain: no credentials, one line, no marker syntax, bounded length.

Secret detection looks for the shapes of real credentials and names the kind it
found; it never repeats the matched text. The ``password`` rule is deliberately
narrow so that prose about passwords stays allowed:

* flagged: ``password: hunter2``, ``pwd=...``, ``api key = ...`` (an assignment
  form), and ``my password is hunter2`` when the word after ``is`` ends the
  sentence or contains a digit or symbol (``is swordfish.``, ``is Tr0ub4dor``);
* allowed: ``I reset my password yesterday``, ``the password is stored in the
  vault`` (prose continues after an ordinary word).

A long random-looking token (24+ characters mixing upper case, lower case and
digits scattered among the letters, with at least 4 bits of entropy per
character) is treated as a key; ``ThisIsMyProjectName2024`` is not.
Hex strings (commit hashes) and UUIDs do not mix cases and are allowed.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections import Counter

from memdir.errors import InvalidInputError, SecretRejectedError

MAX_FACT_CHARS = 1_000
MAX_REASON_CHARS = 300

_SECRET_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a PEM private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("an API key of the form sk-...", re.compile(r"\bsk-(?:[A-Za-z]+-)?[A-Za-z0-9_-]{16,}")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("a Stripe key", re.compile(r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}")),
    (
        "a JSON Web Token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    ("a bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*")),
)
_CREDENTIAL_WORD = (
    r"(?:password|passwd|passphrase|pwd|pin|api[ _-]?key|secret[ _-]?key|client[ _-]?secret"
    r"|access[ _-]?token)"
)
_ASSIGNMENT = re.compile(rf"(?i)\b{_CREDENTIAL_WORD}\s*[:=]\s*\S+")
_IS_FORM = re.compile(
    rf"(?i)\b{_CREDENTIAL_WORD}\s+(?:is|was)\s+[\"'`]?(?P<value>[^\s\"'`]+)(?P<rest>.*)"
)
_TOKEN = re.compile(r"[A-Za-z0-9+/_=.-]{24,}")
_MARKER_SYNTAX = re.compile(r"<!--|-->")


def _entropy(token: str) -> float:
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _looks_random(token: str) -> bool:
    classes = (any(c.islower() for c in token), any(c.isupper() for c in token))
    # Random keys scatter digits among letters; CamelCase names with a year do not.
    switches = sum(a.isdigit() != b.isdigit() for a, b in itertools.pairwise(token))
    return all(classes) and switches >= 3 and _entropy(token) >= 4.0


def _is_form_secret(match: re.Match[str]) -> bool:
    value = match["value"].rstrip(".,;!?")
    rest = match["rest"].strip()
    ends_sentence = not rest or match["value"][-1] in ".;!?" or rest[0] in ".;!?,)"
    unusual = any(not c.isalpha() for c in value)
    return bool(value) and (ends_sentence or unusual)


def detect_secret(text: str) -> str | None:
    """The kind of credential ``text`` seems to contain (e.g. 'a GitHub token'), or None."""
    for kind, pattern in _SECRET_SHAPES:
        if pattern.search(text):
            return kind
    if _ASSIGNMENT.search(text):
        return "a password or key assignment (name: value)"
    match = _IS_FORM.search(text)
    if match is not None and _is_form_secret(match):
        return "a password or key given in a sentence ('... password is <value>')"
    for token in _TOKEN.findall(text):
        if _looks_random(token):
            return "a long random-looking token (an API key or password?)"
    return None


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
        raise SecretRejectedError(
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
