"""Who, what and why of a change: the attribution every version of a file carries.

An interface says who is calling (the agent, the token's name, the session) and a tool
or command says what runs and why; the write path reads the attribution in force when it
records a version. It travels in a ``ContextVar``, so each thread, task and request
carries its own, and nothing between the interface and the write path passes it along.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Attribution:
    """Who changed a file (``agent``, ``token``, ``session``), with what and why."""

    agent: str | None = None
    token: str | None = None
    session: str | None = None
    tool: str | None = None
    reason: str | None = None


_NOBODY = Attribution()
_CURRENT: ContextVar[Attribution] = ContextVar("memdir_attribution", default=_NOBODY)


def current() -> Attribution:
    """The attribution in force here (empty fields when nobody said)."""
    return _CURRENT.get()


@contextmanager
def attributed(**values: str | None) -> Iterator[Attribution]:
    """Within the block, versions carry ``values`` (unset keys keep the outer ones).

    ``attributed(tool="memory_write_file")`` inside ``attributed(token="ci")`` records
    both. A value of None leaves the outer one in place.
    """
    known = {field.name for field in fields(Attribution)}
    unknown = set(values) - known
    if unknown:
        raise TypeError(f"unknown attribution fields: {', '.join(sorted(unknown))}")
    given = {key: _one_line(value) for key, value in values.items() if value}
    token = _CURRENT.set(replace(_CURRENT.get(), **given))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)


def _one_line(value: str) -> str:
    """A value as one line of at most 500 characters (it becomes a commit trailer)."""
    text = " ".join(str(value).split())
    return text if len(text) <= 500 else text[:499] + "…"
