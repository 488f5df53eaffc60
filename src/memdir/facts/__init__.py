"""memdir.facts: structured memory (save, recall, forget) kept in the daily notes.

Facts are lines in ``memory/YYYY-MM-DD.md`` with a hidden id marker (see
``markers``); the SQLite tables are derived and rebuilt from them. Start with
``FactBook``; the functions below it are the same operations on explicit
arguments.
"""

from memdir.facts.book import FactBook
from memdir.facts.categories import classify_fact
from memdir.facts.decide import (
    DecideFn,
    FactCandidate,
    FactDecision,
    build_decision_prompt,
    decide_heuristically,
)
from memdir.facts.markers import parse_fact_lines
from memdir.facts.recall import RecalledFact, ScoreBreakdown, list_facts, recall
from memdir.facts.render import format_facts_for_prompt, top_salient_facts
from memdir.facts.replay import FactSyncReport, derive_facts, rebuild_facts, sync_facts
from memdir.facts.safety import (
    MAX_FACT_CHARS,
    check_fact_text,
    detect_secret,
    redact_secrets,
    reject_secrets,
)
from memdir.facts.salience import SALIENCE_MAX, SALIENCE_MIN, salience
from memdir.facts.saving import SaveOutcome, forget, save_fact
from memdir.store.fact_records import Fact, FactEvent

__all__ = [
    "MAX_FACT_CHARS",
    "SALIENCE_MAX",
    "SALIENCE_MIN",
    "DecideFn",
    "Fact",
    "FactBook",
    "FactCandidate",
    "FactDecision",
    "FactEvent",
    "FactSyncReport",
    "RecalledFact",
    "SaveOutcome",
    "ScoreBreakdown",
    "build_decision_prompt",
    "check_fact_text",
    "classify_fact",
    "decide_heuristically",
    "derive_facts",
    "detect_secret",
    "forget",
    "format_facts_for_prompt",
    "list_facts",
    "parse_fact_lines",
    "rebuild_facts",
    "recall",
    "redact_secrets",
    "reject_secrets",
    "salience",
    "save_fact",
    "sync_facts",
    "top_salient_facts",
]
