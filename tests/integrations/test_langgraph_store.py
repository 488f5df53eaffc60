"""``MemdirStore``: LangGraph's ``BaseStore`` contract over Markdown files.

The contract tests follow LangGraph's own store tests (libs/checkpoint/tests/test_store.py)
and run against LangGraph's ``InMemoryStore`` too, so each assertion is the framework's
behaviour, not ours. Then what memdir adds: items are Markdown files a person can read
and write, search ranks with memdir's hybrid search, TTLs, refused credentials.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from langgraph_agent import ScriptedChatModel, save_memory

from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.integrations.langgraph import CredentialRefusedError, MemdirStore

AWS_KEY = "AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    with Memory.open(home, embedder=HashEmbedder(), chat_model=None) as opened:
        opened.init()
        yield opened


@pytest.fixture(params=["memdir", "in-memory"])
def store(request: pytest.FixtureRequest, memory: Memory) -> BaseStore:
    return MemdirStore(memory) if request.param == "memdir" else InMemoryStore()


# -- LangGraph's contract --------------------------------------------------------------------
def test_put_get_update_delete(store: BaseStore) -> None:
    store.put(("users", "alice"), "food", {"text": "vegetarian", "n": 1})
    first = store.get(("users", "alice"), "food")
    assert first is not None
    assert (first.namespace, first.key, first.value) == (("users", "alice"), "food", {
        "text": "vegetarian", "n": 1,
    })  # fmt: skip
    store.put(("users", "alice"), "food", {"text": "vegan", "n": 2})
    second = store.get(("users", "alice"), "food")
    assert second is not None
    assert second.value == {"text": "vegan", "n": 2}
    assert second.updated_at >= first.updated_at
    assert store.get(("users", "alice"), "nothing") is None
    assert store.get(("users", "bob"), "food") is None
    store.delete(("users", "alice"), "food")
    assert store.get(("users", "alice"), "food") is None
    store.delete(("users", "alice"), "food")  # deleting what is gone is no error


def test_keys_and_values_of_any_shape(store: BaseStore) -> None:
    keys = ["a/b", "../up", ".hidden", "with space", "100%", "ключ", "x.md"]
    for key in keys:
        store.put(("odd", "ns"), key, {"key": key, "nested": {"list": [1, "two", None]}})
    for key in keys:
        item = store.get(("odd", "ns"), key)
        assert item is not None
        assert item.value == {"key": key, "nested": {"list": [1, "two", None]}}
    assert sorted(i.key for i in store.search(("odd",), limit=20)) == sorted(keys)
    assert store.list_namespaces() == [("odd", "ns")]


def test_list_namespaces_basic(store: BaseStore) -> None:
    namespaces = [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
        ("a", "c", "f"), ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]  # fmt: skip
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(suffix=("f",))) == [
        ("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [
        ("a", "b", "f"), ("a", "c", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f"),
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [
        ("a", "b", "c"), ("a", "b", "d", "e"),
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [
        ("a", "b", "d", "i"), ("a", "b", "f"),
    ]  # fmt: skip
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [
        ("a", "b", "f"), ("a", "c", "f"),
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert sorted(store.list_namespaces(max_depth=1)) == [("a",), ("admin",), ("b",), ("users",)]


def test_list_namespaces_pagination_and_empty(store: BaseStore) -> None:
    assert store.list_namespaces() == []
    for i in range(12):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=5) == [
        ("namespace", f"sub_{i:02d}") for i in range(5, 10)
    ]


def test_invalid_namespaces_are_refused(store: BaseStore) -> None:
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", {"foo": "bar"})
    store.put(("foo", "langgraph", "foo"), "bar", {"foo": "bar"})
    assert store.search(("foo", "langgraph", "foo"))[0].value == {"foo": "bar"}


def test_search_filters_and_pages(store: BaseStore) -> None:
    for i in range(6):
        store.put(("docs",), f"d{i}", {"kind": "report" if i % 2 else "note", "score": i})
    store.put(("other",), "x", {"kind": "report", "score": 99})
    reports = store.search(("docs",), filter={"kind": "report"})
    assert sorted(i.key for i in reports) == ["d1", "d3", "d5"]
    high = store.search(("docs",), filter={"score": {"$gte": 3}, "kind": {"$ne": "note"}})
    assert sorted(i.key for i in high) == ["d3", "d5"]
    assert len(store.search(("docs",), limit=4)) == 4
    pages = store.search(("docs",), limit=4) + store.search(("docs",), limit=4, offset=4)
    assert sorted(i.key for i in pages) == [f"d{i}" for i in range(6)]
    assert {i.key for i in store.search(())} == {f"d{i}" for i in range(6)} | {"x"}


def test_filters_reach_into_nested_values(memory: Memory) -> None:
    """Dotted filter keys, as LangGraph's SQL stores read them."""
    store = MemdirStore(memory)
    store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "n"}})
    store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})
    assert [i.key for i in store.search(("docs",), filter={"access-level": "public"})] == ["hyphen"]
    assert [i.key for i in store.search(("docs",), filter={"user.access-level": "n"})] == ["hyphen"]
    assert [i.key for i in store.search(("docs",), filter={"user.123abc": "ok2"})] == ["digit"]
    assert store.search(("docs",), filter={"user.nothing.deeper": "x"}) == []


