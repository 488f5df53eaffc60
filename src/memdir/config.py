"""Configuration: one model, three sources, each value's origin known.

Precedence, lowest to highest: built-in defaults, ``$MEMDIR_HOME/memdir.toml``,
environment variables ``MEMDIR_<SECTION>__<KEY>`` and command-line overrides
(``--set section.key=value``). The sources are read with pydantic-settings;
merging is done here so that ``memdir config show`` can say where every value
came from. Only ``memdir.memory``, the interfaces and the benchmarks read configuration; every other
layer receives plain values.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from memdir.errors import ConfigError

CONFIG_FILE = "memdir.toml"
HOME_ENV = "MEMDIR_HOME"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _string_list(value: object) -> object:
    """A list setting given as text (env or ``--set``): a JSON list or comma-separated."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{value!r} is not a JSON list ({exc.msg})") from exc
    return [item.strip() for item in text.split(",") if item.strip()]


class EmbeddingsSettings(_Section):
    provider: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None  # default per provider: OPENAI_, GEMINI_, VOYAGE_API_KEY
    dimensions: int | None = Field(None, ge=1, le=65536)
    batch_size: int = Field(32, ge=1, le=1024)
    timeout_s: float = Field(30.0, gt=0)


class IndexSettings(_Section):
    tokenizer: Literal["porter", "trigram"] = "porter"
    chunk_tokens: int = Field(400, ge=32, le=8192)
    overlap_tokens: int = Field(80, ge=0, le=4096)
    max_file_bytes: int = Field(5_000_000, ge=1024)
    watch_debounce_ms: int = Field(500, ge=0)
    extra_paths: list[str] = Field(default_factory=list)
    refresh_seconds: float = Field(5.0, ge=0)

    _lists = field_validator("extra_paths", mode="before")(_string_list)


class SearchSettings(_Section):
    max_results: int = Field(6, ge=1, le=100)
    min_score: float = Field(0.1, ge=0.0, le=1.0)
    fusion: Literal["relative", "rrf", "weighted"] = "relative"
    vector_weight: float = Field(0.35, ge=0.0, le=1.0)
    text_weight: float = Field(0.65, ge=0.0, le=1.0)
    recency_half_life_days: float = Field(30.0, gt=0)
    mmr: bool = False
    mmr_lambda: float = Field(0.7, ge=0.0, le=1.0)
    attribution_demote: float = Field(0.5, ge=0.0, le=1.0)
    cross_agent: bool = False
    calibration_cosine_weight: float | None = Field(None, ge=0.0, le=1.0)
    calibration_midpoint: float | None = None
    calibration_slope: float | None = Field(None, gt=0.0)

    @model_validator(mode="after")
    def _calibration_whole(self) -> SearchSettings:
        given = [
            self.calibration_cosine_weight is not None,
            self.calibration_midpoint is not None,
            self.calibration_slope is not None,
        ]
        if any(given) and not all(given):
            raise ValueError(
                "set all three of search.calibration_cosine_weight, calibration_midpoint and "
                "calibration_slope (`memdir bench calibrate` prints them), or none"
            )
        return self


class PromptSettings(_Section):
    per_file_chars: int = Field(20_000, ge=64)
    total_chars: int = Field(150_000, ge=64)
    timezone: str | None = None
    facts_budget_chars: int = Field(2_000, ge=0)
    learnings_budget_chars: int = Field(4_000, ge=0)
    session_kind: Literal["private", "group", "shared"] = "private"
    recent_notes_days: int = Field(2, ge=0, le=31)
    recent_notes_chars: int = Field(4_000, ge=0)
    skills_deny: list[str] = Field(default_factory=list)
    skills_budget_chars: int = Field(4_000, ge=0)

    _lists = field_validator("skills_deny", mode="before")(_string_list)


class LlmSettings(_Section):
    provider: str = "none"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    context_window: int | None = Field(None, ge=1024)


