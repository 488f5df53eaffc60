"""Argument aliases, declared: a name a tool accepts is a name its input schema lists.

A tool argument may take other names (``AliasChoices``): the names OpenClaw's memory
tools use (``maxResults``, ``minScore``, ``filePath``, ``from``) and the older names of
"how many" (``max_results``, now ``limit`` on every tool). pydantic accepts them but its
JSON schema lists only the first name, and with ``additionalProperties: false`` a client
that validates its arguments against the schema would refuse what the server accepts.
``declare_aliases`` adds each alias as a property of its own, with the same type and
bounds and a description naming the argument it stands for; a required argument that has
aliases leaves ``required`` (its description says it is required under one of its names,
and the server refuses a call without it, naming it); ``one_name_each`` refuses an
argument given under two of its names, rather than keeping one silently.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, BaseModel


def alias_names(model: type[BaseModel]) -> dict[str, tuple[str, ...]]:
    """Each field's accepted names, the field's own name first (fields with aliases only)."""
    names: dict[str, tuple[str, ...]] = {}
    for field_name, field in model.model_fields.items():
        choices = field.validation_alias
        if not isinstance(choices, AliasChoices):
            continue
        others = [c for c in choices.choices if isinstance(c, str) and c != field_name]
        if others:
            names[field_name] = (field_name, *others)
    return names


def declare_aliases(model: type[BaseModel], schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a property for each alias of ``model``'s fields."""
    properties: dict[str, Any] = schema.get("properties", {})
    required: list[str] = schema.get("required", [])
    for field_name, names in alias_names(model).items():
        own = properties.get(field_name)
        if own is None:
            continue
        if field_name in required:  # required under one of its names, which JSON schema
            required.remove(field_name)  # says only with a top-level anyOf (refused by some
            own["description"] = (  # hosts): the description says it, the server checks it
                f"{own.get('description', '').rstrip()} Required, as {' or '.join(names)}."
            ).strip()
        for alias in names[1:]:
            declared = {k: copy.deepcopy(v) for k, v in own.items() if k != "default"}
            declared["description"] = f"Alias of {field_name} (give one of {', '.join(names)})."
            properties.setdefault(alias, declared)
    if "required" in schema and not required:
        del schema["required"]  # draft-04 validators refuse an empty list
    return schema


def one_name_each(model: type[BaseModel], data: object) -> object:
    """Refuse ``data`` that gives one argument under two of its names."""
    if not isinstance(data, Mapping):
        return data
    for names in alias_names(model).values():
        given = [name for name in names if name in data]
        if len(given) > 1:
            raise ValueError(
                f"{' and '.join(given)} are the same argument; give only one of {', '.join(names)}"
            )
    return data
