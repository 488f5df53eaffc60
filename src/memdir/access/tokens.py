"""Access tokens of a home: an admin token and tokens scoped to one agent, stored hashed.

``$MEMDIR_HOME/api-token`` is the home's first admin token, as it always was: the
first server run creates it (mode 0600) and one-user setups never need more.
``memdir token create`` adds tokens to ``$MEMDIR_HOME/tokens.json`` (mode 0600),
which keeps for each its id, scope (``admin`` or one agent), name, creation time
and the SHA-256 of the token, never the token itself; the token is printed once.
A token reads ``mdt_<id>_<secret>``: the id finds the record, the digest of the
whole token is compared in constant time. Tokens carry 256 random bits, so one
SHA-256 is enough (a slow password hash guards guessable passwords, not these).

A server reads the file again when it changes (a ``stat`` per check), so a token
created or revoked from the CLI takes effect on the next request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from memdir.errors import ConfigError, InvalidInputError, NotFoundError
from memdir.workspace import validate_agent_id

API_TOKEN_FILE = "api-token"
TOKENS_FILE = "tokens.json"
API_TOKEN_ID = "api-token"
PREFIX = "mdt_"
_TOKEN = re.compile(r"mdt_(?P<id>[0-9a-f]{8})_[A-Za-z0-9_-]{43}")
_ID = re.compile(r"[0-9a-f]{8}")
MAX_NAME_CHARS = 100


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: a token's id, and its agent (``None``: the admin)."""

    token_id: str
    agent: str | None

    @property
    def is_admin(self) -> bool:
        return self.agent is None

    def describe(self) -> str:
        scope = "the admin" if self.is_admin else f"agent {self.agent!r}"
        return f"token {self.token_id} ({scope})"


@dataclass(frozen=True)
class TokenRecord:
    """A token as the home keeps it: never the token, only its digest."""

    id: str
    agent: str | None  # None: an admin token
    name: str
    created: str
    sha256: str

    @property
    def scope(self) -> str:
        return "admin" if self.agent is None else f"agent:{self.agent}"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class AccessTokens:
    """The tokens of one home: verify a bearer token, and create, list and revoke tokens."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / TOKENS_FILE
        self.api_token_path = home / API_TOKEN_FILE
        self._lock = threading.Lock()
        self._seen: dict[Path, tuple[tuple[int, int, int] | None, Any]] = {}

    # -- checking ----------------------------------------------------------------------

    def verify(self, token: str) -> Principal | None:
        """The principal ``token`` stands for, or ``None`` for an unknown or revoked one."""
        if not token:
            return None
        match = _TOKEN.fullmatch(token)
        if match is not None:
            record = self._records().get(match["id"])
            if record is not None and hmac.compare_digest(digest(token), record.sha256):
                return Principal(record.id, record.agent)
            return None
        api_token = self._api_token()
        if api_token and hmac.compare_digest(token.encode(), api_token.encode()):
            return Principal(API_TOKEN_ID, None)
        return None

    def has_agent(self, agent: str) -> bool:
        """Whether some token is scoped to ``agent`` (it then exists, workspace or not)."""
        return any(record.agent == agent for record in self._records().values())

    def _api_token(self) -> str:
        return str(self._cached(self.api_token_path, _read_api_token))

    def _records(self) -> dict[str, TokenRecord]:
        records: dict[str, TokenRecord] = self._cached(self.path, _read_records)
        return records

    def _cached(self, path: Path, read: Any) -> Any:
        """``read(path)``, read again only when the file's identity, size or time changed."""
        try:
            info = path.stat()
            stamp: tuple[int, int, int] | None = (info.st_ino, info.st_size, info.st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            seen = self._seen.get(path)
            if seen is not None and seen[0] == stamp:
                return seen[1]
            value = read(path) if stamp is not None else read(None)
            self._seen[path] = (stamp, value)
            return value

    # -- managing ----------------------------------------------------------------------

    def create(self, agent: str | None, name: str = "") -> tuple[str, TokenRecord]:
        """A new token for ``agent`` (``None``: an admin token): the token, once, and its record."""
        if agent is not None:
            validate_agent_id(agent)
        name = _check_name(name)
        with self._file_lock():
            records = _read_records(self.path) if self.path.exists() else {}
            token_id = secrets.token_hex(4)
            while token_id in records:
                token_id = secrets.token_hex(4)
            token = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
            created = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            record = TokenRecord(token_id, agent, name, created, digest(token))
            records[token_id] = record
            self._write(records)
        return token, record

    def list(self) -> list[TokenRecord]:
        """Every token of ``tokens.json``, in the order made (``api-token`` is not in it)."""
        records = _read_records(self.path) if self.path.exists() else {}
        return list(records.values())

    def revoke(self, token_id: str) -> TokenRecord:
        """Remove a token; a server refuses it from its next request on."""
        if token_id == API_TOKEN_ID:
            raise InvalidInputError(
                f"the admin token in {str(self.api_token_path)!r} is not kept in "
                f"{TOKENS_FILE}: delete that file to revoke it (the next `memdir serve` "
                "creates a new one)"
            )
        if not _ID.fullmatch(token_id):
            raise InvalidInputError(
                f"{token_id!r} is not a token id (8 hex digits, as `memdir token list` shows them)"
            )
        with self._file_lock():
            records = _read_records(self.path) if self.path.exists() else {}
            record = records.pop(token_id, None)
            if record is None:
                raise NotFoundError(
                    f"no token {token_id!r} in {str(self.path)!r}; `memdir token list` shows "
                    "the ids"
                )
            self._write(records)
        return record

    def _file_lock(self) -> FileLock:
        self.home.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path.with_name(f".{TOKENS_FILE}.lock")), timeout=30)

    def _write(self, records: dict[str, TokenRecord]) -> None:
        body = {"version": 1, "tokens": [asdict(record) for record in records.values()]}
        temp = self.path.with_name(f".{TOKENS_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(body, handle, indent=1)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        finally:
            temp.unlink(missing_ok=True)


def _check_name(name: str) -> str:
    name = name.strip()
    if len(name) > MAX_NAME_CHARS or any(ord(c) < 32 for c in name):
        raise InvalidInputError(
            f"the token name {name[:40]!r} must be one line of at most {MAX_NAME_CHARS} "
            "characters; pass a shorter --name"
        )
    return name


def _read_api_token(path: Path | None) -> str:
    if path is None:
        return ""
    token = path.read_text(encoding="utf-8").strip()
    return token if len(token) >= 16 else ""


def _read_records(path: Path | None) -> dict[str, TokenRecord]:
    if path is None:
        return {}
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        records = {}
        for row in body["tokens"]:
            record = TokenRecord(
                id=str(row["id"]),
                agent=None if row["agent"] is None else validate_agent_id(str(row["agent"])),
                name=str(row.get("name", "")),
                created=str(row["created"]),
                sha256=str(row["sha256"]),
            )
            records[record.id] = record
        return records
    except (ValueError, KeyError, TypeError, InvalidInputError) as exc:
        raise ConfigError(
            f"{str(path)!r} is not a tokens file memdir can read ({exc}); restore it from a "
            f"backup, or delete it and create the tokens again with `memdir token create`"
        ) from exc