class ContextSettings(_Section):
    flush_ratio: float = Field(0.60, gt=0, lt=1)
    compact_trigger_ratio: float = Field(0.70, gt=0, lt=1)
    warn_ratio: float = Field(0.80, gt=0, lt=1)
    prune_ratio: float = Field(0.90, gt=0, le=1)
    max_input_tokens: int | None = Field(None, ge=1024)
    preserve_recent_messages: int = Field(4, ge=0)
    preserve_recent_pairs: int | None = Field(None, ge=0)
    summary_max_tokens: int = Field(1_000, ge=64)
    compact_target_ratio: float = Field(0.50, gt=0, le=1)
    compact_min_gain_ratio: float = Field(0.10, ge=0, lt=1)


class CurateSettings(_Section):
    auto_extract: bool = True
    auto_consolidate: bool = True
    consolidate_cron: str = "0 2 * * *"
    consolidate_days: int = Field(7, ge=1)
    extraction_cooldown_s: int = Field(300, ge=0)
    extract_min_messages: int = Field(4, ge=1)
    extract_min_user_chars: int = Field(10, ge=0)
    extract_max_messages: int = Field(30, ge=1)
    extract_max_message_chars: int = Field(2_000, ge=100)
    session_end_messages: int = Field(15, ge=1)
    heartbeat: bool = False
    heartbeat_cron: str = "*/30 * * * *"
    review: bool = False  # curation (rewrites, extracted facts and entries) becomes proposals


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    # open workspaces (a Memory per agent) kept by a server; more close the least recent
    max_open_workspaces: int = Field(32, ge=1, le=10_000)
    # MCP over HTTP: sessions one token may hold at once, and when an idle one closes
    mcp_sessions_per_token: int = Field(16, ge=1, le=10_000)
    mcp_idle_seconds: float = Field(300.0, gt=0, le=86_400)


