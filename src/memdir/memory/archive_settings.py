"""The settings an archive carries: the home's ``memdir.toml`` without secrets, and how an
import applies them (docs/history.md, "A home as one file").

Export reads the home's ``memdir.toml`` (not the environment or flags: they belong to
the process that ran) and writes its values again as TOML, so comments never travel.
A value is left out when its key names a secret (``*password*``, ``*token*``,
``*secret*``, ``api_key`` but not ``api_key_env``, which names a variable) or when the
project's credential detection (``memdir.facts.secrets``) finds one in it; a password
in a connection string is cut out of it and the rest kept. The manifest lists each
left-out key, what was left out and why.

Import checks the archive's settings against the settings memdir knows (an unknown key
or an invalid value is refused before anything is written), then adds them to the new
home's ``memdir.toml`` except what belongs to the machine (``[store]``: backend,
connection, schema; ``server.host``/``server.port``) and what the new home's file sets
already: both keep this home's values. (memdir's other paths, such as
``index.extra_paths``, are relative to the workspace, so they travel with it.)
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import tomlkit
from pydantic import BaseModel, ValidationError

from memdir.config import CONFIG_FILE, Settings
from memdir.errors import InvalidInputError
from memdir.facts.secrets import find_secrets
from memdir.history.archive import LeftOut
from memdir.workspace.atomic import write_atomic

SECRET_NAME = re.compile(
    r"(?:^|_)(?:password|passwd|pwd|secret|token|credentials?|api_?key|private_?key|auth)(?:_|$)"
)
"""A key whose value is a secret by its name; ``*_env`` keys name a variable instead."""
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
MACHINE_SECTIONS = frozenset({"store"})
MACHINE_KEYS = frozenset({"server.host", "server.port"})
_DSN_PASSWORD = re.compile(r"(?i)(?:^|\s)password\s*=\s*(?:'(?:[^'\\]|\\.)*'|\S+)")


@dataclass
class PortableSettings:
    """The home's settings as an archive carries them."""

    text: str | None  # TOML, or None when the home has no memdir.toml
    left_out: list[LeftOut] = field(default_factory=list)


@dataclass
class AppliedSettings:
    """What an import did with the archive's settings."""

    applied: list[str] = field(default_factory=list)  # "section.key", now in memdir.toml
    kept: list[tuple[str, str]] = field(default_factory=list)  # (key, why this home's value)


def portable_settings(home: Path) -> PortableSettings:
    """The settings of ``home``'s ``memdir.toml`` without secrets."""
    path = home / CONFIG_FILE
    if not path.is_file():
        return PortableSettings(None)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}; fix or delete the file") from exc
    out = PortableSettings(None)
    kept: dict[str, dict[str, Any]] = {}
    for section, values in data.items():
        if not isinstance(values, dict):
            out.left_out.append(LeftOut(section, "the value", "not a settings section"))
            continue
        for name, value in values.items():
            key = f"{section}.{name}"
            clean = _without_secrets(key, name, value, out.left_out)
            if clean is not None:
                kept.setdefault(section, {})[name] = clean
    out.text = tomlkit.dumps(kept) if kept else ""
    return out


def _without_secrets(key: str, name: str, value: object, left_out: list[LeftOut]) -> object:
    """``value`` with its secrets cut out, or None when it is left out whole."""
    lowered = name.lower()
    if isinstance(value, bool | int | float):
        return value  # a number or a switch is no secret, whatever its key says
    if SECRET_NAME.search(lowered) and not (
        lowered.endswith("_env") and isinstance(value, str) and ENV_NAME.fullmatch(value)
    ):
        left_out.append(LeftOut(key, "the value", f"{name!r} names a secret"))
        return None
    if isinstance(value, list):
        items = [_without_secrets(key, name, item, left_out) for item in value]
        return [item for item in items if item is not None]
    if isinstance(value, dict):
        left_out.append(LeftOut(key, "the value", "a table is not a memdir setting"))
        return None
    if not isinstance(value, str):
        return value
    cut = _cut_password(value)
    if cut != value:
        left_out.append(LeftOut(key, "the password", "a password in a connection string"))
    found = find_secrets(f"{name} = {cut}")
    if found:
        left_out.append(LeftOut(key, "the value", f"it holds {found[0].kind}"))
        return None
    return cut


def _cut_password(value: str) -> str:
    """A URL or libpq connection string without its password."""
    text = _DSN_PASSWORD.sub("", value).strip() if "=" in value else value
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if parts.scheme and "@" in parts.netloc and parts.password is not None:
        userinfo, _, host = parts.netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        netloc = f"{user}@{host}" if user else host
        return urlunsplit(parts._replace(netloc=netloc))
    return text


def read_archive_settings(text: str) -> dict[str, dict[str, Any]]:
    """The archive's settings, checked against the settings memdir knows."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(
            f"the archive's settings are not valid TOML ({exc}); import without them: "
            "`memdir archive import FILE --no-settings`"
        ) from exc
    sections = Settings.model_fields
    for section, values in data.items():
        model = sections.get(section)
        annotation = model.annotation if model is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            raise _unknown(section)
        if not isinstance(values, dict):
            raise _unknown(section)
        for name in values:
            if name not in annotation.model_fields:
                raise _unknown(f"{section}.{name}")
    _validate(data, "the archive's settings")
    return data


def _unknown(key: str) -> InvalidInputError:
    return InvalidInputError(
        f"the archive's settings name {key!r}, which this memdir does not know (a newer "
        "memdir wrote it?); upgrade memdir, or import without the settings: "
        "`memdir archive import FILE --no-settings`"
    )


def _validate(data: Mapping[str, Any], what: str) -> None:
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise InvalidInputError(
            f"{what}: {key}: {message}; import without the settings: "
            "`memdir archive import FILE --no-settings`"
        ) from exc


def plan_settings(home: Path, data: Mapping[str, Mapping[str, Any]]) -> tuple[str, AppliedSettings]:
    """The new text of ``home``'s ``memdir.toml`` with the archive's settings added, and
    what was applied or kept; raises before anything is written."""
    path = home / CONFIG_FILE
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        document = tomlkit.parse(current)
        existing = tomllib.loads(current)
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}; fix or delete the file") from exc
    result = AppliedSettings()
    for section, values in data.items():
        for name, value in values.items():
            key = f"{section}.{name}"
            if section in MACHINE_SECTIONS or key in MACHINE_KEYS:
                result.kept.append((key, "it belongs to this machine"))
            elif name in existing.get(section, {}):
                result.kept.append((key, f"this home's {CONFIG_FILE} sets it"))
            else:
                table = document.get(section)
                if table is None:
                    table = tomlkit.table()
                    document[section] = table
                table[name] = value
                result.applied.append(key)
    text = tomlkit.dumps(document)
    _validate(tomllib.loads(text), f"{path} with the archive's settings")
    return text, result


def apply_settings(home: Path, text: str, result: AppliedSettings) -> AppliedSettings:
    """Write the planned ``memdir.toml`` (only when something was applied)."""
    if result.applied:
        home.mkdir(parents=True, exist_ok=True)
        write_atomic(home / CONFIG_FILE, text)
    return result
