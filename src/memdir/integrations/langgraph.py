"""LangGraph's ``BaseStore`` over a memdir workspace: every item is a Markdown file.

    store = MemdirStore(Memory.open())
    graph = builder.compile(store=store)        # or create_react_agent(model, tools, store=store)

The mapping (docs/integrations.md "LangGraph"): the item ``key`` in ``namespace``
is the file ``memory/store/<label>/<label>/.../<key>.md`` of the memory's workspace,
each label and the key percent-encoded (``/``, ``%`` and a leading ``.`` escaped), so
any string is a safe file name and the path alone says where an item lives. The file
is readable Markdown: a one-line comment with the item's times and TTL, the key as a
heading, the text of its indexed fields as paragraphs (what search and a reader
see), and the value itself as a fenced JSON block, the truth a ``get`` returns. A
file a person writes there without the JSON block is an item whose value is
``{"text": <the file>}``.

Writes go through ``Memory.write_file``: atomic, indexed before they return, and a
value holding a credential is refused (``CredentialRefusedError``, a ``ValueError``
as LangGraph's own stores raise for bad input) with nothing written. ``search`` with
a ``query`` ranks with memdir's hybrid search (BM25 + vectors over the indexed
text); items of the namespace the search did not reach follow without a score, as
LangGraph's in-memory store lists items it has no vector for. TTLs are in minutes
as in LangGraph; an expired item is deleted when a read meets it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

from memdir.errors import NotFoundError, SecretRejectedError
from memdir.integrations import missing
from memdir.memory import Memory

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        get_text_at_path,
        validate_op_namespace,
    )

    # LangGraph's own filter and namespace-match semantics, so a filter means here what
    # it means in its in-memory store (``$eq``, ``$gt``, ... and ``*`` wildcards).
    from langgraph.store.memory import _compare_values, _does_match
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing("langgraph", "langgraph", exc) from None

log = logging.getLogger(__name__)

DEFAULT_FOLDER = "memory/store"
MAX_NAME_BYTES = 200  # 255 on common file systems, less the temporary name of an atomic write
SEARCH_DEPTH = 100  # hits asked of the hybrid search, before keeping the namespace's
_META = re.compile(r"\A<!-- memdir-store (\{.*?\}) -->\n")
_FENCE = "```json\n"


class CredentialRefusedError(SecretRejectedError, ValueError):
    """A value that looks like it holds a credential; nothing was written."""


@dataclass(frozen=True)
class _Stored:
    """An item as its file holds it."""

    item: Item
    path: str
    ttl: float | None
    expires_at: datetime | None
    indexed: bool
    fields: list[str] | None

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


class MemdirStore(BaseStore):
    """A LangGraph store whose items are Markdown files of a memdir workspace.

    ``memory`` is an open :class:`memdir.Memory` (the caller closes it); ``folder`` the
    workspace folder items live under (searchable: under ``memory/``); ``ttl`` LangGraph's
    ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``); ``index_fields`` the
    value fields written as searchable text (LangGraph's ``fields`` paths; default: every
    string in the value). A ``put`` with ``index=False`` still writes the item, but a
    query never ranks it.
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory,
        *,
        folder: str = DEFAULT_FOLDER,
        ttl: TTLConfig | None = None,
        index_fields: list[str] | None = None,
    ) -> None:
        self.memory = memory
        self.folder = folder.strip("/")
        self.ttl_config = ttl
        self.index_fields = index_fields

    # -- the BaseStore contract -----------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations; results in their order. As in LangGraph's own stores, the
        reads see the store as it was before the batch and its puts apply after them (the
        last put of a key wins)."""
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op
                results.append(None)
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
        for put in puts.values():
            self._put(put)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (memdir's core is synchronous)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- operations -----------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        stored = self._read(self._path(op.namespace, op.key))
        if stored is None:
            return None
        if op.refresh_ttl and stored.ttl is not None:
            self._rewrite(stored)
        return stored.item

    def _put(self, op: PutOp) -> None:
        path = self._path(op.namespace, op.key)
        if op.value is None:
            self._delete(path)
            return
        previous = self._read(path)
        now = datetime.now(UTC)
        item = Item(
            value=dict(op.value),
            key=op.key,
            namespace=op.namespace,
            created_at=previous.item.created_at if previous else now,
            updated_at=now,
        )
        ttl = op.ttl if isinstance(op.ttl, int | float) else None
        self._write(item, ttl, op.index is not False, now, op.index or None)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        now = datetime.now(UTC)
        found = [
            stored
            for stored in self._items_under(op.namespace_prefix, now)
            if _matches(stored.item.value, op.filter)
        ]
        found.sort(key=lambda stored: stored.item.updated_at, reverse=True)
        scores = self._scores(op.query, found) if op.query else {}
        ranked = sorted(
            found, key=lambda stored: -scores[stored.path] if stored.path in scores else 1.0
        )  # stable: unscored items keep their newest-first order after the scored ones
        page = ranked[op.offset : op.offset + op.limit]
        if op.refresh_ttl:
            for stored in page:
                if stored.ttl is not None:
                    self._rewrite(stored)
        return [_search_item(stored.item, scores.get(stored.path)) for stored in page]

    def _scores(self, query: str, found: list[_Stored]) -> dict[str, float]:
        """The best hybrid-search score of each searchable item file among ``found``."""
        wanted = {stored.path for stored in found if stored.indexed}
        if not wanted:
            return {}
        scores: dict[str, float] = {}
        for hit in self.memory.search(query, max_results=SEARCH_DEPTH, min_score=0.0).hits:
            if hit.path in wanted:
                scores[hit.path] = max(scores.get(hit.path, hit.score), hit.score)
        return scores

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = {self._parse_path(path)[0] for path in self._files_under(())}
        if op.match_conditions:
            namespaces = {
                ns for ns in namespaces if all(_does_match(c, ns) for c in op.match_conditions)
            }
        if op.max_depth is not None:
            namespaces = {ns[: op.max_depth] for ns in namespaces}
        return sorted(namespaces)[op.offset : op.offset + op.limit]

    # -- files ----------------------------------------------------------------------------
    def _path(self, namespace: tuple[str, ...], key: str) -> str:
        if not isinstance(key, str) or not key:
            raise ValueError(f"an item key must be a non-empty string, got {key!r}")
        parts = [*map(_encode, namespace), _encode(key) + ".md"]
        if any(len(part.encode()) > MAX_NAME_BYTES for part in parts):
            raise ValueError(
                f"the key {key!r} or a label of {namespace!r} is too long for a file name "
                f"(at most {MAX_NAME_BYTES} bytes once percent-encoded); use a shorter one"
            )
        return "/".join([self.folder, *parts])

    def _parse_path(self, path: str) -> tuple[tuple[str, ...], str]:
        parts = path[len(self.folder) + 1 : -len(".md")].split("/")
        return tuple(unquote(part) for part in parts[:-1]), unquote(parts[-1])

    def _files_under(self, prefix: tuple[str, ...]) -> list[str]:
        folder = "/".join([self.folder, *map(_encode, prefix)]) + "/"
        return [path for path in self.memory.list_files(folder) if path.startswith(folder)]

    def _items_under(self, prefix: tuple[str, ...], now: datetime) -> Iterator[_Stored]:
        for path in self._files_under(prefix):
            stored = self._read(path, now)
            if stored is not None:
                yield stored

    def _read(self, path: str, now: datetime | None = None) -> _Stored | None:
        """The item at ``path``; None when there is none or it expired (then deleted)."""
        try:
            text = self.memory.read_file(path)
        except NotFoundError:
            return None
        namespace, key = self._parse_path(path)
        meta, value = _parse(text, path)
        created, updated = _time(meta.get("created_at")), _time(meta.get("updated_at"))
        if created is None or updated is None:  # a file written by hand: its change time
            changed = self.memory.file_info(path).updated_at
            created, updated = created or changed, updated or changed
        stored = _Stored(
            item=Item(
                value=value, key=key, namespace=namespace, created_at=created, updated_at=updated
            ),
            path=path,
            ttl=meta.get("ttl"),
            expires_at=_time(meta.get("expires_at")),
            indexed=meta.get("indexed", True),
            fields=meta.get("fields"),
        )
        if stored.expired(now or datetime.now(UTC)):
            self._delete(path)
            return None
        return stored

    def _write(
        self,
        item: Item,
        ttl: float | None,
        indexed: bool,
        updated_at: datetime,
        fields: list[str] | None = None,
    ) -> None:
        expires = datetime.now(UTC) + timedelta(minutes=ttl) if ttl is not None else None
        meta = {
            "created_at": item.created_at.isoformat(),
            "updated_at": updated_at.isoformat(),
            "ttl": ttl,
            "expires_at": expires.isoformat() if expires else None,
            "indexed": indexed,
            "fields": fields,
        }
        texts = _texts(item.value, fields or self.index_fields) if indexed else []
        try:
            body = json.dumps(item.value, ensure_ascii=False, indent=2)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the value of {item.key!r} is not JSON-serialisable: {exc}") from exc
        heading = " ".join(item.key.split())
        lines = [f"<!-- memdir-store {json.dumps(meta)} -->", f"# {heading}", ""]
        for text in texts:
            lines += [text, ""]
        lines += [_FENCE + body, "```", ""]
        path = self._path(item.namespace, item.key)
        try:
            self.memory.write_file(path, "\n".join(lines))
        except SecretRejectedError as exc:
            raise CredentialRefusedError(
                f"put({item.namespace!r}, {item.key!r}) was refused: {exc}"
            ) from exc

    def _rewrite(self, stored: _Stored) -> None:
        """Write ``stored`` again as it was, its expiry restarted (a TTL refreshed on read)."""
        item = stored.item
        self._write(item, stored.ttl, stored.indexed, item.updated_at, stored.fields)

    def _delete(self, path: str) -> None:
        try:
            self.memory.delete_file(path)
        except NotFoundError:
            return
        folder = (self.memory.workspace.root / path).parent
        top = self.memory.workspace.root / self.folder
        while folder != top and folder.is_relative_to(top):
            try:
                os.rmdir(folder)  # only while empty: an emptied namespace leaves no folder
            except OSError:
                break
            folder = folder.parent


def _matches(value: dict[str, Any], conditions: dict[str, Any] | None) -> bool:
    """LangGraph's filter semantics; a field a comparison cannot apply to does not match
    (its in-memory store raises there, for an item that merely lacks the field)."""
    try:
        return all(_compare_values(_field(value, k), v) for k, v in (conditions or {}).items())
    except (TypeError, ValueError):
        return False


def _field(value: dict[str, Any], key: str) -> Any:
    """``value[key]``, or a dotted path into nested objects (``"user.city"``), as LangGraph's
    SQL stores read filter keys."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, dict):
            return None
        found = found.get(part)
    return found


