"""The texts that measure memdir's credential check, and its figures on them.

* ``credential_shapes()`` reads ``data/credential_shapes.tsv``: over a hundred
  provider shapes, each named after the public rule it follows (gitleaks,
  detect-secrets, trufflehog). ``ordinary_notes()`` reads ``data/ordinary_notes.md``:
  notes that talk about passwords, keys, hashes and URLs without holding one.
  ``score_scanner()`` runs ``find_secrets`` over both.
* ``corpus()`` reads the credential corpus, ``data/credential_corpus.tsv`` (the
  checker is tuned on it) or ``data/credential_corpus_heldout.tsv`` (written apart,
  never tuned on): credentials as people write them into notes (sentences in
  several languages, passphrases, table rows, ``pw:`` and ``creds:``, PINs, keys
  after a label, connection strings, ``.env``, JSON and YAML) and ordinary text
  (notes, links of the common services, code, hashes, ids). ``score_corpus()``
  gives recall and the false-positive rate, per category.

Every template is filled with generated characters, so no real credential is
stored anywhere; ``memdir bench reliability`` and the tests report the figures.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

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
_SLOT = re.compile(r"\{([AaLUhdbwsk]):(\d+)\}|\{p\}")

_SYMBOLS = "!#$%&*+-.?@_~"


@dataclass(frozen=True)
class CredentialShape:
    """One shape: its name, the rule set it comes from, and a generated example line."""

    name: str
    source: str
    line: str


@cache
def _words() -> tuple[str, ...]:
    lines = _data("passphrase_words.txt").splitlines()
    return tuple(line for line in lines if line and not line.startswith("#"))


def _password(rng: random.Random) -> str:
    """A password as people pick them: words, digits, a symbol, some leetspeak, or noise."""
    word = rng.choice(_words())
    form = rng.randrange(6)
    if form == 0:
        return f"{word.capitalize()}{rng.randrange(10, 2030)}{rng.choice(_SYMBOLS)}"
    if form == 1:
        leet = word.translate(str.maketrans("aeios", "43105"))
        return f"{leet.capitalize()}{rng.choice(_SYMBOLS)}{rng.randrange(10)}"
    if form == 2:
        return f"{word}{rng.randrange(1, 999)}"
    if form == 3:
        return f"{word}{rng.choice(_words()).capitalize()}{rng.randrange(10)}{rng.choice(_SYMBOLS)}"
    if form == 4:
        pool = string.ascii_letters + string.digits + _SYMBOLS
        return "".join(rng.choice(pool) for _ in range(rng.randrange(10, 17)))
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(12))


def _fill(template: str, rng: random.Random) -> str:
    def slot(match: re.Match[str]) -> str:
        if match[1] is None:
            return _password(rng)
        if match[1] in "sk":
            words = [rng.choice(_words()) for _ in range(int(match[2]))]
            return (" " if match[1] == "s" else "-").join(words)
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


CORPUS_FILES = {"tune": "credential_corpus.tsv", "heldout": "credential_corpus_heldout.tsv"}


@dataclass(frozen=True)
class CorpusLine:
    """One text of the corpus: ``secret`` or ``ordinary``, its category and the text."""

    label: str
    category: str
    text: str


def corpus(part: str = "tune", seed: int = 0) -> list[CorpusLine]:
    """The ``tune`` or ``heldout`` part of the credential corpus, its slots filled."""
    if part not in CORPUS_FILES:
        raise ValueError(f"unknown corpus part {part!r}; use one of {sorted(CORPUS_FILES)}")
    rng = random.Random(seed)
    lines = []
    for row in _data(CORPUS_FILES[part]).splitlines():
        if not row.strip() or row.startswith("#"):
            continue
        label, category, template = row.split("\t")
        text = template.replace("\\n", "\n").replace("\\t", "\t")
        lines.append(CorpusLine(label, category, _fill(text, rng)))
    return lines


@dataclass(frozen=True)
class CorpusScore:
    """The checker's figures on one part of the corpus (over one or more seeds)."""

    part: str
    secrets: int
    caught: int
    ordinary: int
    flagged: int
    recall: float
    false_positive_rate: float
    missed: list[CorpusLine]
    false_positives: list[CorpusLine]
    by_category: dict[str, tuple[int, int]]  # category: (texts, judged wrong)


def score_corpus(part: str = "tune", seeds: tuple[int, ...] = (0, 1, 2)) -> CorpusScore:
    """Run ``find_secrets`` over every text of ``part``, filled with each seed."""
    missed: list[CorpusLine] = []
    flagged: list[CorpusLine] = []
    by_category: dict[str, list[int]] = {}
    secrets = ordinary = 0
    for seed in seeds:
        for line in corpus(part, seed):
            found = bool(find_secrets(line.text))
            wrong = found != (line.label == "secret")
            counts = by_category.setdefault(f"{line.label}/{line.category}", [0, 0])
            counts[0] += 1
            counts[1] += wrong
            if line.label == "secret":
                secrets += 1
                if wrong:
                    missed.append(line)
            else:
                ordinary += 1
                if wrong:
                    flagged.append(line)
    return CorpusScore(
        part=part,
        secrets=secrets,
        caught=secrets - len(missed),
        ordinary=ordinary,
        flagged=len(flagged),
        recall=(secrets - len(missed)) / secrets if secrets else 1.0,
        false_positive_rate=len(flagged) / ordinary if ordinary else 0.0,
        missed=missed,
        false_positives=flagged,
        by_category={name: (n, bad) for name, (n, bad) in sorted(by_category.items())},
    )


RECALL_TARGET = 0.95
FALSE_POSITIVE_TARGET = 0.005


def corpus_figures(seeds: tuple[int, ...] = (0, 1, 2), with_errors: bool = False) -> dict[str, Any]:
    """Both parts' figures as a dict; ``wrong`` counts the targets missed."""
    figures: dict[str, Any] = {}
    wrong = 0
    for part in CORPUS_FILES:
        score = score_corpus(part, seeds)
        misses = int(score.recall < RECALL_TARGET) + int(
            score.false_positive_rate > FALSE_POSITIVE_TARGET
        )
        wrong += misses
        figures[part] = {
            "credentials": score.secrets,
            "caught": score.caught,
            "recall": round(score.recall, 4),
            "ordinary": score.ordinary,
            "flagged": score.flagged,
            "false_positive_rate": round(score.false_positive_rate, 4),
            "targets_missed": misses,
            "wrong_by_category": {k: bad for k, (_, bad) in score.by_category.items() if bad},
        }
        if with_errors:
            figures[part]["missed"] = sorted({line.text for line in score.missed})
            figures[part]["false_positives"] = sorted({line.text for line in score.false_positives})
    figures["targets"] = {"recall": RECALL_TARGET, "false_positive_rate": FALSE_POSITIVE_TARGET}
    figures["seeds"] = list(seeds)
    figures["wrong"] = wrong
    return figures