def test_batch_reads_before_its_puts(store: BaseStore) -> None:
    store.put(("b",), "old", {"v": 0})
    results = store.batch(
        [
            PutOp(("b",), "k", {"v": 1}),
            GetOp(("b",), "old"),
            GetOp(("b",), "k"),
            SearchOp(("b",)),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),)),
            PutOp(("b",), "k", {"v": 2}),
            PutOp(("b",), "old", None),
        ]
    )
    assert results[0] is None
    assert results[5] is None
    assert results[1] is not None
    assert results[1].value == {"v": 0}
    assert results[2] is None  # the batch's own puts apply after its reads
    assert [i.key for i in results[3]] == ["old"]  # type: ignore[union-attr]
    assert results[4] == [("b",)]
    item = store.get(("b",), "k")
    assert item is not None
    assert item.value == {"v": 2}
    assert store.get(("b",), "old") is None


def test_async_methods(store: BaseStore) -> None:
    async def run() -> None:
        await store.aput(("a",), "k", {"text": "hello"})
        item = await store.aget(("a",), "k")
        assert item is not None
        assert item.value == {"text": "hello"}
        assert [i.key for i in await store.asearch(("a",))] == ["k"]
        assert await store.alist_namespaces() == [("a",)]
        await store.adelete(("a",), "k")
        assert await store.aget(("a",), "k") is None

    asyncio.run(run())


# -- what memdir adds ------------------------------------------------------------------------
def test_items_are_markdown_files(memory: Memory) -> None:
    store = MemdirStore(memory)
    store.put(("users", "alice"), "food", {"text": "Alice is vegetarian", "tags": ["diet"]})
    path = "memory/store/users/alice/food.md"
    text = memory.read_file(path)
    assert "# food\n\nAlice is vegetarian\n\ndiet\n" in text
    assert '```json\n{\n  "text": "Alice is vegetarian"' in text
    hits = memory.search("Alice vegetarian").hits
    assert hits
    assert hits[0].path == path
    store.put(("users", "bob"), "a/b", {"text": "x"})
    assert "memory/store/users/bob/a%2Fb.md" in memory.list_files("memory/store/")


def test_a_file_written_by_hand_is_an_item(memory: Memory) -> None:
    memory.write_file("memory/store/team/billing.md", "# Billing\n\nWe chose PostgreSQL.\n")
    store = MemdirStore(memory)
    item = store.get(("team",), "billing")
    assert item is not None
    assert item.value == {"text": "# Billing\n\nWe chose PostgreSQL.\n"}
    assert store.list_namespaces() == [("team",)]
    memory.write_file("memory/store/team/broken.md", '# broken\n\n```json\n{"a": \n```\n')
    broken = store.get(("team",), "broken")
    assert broken is not None
    assert broken.value["text"].startswith("# broken")


def test_labels_cannot_reach_outside_the_folder(memory: Memory) -> None:
    store = MemdirStore(memory)
    for label in ["..", "a.b"]:  # batched ops skip BaseStore's checks: the store checks them
        with pytest.raises(InvalidNamespaceError):
            store.batch([PutOp(("x", label), "key", {"v": 1})])
    store.put(("a/b", "c"), "/etc/passwd", {"v": 1})
    assert memory.list_files("memory/") == ["memory/store/a%2Fb/c/%2Fetc%2Fpasswd.md"]
    assert store.list_namespaces() == [("a/b", "c")]


def test_a_key_too_long_for_a_file_name_is_refused(memory: Memory) -> None:
    store = MemdirStore(memory)
    store.put(("u",), "k" * 196, {"v": 1})  # 200 bytes with ".md"
    with pytest.raises(ValueError, match="too long for a file name"):
        store.put(("u",), "é" * 100, {"v": 1})  # 600 bytes percent-encoded
    assert [item.key for item in store.search(("u",))] == ["k" * 196]


def test_search_ranks_with_hybrid_search(memory: Memory) -> None:
    store = MemdirStore(memory)
    store.put(("u",), "work", {"text": "Alice works on the billing service at ACME"})
    store.put(("u",), "food", {"text": "Alice is vegetarian and allergic to nuts"})
    store.put(("u",), "quiet", {"text": "vegetarian"}, index=False)
    store.put(("elsewhere",), "food", {"text": "Bob is vegetarian too"})
    memory.append_daily("Carol is vegetarian")  # other memory: never an item
    found = store.search(("u",), query="Alice vegetarian nuts")
    assert [i.key for i in found][:2] == ["food", "work"]
    assert found[0].score is not None
    assert found[0].score > (found[1].score or 0.0)
    assert found[-1].key == "quiet"
    assert found[-1].score is None
    assert {i.namespace for i in found} == {("u",)}