class StoreSettings(_Section):
    backend: Literal["sqlite", "postgres"] = "sqlite"
    dsn: str | None = None
    schema_name: str = Field("memdir", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    vector_index: Literal["exact", "hnsw"] = "exact"
    vector_graph_min_rows: int = Field(200_000, ge=0)
    pool_size: int = Field(1, ge=1, le=64)
    files_schema: str | None = Field(None, pattern=r"^[a-z_][a-z0-9_]{0,62}$")

    @property
    def files_schema_name(self) -> str:
        """The files table's schema: ``files_schema``, else ``<schema_name>_files``."""
        return self.files_schema or f"{self.schema_name}_files"

    @model_validator(mode="before")
    @classmethod
    def _refuse_removed(cls, data: object) -> object:
        """Settings of earlier versions that no longer exist, each with what to do instead."""
        removed = {
            "keyword_ranking": "keyword search always ranks in memory now (FTS5's ranking "
            "gave the same lists); delete store.keyword_ranking",
            "workspace_files": "the workspace files live in the home only; for several "
            "servers, share the home on one volume with store.backend = 'postgres' "
            "(docs/postgres.md, 'Several servers'), bring files kept in PostgreSQL back with "
            "`memdir export`, and delete store.workspace_files",
        }
        for key, advice in removed.items():
            if isinstance(data, dict) and key in data:
                raise ValueError(f"store.{key} was removed: {advice}")
        return data

    @model_validator(mode="after")
    def _check_files_schema(self) -> StoreSettings:
        if self.files_schema_name == self.schema_name:
            raise ValueError(
                f"store.files_schema {self.files_schema!r} is the index schema, which `memdir "
                "index rebuild` drops; choose another (the default is "
                f"'{self.schema_name}_files')"
            )
        return self


class HistorySettings(_Section):
    # every change of a workspace file is a version in a git repository of the home
    enabled: bool = True


class TraceSettings(_Section):
    # each search and recall appends what it found and for whom (docs/history.md)
    enabled: bool = False
    max_entries: int = Field(1_000, ge=1, le=1_000_000)


class Settings(_Section):
    """Every setting memdir reads, grouped by the TOML section it lives in."""

    embeddings: EmbeddingsSettings = EmbeddingsSettings()
    index: IndexSettings = IndexSettings()
    search: SearchSettings = SearchSettings()
    prompt: PromptSettings = PromptSettings()
    llm: LlmSettings = LlmSettings()
    context: ContextSettings = ContextSettings()
    curate: CurateSettings = CurateSettings()
    server: ServerSettings = ServerSettings()
    store: StoreSettings = StoreSettings()
    history: HistorySettings = HistorySettings()
    trace: TraceSettings = TraceSettings()


class _EnvReader(BaseSettings):
    """Declares the env layout for pydantic-settings: MEMDIR_<SECTION>__<KEY>."""

    model_config = SettingsConfigDict(
        env_prefix="MEMDIR_", env_nested_delimiter="__", case_sensitive=False, extra="ignore"
    )
    embeddings: dict[str, Any] = {}
    index: dict[str, Any] = {}
    search: dict[str, Any] = {}
    prompt: dict[str, Any] = {}
    llm: dict[str, Any] = {}
    context: dict[str, Any] = {}
    curate: dict[str, Any] = {}
    server: dict[str, Any] = {}
    store: dict[str, Any] = {}


@dataclass(frozen=True)
class SettingValue:
    """One leaf of the configuration and the source that set it."""

    key: str  # "section.name"
    value: object
    origin: str  # "default", "memdir.toml", "env MEMDIR_X__Y" or "flag"


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    home: Path
    origins: Mapping[str, str]

    def values(self) -> Iterator[SettingValue]:
        data = self.settings.model_dump()
        for section, fields in data.items():
            for name, value in fields.items():
                key = f"{section}.{name}"
                yield SettingValue(key, value, self.origins.get(key, "default"))


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The memdir home: the argument, else $MEMDIR_HOME, else ~/.memdir."""
    if home is None:
        home = os.environ.get(HOME_ENV) or Path.home() / ".memdir"
    return Path(home).expanduser().resolve()


def parse_overrides(pairs: list[str]) -> dict[str, dict[str, str]]:
    """Turn ``["search.max_results=10"]`` into ``{"search": {"max_results": "10"}}``."""
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        section, dot, name = key.strip().partition(".")
        if not sep or not dot or not section or not name:
            raise ConfigError(
                f"invalid override {pair!r}: use SECTION.KEY=VALUE, e.g. search.max_results=10"
            )
        out.setdefault(section.lower(), {})[name.lower()] = value
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot parse {path}: {exc}; fix or delete the file") from exc


def _read_env() -> dict[str, Any]:
    source = EnvSettingsSource(_EnvReader, env_prefix="MEMDIR_", env_nested_delimiter="__")
    raw = source()
    return {
        section: {k.lower(): v for k, v in values.items()}
        for section, values in raw.items()
        if isinstance(values, dict) and values
    }


def load_settings(
    home: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Mapping[str, object]] | None = None,
) -> LoadedSettings:
    """Read defaults, memdir.toml, environment and overrides into validated settings."""
    home_path = resolve_home(home)
    layers: list[tuple[str, Mapping[str, Any]]] = [
        (CONFIG_FILE, _read_toml(home_path / CONFIG_FILE)),
        ("env", _read_env()),
        ("flag", overrides or {}),
    ]
    merged: dict[str, dict[str, Any]] = {}
    origins: dict[str, str] = {}
    known = Settings.model_fields
    for origin, layer in layers:
        for section, fields in layer.items():
            if section not in known:
                raise ConfigError(
                    f"unknown configuration section {section!r} (from {origin}); "
                    f"known sections: {', '.join(known)}"
                )
            if not isinstance(fields, Mapping):
                raise ConfigError(f"configuration section {section!r} must be a table")
            for name, value in fields.items():
                merged.setdefault(section, {})[name] = value
                label = (
                    f"env MEMDIR_{section.upper()}__{name.upper()}" if origin == "env" else origin
                )
                origins[f"{section}.{name}"] = label
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")  # a check across a section
        if "." not in key:
            raise ConfigError(f"invalid [{key}] settings: {message}") from exc
        where = origins.get(key, "configuration")
        raise ConfigError(f"invalid setting {key} (from {where}): {message}") from exc
    return LoadedSettings(settings=settings, home=home_path, origins=origins)
