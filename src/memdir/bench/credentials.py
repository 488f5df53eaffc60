"""The credential shapes and the ordinary notes that measure memdir's secret scanner.

``credential_shapes()`` reads ``data/credential_shapes.tsv`` (over a hundred
shapes, each named after the public rule it follows: gitleaks, detect-secrets,
trufflehog) and fills each template with generated characters, so no real
credential is stored anywhere. ``ordinary_notes()`` reads ``data/ordinary_notes.md``:
notes that talk about passwords, keys and tokens, hashes, UUIDs, URLs and code
without holding a credential. ``score_scanner()`` runs ``find_secrets`` over
both; ``memdir bench reliability`` and the tests report its counts.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass
from importlib import resources

from memdir.facts.secrets import find_secrets

_CLASSES = {
    "A": string.ascii_letters + string.digits,
    "a": string.ascii_lowercase + string.digits,
    "L": string.ascii_letters,
    "U": string.ascii_uppercase + string.digits,
    "h": "0123456789abcdef",
    "d": string.digits,
    "b": string.ascii_letters + string.digits + "+/",
    "w": string.ascii_letters + string.digits + "_-",
}
_SLOT = re.compile(r"\{([AaLUhdbw]):(\d+)\}")


@dataclass(frozen=True)
class CredentialShape:
    """One shape: its name, the rule set it comes from, and a generated example line."""

    name: str
    source: str
    line: str


def _fill(template: str, rng: random.Random) -> str:
    def slot(match: re.Match[str]) -> str:
        chars = _CLASSES[match[1]]
        value = "".join(rng.choice(chars) for _ in range(int(match[2])))
        if len(value) > 2 and any(c.isupper() for c in chars):  # a real key mixes cases
            last = rng.choice(string.digits) if any(c.isdigit() for c in chars) else value[-1]
            value = rng.choice(string.ascii_uppercase) + value[1:-1] + last
        return value

    return _SLOT.sub(slot, template)


def _data(name: str) -> str:
    return resources.files("memdir.bench").joinpath("data", name).read_text(encoding="utf-8")


def credential_shapes(seed: int = 0) -> list[CredentialShape]:
    """Every shape of ``data/credential_shapes.tsv`` with a generated example."""
    rng = random.Random(seed)
    shapes = []
    for row in _data("credential_shapes.tsv").splitlines():
        if not row.strip() or row.startswith("#"):
            continue
        name, source, template = row.split("\t")
        shapes.append(CredentialShape(name, source, _fill(template, rng)))
    return shapes


def ordinary_notes() -> list[str]:
    """The lines of ``data/ordinary_notes.md`` (none holds a credential)."""
    return [line for line in _data("ordinary_notes.md").splitlines() if line.strip()]


@dataclass(frozen=True)
class ScannerScore:
    """How many shapes the scanner caught, and which notes it flagged wrongly."""

    shapes: int
    caught: int
    missed: list[str]
    notes: int
    false_positives: list[str]


def score_scanner(seed: int = 0) -> ScannerScore:
    """Run the scanner over every shape and every ordinary note."""
    shapes = credential_shapes(seed)
    missed = [shape.name for shape in shapes if not find_secrets(shape.line)]
    notes = ordinary_notes()
    flagged = [note for note in notes if find_secrets(note)]
    return ScannerScore(len(shapes), len(shapes) - len(missed), missed, len(notes), flagged)