def test_ttl_expires_items_and_reads_refresh_it(memory: Memory) -> None:
    store = MemdirStore(memory)
    store.put(("t",), "short", {"v": 1}, ttl=0.002)  # minutes, as in LangGraph: 120 ms
    store.put(("t",), "kept", {"v": 2}, ttl=10)
    store.put(("t",), "forever", {"v": 3})
    time.sleep(0.3)
    assert store.get(("t",), "short") is None
    assert "memory/store/t/short.md" not in memory.list_files("memory/store/")
    assert sorted(i.key for i in store.search(("t",))) == ["forever", "kept"]
    defaults = MemdirStore(memory, ttl={"default_ttl": 0.002, "refresh_on_read": False})
    defaults.put(("d",), "k", {"v": 1})
    time.sleep(0.3)
    assert defaults.search(("d",)) == []
    assert defaults.list_namespaces(prefix=("d",)) == []


def test_a_credential_is_refused_and_nothing_written(memory: Memory) -> None:
    store = MemdirStore(memory)
    store.put(("u",), "k", {"text": "the deploy key is in the vault"})
    with pytest.raises(ValueError, match=r"put\(\('u',\), 'k'\) was refused.*AWS") as caught:
        store.put(("u",), "k", {"text": AWS_KEY})
    assert isinstance(caught.value, CredentialRefusedError)
    item = store.get(("u",), "k")
    assert item is not None
    assert item.value == {"text": "the deploy key is in the vault"}
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        store.put(("u",), "bad", {"when": object()})
    assert store.get(("u",), "bad") is None


def test_a_graph_run_surfaces_a_refused_credential(memory: Memory) -> None:
    """The agent's tool tries to store a key: the run stops with the store's error, and
    with LangGraph's tool-error handling on, the model is told why instead."""
    call = {"name": "save_memory", "id": "c1", "args": {"text": f"the key: {AWS_KEY}"}}
    store = MemdirStore(memory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's notice of its move
        agent = create_react_agent(
            ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), AIMessage("ok")]),
            [save_memory],
            store=store,
        )
        with pytest.raises(CredentialRefusedError, match="AWS access key"):
            agent.invoke({"messages": [("user", "remember my key")]})
        told = create_react_agent(
            ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), AIMessage("ok")]),
            ToolNode([save_memory], handle_tool_errors=True),
            store=store,
        ).invoke({"messages": [("user", "remember my key")]})
    assert "was refused" in told["messages"][2].content
    assert store.search(("memories",)) == []


# -- a real graph, two processes ---------------------------------------------------------
@pytest.mark.slow
def test_a_langgraph_agent_remembers_across_processes(tmp_path: Path) -> None:
    """LangGraph's prebuilt agent with the real local embedding model: what the first
    process's agent saved through the store, the second's finds by meaning."""
    home = tmp_path / "agent-home"
    first = _run_agent(home, "save")
    assert first[2] == {"type": "tool", "content": "saved"}
    files = sorted((home / "workspace" / "memory" / "store" / "memories" / "user-1").iterdir())
    assert len(files) == 1
    assert "The user is vegetarian and allergic to peanuts." in files[0].read_text()
    second = _run_agent(home, "recall")
    assert second[0]["content"] == "Plan a dinner for me."  # a new conversation
    assert second[2] == {
        "type": "tool", "content": "The user is vegetarian and allergic to peanuts.",
    }  # fmt: skip


def _run_agent(home: Path, step: str) -> list[dict[str, str]]:
    script = Path(__file__).with_name("langgraph_agent.py")
    done = subprocess.run(
        [sys.executable, str(script), str(home), step],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


WRITER = """
import sys
from memdir import Memory
from memdir.embeddings.base import HashEmbedder
from memdir.integrations.langgraph import MemdirStore

with Memory.open(sys.argv[1], embedder=HashEmbedder(), chat_model=None) as memory:
    store = MemdirStore(memory)
    for i in range(40):
        store.put(("shared", "ns"), f"{sys.argv[2]}-{i}", {"text": f"note {i} of {sys.argv[2]}"})
        if i % 10 == 9:
            store.delete(("shared", "ns"), f"{sys.argv[2]}-{i - 1}")
"""


@pytest.mark.slow
def test_two_processes_write_one_namespace(memory: Memory) -> None:
    """Two processes put 40 items each into one namespace and delete every tenth: every
    write lands whole, and the index finds what the files hold."""
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(memory.home), name])
        for name in ("a", "b")
    ]
    assert [writer.wait(timeout=240) for writer in writers] == [0, 0]
    store = MemdirStore(memory)
    keys = {item.key for item in store.search(("shared",), limit=100)}
    deleted = {f"{name}-{i}" for name in ("a", "b") for i in (8, 18, 28, 38)}
    assert keys == {f"{name}-{i}" for name in ("a", "b") for i in range(40)} - deleted
    found = store.search(("shared",), query="note 7 of b", limit=1)
    assert found[0].key == "b-7"