def _encode(label: str) -> str:
    encoded = quote(label, safe="")
    return "%2E" + encoded[1:] if encoded.startswith(".") else encoded


def _parse(text: str, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The meta comment and the value of an item file (a file without them: its text)."""
    meta_match = _META.match(text)
    meta: dict[str, Any] = {}
    if meta_match:
        try:
            meta = json.loads(meta_match.group(1))
        except ValueError:
            log.warning("%s: unreadable memdir-store comment; times taken from the file", path)
    start = text.rfind(_FENCE)
    end = text.rfind("```")
    if start != -1 and end > start:
        try:
            value = json.loads(text[start + len(_FENCE) : end])
        except ValueError:
            log.warning("%s: its JSON block does not parse; its value is the file's text", path)
        else:
            if isinstance(value, dict):
                return meta, value
    return meta, {"text": text}


def _texts(value: dict[str, Any], fields: list[str] | None) -> list[str]:
    """The searchable text of a value: the strings at ``fields``, else every string."""
    if fields is None or fields == ["$"]:
        return [text for text in _strings(value) if text.strip()]
    return [text for field in fields for text in get_text_at_path(value, field) if text.strip()]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _time(text: Any) -> datetime | None:
    return datetime.fromisoformat(text) if isinstance(text, str) else None


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )
